/**
 * A YAML 1.1 scanner that behaves like PyYAML 6.0.3's pure-Python scanner (MIT licence,
 * Kirill Simonov), which is what the original loads resource files with.
 *
 * Why not the `yaml` npm package: the sha256 the original stores on cluster objects depends on
 * PyYAML's exact lexical rules, which no JS YAML library reproduces: tabs are never whitespace
 * between tokens, NEL/LS/PS are line breaks, a simple key is stale after 1024 characters, a BOM
 * does not count as a column, escaped surrogates stay separate code points, and so on.
 * The structure (token kinds, simple-key bookkeeping, indentation stack) follows PyYAML so that
 * every document it accepts or rejects is accepted or rejected here too.
 */

export class YamlError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'YamlError';
  }
}

export interface Mark {
  readonly line: number;
  readonly column: number;
}

/** A scalar chunk that is a code point from an escape (kept apart so surrogates do not fuse). */
export type ScalarPart = string | { readonly escapedCodePoint: number };

type SimpleTokenKind =
  | 'STREAM-START'
  | 'STREAM-END'
  | 'DOCUMENT-START'
  | 'DOCUMENT-END'
  | 'BLOCK-SEQUENCE-START'
  | 'BLOCK-MAPPING-START'
  | 'BLOCK-END'
  | 'BLOCK-ENTRY'
  | 'FLOW-SEQUENCE-START'
  | 'FLOW-MAPPING-START'
  | 'FLOW-SEQUENCE-END'
  | 'FLOW-MAPPING-END'
  | 'FLOW-ENTRY'
  | 'KEY'
  | 'VALUE';

export type Token =
  | { kind: SimpleTokenKind; mark: Mark }
  | {
      kind: 'DIRECTIVE';
      mark: Mark;
      name: string;
      version: [number, number] | null;
      tag: [string, string] | null;
    }
  | { kind: 'ALIAS' | 'ANCHOR'; mark: Mark; value: string }
  | { kind: 'TAG'; mark: Mark; handle: string | null; suffix: string }
  | { kind: 'SCALAR'; mark: Mark; parts: ScalarPart[]; plain: boolean; style: string | null };

export type TokenKind = Token['kind'];

interface SimpleKey {
  tokenNumber: number;
  required: boolean;
  index: number;
  line: number;
  column: number;
  mark: Mark;
}

