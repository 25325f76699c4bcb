import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import {
  type Bundle,
  BundleLoadError,
  type BundleProblem,
  collectBundleFromDirectory,
  readBundleFile,
  serializeBundle,
  validateBundle,
} from '@qontract/app-interface';
import { QontractError } from '@qontract/core';
import { compareCodePoints } from '@qontract/pycompat';
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
  const problems: BundleProblem[] = [];
  let bundle: Bundle;
  let sha256: string;
  if (await isDirectory(source)) {
    const collected = await collectBundleFromDirectory(source, {});
    problems.push(...collected.problems);
    if (validate) problems.push(...validateBundle(collected.bundle, collected.unloaded));
    bundle = collected.bundle;
    sha256 = serializeBundle(bundle).sha256;
  } else {
    let loaded: Awaited<ReturnType<typeof readBundleFile>>;
    try {
      loaded = await readBundleFile(source);
    } catch (e) {
      if (e instanceof BundleLoadError) {
        return { source, bundle: null, sha256: null, problems: e.problems };
      }
      throw new QontractError(
        `${source}: not a bundle: ${e instanceof Error ? e.message : String(e)}`,
      );
    }
    bundle = loaded.bundle;
    sha256 = loaded.sha256;
    if (validate) problems.push(...validateBundle(bundle));
  }
  problems.sort((a, b) => compareCodePoints(a.file, b.file));
  return { source, bundle, sha256, problems: await locate(source, problems, bundle) };
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
