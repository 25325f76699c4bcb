/**
 * The value model for resource bodies. Bodies stay plain JSON-like JS data wherever Python and JS
 * agree (str, bool, None, list, dict with str keys, non-integral finite floats, safe ints); the
 * few Python values JS cannot tell apart get a small class, so that hashing stays byte-identical
 * with the original's `json.dumps`:
 *
 * - `number`: an integral JS number is a Python `int`, a non-integral one a Python `float`;
 * - `bigint`: a Python `int` (used beyond 2^53, exact);
 * - `PyFloat`: a Python `float` JS would otherwise misread as an int or cannot show (`1.0`, `-0.0`,
 *   `inf`, `nan`);
 * - `PyDict`: a dict with at least one key that is not a plain JS string (int, float, bool, None,
 *   date, bytes keys from YAML, or a `PyStr`);
 * - `PyStr`: a Python str holding lone surrogates that JS would fuse into one character;
 * - `PyBytes` (`!!binary`), `PySet` (`!!set`), `PyDate` (YAML timestamps): they fail to serialise,
 *   like in Python, unless canonicalisation removes them first;
 * - tuples (`!!pairs` items) are plain arrays registered in `pyTuples`;
 * - `!!omap` values are dicts registered in `pyOrderedDicts` (the original loads an OrderedDict).
 */

export class PyFloat {
  readonly value: number;
  constructor(value: number) {
    this.value = value;
  }
}

export class PyStr {
  /** The Python code points; surrogates stay separate. */
  readonly codePoints: readonly number[];
  /** The same text as a JS string (lone surrogates fused where adjacent): the JSON output is identical. */
  readonly js: string;
  constructor(codePoints: readonly number[]) {
    this.codePoints = codePoints;
    let js = '';
    for (const cp of codePoints) js += String.fromCodePoint(cp);
    this.js = js;
  }
}

export class PyBytes {
  readonly bytes: Uint8Array;
  constructor(bytes: Uint8Array) {
    this.bytes = bytes;
  }
}

export class PySet {
  readonly items: PyValue[];
  constructor(items: PyValue[]) {
    this.items = items;
  }
}

export interface PyTimezone {
  /** Offset from UTC in minutes; `utc` marks `datetime.timezone.utc` (written `Z`). */
  readonly offsetMinutes: number;
  readonly utc: boolean;
}

export class PyDate {
  readonly year: number;
  readonly month: number;
  readonly day: number;
  /** Absent for a `datetime.date`. */
  readonly time:
    | { hour: number; minute: number; second: number; microsecond: number; tz: PyTimezone | null }
    | undefined;
  constructor(year: number, month: number, day: number, time?: PyDate['time']) {
    this.year = year;
    this.month = month;
    this.day = day;
    this.time = time;
  }
}

export class PyDict {
  readonly entries: [PyValue, PyValue][];
  constructor(entries: [PyValue, PyValue][] = []) {
    this.entries = entries;
  }
  indexOf(key: PyValue): number {
    for (let i = 0; i < this.entries.length; i++) {
      if (pyKeyEquals(this.entries[i]![0], key)) return i;
    }
    return -1;
  }
  get(key: PyValue): PyValue | undefined {
    const i = this.indexOf(key);
    return i < 0 ? undefined : this.entries[i]![1];
  }
  has(key: PyValue): boolean {
    return this.indexOf(key) >= 0;
  }
  set(key: PyValue, value: PyValue): void {
    const i = this.indexOf(key);
    if (i < 0) this.entries.push([key, value]);
    else this.entries[i]![1] = value;
  }
  delete(key: PyValue): boolean {
    const i = this.indexOf(key);
    if (i < 0) return false;
    this.entries.splice(i, 1);
    return true;
  }
}

type PyScalar = string | number | bigint | boolean | null | PyFloat | PyStr | PyBytes | PyDate;
export type PyValue = PyScalar | PyValue[] | PyObject | PyDict | PySet;
export interface PyObject {
  [key: string]: PyValue;
}

/**
 * Bodies loaded from YAML in which one node is reachable twice (anchors and aliases). Python's
 * deepcopy keeps such sharing, so canonicalisation must copy these bodies fully.
 */
export const bodiesWithSharedNodes = new WeakSet<object>();

/** Arrays that stand for Python tuples (only `str()` tells them apart from lists). */
export const pyTuples = new WeakSet<PyValue[]>();

/**
 * Dicts the original loads as `collections.OrderedDict` (YAML `!!omap`). They hash like any dict;
 * only Python `str()` spells them differently (`OrderedDict({'a': 1})`).
 */
export const pyOrderedDicts = new WeakSet<object>();

