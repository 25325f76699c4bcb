import { describe, expect, it } from 'vitest';
import { pythonJsonDumps } from './python-json.ts';

describe('pythonJsonDumps (json.dump sort_keys, compact, ensure_ascii)', () => {
  it('sorts keys recursively by code point, integer-like keys too', () => {
    expect(pythonJsonDumps({ b: 1, 10: 'x', 2: 'y', a: { z: [{ d: 1, c: 2 }], y: null } })).toBe(
      '{"10":"x","2":"y","a":{"y":null,"z":[{"c":2,"d":1}]},"b":1}\n',
    );
  });

  it('escapes non-ASCII and DEL as \\uXXXX, like ensure_ascii', () => {
    expect(pythonJsonDumps({ k: 'é\u007f😀\n"' })).toBe(
      '{"k":"\\u00e9\\u007f\\ud83d\\ude00\\n\\""}\n',
    );
  });

  it('drops undefined members and writes booleans and numbers', () => {
    expect(pythonJsonDumps({ a: undefined, b: true, c: 1.5, d: -3 })).toBe(
      '{"b":true,"c":1.5,"d":-3}\n',
    );
  });
});
