import { existsSync } from 'node:fs';
import { glob, readFile, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FragmentDefinitionNode } from 'graphql';
import { GENERATED_MARKER, generateTypedDocuments, parseFragmentsFile } from './generate.ts';
import { loadCodegenSchema } from './schema-source.ts';

const DOCUMENT_GLOBS = ['packages/*/src/**/*.graphql', 'integrations/*/src/**/*.graphql'];
const APP_INTERFACE_PACKAGE = 'packages/app-interface/';
/** Files of shared fragments (no operation, no generated file), like upstream's gql/fragments. */
const FRAGMENTS_SUFFIX = '.fragments.graphql';

export interface CodegenResult {
  readonly documents: readonly string[];
  /** Generated files that were missing or differed (written unless checking). */
  readonly stale: readonly string[];
  /** Generated files whose .graphql file is gone. */
  readonly orphans: readonly string[];
  /** Documents that could not be generated, with their problems. */
  readonly failures: readonly string[];
}

/** The repository this file belongs to. */
const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..');

/**
 * Generates `<name>.generated.ts` beside every `src/**\/*.graphql` of
 * packages/* and integrations/*; with `check`, writes nothing and only
 * reports what is stale.
 */
export async function runCodegen(options: {
  readonly repoRoot?: string;
  readonly check: boolean;
}): Promise<CodegenResult> {
  const { check } = options;
  const repoRoot = options.repoRoot ?? REPO_ROOT;
  const schema = await loadCodegenSchema(repoRoot);
  const all = (await collect(repoRoot, DOCUMENT_GLOBS)).sort();
  const documents = all.filter((d) => !d.endsWith(FRAGMENTS_SUFFIX));
  const stale: string[] = [];
  const failures: string[] = [];
  // Shared fragments first: any document may spread them.
  const sharedFragments = new Map<string, FragmentDefinitionNode>();
  for (const file of all.filter((d) => d.endsWith(FRAGMENTS_SUFFIX))) {
    try {
      for (const f of parseFragmentsFile(file, await readFile(join(repoRoot, file), 'utf8'))) {
        if (sharedFragments.has(f.name.value))
          failures.push(`${file}: fragment ${f.name.value} is defined twice`);
        sharedFragments.set(f.name.value, f);
      }
    } catch (e) {
      failures.push(e instanceof Error ? e.message : String(e));
    }
  }
  const expectedOutputs = new Set<string>();
  for (const doc of documents) {
    const output = doc.replace(/\.graphql$/, '.generated.ts');
    expectedOutputs.add(output);
    let code: string;
    try {
      code = await generateTypedDocuments({
        schema,
        displayPath: doc,
        source: await readFile(join(repoRoot, doc), 'utf8'),
        sharedFragments,
        // Packages import it through @qontract/app-interface; app-interface itself can't.
        typedDocumentNodeImport: doc.startsWith(APP_INTERFACE_PACKAGE)
          ? '@graphql-typed-document-node/core'
          : '@qontract/app-interface',
      });
    } catch (e) {
      failures.push(e instanceof Error ? e.message : String(e));
      continue;
    }
    const path = join(repoRoot, output);
    const current = existsSync(path) ? await readFile(path, 'utf8') : undefined;
    if (current === code) continue;
    stale.push(output);
    if (!check) await writeFile(path, code);
  }
  const orphans: string[] = [];
  for (const generated of await collect(
    repoRoot,
    DOCUMENT_GLOBS.map((g) => g.replace(/\.graphql$/, '.generated.ts')),
  )) {
    if (expectedOutputs.has(generated)) continue;
    const head = (await readFile(join(repoRoot, generated), 'utf8')).slice(0, 200);
    if (head.startsWith(GENERATED_MARKER)) orphans.push(generated);
  }
  return { documents, stale, orphans, failures };
}

async function collect(root: string, patterns: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const pattern of patterns) {
    for await (const file of glob(pattern, {
      cwd: root,
      exclude: (name) => name === 'node_modules',
    })) {
      out.push(relative(root, join(root, file)).split('\\').join('/'));
    }
  }
  return out;
}
