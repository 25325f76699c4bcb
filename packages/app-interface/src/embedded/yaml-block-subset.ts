/*
 * A fast reader for the YAML most data files are written in: one document of
 * block mappings and block sequences whose scalars each fit on their line
 * (plain, single-quoted, or double-quoted without escapes), with comments.
 * It returns what the full parser's `toJS({ mapAsMap: true })` would (Maps
 * for mappings, arrays, plain scalars resolved by the caller), or `undefined`
 * as soon as the text leaves that subset, and then the caller parses it with
 * the full parser: anything unusual (flow collections, anchors, tags, block
 * scalars, multi-line or escaped scalars, merge keys, several documents, odd
 * indentation, tabs, special line breaks) and every error goes that way, so
 * errors and rare constructs keep the full parser's behaviour. Hand-written
 * because no library offers a strict subset with a "not mine" answer; the
 * differential tests compare it with the full parser.
 */

/** What the subset reader builds: mappings as Maps (keys as resolved), sequences as arrays. */
export type BlockValue = null | string | number | boolean | object | BlockValue[];

interface Line {
  indent: number;
  /** The line without its indentation and trailing spaces. */
  text: string;
}

/** Not in the subset: the full parser decides. */
class NotInSubset extends Error {}
const NOT_IN_SUBSET = new NotInSubset();

/**
 * Characters that make the text leave the subset wherever they are: control
 * characters, tabs, CR, and the line breaks and BOM PyYAML treats specially.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const OUTSIDE_TEXT = /[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\ufeff\r]/;
/** First characters of a scalar that start something else than a plain scalar. */
const INDICATORS = new Set([
  '[',
  ']',
  '{',
  '}',
  '&',
  '*',
  '!',
  '|',
  '>',
  '%',
  '@',
  '`',
  ',',
  '?',
  ':',
  '#',
]);
/** An implicit key longer than this is an error for both parsers (they allow 1024). */
const MAX_KEY = 1000;

/**
 * Reads `text` when it is in the subset, resolving each plain scalar (keys
 * included) with `plain`; `undefined` when it is not.
 */
export function readBlockSubset(
  text: string,
  plain: (scalar: string) => BlockValue,
): BlockValue | undefined {
  if (OUTSIDE_TEXT.test(text)) return undefined;
  const lines: Line[] = [];
  let started = false;
  for (const raw of text.split('\n')) {
    const body = raw.trimEnd();
    let indent = 0;
    while (body.charCodeAt(indent) === 32) indent++;
    if (indent === body.length || body[indent] === '#') continue;
    if (indent === 0) {
      if (body === '---' && !started && lines.length === 0) {
        started = true;
        continue;
      }
      if (body.startsWith('---') || body.startsWith('...') || body[0] === '%') return undefined;
    }
    lines.push({ indent, text: body.slice(indent) });
  }
  if (lines.length === 0) return undefined;
  try {
    const reader = new Reader(lines, plain);
    const root = reader.block(lines[0]!.indent);
    return reader.done() && typeof root === 'object' ? root : undefined;
  } catch (e) {
    if (e instanceof NotInSubset) return undefined;
    throw e;
  }
}

class Reader {
  #pos = 0;
  readonly #lines: Line[];
  readonly #plain: (scalar: string) => BlockValue;

  constructor(lines: Line[], plain: (scalar: string) => BlockValue) {
    this.#lines = lines;
    this.#plain = plain;
  }

  done(): boolean {
    return this.#pos === this.#lines.length;
  }

  /** The node whose first line is the current one, at `indent`. */
  block(indent: number): BlockValue {
    return isEntry(this.#lines[this.#pos]!.text) ? this.#sequence(indent) : this.#mapping(indent);
  }

  #mapping(indent: number): Map<BlockValue, BlockValue> {
    const map = new Map<BlockValue, BlockValue>();
    for (let line = this.#current(); line?.indent === indent; line = this.#current()) {
      if (isEntry(line.text)) break;
      const [key, rest] = this.#key(line.text);
      this.#pos++;
      map.set(key, rest === '' ? this.#nested(indent, true) : this.#scalarAlone(rest, indent));
    }
    this.#noDeeperThan(indent);
    return map;
  }

  #sequence(indent: number): BlockValue[] {
    const items: BlockValue[] = [];
    for (let line = this.#current(); line?.indent === indent; line = this.#current()) {
      if (!isEntry(line.text)) break;
      if (line.text === '-') {
        this.#pos++;
        items.push(this.#nested(indent, false));
        continue;
      }
      let spaces = 1;
      while (line.text.charCodeAt(spaces) === 32) spaces++;
      const content = line.text.slice(spaces);
      if (isEntry(content)) throw NOT_IN_SUBSET;
      if (startsMappingEntry(content)) {
        // `- key: value`: a mapping whose keys line up with this first one.
        this.#lines[this.#pos] = { indent: indent + spaces, text: content };
        items.push(this.#mapping(indent + spaces));
      } else {
        this.#pos++;
        items.push(this.#scalarAlone(content, indent));
      }
    }
    this.#noDeeperThan(indent);
    return items;
  }

  /** The value of `key:` or `-` with nothing after it: a block below, or null. */
  #nested(indent: number, underKey: boolean): BlockValue {
    const next = this.#current();
    if (next && next.indent > indent) return this.block(next.indent);
    // A sequence may sit at its key's indentation.
    if (underKey && next?.indent === indent && isEntry(next.text)) return this.#sequence(indent);
    return null;
  }

  /** A scalar that must end its node: a deeper line after it would continue it. */
  #scalarAlone(text: string, indent: number): BlockValue {
    const value = this.#scalar(text);
    this.#noDeeperThan(indent);
    return value;
  }

  #noDeeperThan(indent: number): void {
    const next = this.#current();
    if (next && next.indent > indent) throw NOT_IN_SUBSET;
  }

