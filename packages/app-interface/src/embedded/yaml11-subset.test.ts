import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { readBlockSubset } from '@qontract/pycompat';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { JsonValue } from './types.ts';
import { keysInDocumentOrder, parseYaml11 } from './yaml11.ts';

const EXAMPLES = resolve(import.meta.dirname, '../../../../examples');

/** Builders that keep the text: enough to tell whether the reader took a document. */
const KEEP_TEXT = {
  plain: (s: string): unknown => s,
  quoted: (s: string): unknown => s,
  mapping: (pairs: ReadonlyArray<readonly [unknown, unknown]>): unknown => pairs,
  sequence: (items: unknown[]): unknown => items,
};

/** Every mapping's keys in document order (what decides the order of backrefs). */
function documentOrders(value: JsonValue): unknown {
  if (Array.isArray(value)) return value.map(documentOrders);
  if (typeof value !== 'object' || value === null) return null;
  return keysInDocumentOrder(value).map((k) => [k, documentOrders(value[k]!)]);
}

/** The outcome of a parse: the data and its document orders, or the error's message. */
function outcome(text: string, subset: boolean): unknown {
  try {
    const value = parseYaml11(text, { subset });
    return { value, orders: documentOrders(value) };
  } catch (e) {
    return { error: (e as Error).message };
  }
}

/** Both parsers agree on `text`; returns whether the subset reader took it. */
function agree(text: string): boolean {
  expect(outcome(text, true)).toStrictEqual(outcome(text, false));
  return readBlockSubset(text, KEEP_TEXT) !== undefined;
}

function yamlFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return yamlFiles(path);
    return /\.ya?ml$/.test(name) ? [path] : [];
  });
}