export function isPlainDict(v: unknown): v is PyObject {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

export function isDict(v: unknown): v is PyObject | PyDict {
  return v instanceof PyDict || isPlainDict(v);
}

export function isPyStr(v: unknown): v is string | PyStr {
  return typeof v === 'string' || v instanceof PyStr;
}

/** Sets a key on a plain dict, also when the key is `__proto__`. */
export function setOwn(obj: PyObject, key: string, value: PyValue): void {
  if (key === '__proto__') {
    Object.defineProperty(obj, key, {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  } else {
    obj[key] = value;
  }
}

/** `d.get(key)` for either dict representation; `undefined` when missing. */
export function dictGet(d: PyObject | PyDict, key: string): PyValue | undefined {
  if (d instanceof PyDict) return d.get(key);
  return Object.hasOwn(d, key) ? d[key] : undefined;
}

export function dictHas(d: PyObject | PyDict, key: string): boolean {
  return d instanceof PyDict ? d.has(key) : Object.hasOwn(d, key);
}

export function dictSet(d: PyObject | PyDict, key: string, value: PyValue): void {
  if (d instanceof PyDict) d.set(key, value);
  else setOwn(d, key, value);
}

export function dictDelete(d: PyObject | PyDict, key: string): void {
  if (d instanceof PyDict) d.delete(key);
  else if (Object.hasOwn(d, key)) delete d[key];
}

export function dictKeys(d: PyObject | PyDict): PyValue[] {
  return d instanceof PyDict ? d.entries.map((e) => e[0]) : Object.keys(d);
}

export function dictEntries(d: PyObject | PyDict): [PyValue, PyValue][] {
  return d instanceof PyDict ? d.entries.slice() : Object.entries(d);
}

export function dictSize(d: PyObject | PyDict): number {
  return d instanceof PyDict ? d.entries.length : Object.keys(d).length;
}

/** Python's numeric tower for `==`: bool < int < float, compared by value. */
function numericValue(v: PyValue): number | bigint | undefined {
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'number' || typeof v === 'bigint') return v;
  if (v instanceof PyFloat) return v.value;
  return undefined;
}

function numbersEqual(a: number | bigint, b: number | bigint): boolean {
  if (typeof a === 'bigint' && typeof b === 'bigint') return a === b;
  if (typeof a === 'number' && typeof b === 'number') return a === b;
  // biome-ignore lint/suspicious/noDoubleEquals: mixed bigint/number comparison is exact with ==
  return a == b;
}

function strEquals(a: string | PyStr, b: string | PyStr): boolean {
  if (typeof a === 'string' && typeof b === 'string') return a === b;
  if (a instanceof PyStr && b instanceof PyStr) {
    return (
      a.codePoints.length === b.codePoints.length &&
      a.codePoints.every((c, i) => c === b.codePoints[i])
    );
  }
  const pa = typeof a === 'string' ? Array.from(a, (c) => c.codePointAt(0)!) : a.codePoints;
  const pb = typeof b === 'string' ? Array.from(b, (c) => c.codePointAt(0)!) : b.codePoints;
  return pa.length === pb.length && pa.every((c, i) => c === pb[i]);
}

/** Equality of hashable values as dict keys (Python `hash` + `==`). */
function pyKeyEquals(a: PyValue, b: PyValue): boolean {
  return pyEquals(a, b);
}

/** Python `==` on values (deep for containers; `1 == 1.0 == True`). */
export function pyEquals(a: PyValue, b: PyValue): boolean {
  if (a === b) return typeof a !== 'number' || !Number.isNaN(a);
  // Fast paths for the JSON-like shapes bodies are made of.
  if (typeof a === 'string' && typeof b === 'string') return false;
  if (typeof a === 'number' && typeof b === 'number') return false;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) {
    // Only scalars of different JS types are left: Python's numeric tower and PyStr decide.
    if (isPyStr(a) || isPyStr(b)) return isPyStr(a) && isPyStr(b) && strEquals(a, b);
    if (a === null || b === null) return false;
    const x = numericValue(a);
    const y = numericValue(b);
    return x !== undefined && y !== undefined && numbersEqual(x, y);
  }
  const aIsArray = Array.isArray(a);
  if (aIsArray !== Array.isArray(b)) return false;
  if (!aIsArray && isPlainDict(a) && isPlainDict(b)) {
    const keys = Object.keys(a);
    if (keys.length !== Object.keys(b).length) return false;
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i] as string;
      if (!Object.hasOwn(b, k)) return false;
      const va = a[k];
      const vb = b[k];
      if (va === undefined || vb === undefined) {
        if (va !== vb) return false;
      } else if (va !== vb && !pyEquals(va, vb)) {
        return false;
      }
    }
    return true;
  }
  if (isPyStr(a) || isPyStr(b)) return isPyStr(a) && isPyStr(b) && strEquals(a, b);
  if (a === null || b === null) return false;
  const na = numericValue(a);
  if (na !== undefined) {
    const nb = numericValue(b);
    return nb !== undefined && numbersEqual(na, nb);
  }
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || pyTuples.has(a) !== pyTuples.has(b) || a.length !== b.length)
      return false;
    for (let i = 0; i < a.length; i++) if (!pyEquals(a[i]!, b[i]!)) return false;
    return true;
  }
  if (isDict(a)) {
    if (!isDict(b)) return false;
    const ea = dictEntries(a);
    if (ea.length !== dictSize(b)) return false;
    for (const [k, v] of ea) {
      const other =
        b instanceof PyDict
          ? b.get(k)
          : isPyStr(k) && typeof k === 'string'
            ? dictGet(b, k)
            : undefined;
      if (other === undefined || !pyEquals(v, other)) return false;
    }
    return true;
  }
  if (a instanceof PyBytes) {
    return (
      b instanceof PyBytes &&
      a.bytes.length === b.bytes.length &&
      a.bytes.every((x, i) => x === b.bytes[i])
    );
  }
  if (a instanceof PyDate) {
    return b instanceof PyDate && pyDateEquals(a, b);
  }
  if (a instanceof PySet) {
    return (
      b instanceof PySet &&
      a.items.length === b.items.length &&
      a.items.every((x) => b.items.some((y) => pyEquals(x, y)))
    );
  }
  return false;
}