  #current(): Line | undefined {
    return this.#lines[this.#pos];
  }

  /** The key of a mapping entry line and the text after its `:` (comments removed when plain). */
  #key(text: string): [BlockValue, string] {
    const quote = text[0];
    if (quote === "'" || quote === '"') {
      const [key, end] = quoted(text);
      if (text[end] !== ':' || (end + 1 < text.length && text[end + 1] !== ' ')) {
        throw NOT_IN_SUBSET;
      }
      return [key, valueText(text.slice(end + 1))];
    }
    const colon = keyColon(text);
    if (colon < 0 || colon > MAX_KEY || INDICATORS.has(text[0]!) || text[0] === '-') {
      throw NOT_IN_SUBSET;
    }
    const key = text.slice(0, colon);
    if (key.endsWith(' ') || key.includes(' #') || key === '<<') throw NOT_IN_SUBSET;
    return [this.#plain(key), valueText(text.slice(colon + 1))];
  }

  #scalar(text: string): BlockValue {
    const first = text[0]!;
    if (first === "'" || first === '"') {
      const [value, end] = quoted(text);
      const after = text.slice(end);
      if (after !== '' && !/^ +#/.test(after)) throw NOT_IN_SUBSET;
      return value;
    }
    if (first === '{' || first === '[') return this.#flow(text);
    if (INDICATORS.has(first) || isEntry(text)) throw NOT_IN_SUBSET;
    const comment = text.indexOf(' #');
    const scalar = comment < 0 ? text : text.slice(0, comment).trimEnd();
    if (scalar.includes(': ') || scalar.endsWith(':') || scalar === '<<') throw NOT_IN_SUBSET;
    return this.#plain(scalar);
  }

  /**
   * A flow collection on one line of plain scalars only: `{}`, `[]`,
   * `{ $ref: /a.yml }`, `[a, b]`, with a comment after it or nothing.
   */
  #flow(text: string): BlockValue {
    const close = text[0] === '{' ? '}' : ']';
    const end = text.indexOf(close);
    const after = end < 0 ? '' : text.slice(end + 1);
    if (end < 0 || (after !== '' && !/^ +#/.test(after))) throw NOT_IN_SUBSET;
    const inner = text.slice(1, end).trim();
    if (/[[\]{}'"&*!|>%@`?#]/.test(inner) || inner.endsWith(',')) throw NOT_IN_SUBSET;
    const items = inner === '' ? [] : inner.split(',').map((item) => item.trim());
    if (close === ']') {
      return items.map((item) => {
        if (item === '' || item.includes(':') || item[0] === '-') throw NOT_IN_SUBSET;
        return this.#plain(item);
      });
    }
    const map = new Map<BlockValue, BlockValue>();
    for (const item of items) {
      const colon = item.indexOf(': ');
      if (colon <= 0 || item.indexOf(':') !== colon || item.indexOf(':', colon + 1) >= 0) {
        throw NOT_IN_SUBSET;
      }
      if (item[0] === '-') throw NOT_IN_SUBSET;
      const value = item.slice(colon + 2).trim();
      if (value === '' || value[0] === '-') throw NOT_IN_SUBSET;
      map.set(this.#plain(item.slice(0, colon).trimEnd()), this.#plain(value));
    }
    return map;
  }
}

/** A sequence entry line: `-` alone or followed by a space. */
function isEntry(text: string): boolean {
  return text === '-' || (text[0] === '-' && text[1] === ' ');
}

/** Whether `text` starts with an implicit key: a quoted scalar or plain text, then `: ` or a final `:`. */
function startsMappingEntry(text: string): boolean {
  const quote = text[0];
  if (quote === '{' || quote === '[') return false;
  if (quote === "'" || quote === '"') {
    const close = text.indexOf(quote, 1);
    return close > 0 && text[close + 1] === ':';
  }
  return keyColon(text) >= 0;
}

/** Where the `:` of an implicit plain key is (followed by a space or the end), or -1. */
function keyColon(text: string): number {
  const comment = text.indexOf(' #');
  const end = comment < 0 ? text.length : comment;
  const spaced = text.indexOf(': ');
  if (spaced >= 0 && spaced < end) return spaced;
  return text.charCodeAt(end - 1) === 58 ? end - 1 : -1;
}

/** The text after a key's `:`: trimmed, empty when only a comment follows. */
function valueText(rest: string): string {
  const text = rest.trimStart();
  return text[0] === '#' ? '' : text;
}

/** A quoted scalar at the start of `text` that closes on its line: its value and the index after it. */
function quoted(text: string): [string, number] {
  const quote = text[0]!;
  if (quote === '"') {
    const close = text.indexOf('"', 1);
    const value = close < 0 ? '' : text.slice(1, close);
    if (close < 0 || value.includes('\\')) throw NOT_IN_SUBSET;
    return [value, close + 1];
  }
  let value = '';
  for (let i = 1; i < text.length; i++) {
    const quoteAt = text.indexOf("'", i);
    if (quoteAt < 0) break;
    value += text.slice(i, quoteAt);
    if (text[quoteAt + 1] !== "'") return [value, quoteAt + 1];
    value += "'";
    i = quoteAt + 1;
  }
  throw NOT_IN_SUBSET;
}
