import { describe, expect, it } from 'vitest';
import { type PyJsonModel, pyJsonDumps } from './json-dumps.ts';

// Every expected string is what CPython's json.dumps prints for the same arguments.
const sorted = (v: unknown) => pyJsonDumps(v, { sortKeys: true });

describe('pyJsonDumps', () => {
  it('uses Python separators and sorts keys at every level', () => {
    expect(sorted({ b: [1, 2, { d: null, c: false }], a: 'x' })).toBe(
      '{"a": "x", "b": [1, 2, {"c": false, "d": null}]}',
    );
    expect(sorted({})).toBe('{}');
    expect(sorted([])).toBe('[]');
  });

  it('keeps insertion order without sort_keys', () => {
    expect(pyJsonDumps({ z: 1, a: 2 })).toBe('{"z": 1, "a": 2}');
  });

  it('escapes everything outside printable ASCII as lowercase \\uXXXX', () => {
    expect(sorted('é\u007f\u0001"\\\n\r\t\b\f/')).toBe(
      '"\\u00e9\\u007f\\u0001\\"\\\\\\n\\r\\t\\b\\f/"',
    );
    expect(sorted('😀')).toBe('"\\ud83d\\ude00"');
    expect(sorted('\u2028')).toBe('"\\u2028"');
    expect(sorted('\ud800')).toBe('"\\ud800"');
  });

  it('sorts keys by code point, not UTF-16 unit, integer-like keys too', () => {
    expect(sorted({ '\uff01': 1, '😀': 2, a: 3, B: 4 })).toBe(
      '{"B": 4, "a": 3, "\\uff01": 1, "\\ud83d\\ude00": 2}',
    );
    expect(sorted({ b: 1, 10: 'x', 2: 'y' })).toBe('{"10": "x", "2": "y", "b": 1}');
  });

  it('writes separators=(",", ":") compactly', () => {
    expect(pyJsonDumps({ b: 1, a: [1.5, null] }, { separators: [',', ':'] })).toBe(
      '{"b":1,"a":[1.5,null]}',
    );
  });

  it('lays out indent like Python (item separator "," and empty containers inline)', () => {
    const value = { b: [1, { c: 2 }], a: {}, e: [] };
    expect(pyJsonDumps(value, { sortKeys: true, indent: 2 })).toBe(
      '{\n  "a": {},\n  "b": [\n    1,\n    {\n      "c": 2\n    }\n  ],\n  "e": []\n}',
    );
    expect(pyJsonDumps({ b: [1, { c: 2 }], a: {} }, { sortKeys: true, indent: 0 })).toBe(
      '{\n"a": {},\n"b": [\n1,\n{\n"c": 2\n}\n]\n}',
    );
  });

  it('writes numbers as Python does: safe integers as int, the rest as float', () => {
    expect(sorted([Number.NaN, Infinity, -Infinity, 1e16, -0, 10n ** 20n, 2.5])).toBe(
      '[NaN, Infinity, -Infinity, 1e+16, -0.0, 100000000000000000000, 2.5]',
    );
    expect(pyJsonDumps([1, 1.5], { number: (n) => `<${n}>` })).toBe('[<1>, <1.5>]');
  });

  it('writes bigints exactly and drops undefined object members', () => {
    expect(sorted({ big: 9223372036854775808n, gone: undefined, list: [undefined] })).toBe(
      '{"big": 9223372036854775808, "list": [null]}',
    );
  });

  it('refuses values Python json cannot serialise', () => {
    expect(() => sorted(new Date(0))).toThrow('Object of type Date is not JSON serializable');
    expect(() => sorted(() => 1)).toThrow('Object of type function is not JSON serializable');
    const loop: Record<string, unknown> = {};
    loop.self = loop;
    expect(() => sorted(loop)).toThrow('Circular reference detected');
    const shared = { a: 1 };
    expect(sorted([shared, shared])).toBe('[{"a": 1}, {"a": 1}]');
  });

  it('lets a value model add scalars, mappings, type names and errors', () => {
    class Float {
      readonly value: number;
      constructor(value: number) {
        this.value = value;
      }
    }
    class Dict {
      readonly entries: [string, unknown][];
      constructor(entries: [string, unknown][]) {
        this.entries = entries;
      }
    }
    const model: PyJsonModel = {
      leaf: (v) => (v instanceof Float ? `${v.value}.0` : undefined),
      items: (v) => (v instanceof Dict ? v.entries : undefined),
      typeName: () => 'thing',
      error: (kind, message) => new RangeError(`${kind}: ${message}`),
    };
    const dict = new Dict([
      ['b', new Float(1)],
      ['a', undefined],
    ]);
    expect(pyJsonDumps(dict, { sortKeys: true, model })).toBe('{"a": null, "b": 1.0}');
    expect(() => pyJsonDumps(new Map(), { model })).toThrow(
      'TypeError: Object of type thing is not JSON serializable',
    );
  });
});
