/**
 * Python's `json.dumps`, byte for byte: `ensure_ascii=True` escaping (lowercase `\uXXXX` for
 * everything outside printable ASCII, DEL included), `sort_keys` in code-point order, Python's
 * `separators` and `indent` layout, Python number formatting, and `NaN`/`Infinity` (allow_nan).
 * No npm library writes this format (JSON.stringify puts integer-like keys first, writes non-ASCII
 * raw and formats numbers the JavaScript way), and hashes and state the original computed over
 * this text must come out the same.
 */
import { compareCodePoints } from './code-point-order.ts';
import { pyIntRepr, pyNumberRepr } from './py-numbers.ts';

// biome-ignore lint/suspicious/noControlCharactersInRegex: these are exactly the characters to escape
const NEEDS_ESCAPE = /["\\\u0000-\u001f\u007f-\uffff]/;
const SHORT_ESCAPES: Readonly<Record<number, string>> = {
  34: '\\"',
  92: '\\\\',
  10: '\\n',
  13: '\\r',
  9: '\\t',
  8: '\\b',
  12: '\\f',
};

/** A JSON string literal as Python's encoder writes it with `ensure_ascii=True`. */
export function pyJsonString(s: string): string {
  if (!NEEDS_ESCAPE.test(s)) return `"${s}"`;
  let out = '"';
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x20 && c < 0x7f && c !== 0x22 && c !== 0x5c) continue;
    if (i > start) out += s.slice(start, i);
    out += SHORT_ESCAPES[c] ?? `\\u${c.toString(16).padStart(4, '0')}`;
    start = i + 1;
  }
  if (start < s.length) out += s.slice(start);
  return `${out}"`;
}

/**
 * What a value model adds to JSON-shaped JavaScript data (plain objects, arrays, strings, numbers,
 * bigints, booleans, null): its own scalars (a float wrapper, an undefined marker) and mappings
 * (a dict class), Python's type names and its exception types.
 */
export interface PyJsonModel {
  /** JSON text of a value the model writes itself, or `undefined` to let the encoder go on. */
  leaf?(value: unknown): string | undefined;
  /** The items of a mapping, or `undefined` when the value is none of the model's mappings. */
  items?(value: object): Iterable<readonly [string, unknown]> | undefined;
  /** The Python type name in "Object of type X is not JSON serializable". */
  typeName?(value: unknown): string;
  /** The error thrown where Python raises; default: a TypeError / an Error named ValueError. */
  error?(kind: 'TypeError' | 'ValueError', message: string): Error;
}

export interface PyJsonOptions {
  /** `sort_keys`: keys in code-point order (Python's `str` order). Default false, as Python. */
  sortKeys?: boolean;
  /** `indent`: one item per line, nested `indent` spaces deeper; item separator becomes `,`. */
  indent?: number | undefined;
  /** `separators=(item, key)`; default `(', ', ': ')`, or `(',', ': ')` with an indent. */
  separators?: readonly [item: string, key: string];
  /** Text of a finite JavaScript number; default {@link pyNumberRepr}. */
  number?: (n: number) => string;
  model?: PyJsonModel;
}

/**
 * `json.dumps(value, ...)`. Object members whose value is `undefined` are left out (absent
 * optional fields of TypeScript data); `undefined` elsewhere is written as `null`.
 */
export function pyJsonDumps(value: unknown, options: PyJsonOptions = {}): string {
  return new Encoder(options).encode(value, 0);
}

class Encoder {
  private readonly seen = new Set<object>();
  private readonly sortKeys: boolean;
  private readonly indent: string | undefined;
  private readonly itemSep: string;
  private readonly keySep: string;
  private readonly number: (n: number) => string;
  private readonly model: PyJsonModel;

