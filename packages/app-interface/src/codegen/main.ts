import { existsSync } from 'node:fs';
import { glob, readFile, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GENERATED_MARKER, generateTypedDocuments } from './generate.ts';
import { loadCodegenSchema } from './schema-source.ts';

/**
 * `node src/codegen/main.ts [--check]`: writes `<name>.generated.ts` beside
 * every `src/**\/*.graphql` of packages/* and integrations/*. With `--check`,
 * writes nothing and exits 1 when a generated file is missing, stale or
 * orphaned (CI runs this as `codegen:check`).
 */
const DOCUMENT_GLOBS = ['packages/*/src/**/*.graphql', 'integrations/*/src/**/*.graphql'];
const APP_INTERFACE_PACKAGE = 'packages/app-interface/';

async function main(argv: readonly string[]): Promise<number> {
  const check = argv.includes('--check');
  const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..');
  const schema = await loadCodegenSchema(repoRoot);
  const documents = (await collect(repoRoot, DOCUMENT_GLOBS)).sort();
  const stale: string[] = [];
  const failures: string[] = [];
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
  for (const f of failures) console.error(`error: ${f}`);
  if (check) {
    for (const s of stale) console.error(`stale: ${s}`);
    for (const o of orphans) console.error(`orphaned (its .graphql file is gone): ${o}`);
    if (stale.length || orphans.length) {
      console.error('run `npm run codegen -w @qontract/app-interface` and commit the result');
    } else if (!failures.length) {
      console.log(`codegen: ${documents.length} document(s) up to date`);
    }
    return stale.length || orphans.length || failures.length ? 1 : 0;
  }
  for (const s of stale) console.log(`wrote ${s}`);
  for (const o of orphans) console.warn(`orphaned generated file (delete it): ${o}`);
  console.log(`codegen: ${documents.length} document(s), ${stale.length} written`);
  return failures.length ? 1 : 0;
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

process.exitCode = await main(process.argv.slice(2));
