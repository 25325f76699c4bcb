import { describe, expect, it } from 'vitest';
import { decodeUtf8, Utf8DecodeError } from './utf8.ts';

const bytes = (...parts: Array<string | number[]>) =>
  Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : Buffer.from(p))));

describe('decodeUtf8', () => {
  it('decodes valid text as is, keeping a BOM and literal U+FFFD like Python', () => {
    expect(decodeUtf8(bytes([0xef, 0xbb, 0xbf], 'a: \u00e9 \ufffd \u{1f600}\n'))).toBe(
      '\ufeffa: \u00e9 \ufffd \u{1f600}\n',
    );
  });

  it.each([
    // byte, where Python's UnicodeDecodeError puts it (position = byte offset)
    ['a lone continuation byte', bytes('ab\ncd', [0x80], 'x'), 0x80, 5, 2, 3],
    ['a truncated sequence before a newline', bytes('\u00e9\u00e9', [0xe9], '\n'), 0xe9, 4, 1, 3],
    ['an overlong encoding', bytes('x', [0xc0, 0xaf]), 0xc0, 1, 1, 2],
    ['a surrogate', bytes('\u{1f600}', [0xed, 0xa0, 0x80]), 0xed, 4, 1, 2],
    ['after a literal U+FFFD', bytes('\ufffd', [0xff]), 0xff, 3, 1, 2],
  ])('locates %s', (_what, raw, byte, offset, line, column) => {
    let error: unknown;
    try {
      decodeUtf8(raw);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(Utf8DecodeError);
    expect(error).toMatchObject({ byte, offset, line, column });
    expect((error as Error).message).toBe(
      `invalid byte 0x${byte.toString(16)} at byte offset ${offset} (line ${line}, column ${column})`,
    );
  });
});
