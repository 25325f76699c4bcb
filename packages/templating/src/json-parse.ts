import { failure } from './errors.ts';
import { parseIntText } from './python-int.ts';
import { PyDict, pyFloat } from './values.ts';

const MAX_DEPTH = 1000;
const NUMBER = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?/y;
// biome-ignore lint/suspicious/noControlCharactersInRegex: JSON forbids raw control characters in strings.
const PLAIN_CHARS = /[^"\\\u0000-\u001f]*/y;

/**
 * JSON as Python's `json.loads` reads it, into template values: objects become
 * `PyDict`s that keep the document's key order (JavaScript objects would move
 * integer-like keys first), `1.0` stays a float, integers stay exact beyond
 * 2^53 (`bigint`), and `NaN`/`Infinity` are accepted. Hand-written because
 * `JSON.parse` cannot keep these properties.
 */
export function parseJson(text: string): unknown {
  let pos = 0;
  const fail = (what: string): never => {
    throw failure.value(`invalid JSON: ${what} at position ${pos}`);
  };
  const skip = () => {
    while (pos < text.length && ' \t\n\r'.includes(text[pos]!)) pos++;
  };
  const literal = (word: string, value: unknown): unknown => {
    if (!text.startsWith(word, pos)) fail('unexpected token');
    pos += word.length;
    return value;
  };

  const parseString = (): string => {
    pos++;
    let out = '';
    for (;;) {
      PLAIN_CHARS.lastIndex = pos;
      PLAIN_CHARS.exec(text);
      out += text.slice(pos, PLAIN_CHARS.lastIndex);
      pos = PLAIN_CHARS.lastIndex;
      if (pos >= text.length) fail('unterminated string');
      const ch = text[pos];
      if (ch === '"') {
        pos++;
        return out;
      }
      if (ch !== '\\') fail('control character in string');
      const esc = text[pos + 1];
      pos += 2;
      switch (esc) {
        case '"':
        case '\\':
        case '/':
          out += esc;
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          const hex = text.slice(pos, pos + 4);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) fail('invalid \\u escape');
          out += String.fromCharCode(Number.parseInt(hex, 16));
          pos += 4;
          break;
        }
        default:
          fail('invalid escape');
      }
    }
  };

  const parseNumber = (): unknown => {
    NUMBER.lastIndex = pos;
    const m = NUMBER.exec(text);
    if (!m) return fail('unexpected token');
    pos = NUMBER.lastIndex;
    if (m[1] !== undefined || m[2] !== undefined) return pyFloat(Number(m[0]));
    // Python's json.loads reads integers exactly, at any size.
    return m[0].length < 16 ? Number(m[0]) : parseIntText(m[0], 10);
  };

  const parseValue = (depth: number): unknown => {
    if (depth > MAX_DEPTH) fail('nesting too deep');
    skip();
    const ch = text[pos];
    if (ch === '{') {
      pos++;
      const out = new PyDict();
      skip();
      if (text[pos] === '}') {
        pos++;
        return out;
      }
      for (;;) {
        skip();
        if (text[pos] !== '"') fail('expected a property name');
        const key = parseString();
        skip();
        if (text[pos] !== ':') fail("expected ':'");
        pos++;
        out.set(key, parseValue(depth + 1));
        skip();
        if (text[pos] === ',') {
          pos++;
          continue;
        }
        if (text[pos] === '}') {
          pos++;
          return out;
        }
        fail("expected ',' or '}'");
      }
    }
    if (ch === '[') {
      pos++;
      const out: unknown[] = [];
      skip();
      if (text[pos] === ']') {
        pos++;
        return out;
      }
      for (;;) {
        out.push(parseValue(depth + 1));
        skip();
        if (text[pos] === ',') {
          pos++;
          continue;
        }
        if (text[pos] === ']') {
          pos++;
          return out;
        }
        fail("expected ',' or ']'");
      }
    }
    if (ch === '"') return parseString();
    if (ch === 't') return literal('true', true);
    if (ch === 'f') return literal('false', false);
    if (ch === 'n') return literal('null', null);
    if (ch === 'N') return literal('NaN', Number.NaN);
    if (ch === 'I') return literal('Infinity', Number.POSITIVE_INFINITY);
    if (ch === '-' && text.startsWith('-Infinity', pos))
      return literal('-Infinity', Number.NEGATIVE_INFINITY);
    return parseNumber();
  };

  const value = parseValue(0);
  skip();
  if (pos !== text.length) fail('extra data');
  return value;
}
