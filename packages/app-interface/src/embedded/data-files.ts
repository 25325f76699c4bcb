import { hash } from 'node:crypto';
import { compareCodePoints } from '@qontract/pycompat';
import { type BundleProblem, ProblemKind } from './problems.ts';
import type { DirectoryFiles } from './tree-files.ts';
import type { JsonObject, JsonValue } from './types.ts';
import { decodeUtf8 } from './utf8.ts';
import {
  cloneJsonData,
  keysInDocumentOrder,
  parseJsonData,
  parseYaml11,
  rememberDocumentOrder,
} from './yaml11.ts';

export interface DataFileResults {
  data: [key: string, doc: JsonObject][];
  problems: BundleProblem[];
}

/**
 * What one build made of its files, by bundle key, with the bytes each came
 * from: a second build of a tree that shares most files (the two sides of a
 * merge request) takes a value instead of decoding and parsing the same
 * bytes again. A value serves one more bundle only, so it is handed over,
 * not copied, and must be one no bundle has changed yet.
 */
export class FileMemo<T> {
  readonly #entries = new Map<string, { readonly raw: Buffer; readonly value: T }>();

  keep(key: string, raw: Buffer, value: T): void {
    this.#entries.set(key, { raw, value });
  }

  /** The value kept for `key` if it came from exactly these bytes; it leaves the memo. */
  take(key: string, raw: Buffer): T | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    this.#entries.delete(key);
    return entry.raw.equals(raw) ? entry.value : undefined;
  }
}

/** Between two builds: the first `keep`s its parses, the second `reuse`s them. */
export interface MemoUse<T> {
  readonly keep?: FileMemo<T>;
  readonly reuse?: FileMemo<T>;
}

/**
 * A file's parse for a bundle: the one another build kept for the same
 * bytes, or `parse()`'s (undefined: it failed, and said why). A value kept
 * for the next build must stay untouched, so this bundle gets a copy
 * (post-processing writes into it).
 */
export function parsedOnce<T extends JsonValue>(
  memo: MemoUse<T>,
  key: string,
  raw: Buffer,
  parse: () => T | undefined,
): T | undefined {
  const reused = memo.reuse?.take(key, raw);
  if (reused !== undefined) return reused;
  const value = parse();
  if (value === undefined || !memo.keep) return value;
  memo.keep.keep(key, raw, value);
  return cloneJsonData(value);
}

/** The bytes of `dir`'s file `index`, or a problem naming it (a symlink to a directory, a file that went away). */
export function readOrProblem(
  dir: DirectoryFiles,
  index: number,
  problems: BundleProblem[],
): Buffer | undefined {
  try {
    return dir.read(index);
  } catch (e) {
    const key = dir.files[index]![1];
    problems.push({ file: key, reason: `cannot read: ${(e as Error).message}`, kind: 'FILE' });
    return undefined;
  }
}

/**
 * Reads and parses the data files among `dir`'s files. Synchronous on
 * purpose: for thousands of small files fs/promises costs several times
 * more (a FileHandle per file) than the parsing itself.
 */
export function readDataFiles(
  dir: DirectoryFiles,
  isDataFile: (key: string) => boolean,
  memo: MemoUse<JsonObject> = {},
): DataFileResults {
  const out: DataFileResults = { data: [], problems: [] };
  dir.files.forEach(([, key], i) => {
    if (!isDataFile(key)) return;
    const raw = readOrProblem(dir, i, out.problems);
    if (raw === undefined) return;
    const doc = parsedOnce(memo, key, raw, () => parseDataFile(key, raw, out.problems));
    if (doc) out.data.push([key, doc]);
  });
  return out;
}

function parseDataFile(
  key: string,
  raw: Buffer,
  problems: BundleProblem[],
): JsonObject | undefined {
  const doc = parseStructured(key, raw, problems, ProblemKind.PARSE);
  if (doc === undefined) return undefined;
  if (!isObject(doc)) {
    problems.push({ file: key, reason: 'a data file must be a mapping', kind: 'FILE' });
    return undefined;
  }
  if (typeof doc.$schema !== 'string' || doc.$schema === '') {
    problems.push({ file: key, reason: 'the data file has no $schema', kind: 'FILE' });
    return undefined;
  }
  const withChecksum = sortObjectKeys({ ...doc, $file_sha256sum: sha256Hex(raw) });
  // The bundler sets the checksum after parsing: a new key goes last.
  const order = keysInDocumentOrder(doc);
  rememberDocumentOrder(
    withChecksum,
    order.includes('$file_sha256sum') ? order : [...order, '$file_sha256sum'],
  );
  return withChecksum;
}

/** What a file is, for the problem a bad encoding gets. */
const FILE_NOUN: Record<ProblemKind, string> = {
  PARSE: 'data file',
  SCHEMA: 'JSON schema',
  GRAPHQL: 'GraphQL schema',
  FILE: 'file',
  REF: 'file',
  UNIQUE: 'file',
};

export function parseStructured(
  key: string,
  raw: Buffer,
  problems: BundleProblem[],
  kind: ProblemKind,
): JsonValue | undefined {
  const text = decodeFile(key, raw, FILE_NOUN[kind], problems);
  if (text === undefined) return undefined;
  try {
    return key.endsWith('.json') ? parseJsonData(text) : parseYaml11(text);
  } catch (e) {
    problems.push({ file: key, reason: (e as Error).message, kind });
    return undefined;
  }
}

/**
 * The text of a file of the checkout, or a problem naming it and the first
 * byte that is not UTF-8: the bundler fails on such a file, whatever it is.
 */
export function decodeFile(
  key: string,
  raw: Uint8Array,
  noun: string,
  problems: BundleProblem[],
): string | undefined {
  try {
    return decodeUtf8(raw);
  } catch (e) {
    problems.push({
      file: key,
      reason: `${noun} is not UTF-8 text: ${(e as Error).message}`,
      kind: ProblemKind.FILE,
    });
    return undefined;
  }
}

export function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function sha256Hex(data: string | Uint8Array): string {
  return hash('sha256', data);
}

export function sortObjectKeys(obj: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const k of Object.keys(obj).sort(compareCodePoints)) out[k] = obj[k]!;
  return out;
}
