/*
 * A fast reader for the YAML most app-interface data files and resource files
 * are written in: one document of block mappings and block sequences whose
 * scalars each fit on their line (plain, single-quoted, or double-quoted
 * with escapes that are not surrogates) or are literal (`|`, `|-`) or folded
 * (`>`, `>-`) block scalars of plain lines, `{}`, `[]` and one-line flow
 * collections of plain scalars, with comments. The caller says what a scalar,
 * a mapping and a sequence become (its YAML loader's values), so the result is
 * what that loader would build; the reader returns `undefined` as soon as the
 * text leaves the subset, and the caller then uses its full parser: anything
 * unusual (anchors, tags, kept (`|+`) or indented (`|2`) block scalars,
 * trailing spaces in one, multi-line flow scalars, escaped surrogates, merge
 * keys, several documents, odd indentation, tabs, characters PyYAML
 * treats specially) and every error go that way, so errors and rare
 * constructs keep the full parser's behaviour. Hand-written because no
 * library offers a strict subset with a "not mine" answer; the callers'
 * differential tests compare it with their full parsers.
 */

/** What the reader builds values with: the caller's loader semantics. */
export interface BlockBuilders<V> {
  /** A plain scalar (an empty node is the plain scalar `''`), resolved as the loader does. */
  plain(text: string): V;
  /** A single- or double-quoted scalar, or a block scalar: always a string. */
  quoted(text: string): V;
  /** A mapping: its pairs in document order (a repeated key is the loader's to settle). */
  mapping(pairs: ReadonlyArray<readonly [V, V]>): V;
  sequence(items: V[]): V;
}

interface Line {
  /** Its index among the text's lines (blank and comment lines included). */
  raw: number;
  indent: number;
  /** The line without its indentation and trailing spaces. */
  text: string;
}

/** Not in the subset: the full parser decides. */
class NotInSubset extends Error {}
const NOT_IN_SUBSET = new NotInSubset();

