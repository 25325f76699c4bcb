import { failure } from './errors.ts';

/** The tag delimiters of one template flavour. */
export interface Delimiters {
  readonly blockStart: string;
  readonly blockEnd: string;
  readonly variableStart: string;
  readonly variableEnd: string;
  readonly commentStart: string;
  readonly commentEnd: string;
}

export const JINJA2_DELIMITERS: Delimiters = {
  blockStart: '{%',
  blockEnd: '%}',
  variableStart: '{{',
  variableEnd: '}}',
  commentStart: '{#',
  commentEnd: '#}',
};

/** The original's `extracurlyjinja2` flavour: one more brace on every delimiter. */
export const EXTRA_CURLY_DELIMITERS: Delimiters = {
  blockStart: '{{%',
  blockEnd: '%}}',
  variableStart: '{{{',
  variableEnd: '}}}',
  commentStart: '{{#',
  commentEnd: '#}}',
};

type TokenType =
  | 'data'
  | 'block_begin'
  | 'block_end'
  | 'variable_begin'
  | 'variable_end'
  | 'name'
  | 'string'
  | 'integer'
  | 'float'
  | 'operator'
  | 'eof';

export interface Token {
  readonly type: TokenType;
  readonly value: string;
  readonly line: number;
}

const OPERATORS = [
  '//',
  '**',
  '==',
  '!=',
  '<=',
  '>=',
  '+',
  '-',
  '*',
  '/',
  '%',
  '~',
  '<',
  '>',
  '=',
  '.',
  ',',
  ':',
  '|',
  '(',
  ')',
  '[',
  ']',
  '{',
  '}',
];