  constructor(options: PyJsonOptions) {
    const indent = options.indent;
    const [itemSep, keySep] = options.separators ?? [indent === undefined ? ', ' : ',', ': '];
    this.sortKeys = options.sortKeys ?? false;
    this.indent = indent === undefined ? undefined : ' '.repeat(Math.max(0, indent));
    this.itemSep = itemSep;
    this.keySep = keySep;
    this.number = options.number ?? pyNumberRepr;
    this.model = options.model ?? {};
  }

  encode(v: unknown, level: number): string {
    if (v === null || v === undefined) return 'null';
    switch (typeof v) {
      case 'string':
        return pyJsonString(v);
      case 'boolean':
        return v ? 'true' : 'false';
      case 'number':
        if (Number.isFinite(v)) return this.number(v);
        return Number.isNaN(v) ? 'NaN' : v > 0 ? 'Infinity' : '-Infinity';
      default:
        break;
    }
    const text = this.model.leaf?.(v);
    if (text !== undefined) return text;
    if (typeof v === 'bigint') return pyIntRepr(v);
    if (typeof v !== 'object') throw this.notSerializable(v);
    if (this.seen.has(v)) throw this.error('ValueError', 'Circular reference detected');
    this.seen.add(v);
    try {
      if (Array.isArray(v)) return this.list(v, level);
      const items = this.model.items?.(v);
      if (items !== undefined) return this.dict([...items], level);
      const proto = Object.getPrototypeOf(v) as unknown;
      if (proto !== Object.prototype && proto !== null) throw this.notSerializable(v);
      const entries: [string, unknown][] = [];
      for (const [k, x] of Object.entries(v)) if (x !== undefined) entries.push([k, x]);
      return this.dict(entries, level);
    } finally {
      this.seen.delete(v);
    }
  }

  private list(v: readonly unknown[], level: number): string {
    if (v.length === 0) return '[]';
    const [open, sep, close] = this.layout(level);
    let out = `[${open}${this.encode(v[0], level + 1)}`;
    for (let i = 1; i < v.length; i++) out += sep + this.encode(v[i], level + 1);
    return `${out}${close}]`;
  }

  private dict(entries: (readonly [string, unknown])[], level: number): string {
    if (entries.length === 0) return '{}';
    if (this.sortKeys && !inCodePointOrder(entries)) {
      entries.sort(([a], [b]) => compareCodePoints(a, b));
    }
    const [open, sep, close] = this.layout(level);
    let out = '{';
    for (let i = 0; i < entries.length; i++) {
      const [k, x] = entries[i] as readonly [string, unknown];
      out += `${i === 0 ? open : sep}${pyJsonString(k)}${this.keySep}${this.encode(x, level + 1)}`;
    }
    return `${out}${close}}`;
  }

  /** Text after the opening bracket, between items and before the closing bracket. */
  private layout(level: number): [string, string, string] {
    if (this.indent === undefined) return ['', this.itemSep, ''];
    const inner = `\n${this.indent.repeat(level + 1)}`;
    return [inner, this.itemSep + inner, `\n${this.indent.repeat(level)}`];
  }

  private notSerializable(v: unknown): Error {
    const name =
      this.model.typeName?.(v) ??
      (typeof v === 'object' && v !== null
        ? ((v as { constructor?: { name?: string } }).constructor?.name ?? 'object')
        : typeof v);
    return this.error('TypeError', `Object of type ${name} is not JSON serializable`);
  }

  private error(kind: 'TypeError' | 'ValueError', message: string): Error {
    if (this.model.error) return this.model.error(kind, message);
    if (kind === 'TypeError') return new TypeError(message);
    const e = new Error(message);
    e.name = kind;
    return e;
  }
}

/** Data built in code-point order (bundles, canonical bodies) skips the sort. */
function inCodePointOrder(entries: readonly (readonly [string, unknown])[]): boolean {
  for (let i = 1; i < entries.length; i++) {
    if (compareCodePoints(entries[i - 1]![0], entries[i]![0]) > 0) return false;
  }
  return true;
}
