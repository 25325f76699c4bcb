import { compareCodePoints } from '@qontract/pycompat';

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

function sortedKeysOf(obj: Record<string, unknown>): string[] {
  const keys = Object.keys(obj);
  // Bundles we build are already in code-point order (bar integer-like keys), so check before sorting.
  for (let i = 1; i < keys.length; i++) {
    if (compareCodePoints(keys[i - 1]!, keys[i]!) > 0) return keys.sort(compareCodePoints);
  }
  return keys;
}

function write(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      if (Number.isNaN(value)) return 'NaN';
      if (!Number.isFinite(value)) return value > 0 ? 'Infinity' : '-Infinity';
      return String(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object': {
      if (Array.isArray(value)) {
        let out = '[';
        for (let i = 0; i < value.length; i++) out += (i > 0 ? ',' : '') + write(value[i]);
        return `${out}]`;
      }
      const obj = value as Record<string, unknown>;
      let out = '{';
      let first = true;
      for (const key of sortedKeysOf(obj)) {
        if (obj[key] === undefined) continue;
        out += `${first ? '' : ','}${JSON.stringify(key)}:${write(obj[key])}`;
        first = false;
      }
      return `${out}}`;
    }
    default:
      throw new TypeError(`cannot serialise a ${typeof value} as JSON`);
  }
}

/** The bundler's JSON text: compact, keys sorted recursively, ASCII only, trailing newline. */
export function pythonJsonDumps(value: unknown): string {
  // Outside strings JSON text is ASCII, so escaping non-ASCII once over the whole text is enough.
  return `${write(value).replace(NON_ASCII, escapeNonAscii)}\n`;
}