const BLANKZ = '\0 \t\r\n\x85\u2028\u2029';
const BREAKZ = '\0\r\n\x85\u2028\u2029';
const BREAKS = '\r\n\x85\u2028\u2029';
// biome-ignore lint/suspicious/noControlCharactersInRegex: PyYAML's exact printable set
const NON_PRINTABLE = /[^\x09\x0A\x0D\x20-\x7E\x85\xA0-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;

const ESCAPE_REPLACEMENTS: Readonly<Record<string, string>> = {
  '0': '\0',
  a: '\x07',
  b: '\x08',
  t: '\x09',
  '\t': '\x09',
  n: '\x0A',
  v: '\x0B',
  f: '\x0C',
  r: '\x0D',
  e: '\x1B',
  ' ': '\x20',
  '"': '"',
  '\\': '\\',
  '/': '/',
  N: '\x85',
  _: '\xA0',
  L: '\u2028',
  P: '\u2029',
};
const ESCAPE_CODES: Readonly<Record<string, number>> = { x: 2, u: 4, U: 8 };
const HEX = '0123456789ABCDEFabcdef';
const URI_PUNCT = "-;/?:@&=+$,_.!~*'()[]%";

function isWordChar(ch: string): boolean {
  return (
    (ch >= '0' && ch <= '9') ||
    (ch >= 'A' && ch <= 'Z') ||
    (ch >= 'a' && ch <= 'z') ||
    ch === '-' ||
    ch === '_'
  );
}

function isIn(set: string, ch: string): boolean {
  return ch.length === 1 && set.includes(ch);
}

export class Scanner {
  private readonly chars: string[];
  private pointer = 0;
  private line = 0;
  private column = 0;
  private done = false;
  private flowLevel = 0;
  private readonly tokens: Token[] = [];
  private tokensTaken = 0;
  private indent = -1;
  private readonly indents: number[] = [];
  private allowSimpleKey = true;
  private readonly possibleSimpleKeys = new Map<number, SimpleKey>();

  constructor(text: string) {
    const bad = NON_PRINTABLE.exec(text);
    if (bad) {
      const cp = bad[0].codePointAt(0) ?? 0;
      const position = Array.from(text.slice(0, bad.index)).length;
      throw new YamlError(
        `unacceptable character #x${cp.toString(16).padStart(4, '0')}: special characters are not allowed (position ${position})`,
      );
    }
    // Code points, not UTF-16 units: PyYAML counts columns and the 1024-character key limit in them.
    this.chars = Array.from(text);
    this.tokens.push({ kind: 'STREAM-START', mark: this.mark() });
  }

  // --- reader -------------------------------------------------------------------------------

  private peek(index = 0): string {
    return this.chars[this.pointer + index] ?? '\0';
  }

  private prefix(length = 1): string {
    // Hot path (every token): concatenate instead of slice().join().
    let out = '';
    const end = Math.min(this.pointer + length, this.chars.length);
    for (let i = this.pointer; i < end; i++) out += this.chars[i];
    return out;
  }

  private forward(length = 1): void {
    for (; length > 0; length--) {
      const ch = this.chars[this.pointer];
      if (ch === undefined) return;
      this.pointer++;
      if (
        ch === '\n' ||
        ch === '\x85' ||
        ch === '\u2028' ||
        ch === '\u2029' ||
        (ch === '\r' && this.peek() !== '\n')
      ) {
        this.line++;
        this.column = 0;
      } else if (ch !== '\uFEFF') {
        this.column++;
      }
    }
  }

  private mark(): Mark {
    return { line: this.line, column: this.column };
  }

  private error(context: string | null, problem: string, mark: Mark = this.mark()): YamlError {
    const where = `line ${mark.line + 1}, column ${mark.column + 1}`;
    return new YamlError(context ? `${context}: ${problem} (${where})` : `${problem} (${where})`);
  }

  // --- token queue --------------------------------------------------------------------------

  checkToken(...kinds: TokenKind[]): boolean {
    while (this.needMoreTokens()) this.fetchMoreTokens();
    const first = this.tokens[0];
    if (!first) return false;
    return kinds.length === 0 || kinds.includes(first.kind);
  }

  peekToken(): Token {
    while (this.needMoreTokens()) this.fetchMoreTokens();
    const first = this.tokens[0];
    if (!first) throw this.error(null, 'unexpected end of the token stream');
    return first;
  }

  getToken(): Token {
    while (this.needMoreTokens()) this.fetchMoreTokens();
    const first = this.tokens.shift();
    if (!first) throw this.error(null, 'unexpected end of the token stream');
    this.tokensTaken++;
    return first;
  }

  private needMoreTokens(): boolean {
    if (this.done) return false;
    if (this.tokens.length === 0) return true;
    this.stalePossibleSimpleKeys();
    return this.nextPossibleSimpleKey() === this.tokensTaken;
  }

  private fetchMoreTokens(): void {
    this.scanToNextToken();
    this.stalePossibleSimpleKeys();
    this.unwindIndent(this.column);
    const ch = this.peek();
    if (ch === '\0') {
      this.fetchStreamEnd();
      return;
    }
    if (ch === '%' && this.column === 0) {
      this.fetchDirective();
      return;
    }
    if (ch === '-' && this.checkDocumentIndicator('---')) {
      this.fetchDocumentIndicator('DOCUMENT-START');
      return;
    }
    if (ch === '.' && this.checkDocumentIndicator('...')) {
      this.fetchDocumentIndicator('DOCUMENT-END');
      return;
    }
    if (ch === '[') {
      this.fetchFlowCollectionStart('FLOW-SEQUENCE-START');
      return;
    }
    if (ch === '{') {
      this.fetchFlowCollectionStart('FLOW-MAPPING-START');
      return;
    }
    if (ch === ']') {
      this.fetchFlowCollectionEnd('FLOW-SEQUENCE-END');
      return;
    }
    if (ch === '}') {
      this.fetchFlowCollectionEnd('FLOW-MAPPING-END');
      return;
    }
    if (ch === ',') {
      this.fetchFlowEntry();
      return;
    }
    if (ch === '-' && isIn(BLANKZ, this.peek(1))) {
      this.fetchBlockEntry();
      return;
    }
    if (ch === '?' && (this.flowLevel > 0 || isIn(BLANKZ, this.peek(1)))) {
      this.fetchKey();
      return;
    }
    if (ch === ':' && (this.flowLevel > 0 || isIn(BLANKZ, this.peek(1)))) {
      this.fetchValue();
      return;
    }
    if (ch === '*') {
      this.fetchAnchor('ALIAS');
      return;
    }
    if (ch === '&') {
      this.fetchAnchor('ANCHOR');
      return;
    }
    if (ch === '!') {
      this.fetchTag();
      return;
    }
    if (ch === '|' && this.flowLevel === 0) {
      this.fetchBlockScalar(false);
      return;
    }
    if (ch === '>' && this.flowLevel === 0) {
      this.fetchBlockScalar(true);
      return;
    }
    if (ch === "'") {
      this.fetchFlowScalar(false);
      return;
    }
    if (ch === '"') {
      this.fetchFlowScalar(true);
      return;
    }
    if (this.checkPlain()) {
      this.fetchPlain();
      return;
    }
    throw this.error(
      'while scanning for the next token',
      `found character ${JSON.stringify(ch)} that cannot start any token`,
    );
  }

  // --- simple keys --------------------------------------------------------------------------

  private nextPossibleSimpleKey(): number | undefined {
    let min: number | undefined;
    for (const key of this.possibleSimpleKeys.values()) {
      if (min === undefined || key.tokenNumber < min) min = key.tokenNumber;
    }
    return min;
  }

  private stalePossibleSimpleKeys(): void {
    // Called for every token: no copy of the map (deleting while iterating a Map is safe).
    if (this.possibleSimpleKeys.size === 0) return;
    for (const [level, key] of this.possibleSimpleKeys) {
      if (key.line !== this.line || this.pointer - key.index > 1024) {
        if (key.required)
          throw this.error('while scanning a simple key', "could not find expected ':'");
        this.possibleSimpleKeys.delete(level);
      }
    }
  }

  private savePossibleSimpleKey(): void {
    const required = this.flowLevel === 0 && this.indent === this.column;
    if (this.allowSimpleKey) {
      this.removePossibleSimpleKey();
      this.possibleSimpleKeys.set(this.flowLevel, {
        tokenNumber: this.tokensTaken + this.tokens.length,
        required,
        index: this.pointer,
        line: this.line,
        column: this.column,
        mark: this.mark(),
      });
    }
  }

  private removePossibleSimpleKey(): void {
    const key = this.possibleSimpleKeys.get(this.flowLevel);
    if (key) {
      if (key.required)
        throw this.error('while scanning a simple key', "could not find expected ':'");
      this.possibleSimpleKeys.delete(this.flowLevel);
    }
  }

  // --- indentation --------------------------------------------------------------------------

  private unwindIndent(column: number): void {
    if (this.flowLevel > 0) return;
    while (this.indent > column) {
      this.indent = this.indents.pop() ?? -1;
      this.tokens.push({ kind: 'BLOCK-END', mark: this.mark() });
    }
  }

  private addIndent(column: number): boolean {
    if (this.indent < column) {
      this.indents.push(this.indent);
      this.indent = column;
      return true;
    }
    return false;
  }

  // --- fetchers -----------------------------------------------------------------------------

  private fetchStreamEnd(): void {
    this.unwindIndent(-1);
    this.removePossibleSimpleKey();
    this.allowSimpleKey = false;
    this.possibleSimpleKeys.clear();
    this.tokens.push({ kind: 'STREAM-END', mark: this.mark() });
    this.done = true;
  }

  private fetchDirective(): void {
    this.unwindIndent(-1);
    this.removePossibleSimpleKey();
    this.allowSimpleKey = false;
    this.tokens.push(this.scanDirective());
  }

  private checkDocumentIndicator(indicator: string): boolean {
    return this.column === 0 && this.prefix(3) === indicator && isIn(BLANKZ, this.peek(3));
  }

  private fetchDocumentIndicator(kind: 'DOCUMENT-START' | 'DOCUMENT-END'): void {
    this.unwindIndent(-1);
    this.removePossibleSimpleKey();
    this.allowSimpleKey = false;
    const mark = this.mark();
    this.forward(3);
    this.tokens.push({ kind, mark });
  }

  private fetchFlowCollectionStart(kind: 'FLOW-SEQUENCE-START' | 'FLOW-MAPPING-START'): void {
    this.savePossibleSimpleKey();
    this.flowLevel++;
    this.allowSimpleKey = true;
    const mark = this.mark();
    this.forward();
    this.tokens.push({ kind, mark });
  }

  private fetchFlowCollectionEnd(kind: 'FLOW-SEQUENCE-END' | 'FLOW-MAPPING-END'): void {
    this.removePossibleSimpleKey();
    this.flowLevel--;
    this.allowSimpleKey = false;
    const mark = this.mark();
    this.forward();
    this.tokens.push({ kind, mark });
  }

  private fetchFlowEntry(): void {
    this.allowSimpleKey = true;
    this.removePossibleSimpleKey();
    const mark = this.mark();
    this.forward();
    this.tokens.push({ kind: 'FLOW-ENTRY', mark });
  }

  private fetchBlockEntry(): void {
    if (this.flowLevel === 0) {
      if (!this.allowSimpleKey) throw this.error(null, 'sequence entries are not allowed here');
      if (this.addIndent(this.column))
        this.tokens.push({ kind: 'BLOCK-SEQUENCE-START', mark: this.mark() });
    }
    this.allowSimpleKey = true;
    this.removePossibleSimpleKey();
    const mark = this.mark();
    this.forward();
    this.tokens.push({ kind: 'BLOCK-ENTRY', mark });
  }

  private fetchKey(): void {
    if (this.flowLevel === 0) {
      if (!this.allowSimpleKey) throw this.error(null, 'mapping keys are not allowed here');
      if (this.addIndent(this.column))
        this.tokens.push({ kind: 'BLOCK-MAPPING-START', mark: this.mark() });
    }
    this.allowSimpleKey = this.flowLevel === 0;
    this.removePossibleSimpleKey();
    const mark = this.mark();
    this.forward();
    this.tokens.push({ kind: 'KEY', mark });
  }

  private fetchValue(): void {
    const key = this.possibleSimpleKeys.get(this.flowLevel);
    if (key) {
      this.possibleSimpleKeys.delete(this.flowLevel);
      const at = key.tokenNumber - this.tokensTaken;
      this.tokens.splice(at, 0, { kind: 'KEY', mark: key.mark });
      if (this.flowLevel === 0 && this.addIndent(key.column)) {
        this.tokens.splice(at, 0, { kind: 'BLOCK-MAPPING-START', mark: key.mark });
      }
      this.allowSimpleKey = false;
    } else {
      if (this.flowLevel === 0) {
        if (!this.allowSimpleKey) throw this.error(null, 'mapping values are not allowed here');
        if (this.addIndent(this.column))
          this.tokens.push({ kind: 'BLOCK-MAPPING-START', mark: this.mark() });
      }
      this.allowSimpleKey = this.flowLevel === 0;
      this.removePossibleSimpleKey();
    }
    const mark = this.mark();
    this.forward();
    this.tokens.push({ kind: 'VALUE', mark });
  }

  private fetchAnchor(kind: 'ALIAS' | 'ANCHOR'): void {
    this.savePossibleSimpleKey();
    this.allowSimpleKey = false;
    this.tokens.push(this.scanAnchor(kind));
  }

  private fetchTag(): void {
    this.savePossibleSimpleKey();
    this.allowSimpleKey = false;
    this.tokens.push(this.scanTag());
  }

  private fetchBlockScalar(folded: boolean): void {
    this.allowSimpleKey = true;
    this.removePossibleSimpleKey();
    this.tokens.push(this.scanBlockScalar(folded));
  }

  private fetchFlowScalar(double: boolean): void {
    this.savePossibleSimpleKey();
    this.allowSimpleKey = false;
    this.tokens.push(this.scanFlowScalar(double));
  }

  private fetchPlain(): void {
    this.savePossibleSimpleKey();
    this.allowSimpleKey = false;
    this.tokens.push(this.scanPlain());
  }

  private checkPlain(): boolean {
    const ch = this.peek();
    return (
      !isIn('\0 \t\r\n\x85\u2028\u2029-?:,[]{}#&*!|>\'"%@`', ch) ||
      (!isIn(BLANKZ, this.peek(1)) &&
        (ch === '-' || (this.flowLevel === 0 && (ch === '?' || ch === ':'))))
    );
  }

  // --- scanners -----------------------------------------------------------------------------

  private scanToNextToken(): void {
    if (this.pointer === 0 && this.peek() === '\uFEFF') this.forward();
    for (;;) {
      // PyYAML never skips tabs here: a tab between tokens is an error.
      while (this.peek() === ' ') this.forward();
      if (this.peek() === '#') {
        while (!isIn(BREAKZ, this.peek())) this.forward();
      }
      if (this.scanLineBreak()) {
        if (this.flowLevel === 0) this.allowSimpleKey = true;
      } else {
        return;
      }
    }
  }

  private scanDirective(): Token {
    const mark = this.mark();
    this.forward();
    const name = this.scanDirectiveName();
    let version: [number, number] | null = null;
    let tag: [string, string] | null = null;
    if (name === 'YAML') {
      version = this.scanYamlDirectiveValue();
    } else if (name === 'TAG') {
      tag = this.scanTagDirectiveValue();
    } else {
      while (!isIn(BREAKZ, this.peek())) this.forward();
    }
    this.scanDirectiveIgnoredLine();
    return { kind: 'DIRECTIVE', mark, name, version, tag };
  }

  private scanDirectiveName(): string {
    let length = 0;
    while (isWordChar(this.peek(length))) length++;
    if (!length) {
      throw this.error(
        'while scanning a directive',
        `expected alphabetic or numeric character, but found ${JSON.stringify(this.peek(length))}`,
      );
    }
    const value = this.prefix(length);
    this.forward(length);
    if (!isIn('\0 \r\n\x85\u2028\u2029', this.peek())) {
      throw this.error(
        'while scanning a directive',
        `expected alphabetic or numeric character, but found ${JSON.stringify(this.peek())}`,
      );
    }
    return value;
  }

  private scanYamlDirectiveValue(): [number, number] {
    while (this.peek() === ' ') this.forward();
    const major = this.scanYamlDirectiveNumber();
    if (this.peek() !== '.')
      throw this.error(
        'while scanning a directive',
        `expected a digit or '.', but found ${JSON.stringify(this.peek())}`,
      );
    this.forward();
    const minor = this.scanYamlDirectiveNumber();
    if (!isIn('\0 \r\n\x85\u2028\u2029', this.peek())) {
      throw this.error(
        'while scanning a directive',
        `expected a digit or ' ', but found ${JSON.stringify(this.peek())}`,
      );
    }
    return [major, minor];
  }

  private scanYamlDirectiveNumber(): number {
    const ch = this.peek();
    if (!(ch >= '0' && ch <= '9' && ch.length === 1)) {
      throw this.error(
        'while scanning a directive',
        `expected a digit, but found ${JSON.stringify(ch)}`,
      );
    }
    let length = 0;
    while (this.peek(length) >= '0' && this.peek(length) <= '9' && this.peek(length).length === 1)
      length++;
    const value = Number.parseInt(this.prefix(length), 10);
    this.forward(length);
    return value;
  }

  private scanTagDirectiveValue(): [string, string] {
    while (this.peek() === ' ') this.forward();
    const handle = this.scanTagHandle('directive');
    if (this.peek() !== ' ')
      throw this.error(
        'while scanning a directive',
        `expected ' ', but found ${JSON.stringify(this.peek())}`,
      );
    while (this.peek() === ' ') this.forward();
    const prefix = this.scanTagUri('directive');
    if (!isIn('\0 \r\n\x85\u2028\u2029', this.peek())) {
      throw this.error(
        'while scanning a directive',
        `expected ' ', but found ${JSON.stringify(this.peek())}`,
      );
    }
    return [handle, prefix];
  }

  private scanDirectiveIgnoredLine(): void {
    while (this.peek() === ' ') this.forward();
    if (this.peek() === '#') {
      while (!isIn(BREAKZ, this.peek())) this.forward();
    }
    if (!isIn(BREAKZ, this.peek())) {
      throw this.error(
        'while scanning a directive',
        `expected a comment or a line break, but found ${JSON.stringify(this.peek())}`,
      );
    }
    this.scanLineBreak();
  }

  private scanAnchor(kind: 'ALIAS' | 'ANCHOR'): Token {
    const mark = this.mark();
    const name = kind === 'ALIAS' ? 'alias' : 'anchor';
    this.forward();
    let length = 0;
    while (isWordChar(this.peek(length))) length++;
    if (!length) {
      throw this.error(
        `while scanning an ${name}`,
        `expected alphabetic or numeric character, but found ${JSON.stringify(this.peek(length))}`,
      );
    }
    const value = this.prefix(length);
    this.forward(length);
    if (!isIn('\0 \t\r\n\x85\u2028\u2029?:,]}%@`', this.peek())) {
      throw this.error(
        `while scanning an ${name}`,
        `expected alphabetic or numeric character, but found ${JSON.stringify(this.peek())}`,
      );
    }
    return { kind, mark, value };
  }

  private scanTag(): Token {
    const mark = this.mark();
    let ch = this.peek(1);
    let handle: string | null;
    let suffix: string;
    if (ch === '<') {
      handle = null;
      this.forward(2);
      suffix = this.scanTagUri('tag');
      if (this.peek() !== '>')
        throw this.error(
          'while parsing a tag',
          `expected '>', but found ${JSON.stringify(this.peek())}`,
        );
      this.forward();
    } else if (isIn(BLANKZ, ch)) {
      handle = null;
      suffix = '!';
      this.forward();
    } else {
      let length = 1;
      let useHandle = false;
      while (!isIn('\0 \r\n\x85\u2028\u2029', ch)) {
        if (ch === '!') {
          useHandle = true;
          break;
        }
        length++;
        ch = this.peek(length);
      }
      if (useHandle) {
        handle = this.scanTagHandle('tag');
      } else {
        handle = '!';
        this.forward();
      }
      suffix = this.scanTagUri('tag');
    }
    if (!isIn('\0 \r\n\x85\u2028\u2029', this.peek())) {
      throw this.error(
        'while scanning a tag',
        `expected ' ', but found ${JSON.stringify(this.peek())}`,
      );
    }
    return { kind: 'TAG', mark, handle, suffix };
  }

  private scanBlockScalar(folded: boolean): Token {
    const chunks: string[] = [];
    const mark = this.mark();
    this.forward();
    const [chomping, increment] = this.scanBlockScalarIndicators();
    this.scanBlockScalarIgnoredLine();
    const minIndent = Math.max(this.indent + 1, 1);
    let breaks: string[];
    let indent: number;
    if (increment === null) {
      let maxIndent: number;
      [breaks, maxIndent] = this.scanBlockScalarIndentation();
      indent = Math.max(minIndent, maxIndent);
    } else {
      indent = minIndent + increment - 1;
      breaks = this.scanBlockScalarBreaks(indent);
    }
    let lineBreak = '';
    while (this.column === indent && this.peek() !== '\0') {
      chunks.push(...breaks);
      const leadingNonSpace = this.peek() !== ' ' && this.peek() !== '\t';
      let length = 0;
      while (!isIn(BREAKZ, this.peek(length))) length++;
      chunks.push(this.prefix(length));
      this.forward(length);
      lineBreak = this.scanLineBreak();
      breaks = this.scanBlockScalarBreaks(indent);
      if (this.column === indent && this.peek() !== '\0') {
        if (
          folded &&
          lineBreak === '\n' &&
          leadingNonSpace &&
          this.peek() !== ' ' &&
          this.peek() !== '\t'
        ) {
          if (breaks.length === 0) chunks.push(' ');
        } else {
          chunks.push(lineBreak);
        }
      } else {
        break;
      }
    }
    if (chomping !== false) chunks.push(lineBreak);
    if (chomping === true) chunks.push(...breaks);
    return {
      kind: 'SCALAR',
      mark,
      parts: [chunks.join('')],
      plain: false,
      style: folded ? '>' : '|',
    };
  }

  private scanBlockScalarIndicators(): [boolean | null, number | null] {
    let chomping: boolean | null = null;
    let increment: number | null = null;
    let ch = this.peek();
    const digit = (c: string) => c.length === 1 && c >= '0' && c <= '9';
    if (ch === '+' || ch === '-') {
      chomping = ch === '+';
      this.forward();
      ch = this.peek();
      if (digit(ch)) {
        increment = Number(ch);
        if (increment === 0) {
          throw this.error(
            'while scanning a block scalar',
            'expected indentation indicator in the range 1-9, but found 0',
          );
        }
        this.forward();
      }
    } else if (digit(ch)) {
      increment = Number(ch);
      if (increment === 0) {
        throw this.error(
          'while scanning a block scalar',
          'expected indentation indicator in the range 1-9, but found 0',
        );
      }
      this.forward();
      ch = this.peek();
      if (ch === '+' || ch === '-') {
        chomping = ch === '+';
        this.forward();
      }
    }
    if (!isIn('\0 \r\n\x85\u2028\u2029', this.peek())) {
      throw this.error(
        'while scanning a block scalar',
        `expected chomping or indentation indicators, but found ${JSON.stringify(this.peek())}`,
      );
    }
    return [chomping, increment];
  }

  private scanBlockScalarIgnoredLine(): void {
    while (this.peek() === ' ') this.forward();
    if (this.peek() === '#') {
      while (!isIn(BREAKZ, this.peek())) this.forward();
    }
    if (!isIn(BREAKZ, this.peek())) {
      throw this.error(
        'while scanning a block scalar',
        `expected a comment or a line break, but found ${JSON.stringify(this.peek())}`,
      );
    }
    this.scanLineBreak();
  }

  private scanBlockScalarIndentation(): [string[], number] {
    const chunks: string[] = [];
    let maxIndent = 0;
    while (isIn(' \r\n\x85\u2028\u2029', this.peek())) {
      if (this.peek() !== ' ') {
        chunks.push(this.scanLineBreak());
      } else {
        this.forward();
        if (this.column > maxIndent) maxIndent = this.column;
      }
    }
    return [chunks, maxIndent];
  }

  private scanBlockScalarBreaks(indent: number): string[] {
    const chunks: string[] = [];
    while (this.column < indent && this.peek() === ' ') this.forward();
    while (isIn(BREAKS, this.peek())) {
      chunks.push(this.scanLineBreak());
      while (this.column < indent && this.peek() === ' ') this.forward();
    }
    return chunks;
  }

  private scanFlowScalar(double: boolean): Token {
    const parts: ScalarPart[] = [];
    const mark = this.mark();
    const quote = this.peek();
    this.forward();
    this.scanFlowScalarNonSpaces(double, parts);
    while (this.peek() !== quote) {
      this.scanFlowScalarSpaces(parts);
      this.scanFlowScalarNonSpaces(double, parts);
    }
    this.forward();
    return { kind: 'SCALAR', mark, parts, plain: false, style: double ? '"' : "'" };
  }

  private scanFlowScalarNonSpaces(double: boolean, parts: ScalarPart[]): void {
    for (;;) {
      let length = 0;
      while (!isIn('\'"\\\0 \t\r\n\x85\u2028\u2029', this.peek(length))) length++;
      if (length) {
        parts.push(this.prefix(length));
        this.forward(length);
      }
      const ch = this.peek();
      if (!double && ch === "'" && this.peek(1) === "'") {
        parts.push("'");
        this.forward(2);
      } else if ((double && ch === "'") || (!double && (ch === '"' || ch === '\\'))) {
        parts.push(ch);
        this.forward();
      } else if (double && ch === '\\') {
        this.forward();
        const esc = this.peek();
        const replacement = Object.hasOwn(ESCAPE_REPLACEMENTS, esc)
          ? ESCAPE_REPLACEMENTS[esc]
          : undefined;
        const codeLength = Object.hasOwn(ESCAPE_CODES, esc) ? ESCAPE_CODES[esc] : undefined;
        if (replacement !== undefined) {
          parts.push(replacement);
          this.forward();
        } else if (codeLength !== undefined) {
          this.forward();
          for (let k = 0; k < codeLength; k++) {
            if (!isIn(HEX, this.peek(k))) {
              throw this.error(
                'while scanning a double-quoted scalar',
                `expected escape sequence of ${codeLength} hexadecimal numbers, but found ${JSON.stringify(this.peek(k))}`,
              );
            }
          }
          const code = Number.parseInt(this.prefix(codeLength), 16);
          if (code > 0x10ffff)
            throw this.error(
              'while scanning a double-quoted scalar',
              'chr() arg not in range(0x110000)',
            );
          parts.push({ escapedCodePoint: code });
          this.forward(codeLength);
        } else if (isIn(BREAKS, esc)) {
          this.scanLineBreak();
          parts.push(...this.scanFlowScalarBreaks());
        } else {
          throw this.error(
            'while scanning a double-quoted scalar',
            `found unknown escape character ${JSON.stringify(esc)}`,
          );
        }
      } else {
        return;
      }
    }
  }

  private scanFlowScalarSpaces(parts: ScalarPart[]): void {
    let length = 0;
    while (this.peek(length) === ' ' || this.peek(length) === '\t') length++;
    const whitespaces = this.prefix(length);
    this.forward(length);
    const ch = this.peek();
    if (ch === '\0') {
      throw this.error('while scanning a quoted scalar', 'found unexpected end of stream');
    }
    if (isIn(BREAKS, ch)) {
      const lineBreak = this.scanLineBreak();
      const breaks = this.scanFlowScalarBreaks();
      if (lineBreak !== '\n') parts.push(lineBreak);
      else if (breaks.length === 0) parts.push(' ');
      parts.push(...breaks);
    } else {
      parts.push(whitespaces);
    }
  }

  private scanFlowScalarBreaks(): string[] {
    const chunks: string[] = [];
    for (;;) {
      const prefix = this.prefix(3);
      if ((prefix === '---' || prefix === '...') && isIn(BLANKZ, this.peek(3))) {
        throw this.error('while scanning a quoted scalar', 'found unexpected document separator');
      }
      while (this.peek() === ' ' || this.peek() === '\t') this.forward();
      if (isIn(BREAKS, this.peek())) chunks.push(this.scanLineBreak());
      else return chunks;
    }
  }

  private scanPlain(): Token {
    const chunks: string[] = [];
    const mark = this.mark();
    const indent = this.indent + 1;
    let spaces: string[] | null = [];
    for (;;) {
      let length = 0;
      if (this.peek() === '#') break;
      for (;;) {
        const ch = this.peek(length);
        if (
          isIn(BLANKZ, ch) ||
          (ch === ':' &&
            isIn(this.flowLevel > 0 ? `${BLANKZ},[]{}` : BLANKZ, this.peek(length + 1))) ||
          (this.flowLevel > 0 && isIn(',?[]{}', ch))
        ) {
          break;
        }
        length++;
      }
      if (length === 0) break;
      this.allowSimpleKey = false;
      chunks.push(...(spaces ?? []));
      chunks.push(this.prefix(length));
      this.forward(length);
      spaces = this.scanPlainSpaces();
      if (
        !spaces ||
        spaces.length === 0 ||
        this.peek() === '#' ||
        (this.flowLevel === 0 && this.column < indent)
      )
        break;
    }
    return { kind: 'SCALAR', mark, parts: [chunks.join('')], plain: true, style: null };
  }

  /** `null` stands for PyYAML's bare `return` at a document separator. */
  private scanPlainSpaces(): string[] | null {
    const chunks: string[] = [];
    let length = 0;
    while (this.peek(length) === ' ') length++;
    const whitespaces = this.prefix(length);
    this.forward(length);
    const ch = this.peek();
    if (isIn(BREAKS, ch)) {
      const lineBreak = this.scanLineBreak();
      this.allowSimpleKey = true;
      const isSeparator = () => {
        const p = this.prefix(3);
        return (p === '---' || p === '...') && isIn(BLANKZ, this.peek(3));
      };
      if (isSeparator()) return null;
      const breaks: string[] = [];
      while (isIn(' \r\n\x85\u2028\u2029', this.peek())) {
        if (this.peek() === ' ') {
          this.forward();
        } else {
          breaks.push(this.scanLineBreak());
          if (isSeparator()) return null;
        }
      }
      if (lineBreak !== '\n') chunks.push(lineBreak);
      else if (breaks.length === 0) chunks.push(' ');
      chunks.push(...breaks);
    } else if (whitespaces) {
      chunks.push(whitespaces);
    }
    return chunks;
  }

  private scanTagHandle(name: string): string {
    let ch = this.peek();
    if (ch !== '!')
      throw this.error(`while scanning a ${name}`, `expected '!', but found ${JSON.stringify(ch)}`);
    let length = 1;
    ch = this.peek(length);
    if (ch !== ' ') {
      while (isWordChar(ch)) {
        length++;
        ch = this.peek(length);
      }
      if (ch !== '!') {
        this.forward(length);
        throw this.error(
          `while scanning a ${name}`,
          `expected '!', but found ${JSON.stringify(ch)}`,
        );
      }
      length++;
    }
    const value = this.prefix(length);
    this.forward(length);
    return value;
  }

  private scanTagUri(name: string): string {
    const chunks: string[] = [];
    let length = 0;
    let ch = this.peek(length);
    while ((ch.length === 1 && isWordChar(ch)) || isIn(URI_PUNCT, ch)) {
      if (ch === '%') {
        chunks.push(this.prefix(length));
        this.forward(length);
        length = 0;
        chunks.push(this.scanUriEscapes(name));
      } else {
        length++;
      }
      ch = this.peek(length);
    }
    if (length) {
      chunks.push(this.prefix(length));
      this.forward(length);
    }
    if (chunks.length === 0)
      throw this.error(`while parsing a ${name}`, `expected URI, but found ${JSON.stringify(ch)}`);
    return chunks.join('');
  }

  private scanUriEscapes(name: string): string {
    const codes: number[] = [];
    while (this.peek() === '%') {
      this.forward();
      for (let k = 0; k < 2; k++) {
        if (!isIn(HEX, this.peek(k))) {
          throw this.error(
            `while scanning a ${name}`,
            `expected URI escape sequence of 2 hexadecimal numbers, but found ${JSON.stringify(this.peek(k))}`,
          );
        }
      }
      codes.push(Number.parseInt(this.prefix(2), 16));
      this.forward(2);
    }
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(new Uint8Array(codes));
    } catch {
      throw this.error(`while scanning a ${name}`, 'invalid UTF-8 in URI escape');
    }
  }

  private scanLineBreak(): string {
    const ch = this.peek();
    if (ch === '\r' || ch === '\n' || ch === '\x85') {
      if (this.prefix(2) === '\r\n') this.forward(2);
      else this.forward();
      return '\n';
    }
    if (ch === '\u2028' || ch === '\u2029') {
      this.forward();
      return ch;
    }
    return '';
  }
}