function pyDateEquals(a: PyDate, b: PyDate): boolean {
  if ((a.time === undefined) !== (b.time === undefined)) return false;
  if (a.year !== b.year || a.month !== b.month || a.day !== b.day) return false;
  if (!a.time || !b.time) return true;
  const ta = a.time;
  const tb = b.time;
  return (
    ta.hour === tb.hour &&
    ta.minute === tb.minute &&
    ta.second === tb.second &&
    ta.microsecond === tb.microsecond &&
    (ta.tz?.offsetMinutes ?? null) === (tb.tz?.offsetMinutes ?? null)
  );
}

/** Python truthiness. */
export function pyTruthy(v: PyValue | undefined): boolean {
  if (v === undefined || v === null) return false;
  if (typeof v === 'string') return v.length > 0;
  if (typeof v === 'number') return v !== 0;
  if (typeof v === 'bigint') return v !== 0n;
  if (typeof v === 'boolean') return v;
  if (v instanceof PyFloat) return v.value !== 0;
  if (v instanceof PyStr) return v.codePoints.length > 0;
  if (Array.isArray(v)) return v.length > 0;
  if (v instanceof PyDict) return v.entries.length > 0;
  if (v instanceof PySet) return v.items.length > 0;
  if (v instanceof PyBytes) return v.bytes.length > 0;
  if (v instanceof PyDate) return true;
  return Object.keys(v).length > 0;
}

/** The Python type name, for error messages. */
export function pyTypeName(v: PyValue | undefined): string {
  if (v === undefined || v === null) return 'NoneType';
  if (typeof v === 'string' || v instanceof PyStr) return 'str';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'bigint') return 'int';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int' : 'float';
  if (v instanceof PyFloat) return 'float';
  if (Array.isArray(v)) return pyTuples.has(v) ? 'tuple' : 'list';
  if (v instanceof PyBytes) return 'bytes';
  if (v instanceof PySet) return 'set';
  if (v instanceof PyDate) return v.time ? 'datetime' : 'date';
  return 'dict';
}

/**
 * Deep copy that keeps shared sub-objects shared (Python `copy.deepcopy` memo), so
 * canonicalisation of YAML aliases behaves like the original.
 */
export function pyDeepCopy<T extends PyValue>(value: T, memo: Map<object, PyValue> = new Map()): T {
  if (typeof value !== 'object' || value === null) return value;
  const seen = memo.get(value);
  if (seen !== undefined) return seen as T;
  if (Array.isArray(value)) {
    const out: PyValue[] = new Array(value.length);
    memo.set(value, out);
    for (let i = 0; i < value.length; i++) out[i] = pyDeepCopy(value[i]!, memo);
    if (pyTuples.has(value)) pyTuples.add(out);
    return out as T;
  }
  if (value instanceof PyDict) {
    const out = new PyDict();
    memo.set(value, out);
    for (const [k, v] of value.entries)
      out.entries.push([pyDeepCopy(k, memo), pyDeepCopy(v, memo)]);
    if (pyOrderedDicts.has(value)) pyOrderedDicts.add(out);
    return out as T;
  }
  if (value instanceof PySet) {
    const out = new PySet([]);
    memo.set(value, out);
    for (const v of value.items) out.items.push(pyDeepCopy(v, memo));
    return out as T;
  }
  if (isPlainDict(value)) {
    const out: PyObject = {};
    memo.set(value, out);
    for (const k of Object.keys(value)) setOwn(out, k, pyDeepCopy(value[k]!, memo));
    if (pyOrderedDicts.has(value)) pyOrderedDicts.add(out);
    return out as T;
  }
  // Immutable leaf classes (PyFloat, PyStr, PyBytes, PyDate) can be shared.
  return value;
}
