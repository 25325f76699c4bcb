import { describe, expect, it } from 'vitest';
import { parseJsonData, parseYaml11, YamlParseError } from './yaml11.ts';

describe('parseYaml11 (PyYAML SafeLoader rules)', () => {
  it('reads YAML 1.1 booleans but keeps y/n as strings', () => {
    expect(parseYaml11('a: yes\nb: No\nc: ON\nd: off\ne: y\nf: n\ng: True\nh: Y\n')).toEqual({
      a: true,
      b: false,
      c: true,
      d: false,
      e: 'y',
      f: 'n',
      g: true,
      h: 'Y',
    });
  });

  it('reads YAML 1.1 integers: octal, hex, binary, underscores, sexagesimal', () => {
    expect(
      parseYaml11('a: 010\nb: 0x1F\nc: 0b101\nd: 1_000\ne: 1:30\nf: -017\ng: 09\nh: 0\n'),
    ).toEqual({ a: 8, b: 31, c: 5, d: 1000, e: 90, f: -15, g: '09', h: 0 });
  });

  it('needs a dot for a float and a signed exponent', () => {
    expect(parseYaml11('a: 1e3\nb: 1.5e3\nc: 1.5e+3\nd: 1.\ne: .5\nf: -.inf\ng: 1:30.5\n')).toEqual(
      {
        a: '1e3',
        b: '1.5e3',
        c: 1500,
        d: 1,
        e: 0.5,
        f: Number.NEGATIVE_INFINITY,
        g: 90.5,
      },
    );
  });

  it('reads null forms and keeps quoted scalars as strings', () => {
    expect(parseYaml11('a: ~\nb: null\nc:\nd: \'yes\'\ne: "010"\n')).toEqual({
      a: null,
      b: null,
      c: null,
      d: 'yes',
      e: '010',
    });
  });

  it('supports merge keys and lets the last duplicate key win', () => {
    const doc = parseYaml11('base: &b {x: 1, y: 1}\nm:\n  <<: *b\n  y: 2\nd: 1\nd: 2\n');
    expect(doc).toEqual({ base: { x: 1, y: 1 }, m: { x: 1, y: 2 }, d: 2 });
  });

  it('orders keys by code point, integer-like keys included', () => {
    const doc = parseYaml11('b: 1\n10: 2\n2: 3\nB: 4\n"é": 5\n') as Record<string, unknown>;
    // JS puts integer-like keys first, exactly as qontract-server's JSON.parse would.
    expect(Object.keys(doc)).toEqual(['2', '10', 'B', 'b', 'é']);
    expect(JSON.stringify(doc)).toBe('{"2":3,"10":2,"B":4,"b":1,"é":5}');
  });

  it('stringifies non-string keys like json.dump and refuses collection keys', () => {
    expect(parseYaml11('~: a\ntrue: b\nno: c\n12: d\n')).toEqual({
      null: 'a',
      true: 'b',
      false: 'c',
      12: 'd',
    });
    expect(() => parseYaml11('? [1, 2]\n: x\n')).toThrow(/a mapping key must be a scalar/);
    expect(() => parseYaml11('2024-01-01: x\n')).toThrow(
      /the key '2024-01-01' is a YAML 1.1 timestamp/,
    );
  });

  it('rejects unquoted timestamps, which the bundler cannot serialise', () => {
    expect(() => parseYaml11('spec:\n  since: 2024-01-31\n')).toThrow(
      /spec\.since: unquoted date\/time '2024-01-31'/,
    );
    expect(parseYaml11("since: '2024-01-31'\n")).toEqual({ since: '2024-01-31' });
  });

  it('reports syntax errors with their position', () => {
    expect(() => parseYaml11('a: [1, 2\nb: 3\n')).toThrow(YamlParseError);
    expect(() => parseYaml11('a: b: c\n')).toThrow(/invalid YAML at line 1, column \d+/);
  });

  it('rejects empty files and several documents', () => {
    expect(() => parseYaml11('')).toThrow(/no YAML document/);
    expect(() => parseYaml11('# only a comment\n')).toThrow(/no YAML document/);
    expect(() => parseYaml11('a: 1\n---\nb: 2\n')).toThrow(/several YAML documents/);
  });
});

describe('parseJsonData', () => {
  it('parses JSON and sorts keys', () => {
    expect(Object.keys(parseJsonData('{"b":1,"a":{"d":1,"c":2}}') as object)).toEqual(['a', 'b']);
  });

  it('reports invalid JSON', () => {
    expect(() => parseJsonData('{"a":')).toThrow(/invalid JSON/);
  });
});
