import { compareCodePoints } from './code-point-order.ts';

/*
 * qontract-bundler writes `json.dump(bundle, sort_keys=True, separators=(',', ':'))`
 * with Python's default `ensure_ascii=True`. Neither JSON.stringify (it puts
 * integer-like keys first and writes non-ASCII raw) nor a library reproduces
 * that, hence this small serialiser. Floats still print the JS way (`1` where
 * Python writes `1.0`); bundles we write only need a stable sha of their own.
 */

const NON_ASCII = /[\u007f-\uffff]/g;

function escapeNonAscii(c: string): string {
  return `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

function pythonString(s: string): string {
  return JSON.stringify(s).replace(NON_ASCII, escapeNonAscii);
}

function write(value: unknown, out: string[]): void {
  if (value === null || value === undefined) {
    out.push('null');
  } else if (typeof value === 'string') {
    out.push(pythonString(value));
  } else if (typeof value === 'number') {
    if (Number.isNaN(value)) out.push('NaN');
    else if (!Number.isFinite(value)) out.push(value > 0 ? 'Infinity' : '-Infinity');
    else out.push(String(value));
  } else if (typeof value === 'boolean') {
    out.push(value ? 'true' : 'false');
  } else if (Array.isArray(value)) {
    out.push('[');
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out.push(',');
      write(value[i], out);
    }
    out.push(']');
  } else if (typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    out.push('{');
    let first = true;
    for (const key of Object.keys(obj).sort(compareCodePoints)) {
      if (obj[key] === undefined) continue;
      if (!first) out.push(',');
      first = false;
      out.push(pythonString(key), ':');
      write(obj[key], out);
    }
    out.push('}');
  } else {
    throw new TypeError(`cannot serialise a ${typeof value} as JSON`);
  }
}

/** The bundler's JSON text: compact, keys sorted recursively, ASCII only, trailing newline. */
export function pythonJsonDumps(value: unknown): string {
  const out: string[] = [];
  write(value, out);
  out.push('\n');
  return out.join('');
}
