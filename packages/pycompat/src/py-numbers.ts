/**
 * Python number formatting: `repr(float)` and `str(int)`. JavaScript's `toString()` switches to
 * exponent notation at different points (`1e21` vs Python's `1e+16`), writes `1` for `1.0` and
 * `1e-7` for `1e-07`, so these are written out here.
 */

/** CPython's `sys.int_info.default_max_str_digits`: longer decimal ints cannot be read or printed. */
export const PY_INT_MAX_STR_DIGITS = 4300;

/**
 * Python `repr(float)`: shortest round-trip digits (the same digits JS picks), written in exponent
 * form when the decimal exponent is < -4 or >= 16, otherwise as a decimal that always has a dot.
 * Non-finite values as `json.dumps` writes them (`NaN`, `Infinity`), or as `repr` does (`nan`, `inf`).
 */
export function pyFloatRepr(x: number, nonFinite: 'json' | 'python' = 'json'): string {
  if (Number.isNaN(x)) return nonFinite === 'json' ? 'NaN' : 'nan';
  if (x === Number.POSITIVE_INFINITY) return nonFinite === 'json' ? 'Infinity' : 'inf';
  if (x === Number.NEGATIVE_INFINITY) return nonFinite === 'json' ? '-Infinity' : '-inf';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const sign = x < 0 ? '-' : '';
  const exp = Math.abs(x).toExponential(); // shortest round-trip digits: "d.ddde+N"
  const eAt = exp.indexOf('e');
  const digits = exp.slice(0, eAt).replace('.', '');
  const exponent = Number(exp.slice(eAt + 1));
  if (exponent < -4 || exponent >= 16) {
    const mantissa = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    const expSign = exponent < 0 ? '-' : '+';
    return `${sign}${mantissa}e${expSign}${String(Math.abs(exponent)).padStart(2, '0')}`;
  }
  if (exponent < 0) return `${sign}0.${'0'.repeat(-exponent - 1)}${digits}`;
  if (digits.length <= exponent + 1)
    return `${sign}${digits}${'0'.repeat(exponent + 1 - digits.length)}.0`;
  return `${sign}${digits.slice(0, exponent + 1)}.${digits.slice(exponent + 1)}`;
}

/** Python `str(int)`, with CPython's digit limit (ValueError there, an Error here). */
export function pyIntRepr(v: number | bigint): string {
  const s =
    typeof v === 'bigint'
      ? v.toString()
      : Number.isSafeInteger(v)
        ? String(v)
        : BigInt(v).toString();
  if (s.length - (s.startsWith('-') ? 1 : 0) > PY_INT_MAX_STR_DIGITS) {
    throw new Error(
      `Exceeds the limit (${PY_INT_MAX_STR_DIGITS} digits) for integer string conversion`,
    );
  }
  return s;
}

/**
 * A JavaScript number of JSON-shaped data, as Python would have written the value: a safe integer
 * as an int (`1`, never `1.0`), anything else as a float (`1e+16`, `-0.0`, `NaN`). Data read from
 * JSON or built in TypeScript has no int/float distinction; this is the rule that round-trips what
 * Python wrote (its ints beyond 2^53 need a `bigint`).
 */
export function pyNumberRepr(n: number): string {
  return Number.isSafeInteger(n) && !Object.is(n, -0) ? String(n) : pyFloatRepr(n);
}