const NAME_RE = /[a-zA-Z_][a-zA-Z0-9_]*/y;
const FLOAT_RE = /(?:\d+_)*\d+(?:(?:\.(?:\d+_)*\d+)?[eE][+-]?(?:\d+_)*\d+|\.(?:\d+_)*\d+)/y;
const INTEGER_RE = /0[bB](?:_?[01])+|0[oO](?:_?[0-7])+|0[xX](?:_?[\da-fA-F])+|(?:\d+_)*\d+/y;
const STRING_RE = /'([^'\\]*(?:\\.[^'\\]*)*)'|"([^"\\]*(?:\\.[^"\\]*)*)"/sy;
const WHITESPACE_RE = /\s+/y;

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function countNewlines(s: string): number {
  let n = 0;
  for (let i = s.indexOf('\n'); i !== -1; i = s.indexOf('\n', i + 1)) n++;
  return n;
}

/** Jinja2's whitespace settings (the original's `TemplateRenderOptions`); all off by default. */
export interface WhitespaceOptions {
  /** Drop the first newline after a block or comment tag. */
  readonly trimBlocks: boolean;
  /** Drop spaces and tabs between the start of a line and a block or comment tag. */
  readonly lstripBlocks: boolean;
  /** Keep the template's single trailing newline. */
  readonly keepTrailingNewline: boolean;
}

export const DEFAULT_WHITESPACE: WhitespaceOptions = {
  trimBlocks: false,
  lstripBlocks: false,
  keepTrailingNewline: false,
};

/**
 * Splits a template into tokens the way Jinja2's lexer does: newlines are
 * normalised to `\n`, one trailing newline of the source is dropped (unless
 * `keepTrailingNewline`), `-` on a tag strips the whitespace on that side, `+`
 * disables `lstripBlocks` for that tag.
 */
export function tokenize(
  source: string,
  delimiters: Delimiters,
  whitespace: WhitespaceOptions = DEFAULT_WHITESPACE,
): Token[] {
  let src = source.replace(/\r\n|\r/g, '\n');
  if (!whitespace.keepTrailingNewline && src.endsWith('\n')) src = src.slice(0, -1);

  const d = delimiters;
  const starts = [
    { text: d.commentStart, kind: 'comment' as const },
    { text: d.blockStart, kind: 'block' as const },
    { text: d.variableStart, kind: 'variable' as const },
  ].sort((a, b) => b.text.length - a.text.length);
  const rawStart = new RegExp(
    `${escapeRegExp(d.blockStart)}(-|\\+)?\\s*raw\\s*(-)?${escapeRegExp(d.blockEnd)}`,
    'y',
  );
  const rawEnd = new RegExp(
    `${escapeRegExp(d.blockStart)}(-|\\+)?\\s*endraw\\s*(-)?${escapeRegExp(d.blockEnd)}`,
    'g',
  );

  const tokens: Token[] = [];
  let pos = 0;
  let line = 1;
  let stripNextData = false;
  let trimNewline = false;

  /** Jinja2's `lstrip_blocks`: drops the spaces/tabs between a line start and the tag. */
  const lstripLine = (t: string, startsLine: boolean): string => {
    const lineStart = t.lastIndexOf('\n') + 1;
    if ((lineStart > 0 || startsLine) && /^[ \t]*$/.test(t.slice(lineStart)))
      return t.slice(0, lineStart);
    return t;
  };

  const pushData = (text: string, stripEnd: boolean, lstrip = false): void => {
    let t = text;
    // Judged on the text before trim_blocks takes its newline: that newline still starts the line.
    if (lstrip && !stripEnd) t = lstripLine(t, dataStart === 0 || src[dataStart - 1] === '\n');
    if (trimNewline && t.startsWith('\n')) t = t.slice(1);
    if (stripNextData) t = t.replace(/^\s+/, '');
    if (stripEnd) t = t.replace(/\s+$/, '');
    stripNextData = false;
    trimNewline = false;
    if (t) tokens.push({ type: 'data', value: t, line });
    line += countNewlines(text);
  };

  let dataStart = 0;
  while (pos < src.length) {
    dataStart = pos;
    // Earliest tag start; at equal positions the longer delimiter wins.
    let best: { index: number; text: string; kind: 'comment' | 'block' | 'variable' } | undefined;
    for (const s of starts) {
      const i = src.indexOf(s.text, pos);
      if (i !== -1 && (best === undefined || i < best.index)) best = { index: i, ...s };
    }
    if (best === undefined) {
      pushData(src.slice(pos), false);
      break;
    }
    const after = best.index + best.text.length;
    const modifier = src[after];
    const stripBefore = modifier === '-';
    const lstrip = whitespace.lstripBlocks && best.kind !== 'variable' && modifier !== '+';
    pushData(src.slice(pos, best.index), stripBefore, lstrip);
    pos = after + (modifier === '-' || modifier === '+' ? 1 : 0);

    if (best.kind === 'comment') {
      const end = src.indexOf(d.commentEnd, pos);
      if (end === -1) throw failure.syntax('Missing end of comment tag', line);
      const body = src.slice(pos, end);
      line += countNewlines(body);
      stripNextData = body.endsWith('-');
      trimNewline = whitespace.trimBlocks;
      pos = end + d.commentEnd.length;
      continue;
    }

    if (best.kind === 'block') {
      rawStart.lastIndex = best.index;
      const raw = rawStart.exec(src);
      if (raw) {
        rawEnd.lastIndex = rawStart.lastIndex;
        const end = rawEnd.exec(src);
        if (!end) throw failure.syntax('Missing end of raw directive', line);
        line += countNewlines(raw[0]);
        let body = src.slice(rawStart.lastIndex, end.index);
        if (raw[2] === '-') body = body.replace(/^\s+/, '');
        if (end[1] === '-') body = body.replace(/\s+$/, '');
        else if (whitespace.lstripBlocks && end[1] !== '+') body = lstripLine(body, false);
        if (body) tokens.push({ type: 'data', value: body, line });
        line += countNewlines(src.slice(rawStart.lastIndex, end.index)) + countNewlines(end[0]);
        stripNextData = end[2] === '-';
        trimNewline = whitespace.trimBlocks;
        pos = end.index + end[0].length;
        continue;
      }
    }

    const isBlock = best.kind === 'block';
    const endText = isBlock ? d.blockEnd : d.variableEnd;
    tokens.push({ type: isBlock ? 'block_begin' : 'variable_begin', value: best.text, line });
    const result = tokenizeTag(src, pos, line, endText, tokens);
    pos = result.pos;
    line = result.line;
    stripNextData = result.stripAfter;
    trimNewline = isBlock && whitespace.trimBlocks;
    tokens.push({ type: isBlock ? 'block_end' : 'variable_end', value: endText, line });
  }
  tokens.push({ type: 'eof', value: '', line });
  return tokens;
}

function tokenizeTag(
  src: string,
  start: number,
  startLine: number,
  endText: string,
  tokens: Token[],
): { pos: number; line: number; stripAfter: boolean } {
  let pos = start;
  let line = startLine;
  const brackets: string[] = [];
  for (;;) {
    WHITESPACE_RE.lastIndex = pos;
    const ws = WHITESPACE_RE.exec(src);
    if (ws) {
      line += countNewlines(ws[0]);
      pos = WHITESPACE_RE.lastIndex;
    }
    if (pos >= src.length)
      throw failure.syntax(`Unexpected end of template, expected '${endText}'`, line);
    // Inside brackets a closing delimiter is data (`{{ {'a': {'b': 1}} }}`), as in Jinja2.
    if (brackets.length === 0) {
      if (src.startsWith(endText, pos))
        return { pos: pos + endText.length, line, stripAfter: false };
      if (src[pos] === '-' && src.startsWith(endText, pos + 1)) {
        return { pos: pos + 1 + endText.length, line, stripAfter: true };
      }
    }
    const c = src[pos] ?? '';
    if (/[a-zA-Z_]/.test(c)) {
      NAME_RE.lastIndex = pos;
      const m = NAME_RE.exec(src)!;
      tokens.push({ type: 'name', value: m[0], line });
      pos = NAME_RE.lastIndex;
      continue;
    }
    if (/\d/.test(c)) {
      FLOAT_RE.lastIndex = pos;
      const f = FLOAT_RE.exec(src);
      // `a.0.1` is two subscripts, not a float, as Jinja2's lookbehind decides.
      if (f && src[pos - 1] !== '.') {
        tokens.push({ type: 'float', value: f[0].replaceAll('_', ''), line });
        pos = FLOAT_RE.lastIndex;
        continue;
      }
      INTEGER_RE.lastIndex = pos;
      const m = INTEGER_RE.exec(src)!;
      tokens.push({ type: 'integer', value: m[0].replaceAll('_', ''), line });
      pos = INTEGER_RE.lastIndex;
      continue;
    }
    if (c === '"' || c === "'") {
      STRING_RE.lastIndex = pos;
      const m = STRING_RE.exec(src);
      if (!m) throw failure.syntax('unexpected end of string', line);
      tokens.push({ type: 'string', value: unescapeString(m[1] ?? m[2] ?? ''), line });
      line += countNewlines(m[0]);
      pos = STRING_RE.lastIndex;
      continue;
    }
    const op = OPERATORS.find((o) => src.startsWith(o, pos));
    if (op === undefined) throw failure.syntax(`unexpected char '${c}' at ${pos}`, line);
    if (op === '(' || op === '[' || op === '{') brackets.push(op);
    if (op === ')' || op === ']' || op === '}') {
      const open = brackets.pop();
      const expected = open === '(' ? ')' : open === '[' ? ']' : open === '{' ? '}' : undefined;
      if (expected !== op) {
        throw failure.syntax(
          open === undefined ? `unexpected '${op}'` : `unexpected '${op}', expected '${expected}'`,
          line,
        );
      }
    }
    tokens.push({ type: 'operator', value: op, line });
    pos += op.length;
  }
}

const SIMPLE_ESCAPES: Record<string, string> = {
  n: '\n',
  t: '\t',
  r: '\r',
  '\\': '\\',
  "'": "'",
  '"': '"',
  a: '\x07',
  b: '\b',
  f: '\f',
  v: '\v',
  '0': '\0',
};

/** Python string-literal escapes, as Jinja2 applies them to template string literals. */
function unescapeString(body: string): string {
  return body.replace(
    /\\(x[\da-fA-F]{2}|u[\da-fA-F]{4}|U[\da-fA-F]{8}|\n|.)/gs,
    (whole, e: string) => {
      if (e === '\n') return '';
      const first = e[0] ?? '';
      if (e.length > 1 && (first === 'x' || first === 'u' || first === 'U')) {
        return String.fromCodePoint(Number.parseInt(e.slice(1), 16));
      }
      return SIMPLE_ESCAPES[e] ?? whole;
    },
  );
}
