import { failure, RenderFailure } from './errors.ts';

/**
 * Python's unbounded `int` over JavaScript values. An int is a `number` while
 * it is a safe integer (the common, fast case) and a `bigint` beyond
 * ±(2^53 − 1); `normalizeInt` keeps that invariant for every result, so a
 * `bigint` is never zero and never small. Integral `number`s beyond the safe
 * range (handed in by a library) are accepted as ints with the value of the
 * double. Hand-written: no library offers Python's int/float mix (floor
 * division, correctly rounded true division, exact int/float comparison).
 */
export type PyInt = number | bigint;

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** Python's limit for decimal conversions of ints (`sys.get_int_max_str_digits()`, 3.11+). */
const INT_MAX_STR_DIGITS = 4300;

/**
 * Results beyond this many bits are refused (a render limit, not Python's:
 * Python would spend minutes and gigabytes on `2 ** 10**10`). 2^20 bits is
 * about 315 000 decimal digits, far more than can ever be printed (4300).
 */
const MAX_INT_BITS = 1 << 20;

export function normalizeInt(b: bigint): PyInt {
  return b >= -MAX_SAFE && b <= MAX_SAFE ? Number(b) : b;
}

export function toBigInt(v: PyInt): bigint {
  return typeof v === 'bigint' ? v : BigInt(v);
}

function bitLength(b: bigint): number {
  return b === 0n ? 0 : (b < 0n ? -b : b).toString(2).length;
}

function checkBits(b: bigint): PyInt {
  if (bitLength(b) > MAX_INT_BITS) {
    throw failure.limit(`integer result larger than the limit of ${MAX_INT_BITS} bits`);
  }
  return normalizeInt(b);
}

/** Python `float(int)`: rounded to nearest (ties to even); too large is an OverflowError. */
export function intToFloat(v: PyInt): number {
  if (typeof v === 'number') return v;
  const n = Number(v);
  if (!Number.isFinite(n))
    throw new RenderFailure('OverflowError', 'int too large to convert to float');
  return n;
}

/** Python `int(x)` of a finite float (truncated towards zero). */
export function floatToInt(x: number): PyInt {
  if (!Number.isFinite(x)) {
    throw Number.isNaN(x)
      ? failure.value('cannot convert float NaN to integer')
      : new RenderFailure('OverflowError', 'cannot convert float infinity to integer');
  }
  const t = Math.trunc(x);
  return Number.isSafeInteger(t) ? t + 0 : normalizeInt(BigInt(t));
}

// `+`, `-` and `*` of exact doubles are correctly rounded, and a true result beyond the
// safe range never rounds back into it, so a safe result of the double operation is exact.
export function intAdd(x: PyInt, y: PyInt): PyInt {
  if (typeof x === 'number' && typeof y === 'number') {
    const r = x + y;
    if (Number.isSafeInteger(r)) return r;
  }
  return normalizeInt(toBigInt(x) + toBigInt(y));
}

export function intSub(x: PyInt, y: PyInt): PyInt {
  if (typeof x === 'number' && typeof y === 'number') {
    const r = x - y;
    if (Number.isSafeInteger(r)) return r + 0;
  }
  return normalizeInt(toBigInt(x) - toBigInt(y));
}

export function intMul(x: PyInt, y: PyInt): PyInt {
  if (typeof x === 'number' && typeof y === 'number') {
    const r = x * y;
    if (Number.isSafeInteger(r)) return r + 0;
  }
  return checkBits(toBigInt(x) * toBigInt(y));
}

export function intNeg(x: PyInt): PyInt {
  return typeof x === 'number' ? -x + 0 : normalizeInt(-x);
}

export function intAbs(x: PyInt): PyInt {
  return typeof x === 'number' ? Math.abs(x) : x < 0n ? -x : x;
}

/** Python's `divmod` on ints: the quotient floors towards -inf, the remainder takes the divisor's sign. */
export function intDivMod(x: PyInt, y: PyInt): [PyInt, PyInt] {
  if (y === 0 || y === 0n) {
    throw new RenderFailure('ZeroDivisionError', 'integer division or modulo by zero');
  }
  if (
    typeof x === 'number' &&
    typeof y === 'number' &&
    Math.abs(x) + Math.abs(y) <= Number.MAX_SAFE_INTEGER
  ) {
    // `%` of doubles is exact; `x - m` is then an exact multiple of `y`.
    let m = x % y;
    if (m !== 0 && m < 0 !== y < 0) m += y;
    return [(x - m) / y + 0, m + 0];
  }
  const a = toBigInt(x);
  const b = toBigInt(y);
  let q = a / b;
  let r = a % b;
  if (r !== 0n && r < 0n !== b < 0n) {
    q -= 1n;
    r += b;
  }
  return [normalizeInt(q), normalizeInt(r)];
}

