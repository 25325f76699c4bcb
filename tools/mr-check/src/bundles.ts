import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import {
  type Bundle,
  BundleLoadError,
  type BundleProblem,
  collectBundleFromDirectory,
  collectBundlePair,
  compareProblems,
  readBundleFile,
  serializeBundle,
  type validateBundle,
  validateBundleInSlices,
} from '@qontract/app-interface';
import { QontractError } from '@qontract/core';
import { isMap, isSeq, LineCounter, parseDocument } from 'yaml';

/** A problem of the head, with the line of its data file when it can be found. */
export type LocatedProblem = BundleProblem & { readonly line?: number };

/** A base or head of the check: the bundle, its sha, and what is wrong with it. */
export interface CheckedBundle {
  readonly source: string;
  /** Null when the tree is too broken to build a bundle from. */
  readonly bundle: Bundle | null;
  readonly sha256: string | null;
  readonly problems: readonly LocatedProblem[];
}

/** A built tree not validated yet: what validation needs besides the bundle. */
export interface BuiltBundle extends CheckedBundle {
  /** Files of a directory that exist but failed to load; null for a bundle.json. */
  readonly unloaded: UnloadedFiles | null;
}

type UnloadedFiles = NonNullable<Parameters<typeof validateBundle>[1]>;

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    throw new QontractError(`${path}: no such file or directory`);
  }
}

/**
 * Builds the bundle of a directory or reads a bundle.json and, with
 * `validate`, lists every problem at once: the checks `qontract-bundle
 * validate` runs (the embedded engine's loader and `validateBundle`).
 */
export async function checkBundle(source: string, validate: boolean): Promise<CheckedBundle> {
  const built = await buildBundle(source);
  return validate ? validateBuilt(built) : located(built, built.problems);
}

/** The bundle of a directory or bundle.json and the problems of loading it, not validated. */
export async function buildBundle(source: string): Promise<BuiltBundle> {
  if (await isDirectory(source)) {
    const collected = await collectBundleFromDirectory(source, {});
    return {
      source,
      bundle: collected.bundle,
      sha256: serializeBundle(collected.bundle).sha256,
      problems: collected.problems,
      unloaded: collected.unloaded,
    };
  }
  try {
    const loaded = await readBundleFile(source);
    return { source, bundle: loaded.bundle, sha256: loaded.sha256, problems: [], unloaded: null };
  } catch (e) {
    if (e instanceof BundleLoadError) {
      return { source, bundle: null, sha256: null, problems: e.problems, unloaded: null };
    }
    throw new QontractError(
      `${source}: not a bundle: ${e instanceof Error ? e.message : String(e)}`,
    );
  }
}

/**
 * The bundles of a check's base and head, not validated. Two directories
 * are built as a pair: the base reuses what building the head made of the
 * files both share, and comes out exactly as built on its own. A bundle.json
 * on either side is read as `buildBundle` reads it.
 */
export async function buildBundlePair(
  base: string,
  head: string,
): Promise<{ base: BuiltBundle; head: BuiltBundle }> {
  const baseIsDirectory = await isDirectory(base);
  const headIsDirectory = await isDirectory(head);
  if (!baseIsDirectory || !headIsDirectory) {
    const [builtBase, builtHead] = await Promise.all([buildBundle(base), buildBundle(head)]);
    return { base: builtBase, head: builtHead };
  }
  const pair = await collectBundlePair(base, head);
  const built = (source: string, side: typeof pair.base): BuiltBundle => ({
    source,
    bundle: side.bundle,
    sha256: side.sha256,
    problems: side.problems,
    unloaded: side.unloaded,
  });
  return { base: built(base, pair.base), head: built(head, pair.head) };
}

/**
 * A built bundle with every problem `validateBundle` finds added, lines
 * located. Validation runs in slices: the check's bundle server keeps
 * answering the integrations meanwhile.
 */
export async function validateBuilt(built: BuiltBundle): Promise<CheckedBundle> {
  if (!built.bundle) return located(built, built.problems);
  return located(built, [
    ...built.problems,
    ...(await validateBundleInSlices(built.bundle, built.unloaded ?? undefined)),
  ]);
}

async function located(
  built: CheckedBundle,
  problems: readonly BundleProblem[],
): Promise<CheckedBundle> {
  const sorted = [...problems].sort(compareProblems);
  return {
    source: built.source,
    bundle: built.bundle,
    sha256: built.sha256,
    problems: built.bundle ? await locate(built.source, sorted, built.bundle) : sorted,
  };
}

/**
 * Finds the line of a schema violation (its JSON pointer) or a dangling
 * `$ref` (the path it names) in the data file of a checkout. Parse problems
 * already name theirs; bundle.json sources have no lines.
 */
async function locate(
  source: string,
  problems: readonly BundleProblem[],
  bundle: Bundle,
): Promise<LocatedProblem[]> {
  const dataDir = join(source, 'data');
  return Promise.all(
    problems.map(async (p) => {
      if (!bundle.data[p.file] || !(p.kind === 'SCHEMA' || p.kind === 'REF')) return p;
      let text: string;
      try {
        text = await readFile(join(dataDir, p.file), 'utf8');
      } catch {
        return p;
      }
      const line = p.kind === 'SCHEMA' ? pointerLine(text, p.reason) : refLine(text, p.reason);
      return line === undefined ? p : { ...p, line };
    }),
  );
}

function pointerLine(text: string, reason: string): number | undefined {
  const pointer = /^schema \S+: (\/\S*) /.exec(reason)?.[1];
  if (pointer === undefined) return undefined;
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: false });
  let node: unknown = doc.contents;
  let offset: number | undefined = (node as { range?: number[] })?.range?.[0];
  for (const raw of pointer.split('/').slice(1)) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (isMap(node)) {
      const pair = node.items.find((i) => String((i.key as { value?: unknown })?.value) === key);
      if (!pair) break;
      offset = (pair.key as { range?: number[] })?.range?.[0] ?? offset;
      node = pair.value;
    } else if (isSeq(node)) {
      const item = node.items[Number(key)];
      if (item === undefined) break;
      offset = (item as { range?: number[] })?.range?.[0] ?? offset;
      node = item;
    } else break;
  }
  return offset === undefined ? undefined : lines.linePos(offset).line;
}

function refLine(text: string, reason: string): number | undefined {
  const ref = /\$ref (\S+)/.exec(reason)?.[1];
  if (!ref) return undefined;
  const index = text.split('\n').findIndex((l) => l.includes(ref));
  return index < 0 ? undefined : index + 1;
}
