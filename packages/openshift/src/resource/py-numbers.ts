/**
 * Python number parsing the YAML loader depends on: `int(text, base)` and `float(text)`. JS
 * `Number()` accepts other syntax, so these are written out here; formatting (`repr(float)`,
 * `str(int)`) is in @qontract/pycompat.
 */
import { PY_INT_MAX_STR_DIGITS } from '@qontract/pycompat';

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