/**
 * Characters that make the text leave the subset wherever they are: control
 * characters, tabs, CR, the line breaks and BOM PyYAML treats specially,
 * characters it refuses (non-characters, lone surrogates), and NBSP.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const OUTSIDE_TEXT = /[\x00-\x09\x0b-\x1f\x7f-\xa0\u2028\u2029\ufeff\ufffe\uffff\r\ud800-\udfff]/u;
/** First characters of a scalar that start something else than a plain scalar. */
const INDICATORS: ReadonlySet<string> = new Set([
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
 * Reads `text` with `build` when it is in the subset; `undefined` when it is
 * not, or when the document is a scalar. What `build` throws is thrown.
 */
export function readBlockSubset<V>(text: string, build: BlockBuilders<V>): V | undefined {
  if (OUTSIDE_TEXT.test(text)) return undefined;
  const lines: Line[] = [];
  const raws = text.split('\n');
  let started = false;
  for (let i = 0; i < raws.length; i++) {
    const body = raws[i]!.trimEnd();
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
    lines.push({ raw: i, indent, text: body.slice(indent) });
  }
  if (lines.length === 0) return undefined;
  try {
    const reader = new Reader(lines, raws, build);
    const root = reader.block(lines[0]!.indent);
    return reader.done() ? root : undefined;
  } catch (e) {
    if (e instanceof NotInSubset) return undefined;
    throw e;
  }
}

class Reader<V> {
  #pos = 0;
  readonly #lines: Line[];
  /** The text's lines as they are: block scalars are read from them. */
  readonly #raws: readonly string[];
  readonly #build: BlockBuilders<V>;

  constructor(lines: Line[], raws: readonly string[], build: BlockBuilders<V>) {
    this.#lines = lines;
    this.#raws = raws;
    this.#build = build;
  }

  done(): boolean {
    return this.#pos === this.#lines.length;
  }

  /** The node whose first line is the current one, at `indent`. */
  block(indent: number): V {
    return isEntry(this.#lines[this.#pos]!.text) ? this.#sequence(indent) : this.#mapping(indent);
  }

  #mapping(indent: number): V {
    const pairs: Array<[V, V]> = [];
    for (let line = this.#current(); line?.indent === indent; line = this.#current()) {
      if (isEntry(line.text)) break;
      const [key, rest] = this.#key(line.text);
      this.#pos++;
      pairs.push([key, rest === '' ? this.#nested(indent, true) : this.#scalarAlone(rest, indent)]);
    }
    this.#noDeeperThan(indent);
    return this.#build.mapping(pairs);
  }

  #sequence(indent: number): V {
    const items: V[] = [];
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
        this.#lines[this.#pos] = { raw: line.raw, indent: indent + spaces, text: content };
        items.push(this.#mapping(indent + spaces));
      } else {
        this.#pos++;
        items.push(this.#scalarAlone(content, indent));
      }
    }
    this.#noDeeperThan(indent);
    return this.#build.sequence(items);
  }

  /** The value of `key:` or `-` with nothing after it: a block below, or null. */
  #nested(indent: number, underKey: boolean): V {
    const next = this.#current();
    if (next && next.indent > indent) return this.block(next.indent);
    // A sequence may sit at its key's indentation.
    if (underKey && next?.indent === indent && isEntry(next.text)) return this.#sequence(indent);
    return this.#build.plain('');
  }

  /** A scalar that must end its node: a deeper line after it would continue it. */
  #scalarAlone(text: string, indent: number): V {
    const value =
      text[0] === '|' || text[0] === '>' ? this.#blockScalar(text, indent) : this.#scalar(text);
    this.#noDeeperThan(indent);
    return value;
  }

  /**
   * A literal (`|`) or folded (`>`) block scalar whose header ends the line
   * just read, inside a node at `indent`: its lines are the raw lines below,
   * indented as the first of them (deeper than `indent`), until a less indented
   * one. Read as PyYAML's scanner reads them (the `yaml` package agrees on this
   * part): literal lines joined by line breaks; folded ones by a space, or by
   * one line break per blank line between them; one final line break unless
   * `-` strips it. Not in the subset: `+` (keep), an indentation digit, blank
   * lines before the first line, trailing spaces on any line, lines of a folded
   * scalar indented further (their folding differs), and a last line without
   * its line break.
   */
  #blockScalar(header: string, indent: number): V {
    let at = 1;
    const strip = header[1] === '-';
    if (strip) at++;
    const after = header.slice(at);
    if (after !== '' && !/^ +#/.test(after)) throw NOT_IN_SUBSET;
    const folded = header[0] === '>';
    const raws = this.#raws;
    const first = this.#lines[this.#pos - 1]!.raw + 1;
    const firstLine = raws[first] ?? '';
    let contentIndent = 0;
    while (firstLine.charCodeAt(contentIndent) === 32) contentIndent++;
    if (contentIndent <= indent || contentIndent === firstLine.length) throw NOT_IN_SUBSET;
    const pieces: string[] = [];
    let blanks = 0;
    let end = first;
    for (let r = first; r < raws.length; r++) {
      const raw = raws[r]!;
      if (raw === '') {
        blanks++;
        continue;
      }
      if (raw.charCodeAt(raw.length - 1) === 32) throw NOT_IN_SUBSET;
      let spaces = 0;
      while (spaces < contentIndent && raw.charCodeAt(spaces) === 32) spaces++;
      if (spaces < contentIndent) break;
      const content = raw.slice(contentIndent);
      if (folded && content.charCodeAt(0) === 32) throw NOT_IN_SUBSET;
      if (pieces.length > 0)
        pieces.push(folded && blanks === 0 ? ' ' : '\n'.repeat(blanks + (folded ? 0 : 1)));
      pieces.push(content);
      blanks = 0;
      end = r + 1;
    }
    // The last line must end with a line break (at the end of the text, PyYAML's value would not).
    if (end >= raws.length) throw NOT_IN_SUBSET;
    if (!strip) pieces.push('\n');
    while (this.#pos < this.#lines.length && this.#lines[this.#pos]!.raw < end) this.#pos++;
    return this.#build.quoted(pieces.join(''));
  }

  #noDeeperThan(indent: number): void {
    const next = this.#current();
    if (next && next.indent > indent) throw NOT_IN_SUBSET;
  }

  #current(): Line | undefined {
    return this.#lines[this.#pos];
  }

  /** The key of a mapping entry line and the text after its `:` (comments removed when plain). */
  #key(text: string): [V, string] {
    const quote = text[0];
    if (quote === "'" || quote === '"') {
      const [key, end] = quoted(text);
      if (text[end] !== ':' || (end + 1 < text.length && text[end + 1] !== ' ')) {
        throw NOT_IN_SUBSET;
      }
      return [this.#build.quoted(key), valueText(text.slice(end + 1))];
    }
    const colon = keyColon(text);
    if (colon < 0 || colon > MAX_KEY || INDICATORS.has(text[0]!) || text[0] === '-') {
      throw NOT_IN_SUBSET;
    }
    const key = text.slice(0, colon);
    if (key.endsWith(' ') || key.includes(' #') || key === '<<') throw NOT_IN_SUBSET;
    return [this.#build.plain(key), valueText(text.slice(colon + 1))];
  }

  #scalar(text: string): V {
    const first = text[0]!;
    if (first === "'" || first === '"') {
      const [value, end] = quoted(text);
      const after = text.slice(end);
      if (after !== '' && !/^ +#/.test(after)) throw NOT_IN_SUBSET;
      return this.#build.quoted(value);
    }
    if (first === '{' || first === '[') return this.#flow(text);
    if (INDICATORS.has(first) || isEntry(text)) throw NOT_IN_SUBSET;
    const comment = text.indexOf(' #');
    const scalar = comment < 0 ? text : text.slice(0, comment).trimEnd();
    if (scalar.includes(': ') || scalar.endsWith(':') || scalar === '<<') throw NOT_IN_SUBSET;
    return this.#build.plain(scalar);
  }

  /**
   * A flow collection on one line of plain scalars only: `{}`, `[]`,
   * `{ $ref: /a.yml }`, `[a, b]`, with a comment after it or nothing.
   */
  #flow(text: string): V {
    const close = text[0] === '{' ? '}' : ']';
    const end = text.indexOf(close);
    const after = end < 0 ? '' : text.slice(end + 1);
    if (end < 0 || (after !== '' && !/^ +#/.test(after))) throw NOT_IN_SUBSET;
    const inner = text.slice(1, end).trim();
    if (/[[\]{}'"&*!|>%@`?#]/.test(inner) || inner.endsWith(',')) throw NOT_IN_SUBSET;
    const items = inner === '' ? [] : inner.split(',').map((item) => item.trim());
    if (close === ']') {
      return this.#build.sequence(
        items.map((item) => {
          if (item === '' || item.includes(':') || item[0] === '-') throw NOT_IN_SUBSET;
          return this.#build.plain(item);
        }),
      );
    }
    const pairs: Array<[V, V]> = [];
    for (const item of items) {
      const colon = item.indexOf(': ');
      if (colon <= 0 || item.indexOf(':') !== colon || item.indexOf(':', colon + 1) >= 0) {
        throw NOT_IN_SUBSET;
      }
      if (item[0] === '-') throw NOT_IN_SUBSET;
      const value = item.slice(colon + 2).trim();
      if (value === '' || value[0] === '-') throw NOT_IN_SUBSET;
      pairs.push([this.#build.plain(item.slice(0, colon).trimEnd()), this.#build.plain(value)]);
    }
    return this.#build.mapping(pairs);
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
    try {
      return text[quoted(text)[1]] === ':';
    } catch {
      return false;
    }
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

/**
 * The escapes of a double-quoted scalar that stand for one fixed character:
 * the same table in PyYAML's scanner and in the `yaml` package (YAML 1.1 and
 * 1.2). `\x`, `\u` and `\U` are read in `escapedCodePoint`; anything else
 * (an unknown escape, a line continuation) is the full parser's.
 */
const ESCAPES: ReadonlyMap<string, string> = new Map([
  ['0', '\0'],
  ['a', '\x07'],
  ['b', '\b'],
  ['t', '\t'],
  ['n', '\n'],
  ['v', '\v'],
  ['f', '\f'],
  ['r', '\r'],
  ['e', '\x1b'],
  [' ', ' '],
  ['"', '"'],
  ['/', '/'],
  ['\\', '\\'],
  ['N', '\x85'],
  ['_', '\xa0'],
  ['L', '\u2028'],
  ['P', '\u2029'],
]);
const HEX_DIGITS: ReadonlyMap<string, number> = new Map([
  ['x', 2],
  ['u', 4],
  ['U', 8],
]);
const HEX = /^[0-9A-Fa-f]+$/;
const QUOTE_OR_BACKSLASH = /["\\]/g;

/**
 * The character of a `\x`, `\u` or `\U` escape whose digits start at `at`.
 * Surrogates are not in the subset (PyYAML keeps an escaped pair as two code
 * points, JS would fuse them), nor is what is no code point at all.
 */
function escapedCodePoint(text: string, at: number, digits: number): string {
  const hex = text.slice(at, at + digits);
  if (hex.length !== digits || !HEX.test(hex)) throw NOT_IN_SUBSET;
  const code = Number.parseInt(hex, 16);
  if (code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) throw NOT_IN_SUBSET;
  return String.fromCodePoint(code);
}

/**
 * A quoted scalar at the start of `text` that closes on its line: its value
 * (one flat string: pieces are joined, not concatenated into a rope) and the
 * index after it.
 */
function quoted(text: string): [string, number] {
  const quote = text[0]!;
  const pieces: string[] = [];
  if (quote === '"') {
    let from = 1;
    for (;;) {
      QUOTE_OR_BACKSLASH.lastIndex = from;
      const at = QUOTE_OR_BACKSLASH.exec(text)?.index ?? -1;
      if (at < 0) throw NOT_IN_SUBSET;
      if (text[at] === '"') {
        if (pieces.length === 0) return [text.slice(1, at), at + 1];
        pieces.push(text.slice(from, at));
        return [pieces.join(''), at + 1];
      }
      const backslash = at;
      pieces.push(text.slice(from, backslash));
      const code = text[backslash + 1] ?? '';
      const fixed = ESCAPES.get(code);
      const digits = HEX_DIGITS.get(code);
      if (fixed !== undefined) {
        pieces.push(fixed);
        from = backslash + 2;
      } else if (digits !== undefined) {
        pieces.push(escapedCodePoint(text, backslash + 2, digits));
        from = backslash + 2 + digits;
      } else {
        throw NOT_IN_SUBSET;
      }
    }
  }
  for (let i = 1; i < text.length; i++) {
    const quoteAt = text.indexOf("'", i);
    if (quoteAt < 0) break;
    pieces.push(text.slice(i, quoteAt));
    if (text[quoteAt + 1] !== "'") return [pieces.join(''), quoteAt + 1];
    pieces.push("'");
    i = quoteAt + 1;
  }
  throw NOT_IN_SUBSET;
}
