/**
 * Python number parsing and formatting the hash depends on: `int(text, base)`, `float(text)` and
 * `repr(float)`. JS `Number()`/`toString()` differ in accepted syntax and in when they switch to
 * exponent notation, so these are written out here.
 */

/** CPython's `sys.int_info.default_max_str_digits`: longer decimal ints cannot be read or printed. */
export const PY_INT_MAX_STR_DIGITS = 4300;

const DIGITS_BY_BASE: Readonly<Record<number, RegExp>> = {
  2: /^[01](?:_?[01])*$/,
  8: /^[0-7](?:_?[0-7])*$/,
  10: /^[0-9](?:_?[0-9])*$/,
  16: /^[0-9a-fA-F](?:_?[0-9a-fA-F])*$/,
};
const PREFIX_BY_BASE: Readonly<Record<number, string>> = { 2: '0b', 8: '0o', 16: '0x' };

/** Python `int(text, base)` for bases 2, 8, 10 and 16; throws a ValueError-like Error. */
export function pyIntParse(text: string, base: 2 | 8 | 10 | 16): bigint {
  let s = text.trim();
  let negative = false;
  if (s.startsWith('-') || s.startsWith('+')) {
    negative = s[0] === '-';
    s = s.slice(1);
  }
  const prefix = PREFIX_BY_BASE[base];
  if (prefix && s.toLowerCase().startsWith(prefix)) {
    s = s.slice(2);
    if (s.startsWith('_')) s = s.slice(1);
  }
  const re = DIGITS_BY_BASE[base];
  if (!re?.test(s)) throw new Error(`invalid literal for int() with base ${base}: '${text}'`);
  const digits = s.replaceAll('_', '');
  if (base === 10 && digits.length > PY_INT_MAX_STR_DIGITS) {
    throw new Error(
      `Exceeds the limit (${PY_INT_MAX_STR_DIGITS} digits) for integer string conversion`,
    );
  }
  const value = base === 10 ? BigInt(digits) : BigInt(`${prefix}${digits}`);
  return negative ? -value : value;
}

const PY_FLOAT_RE =
  /^[+-]?(?:(?:[0-9](?:_?[0-9])*(?:\.(?:[0-9](?:_?[0-9])*)?)?|\.[0-9](?:_?[0-9])*)(?:[eE][+-]?[0-9](?:_?[0-9])*)?|inf|infinity|nan)$/i;

/** Python `float(text)` for a str argument; `undefined` where Python raises ValueError. */
export function pyFloatParse(text: string): number | undefined {
  const s = text.trim();
  if (!PY_FLOAT_RE.test(s)) return undefined;
  const lower = s.toLowerCase().replaceAll('_', '');
  const unsigned = lower.replace(/^[+-]/, '');
  const negative = lower.startsWith('-');
  if (unsigned === 'inf' || unsigned === 'infinity') return negative ? -Infinity : Infinity;
  if (unsigned === 'nan') return Number.NaN;
  return Number(lower);
}

/**
 * Python `repr(float)`: shortest round-trip digits (the same digits JS picks), written in exponent
 * form when the decimal exponent is < -4 or >= 16, otherwise as a decimal that always has a dot.
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

/** Python `str(int)`, with CPython's digit limit. */
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
