/**
 * Python `list.sort()` on loaded values: the `<` of Python 3 (numbers of any kind compare by value,
 * so `False < 1 < 1.5 < True + 1`; str by code point; lists and tuples lexicographically; sets by
 * inclusion; dates) raising `TypeError` where Python cannot order two values (str and int, None,
 * dicts, list and tuple, ...), and CPython's own sort order of comparisons (a natural run, then
 * binary insertion), so that what raises and where NaN ends up match too.
 */
import {
  PyBytes,
  PyDate,
  PyFloat,
  PySet,
  PyStr,
  type PyValue,
  pyEquals,
  pyTuples,
  pyTypeName,
} from './py-values.ts';

export class PyTypeError extends Error {}

function unorderable(a: PyValue, b: PyValue): PyTypeError {
  return new PyTypeError(
    `'<' not supported between instances of '${pyTypeName(a)}' and '${pyTypeName(b)}'`,
  );
}

function numeric(v: PyValue): number | bigint | undefined {
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'number' || typeof v === 'bigint') return v;
  if (v instanceof PyFloat) return v.value;
  return undefined;
}

function codePoints(v: string | PyStr): readonly number[] {
  return typeof v === 'string' ? Array.from(v, (c) => c.codePointAt(0) ?? 0) : v.codePoints;
}

function lessCodePoints(a: readonly number[], b: ArrayLike<number>): boolean {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i]! < b[i]!;
  return a.length < b.length;
}

/** Microseconds since 0001-01-01 (naive, or UTC for an aware datetime). */
function dateKey(d: PyDate): bigint {
  const ms = new Date(0);
  ms.setUTCFullYear(d.year, d.month - 1, d.day);
  const days = BigInt(Math.floor(ms.getTime() / 86_400_000));
  const t = d.time;
  if (!t) return days;
  const minutes =
    BigInt(t.hour * 60 + t.minute) - BigInt(t.tz ? t.tz.offsetMinutes : 0) + days * 1440n;
  return (minutes * 60n + BigInt(t.second)) * 1_000_000n + BigInt(t.microsecond);
}

function dateLess(a: PyDate, b: PyDate): boolean {
  if ((a.time === undefined) !== (b.time === undefined)) {
    const [dt, d] = a.time
      ? ['datetime.datetime', 'datetime.date']
      : ['datetime.date', 'datetime.datetime'];
    throw new PyTypeError(`can't compare ${dt} to ${d}`);
  }
  if (a.time && b.time && (a.time.tz === null) !== (b.time.tz === null))
    throw new PyTypeError("can't compare offset-naive and offset-aware datetimes");
  return dateKey(a) < dateKey(b);
}

/** Python `a < b`. */
function pyLess(a: PyValue, b: PyValue): boolean {
  const x = numeric(a);
  const y = numeric(b);
  if (x !== undefined && y !== undefined) {
    // Mixed bigint/number comparison is exact in JS, like Python's int/float comparison.
    return x < y;
  }
  if (
    (typeof a === 'string' || a instanceof PyStr) &&
    (typeof b === 'string' || b instanceof PyStr)
  )
    return lessCodePoints(codePoints(a), codePoints(b));
  if (Array.isArray(a) && Array.isArray(b) && pyTuples.has(a) === pyTuples.has(b)) {
    const n = Math.min(a.length, b.length);
    for (let i = 0; i < n; i++) {
      if (!pyEquals(a[i]!, b[i]!)) return pyLess(a[i]!, b[i]!);
    }
    return a.length < b.length;
  }
  if (a instanceof PyBytes && b instanceof PyBytes)
    return lessCodePoints(Array.from(a.bytes), b.bytes);
  if (a instanceof PySet && b instanceof PySet) {
    return (
      a.items.length < b.items.length && a.items.every((v) => b.items.some((w) => pyEquals(v, w)))
    );
  }
  if (a instanceof PyDate && b instanceof PyDate) return dateLess(a, b);
  throw unorderable(a, b);
}

/** CPython's `count_run` (3.13+): the length of the leading run, made ascending in place. */
function countRun(a: PyValue[]): number {
  const n0 = a.length;
  let n = 1;
  for (; n < n0; n++) if (pyLess(a[n]!, a[n - 1]!)) break;
  if (n === n0) return n;
  if (n > 1) {
    if (pyLess(a[0]!, a[n - 1]!)) return n;
    reverse(a, 0, n);
  }
  n++;
  let neq = 0;
  const reverseLastEqual = () => {
    if (neq) {
      neq++;
      reverse(a, n - neq, n);
      neq = 0;
    }
  };
  for (; n < n0; n++) {
    if (pyLess(a[n]!, a[n - 1]!)) {
      reverseLastEqual();
    } else if (pyLess(a[n - 1]!, a[n]!)) {
      break;
    } else {
      neq++;
    }
  }
  reverseLastEqual();
  reverse(a, 0, n);
  for (; n < n0; n++) if (pyLess(a[n]!, a[n - 1]!)) break;
  return n;
}

function reverse(a: PyValue[], from: number, to: number): void {
  for (let i = from, j = to - 1; i < j; i++, j--) {
    const t = a[i]!;
    a[i] = a[j]!;
    a[j] = t;
  }
}

/**
 * Python `list.sort()` in place. For lists of fewer than 64 items this is CPython's exact sequence
 * of comparisons (one run, then binary insertion); longer lists use the same binary insertion over
 * the rest, which gives the same result whenever the items are totally ordered. A TypeError leaves
 * the list unchanged (the caller fails anyway).
 */
export function pySortInPlace(list: PyValue[]): void {
  if (list.length < 2) return;
  const a = list.slice();
  let ok = countRun(a);
  for (; ok < a.length; ok++) {
    const pivot = a[ok]!;
    let lo = 0;
    let hi = ok;
    do {
      const mid = (lo + hi) >> 1;
      if (pyLess(pivot, a[mid]!)) hi = mid;
      else lo = mid + 1;
    } while (lo < hi);
    for (let m = ok; m > lo; m--) a[m] = a[m - 1]!;
    a[lo] = pivot;
  }
  for (let i = 0; i < a.length; i++) list[i] = a[i]!;
}