/** Python `int / int`: the exact quotient correctly rounded to a float (not `float(x) / float(y)`). */
export function intTrueDiv(x: PyInt, y: PyInt): number {
  if (y === 0 || y === 0n) throw new RenderFailure('ZeroDivisionError', 'division by zero');
  // Ints held as numbers are exact doubles, and IEEE division rounds correctly.
  if (typeof x === 'number' && typeof y === 'number') return x / y;
  const a = toBigInt(x);
  const b = toBigInt(y);
  const negative = a < 0n !== b < 0n;
  const n = a < 0n ? -a : a;
  const d = b < 0n ? -b : b;
  if (n === 0n) return negative ? -0 : 0;
  // q = floor(n * 2^s / d) with at least 55 significant bits; `sticky` records a remainder.
  const s = 55 - (bitLength(n) - bitLength(d));
  const num = s >= 0 ? n << BigInt(s) : n;
  const den = s >= 0 ? d : d << BigInt(-s);
  const q = num / den;
  const sticky = num % den !== 0n;
  // The float's last place: 53 significant bits, or the subnormal grid 2^-1074.
  const ulpExp = Math.max(bitLength(q) - s - 53, -1074);
  const k = ulpExp + s;
  let kept = q >> BigInt(k);
  const rest = q - (kept << BigInt(k));
  const half = 1n << BigInt(k - 1);
  if (rest > half || (rest === half && (sticky || (kept & 1n) === 1n))) kept += 1n;
  if (bitLength(kept) + ulpExp > 1024) {
    throw new RenderFailure('OverflowError', 'integer division result too large for a float');
  }
  let m = Number(kept);
  let e = ulpExp;
  if (e < -1022) {
    m *= 2 ** -1022;
    e += 1022;
  }
  const result = m * 2 ** e;
  return negative ? -result : result;
}

/** Python `int ** int` for a non-negative exponent (a negative one gives a float, see the caller). */
export function intPow(x: PyInt, y: PyInt): PyInt {
  const base = toBigInt(x);
  const exp = toBigInt(y);
  if (exp === 0n) return 1;
  if (base === 0n || base === 1n) return Number(base);
  if (base === -1n) return exp % 2n === 0n ? 1 : -1;
  if (BigInt(bitLength(base) - 1) * exp > BigInt(MAX_INT_BITS)) {
    throw failure.limit(`integer result larger than the limit of ${MAX_INT_BITS} bits`);
  }
  return checkBits(base ** exp);
}

/**
 * Exact ordering of ints and floats (JavaScript compares `bigint` with
 * `number` by mathematical value): -1, 0, 1, or NaN when unordered.
 */
export function compareNumeric(x: PyInt | number, y: PyInt | number): number {
  if (x < y) return -1;
  if (x > y) return 1;
  if (typeof x === 'number' && Number.isNaN(x)) return Number.NaN;
  if (typeof y === 'number' && Number.isNaN(y)) return Number.NaN;
  return 0;
}

/** Python `str(int)`: exact decimal, refused beyond Python's 4300 digits as Python 3.11+ does. */
export function intToDecimal(v: PyInt): string {
  if (typeof v === 'number' && Number.isSafeInteger(v)) return String(v);
  const text = toBigInt(v).toString();
  const digits = text.startsWith('-') ? text.length - 1 : text.length;
  if (digits > INT_MAX_STR_DIGITS) {
    throw failure.value(
      `Exceeds the limit (${INT_MAX_STR_DIGITS} digits) for integer string conversion; use sys.set_int_max_str_digits() to increase the limit`,
    );
  }
  return text;
}

/**
 * Python `int(text, base)` for the digits of a literal or an `int` filter
 * argument: optional sign, no underscores (callers strip them), base 2–36.
 * `undefined` when the text is not a number in that base.
 */
export function parseIntText(text: string, base: number): PyInt | undefined {
  const m = /^([-+]?)([0-9a-z]+)$/i.exec(text);
  if (!m || base < 2 || base > 36) return undefined;
  const digits = m[2]!.toLowerCase();
  for (const ch of digits) if (Number.parseInt(ch, 36) >= base) return undefined;
  if (base === 10 && digits.length > INT_MAX_STR_DIGITS) {
    throw failure.value(
      `Exceeds the limit (${INT_MAX_STR_DIGITS} digits) for integer string conversion: value has ${digits.length} digits; use sys.set_int_max_str_digits() to increase the limit`,
    );
  }
  let value: bigint;
  if (base === 10) value = BigInt(digits);
  else if (base === 16 || base === 8 || base === 2) {
    value = BigInt(`0${base === 16 ? 'x' : base === 8 ? 'o' : 'b'}${digits}`);
  } else {
    value = 0n;
    const b = BigInt(base);
    for (const ch of digits) value = value * b + BigInt(Number.parseInt(ch, 36));
  }
  if (bitLength(value) > MAX_INT_BITS) {
    throw failure.limit(`integer larger than the limit of ${MAX_INT_BITS} bits`);
  }
  return normalizeInt(m[1] === '-' ? -value : value);
}
