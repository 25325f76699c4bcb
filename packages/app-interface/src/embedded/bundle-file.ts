import { readFile, writeFile } from 'node:fs/promises';
import { parseGraphqlSection } from './graphql-conf.ts';
import { BundleLoadError, type BundleProblem, ProblemKind } from './problems.ts';
import { pythonJsonDumps } from './python-json.ts';
import { isObject, sha256Hex } from './read-directory.ts';
import type { Bundle } from './types.ts';

/** A bundle with its identity: the sha256 of its JSON text, as `/sha256` serves it. */
export interface LoadedBundle {
  readonly bundle: Bundle;
  readonly sha256: string;
  /** The exact JSON text the sha was computed over. */
  readonly text: string;
}

/** Serialises a bundle the way qontract-bundler does and computes its sha. */
export function serializeBundle(bundle: Bundle): LoadedBundle {
  const text = pythonJsonDumps(bundle);
  return { bundle, text, sha256: sha256Hex(text) };
}

export async function writeBundleFile(path: string, bundle: Bundle): Promise<LoadedBundle> {
  const serialized = serializeBundle(bundle);
  await writeFile(path, serialized.text);
  return serialized;
}

/**
 * Reads a `bundle.json`. The sha is that of the file text, like
 * qontract-server's; the `graphql` section may be either form.
 */
export async function readBundleFile(path: string): Promise<LoadedBundle> {
  const text = await readFile(path, 'utf8');
  return parseBundleText(text, path);
}

function parseBundleText(text: string, source = 'bundle.json'): LoadedBundle {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw new BundleLoadError(source, [
      { file: source, reason: `invalid JSON: ${(e as Error).message}`, kind: ProblemKind.PARSE },
    ]);
  }
  const problems: BundleProblem[] = [];
  if (!isObject(parsed)) {
    problems.push({ file: source, reason: 'a bundle must be a JSON object', kind: 'FILE' });
  } else {
    for (const key of ['data', 'resources'] as const) {
      if (!isObject(parsed[key])) {
        problems.push({ file: source, reason: `missing or invalid "${key}"`, kind: 'FILE' });
      }
    }
    if (parsed.graphql === undefined) {
      problems.push({ file: source, reason: 'missing "graphql"', kind: 'FILE' });
    } else {
      const section = parseGraphqlSection(parsed.graphql);
      if (!section.ok) problems.push({ file: source, reason: section.reason, kind: 'GRAPHQL' });
    }
  }
  if (problems.length > 0) throw new BundleLoadError(source, problems);
  const raw = parsed as Record<string, unknown>;
  const bundle = { schemas: {}, ...raw } as unknown as Bundle;
  for (const key of ['git_commit', 'git_commit_timestamp'] as const) {
    if (raw[key] !== undefined && typeof raw[key] !== 'string') delete bundle[key];
  }
  return { bundle, text, sha256: sha256Hex(text) };
}