describe('the plain block subset reader', () => {
  it('reads every example data and resource file as the full parser does', () => {
    const files = yamlFiles(EXAMPLES);
    expect(files.length).toBeGreaterThan(50);
    const taken = new Set(files.filter((f) => agree(readFileSync(f, 'utf8'))));
    // The subset is what data files are written in (JSON schemas use flow style more).
    const data = files.filter((f) => f.includes('/data/'));
    expect(data.filter((f) => taken.has(f)).length / data.length).toBeGreaterThan(0.95);
  });

  it('reads block mappings and sequences in every indentation style', () => {
    const text = [
      '---',
      '# a comment',
      '$schema: /openshift/namespace-1.yml',
      'name: ns # trailing comment',
      'labels: {}',
      'list:',
      '- a',
      '-   b: 1',
      '    c: two',
      '-',
      '  - nested',
      'indented:',
      '    - x',
      '    -',
      '      y: z',
      "quoted: 'it''s # not a comment'",
      '"double key": "a: b"',
      'empty:',
      'tilde: ~',
      'values: [1, 2]',
      '',
    ].join('\n');
    agree(text);
    expect(agree(text.replace('labels: {}\n', '').replace('values: [1, 2]\n', ''))).toBe(true);
  });

  it('resolves plain scalars with PyYAML 1.1 rules, keys included', () => {
    const scalars = [
      ...['yes', 'No', 'on', 'OFF', 'y', 'n', 'true', 'False', '~', 'null', 'NULL', ''],
      ...['1', '-1', '+1', '0', '010', '0o10', '0x1F', '0b101', '1_000', '1:30', '-1:30:00'],
      ...['1.5', '1e3', '1.0e+3', '1.0e3', '.5', '-.inf', '.NaN', '1:30.5', '.'],
      ...['2001-12-14', '2001-12-14t21:59:43.10-05:00', '2001-1-1 1:00:00', '12:30'],
      ...['http://a.b/c?d=e#f', 'a#b', 'a: b', 'a:', '-a', '- a', '-', "a'b", '<<'],
    ];
    for (const s of scalars) {
      agree(`key: ${s}\n`);
      agree(`${s}: value\n`);
      agree(`- ${s}\n`);
    }
  });

  it('reads double-quoted escapes as the full parser does', () => {
    const values = [
      '"esc\\n"',
      '"a\\"b"',
      '"\\\\"',
      '"\\t\\0\\a\\b\\v\\f\\r\\e\\ \\/"',
      '"\\N\\_\\L\\P"',
      '"\\x41\\u00e9\\U0001F600"',
      '"{\\"replicas\\":2,\\"region\\":\\"local\\"}"',
    ];
    for (const v of values) {
      expect(agree(`key: ${v}\n`)).toBe(true);
      expect(agree(`${v}: value\n`)).toBe(true);
      expect(agree(`- ${v} # c\n`)).toBe(true);
    }
  });

  it('reads literal and folded block scalars as the full parser does', () => {
    const texts = [
      'a: |\n  one\n  two # text\n\n    deeper\nb: 1\n',
      'a: |-\n  one\n\n\n  two\n\n\nb: >\n  x\n  y\n\n  z\n',
      'a: >- # c\n  x\n\n\n  y\n',
      'list:\n- |\n  item\n- k: >\n    v\n  l: 1\n',
      'a:\n  - |-\n    ---\n    # not a comment\n    ...\n',
    ];
    for (const text of texts) expect(agree(text)).toBe(true);
  });

  it('leaves what it does not cover to the full parser, errors included', () => {
    const outside = [
      'a: &x 1\nb: *x\n',
      'a: !!str 1\n',
      'a: |+\n  text\n\n',
      'a: |2\n   text\n',
      'a: |\n  text ',
      'a: >\n  x\n    more\n',
      'a: >\n  folded\n',
      'a: "\\ud800"\n',
      'a: "\\uD83D\\uDE00"\n',
      'a: "\\q"\n',
      'a: "\\U00110000"\n',
      'a: "line\\\n  continued"\n',
      "a: 'open\n  close'\n",
      'a: plain\n  continued\n',
      '? complex\n: key\n',
      '<<: {a: 1}\nb: 2\n',
      'a:\n\t- tab\n',
      'a: 1\r\nb: 2\r\n',
      '--- a\n',
      'a: 1\n---\nb: 2\n',
      'a: 1\n...\n',
      '%YAML 1.1\n---\na: 1\n',
      'a: 1\n b: 2\n',
      'a:\n  b: 1\n c: 2\n',
      '- a\n- - b\n',
      'a: - b\n',
      'just a scalar\n',
      '# only a comment\n',
      '',
      'a: 2001-01-01\n',
      'a: 1\na: 2\n',
    ];
    for (const text of outside) agree(text);
    expect(readBlockSubset('a: |+\n  text\n', KEEP_TEXT)).toBeUndefined();
    expect(readBlockSubset('a: "\\ud800"\n', KEEP_TEXT)).toBeUndefined();
    expect(readBlockSubset('a: 1\n b: 2\n', KEEP_TEXT)).toBeUndefined();
  });

  it('agrees with the full parser on lines put together at random', () => {
    // Near the subset's edges: indentation, entries, keys and values that
    // may or may not be in it, with comments, quotes and flow collections.
    const line = fc.tuple(
      fc.constantFrom('', ' ', '  ', '   ', '    ', '      '),
      fc.constantFrom('', '- ', '-  ', '- - ', '-'),
      fc.constantFrom('', 'a:', 'b:', 'a: ', "'k':", '"k":', 'k #c:', 'on:', '1:', '? ', 'x:y:'),
      fc.constantFrom(
        ...['', ' 1', ' v', ' v # c', ' #c', ' a: b', " 'q # x'", ' "d"', " 'it''s'", ' "e\\n"'],
        ...[' "a\\"b"', ' "\\x41\\u00e9"', ' "\\ud800"', ' "\\q"', ' "\\N\\_"', ' "a\\', ' "\\"'],
        ...[' |', ' |-', ' >', ' >-', ' |+', ' | #c', ' |2', '   text', '  x y', ' # c'],
        ...[' {}', ' []', ' [a, b]', ' {a: 1}', ' {a: [1]}', ' &x v', ' *x', ' |', ' !!str 1'],
        ...[' -1', ' - x', ' ~', ' yes', ' 1:30', ' 2001-01-01', ' http://a:b', ' a#b', ' <<'],
      ),
    );
    let taken = 0;
    fc.assert(
      fc.property(fc.array(line, { minLength: 1, maxLength: 8 }), fc.boolean(), (lines, start) => {
        const body = lines.map((parts) => parts.join('').trimEnd()).join('\n');
        if (agree(`${start ? '---\n' : ''}${body}\n`)) taken++;
      }),
      { numRuns: 2000 },
    );
    expect(taken).toBeGreaterThan(50);
  });

  it('agrees with the full parser on generated documents', () => {
    const scalar = fc.oneof(
      fc.constantFrom(
        'yes',
        'no',
        '~',
        '1',
        '0x10',
        '1:20',
        '1.5',
        '.inf',
        'a b',
        'a#b',
        'é',
        '-x',
      ),
      fc.string({ maxLength: 8 }),
      // Multi-line text: the serializer writes block scalars (literal, folded, kept, indented).
      fc.string({ unit: fc.constantFrom('a', 'b', ' ', '\n', '#', ':', '-', '"'), maxLength: 16 }),
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
    );
    const key = fc.oneof(
      fc.constantFrom('a', 'b', 'on', '1', 'x y', '$ref', 'a.b/c'),
      fc.string({ maxLength: 6 }),
    );
    const { tree } = fc.letrec<{ tree: JsonValue; node: JsonValue }>((tie) => ({
      tree: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        scalar as fc.Arbitrary<JsonValue>,
        tie('node'),
      ),
      node: fc.oneof(
        fc.array(tie('tree'), { maxLength: 4 }),
        fc.dictionary(key, tie('tree'), { maxKeys: 4 }) as fc.Arbitrary<JsonValue>,
      ),
    }));
    let taken = 0;
    fc.assert(
      fc.property(
        fc.dictionary(key, tree, { minKeys: 1, maxKeys: 5 }),
        fc.boolean(),
        fc.constantFrom(2, 4),
        fc.boolean(),
        (doc, indentSeq, indent, comment) => {
          let text = `---\n${stringify(doc, { indentSeq, indent, lineWidth: 0, minContentWidth: 0 })}`;
          if (comment) text = text.replace(/\n/, '\n# a comment\n');
          if (agree(text)) taken++;
        },
      ),
      { numRuns: 400 },
    );
    // Generated documents exercise the subset, not only the fallback.
    expect(taken).toBeGreaterThan(100);
  });
});
