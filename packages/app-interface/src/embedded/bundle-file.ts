import { readFile, writeFile } from 'node:fs/promises';
import { isDeepStrictEqual } from 'node:util';
import { compareCodePoints, pyJsonString } from '@qontract/pycompat';
import { isObject, sha256Hex } from './data-files.ts';
import { parseGraphqlSection } from './graphql-conf.ts';
import { BundleLoadError, type BundleProblem, ProblemKind } from './problems.ts';
import { pythonJsonDumps } from './python-json.ts';
import type { Bundle } from './types.ts';

/** A bundle with its identity: the sha256 of its JSON text, as `/sha256` serves it. */
export interface LoadedBundle {
  readonly bundle: Bundle;
  readonly sha256: string;
  /** The exact JSON text the sha was computed over. */
  readonly text: string;
}

/**
 * Serialises a bundle the way qontract-bundler does and computes its sha.
 * With a `cache`, parts of the bundle equal to those of a bundle serialized
 * before with it reuse their text (same bytes).
 */
export function serializeBundle(bundle: Bundle, cache?: BundleTextCache): LoadedBundle {
  const text = cache ? cache.bundleText(bundle) : pythonJsonDumps(bundle);
  return { bundle, text, sha256: sha256Hex(text) };
}

/** The bundle sections whose entries (one per file) are cached one by one. */
const PER_FILE_SECTIONS: ReadonlySet<string> = new Set(['data', 'resources']);

/**
 * The JSON text of the parts of bundles serialized one after the other that
 * share most of their content (the two sides of a merge request): each data
 * file, each resource and each other top-level section. A part whose value
 * is deep-equal to the one serialized before under the same name reuses its
 * text, so the value a text was made from must not change while the cache
 * is in use.
 */
export class BundleTextCache {
  /** Top-level sections, and each file of the per-file ones, by name: `"name":text`. */
  readonly #sections = new Map<string, Member>();
  readonly #files = new Map<string, Map<string, Member>>();

  /** What `pythonJsonDumps(bundle)` writes, put together from the parts' texts. */
  bundleText(bundle: Bundle): string {
    const sections = Object.entries(bundle).filter(([, v]) => v !== undefined);
    const members: string[] = [];
    for (const [key, value] of sortedEntries(sections)) {
      if (PER_FILE_SECTIONS.has(key) && isPlainObject(value)) {
        const files = this.#files.get(key) ?? new Map<string, Member>();
        this.#files.set(key, files);
        members.push(`${pyJsonString(key)}:${recordText(files, value)}`);
      } else {
        members.push(member(this.#sections, key, value));
      }
    }
    return `{${members.join(',')}}\n`;
  }
}

/** A `"name":value` member of a JSON object, with the value it was written from. */
interface Member {
  readonly value: unknown;
  readonly text: string;
}

function recordText(kept: Map<string, Member>, record: Record<string, unknown>): string {
  const entries = Object.entries(record).filter(([, v]) => v !== undefined);
  const members: string[] = [];
  for (const [key, value] of sortedEntries(entries)) members.push(member(kept, key, value));
  return `{${members.join(',')}}`;
}

function member(kept: Map<string, Member>, key: string, value: unknown): string {
  const before = kept.get(key);
  if (before && (before.value === value || isDeepStrictEqual(before.value, value))) {
    return before.text;
  }
  // Compact JSON is the same text at any depth: the value alone, without the final newline.
  const text = `${pyJsonString(key)}:${pythonJsonDumps(value).slice(0, -1)}`;
  kept.set(key, { value, text });
  return text;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (!isObject(v)) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}

/** Entries in code-point order of their keys, as `sort_keys` writes them. */
function sortedEntries<T>(entries: [string, T][]): [string, T][] {
  for (let i = 1; i < entries.length; i++) {
    if (compareCodePoints(entries[i - 1]![0], entries[i]![0]) > 0) {
      return entries.sort(([a], [b]) => compareCodePoints(a, b));
    }
  }
  return entries;
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
