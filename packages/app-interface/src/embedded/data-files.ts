import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { compareCodePoints } from '@qontract/pycompat';
import { type BundleProblem, ProblemKind } from './problems.ts';
import type { JsonObject, JsonValue } from './types.ts';
import { decodeUtf8 } from './utf8.ts';
import {
  keysInDocumentOrder,
  parseJsonData,
  parseYaml11,
  rememberDocumentOrder,
} from './yaml11.ts';

/** One data file to read: its path on disk and its bundle key. */
export type DataFileJob = readonly [file: string, key: string];

export interface DataFileResults {
  data: [key: string, doc: JsonObject][];
  problems: BundleProblem[];
}

/**
 * Reads and parses data files. Synchronous on purpose: for thousands of small
 * files fs/promises costs several times more (a FileHandle per file) than
 * the parsing itself.
 */
export function readDataFiles(jobs: readonly DataFileJob[]): DataFileResults {
  const out: DataFileResults = { data: [], problems: [] };
  for (const [file, key] of jobs) {
    let raw: Buffer;
    try {
      raw = readFileSync(file);
    } catch (e) {
      out.problems.push({
        file: key,
        reason: `cannot read: ${(e as Error).message}`,
        kind: 'FILE',
      });
      continue;
    }
    const doc = parseDataFile(key, raw, out.problems);
    if (doc) out.data.push([key, doc]);
  }
  return out;
}

function parseDataFile(key: string, raw: Buffer, problems: BundleProblem[]): JsonObject | null {
  const doc = parseStructured(key, raw, problems, ProblemKind.PARSE);
  if (doc === undefined) return null;
  if (!isObject(doc)) {
    problems.push({ file: key, reason: 'a data file must be a mapping', kind: 'FILE' });
    return null;
  }
  if (typeof doc.$schema !== 'string' || doc.$schema === '') {
    problems.push({ file: key, reason: 'the data file has no $schema', kind: 'FILE' });
    return null;
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
  return createHash('sha256').update(data).digest('hex');
}

export function sortObjectKeys(obj: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const k of Object.keys(obj).sort(compareCodePoints)) out[k] = obj[k]!;
  return out;
}
