import { describe, expect, it } from 'vitest';
import { pythonJsonDumps, pythonNumber } from './python-json.ts';

// Expected strings are what CPython's json.dumps(value, sort_keys=True) prints.
describe('pythonJsonDumps', () => {
  it('uses Python separators and sorts keys at every level', () => {
    expect(pythonJsonDumps({ b: [1, 2, { d: null, c: false }], a: 'x' })).toBe(
      '{"a": "x", "b": [1, 2, {"c": false, "d": null}]}',
    );
    expect(pythonJsonDumps({})).toBe('{}');
    expect(pythonJsonDumps([])).toBe('[]');
  });

  it('escapes everything outside printable ASCII as lowercase \\uXXXX', () => {
    expect(pythonJsonDumps('é\u007f\u0001"\\\n\r\t\b\f/')).toBe(
      '"\\u00e9\\u007f\\u0001\\"\\\\\\n\\r\\t\\b\\f/"',
    );
    expect(pythonJsonDumps('😀')).toBe('"\\ud83d\\ude00"');
    expect(pythonJsonDumps('\u2028')).toBe('"\\u2028"');
  });

  it('sorts keys by code point, not UTF-16 unit', () => {
    expect(pythonJsonDumps({ '\uff01': 1, '😀': 2, a: 3, B: 4 })).toBe(
      '{"B": 4, "a": 3, "\\uff01": 1, "\\ud83d\\ude00": 2}',
    );
  });

  it('formats floats like Python repr', () => {
    const cases: Array<[number, string]> = [
      [2.5, '2.5'],
      [0.1, '0.1'],
      [-0, '-0.0'],
      [1e-5, '1e-05'],
      [1.5e-7, '1.5e-07'],
      [0.0001, '0.0001'],
      [1.5e16, '1.5e+16'],
      [1.25e300, '1.25e+300'],
      [123456.789, '123456.789'],
      [1e22, '1e+22'],
      [2 ** 53 - 1, '9007199254740991'],
      [Number.NaN, 'NaN'],
      [Number.POSITIVE_INFINITY, 'Infinity'],
      [Number.NEGATIVE_INFINITY, '-Infinity'],
    ];
    for (const [n, text] of cases) expect(pythonNumber(n)).toBe(text);
    expect(pythonNumber(1234567890123456.8)).toBe('1234567890123456.8');
    expect(pythonNumber(12345678901234568)).toBe('1.2345678901234568e+16');
    expect(pythonNumber(0.5e-4)).toBe('5e-05');
    expect(pythonNumber(2.5e16 + 0.5)).toBe('2.5e+16');
    expect(pythonNumber(1.1e16 / 3)).toBe('3666666666666666.5');
    expect(pythonNumber(3.3e16 / 1.7)).toBe('1.941176470588235e+16');
  });

  it('writes bigints exactly and drops undefined object members', () => {
    expect(pythonJsonDumps({ big: 9223372036854775808n, gone: undefined, list: [undefined] })).toBe(
      '{"big": 9223372036854775808, "list": [null]}',
    );
  });

  it('refuses values Python json cannot serialise', () => {
    expect(() => pythonJsonDumps(new Date(0))).toThrow(
      'Object of type Date is not JSON serializable',
    );
    expect(() => pythonJsonDumps(() => 1)).toThrow('not JSON serializable');
    const loop: Record<string, unknown> = {};
    loop.self = loop;
    expect(() => pythonJsonDumps(loop)).toThrow('Circular reference detected');
  });
});
