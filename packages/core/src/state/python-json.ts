import { compareCodePoints } from '@qontract/pycompat';

/**
 * Python's `json.dumps(value, sort_keys=True)` for JSON-compatible values:
 * `", "` and `": "` separators, keys sorted by code point, ASCII-only output
 * with lowercase `\uXXXX` escapes (DEL included), and Python number formatting
 * (`1e+16`, `1e-05`, `-0.0`, `NaN`, `Infinity`). Hand-written because no npm
 * library reproduces Python's byte layout, and the state the original wrote
 * must read back and compare equal byte for byte.
 *
 * JavaScript has one number type: a safe integer is written as a Python int
 * (`1`, never `1.0`), any other number as a Python float (`1e+16`); pass a
 * `bigint` for an integer beyond 2^53, it is written exactly.
 */
export function pythonJsonDumps(value: unknown): string {
  return dump(value, new Set());
}

function dump(value: unknown, seen: Set<object>): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      return pythonNumber(value);
    case 'bigint':
      return value.toString();
    case 'string':
      return pythonString(value);
    case 'object':
      break;
    default:
      throw new TypeError(`Object of type ${typeof value} is not JSON serializable`);
  }
  const obj = value as object;
  if (seen.has(obj)) throw new TypeError('Circular reference detected');
  seen.add(obj);
  try {
    if (Array.isArray(obj)) {
      if (obj.length === 0) return '[]';
      return `[${obj.map((v) => (v === undefined ? 'null' : dump(v, seen))).join(', ')}]`;
    }
    const proto = Object.getPrototypeOf(obj) as unknown;
    if (proto !== Object.prototype && proto !== null) {
      const name = (obj as { constructor?: { name?: string } }).constructor?.name ?? 'object';
      throw new TypeError(`Object of type ${name} is not JSON serializable`);
    }
    const entries = Object.entries(obj).filter(([, v]) => v !== undefined);
    if (entries.length === 0) return '{}';
    entries.sort(([a], [b]) => compareCodePoints(a, b));
    return `{${entries.map(([k, v]) => `${pythonString(k)}: ${dump(v, seen)}`).join(', ')}}`;
  } finally {
    seen.delete(obj);
  }
}

/** Python `repr(float)` / `str(int)` for a JavaScript number. */
export function pythonNumber(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (n === Number.POSITIVE_INFINITY) return 'Infinity';
  if (n === Number.NEGATIVE_INFINITY) return '-Infinity';
  if (Object.is(n, -0)) return '-0.0';
  if (Number.isSafeInteger(n)) return String(n);
  // toExponential() without digits gives the shortest round-trip digits, as Python's repr does.
  const [mantissa = '', exp = '0'] = n.toExponential().split('e');
  const sign = mantissa.startsWith('-') ? '-' : '';
  const digits = mantissa.replace('-', '').replace('.', '');
  const e = Number(exp);
  if (e < -4 || e >= 16) {
    const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    const expSign = e < 0 ? '-' : '+';
    return `${sign}${m}e${expSign}${String(Math.abs(e)).padStart(2, '0')}`;
  }
  if (e < 0) return `${sign}0.${'0'.repeat(-e - 1)}${digits}`;
  const intPart = digits.slice(0, e + 1).padEnd(e + 1, '0');
  const frac = digits.slice(e + 1) || '0';
  return `${sign}${intPart}.${frac}`;
}

const SHORT_ESCAPES: Record<string, string> = {
  '"': '\\"',
  '\\': '\\\\',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\b': '\\b',
  '\f': '\\f',
};

/** A string literal with Python's `ensure_ascii=True` escaping. */
export function pythonString(s: string): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const ch = s[i] as string;
    const code = s.charCodeAt(i);
    const short = SHORT_ESCAPES[ch];
    if (short !== undefined) out += short;
    else if (code < 0x20 || code > 0x7e) out += `\\u${code.toString(16).padStart(4, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}
