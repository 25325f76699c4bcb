import { describe, expect, it } from 'vitest';
import { pyStrRepr } from './str-repr.ts';

// Expected strings are what CPython's repr() prints.
describe('pyStrRepr', () => {
  it('picks the quote as Python does', () => {
    expect(pyStrRepr('plain')).toBe("'plain'");
    expect(pyStrRepr("it's")).toBe(`"it's"`);
    expect(pyStrRepr('say "hi"')).toBe(`'say "hi"'`);
    expect(pyStrRepr(`both ' and "`)).toBe(`'both \\' and "'`);
    expect(pyStrRepr('')).toBe("''");
  });

  it('escapes what str.isprintable() rejects, and nothing else', () => {
    expect(pyStrRepr('tab\tnl\ncr\r\\\\')).toBe("'tab\\tnl\\ncr\\r\\\\\\\\'");
    expect(pyStrRepr('\x00\x1f\x7f\x80\x9f\xa0\xad')).toBe("'\\x00\\x1f\\x7f\\x80\\x9f\\xa0\\xad'");
    expect(pyStrRepr('é✓😀 ')).toBe("'é✓😀 '");
    expect(pyStrRepr('\u2028\u200b\ue000\u{e0001}')).toBe("'\\u2028\\u200b\\ue000\\U000e0001'");
  });

  it('escapes lone surrogates, given as a string or as code points', () => {
    expect(pyStrRepr('\ud800')).toBe("'\\ud800'");
    expect(pyStrRepr([0xd83d, 0xde00])).toBe("'\\ud83d\\ude00'");
    expect(pyStrRepr([0x1f600])).toBe("'😀'");
  });
});
