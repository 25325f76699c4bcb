/**
 * Python `json.dumps(obj, sort_keys=True)` with its defaults (`ensure_ascii=True`,
 * `allow_nan=True`, separators `", "` and `": "`), byte for byte, over the YAML loader's value
 * model. The hash the original stores on cluster objects is computed over exactly this text.
 * Strings, numbers and key order come from @qontract/pycompat; this encoder stays apart from
 * pycompat's `pyJsonDumps` because its dicts may have non-str keys (Python converts int, float,
 * bool and None keys, and raises on a mix), its strings may be `PyStr` (separate surrogate code
 * points, which a JS string fuses), and it is the hot path of every hash (key text cache,
 * insertion sort).
 */
import { compareCodePoints, pyFloatRepr, pyIntRepr, pyJsonString } from '@qontract/pycompat';
import { PyDict, PyFloat, type PyObject, PyStr, type PyValue, pyTypeName } from './py-values.ts';

class PyJsonError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PyJsonError';
  }
}

const HIGH_KEY_CHAR = /[\ud800-\uffff]/;

function compareCodePointArrays(a: readonly number[], b: readonly number[]): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}

function strCodePoints(v: string | PyStr): readonly number[] {
  return typeof v === 'string' ? Array.from(v, (c) => c.codePointAt(0) ?? 0) : v.codePoints;
}

function numericKey(v: PyValue): number | bigint | undefined {
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'number' || typeof v === 'bigint') return v;
  if (v instanceof PyFloat) return v.value;
  return undefined;
}

function keyText(k: PyValue): string {
  if (typeof k === 'string') return k;
  if (k instanceof PyStr) return k.js;
  if (k === null) return 'null';
  if (typeof k === 'boolean') return k ? 'true' : 'false';
  if (typeof k === 'bigint') return pyIntRepr(k);
  if (typeof k === 'number') return Number.isInteger(k) ? pyIntRepr(k) : pyFloatRepr(k);
  if (k instanceof PyFloat) return pyFloatRepr(k.value);
  throw new PyJsonError(`keys must be str, int, float, bool or None, not ${pyTypeName(k)}`);
}

function sortedDictEntries(d: PyDict): [string, PyValue][] {
  const entries = d.entries;
  if (entries.length === 0) return [];
  const strKeys = entries.filter((e) => typeof e[0] === 'string' || e[0] instanceof PyStr);
  if (strKeys.length === entries.length) {
    const sorted = entries
      .slice()
      .sort((a, b) =>
        compareCodePointArrays(
          strCodePoints(a[0] as string | PyStr),
          strCodePoints(b[0] as string | PyStr),
        ),
      );
    return sorted.map(([k, v]) => [keyText(k), v]);
  }
  if (strKeys.length > 0) {
    throw new PyJsonError("'<' not supported between instances of 'int' and 'str'");
  }
  if (entries.length > 1) {
    for (const [k] of entries) {
      if (numericKey(k) === undefined) {
        throw new PyJsonError(
          `'<' not supported between instances of '${pyTypeName(k)}' and another key type`,
        );
      }
    }
  }
  const sorted = entries.slice().sort((a, b) => {
    const x = numericKey(a[0]) as number | bigint;
    const y = numericKey(b[0]) as number | bigint;
    return x < y ? -1 : x > y ? 1 : 0;
  });
  return sorted.map(([k, v]) => [keyText(k), v]);
}

/**
 * Written keys (`"name": `) by key: bodies repeat the same few hundred keys, and reusing the text
 * saves the escaping check and an allocation per key. Bounded so odd data cannot grow it forever.
 */
const KEY_TEXT_CACHE = new Map<string, string>();
const KEY_TEXT_CACHE_LIMIT = 10_000;

function keyPrefix(k: string): string {
  let text = KEY_TEXT_CACHE.get(k);
  if (text === undefined) {
    text = `${pyJsonString(k)}: `;
    if (KEY_TEXT_CACHE.size < KEY_TEXT_CACHE_LIMIT) KEY_TEXT_CACHE.set(k, text);
  }
  return text;
}

function sortedPlainKeys(obj: PyObject): string[] {
  const keys = Object.keys(obj);
  if (keys.length <= 16) {
    // Insertion sort: several times faster than Array.prototype.sort for the few keys objects have.
    for (let i = 1; i < keys.length; i++) {
      const key = keys[i] as string;
      let j = i - 1;
      while (j >= 0 && (keys[j] as string) > key) {
        keys[j + 1] = keys[j] as string;
        j--;
      }
      keys[j + 1] = key;
    }
  } else {
    keys.sort();
  }
  for (const k of keys) {
    if (HIGH_KEY_CHAR.test(k)) return keys.sort(compareCodePoints);
  }
  return keys;
}

/**
 * Python's encoder raises on a circular structure (ValueError) and on a very deep one
 * (RecursionError); a depth limit gives the same outcome without tracking every container.
 */
const MAX_DEPTH = 1000;

function encodeLeaf(v: PyValue | undefined): string {
  if (v === undefined) throw new PyJsonError('Object of type undefined is not JSON serializable');
  if (typeof v === 'bigint') return pyIntRepr(v);
  if (v instanceof PyFloat) return pyFloatRepr(v.value);
  if (v instanceof PyStr) return pyJsonString(v.js);
  throw new PyJsonError(`Object of type ${pyTypeName(v as PyValue)} is not JSON serializable`);
}

function encode(v: PyValue | undefined, sortKeys: boolean, depth: number): string {
  if (typeof v === 'string') return pyJsonString(v);
  if (typeof v === 'number') return Number.isInteger(v) ? pyIntRepr(v) : pyFloatRepr(v);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (v === null) return 'null';
  if (typeof v !== 'object') return encodeLeaf(v);
  if (depth > MAX_DEPTH) throw new PyJsonError('Circular reference detected');
  if (Array.isArray(v)) {
    if (v.length === 0) return '[]';
    let out = `[${encode(v[0], sortKeys, depth + 1)}`;
    for (let i = 1; i < v.length; i++) out += `, ${encode(v[i], sortKeys, depth + 1)}`;
    return `${out}]`;
  }
  const proto = Object.getPrototypeOf(v);
  if (proto === Object.prototype || proto === null) {
    const obj = v as PyObject;
    const keys = sortKeys ? sortedPlainKeys(obj) : Object.keys(obj);
    let out = '{';
    let first = true;
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i] as string;
      const x = obj[k];
      if (x === undefined) continue; // absent optional fields of bodies built in TypeScript
      if (!first) out += ', ';
      out += keyPrefix(k) + encode(x, sortKeys, depth + 1);
      first = false;
    }
    return `${out}}`;
  }
  if (v instanceof PyDict) {
    const entries = sortKeys
      ? sortedDictEntries(v)
      : v.entries.map(([k, x]) => [keyText(k), x] as const);
    if (entries.length === 0) return '{}';
    return `{${entries.map(([k, x]) => `${pyJsonString(k)}: ${encode(x, sortKeys, depth + 1)}`).join(', ')}}`;
  }
  return encodeLeaf(v);
}

/** `json.dumps(value, sort_keys=True)` as Python writes it. Throws `PyJsonError` where Python raises. */
export function pyJsonDumps(value: PyValue, options: { sortKeys?: boolean } = {}): string {
  return encode(value, options.sortKeys ?? true, 0);
}
