import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { readBlockSubset } from '@qontract/pycompat';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { pyYamlSafeLoad } from '../parse-resource.ts';
import { PyDate, PyDict, PyFloat, type PyValue } from '../py-values.ts';
import { SAFE_LOAD_VALUES } from './constructor.ts';

/** A PyValue spelled out with its Python types and key order, for exact comparison. */
function spelled(v: PyValue): unknown {
  if (v === null || typeof v === 'boolean' || typeof v === 'string') return v;
  if (typeof v === 'number') return ['num', Object.is(v, -0) ? '-0' : String(v)];
  if (typeof v === 'bigint') return ['bigint', String(v)];
  if (v instanceof PyFloat) return ['float', String(v.value)];
  if (v instanceof PyDate) return ['date', v.year, v.month, v.day, v.time ?? null];
  if (v instanceof PyDict) return ['dict', v.entries.map(([k, x]) => [spelled(k), spelled(x)])];
  if (Array.isArray(v)) return ['list', v.map(spelled)];
  if (Object.getPrototypeOf(v) === Object.prototype) {
    return ['obj', Object.keys(v).map((k) => [k, spelled((v as Record<string, PyValue>)[k]!)])];
  }
  return ['other', String(v)];
}

function outcome(text: string, subset: boolean): unknown {
  try {
    return { value: spelled(pyYamlSafeLoad(text, { subset })) };
  } catch (e) {
    return { error: (e as Error).message };
  }
}

/** Both loads agree on `text`; returns whether the subset reader took it. */
function agree(text: string): boolean {
  expect(outcome(text, true)).toStrictEqual(outcome(text, false));
  try {
    return readBlockSubset(text, SAFE_LOAD_VALUES) !== undefined;
  } catch {
    return false;
  }
}

function yamlFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return yamlFiles(path);
    return /\.(?:ya?ml|json)$/.test(name) ? [path] : [];
  });
}

describe('safe_load through the block-subset reader', () => {
  it('agrees with the full load on the example resources and the recorded PyYAML cases', () => {
    const examples = yamlFiles(resolve(import.meta.dirname, '../../../../../examples'));
    const { cases } = JSON.parse(
      readFileSync(new URL('./pyyaml-vectors.json', import.meta.url), 'utf8'),
    ) as { cases: Array<{ text: string }> };
    const texts = [...examples.map((f) => readFileSync(f, 'utf8')), ...cases.map((c) => c.text)];
    const taken = texts.filter(agree).length;
    expect(taken).toBeGreaterThan(texts.length / 4);
  });

  it('builds Python values: ints, floats, dates, None, bools, non-string keys', () => {
    const text = [
      'apiVersion: v1',
      'kind: ConfigMap',
      'metadata:',
      '  name: x',
      '  labels: {app: x}',
      'data:',
      '  a: 1',
      '  b: 1.0',
      '  c: 0x10',
      '  d: 1:30',
      '  e: yes',
      '  f: ~',
      '  g: 2001-12-14',
      '  h: 99999999999999999999',
      '  i: .inf',
      '  "1": quoted key',
      '  1: int key',
      '  j: -0.0',
      '  k: 1e3',
      'list: [a, 1, on]',
      'empty:',
      '',
    ].join('\n');
    expect(agree(text)).toBe(true);
    // Block scalars: literal, folded, stripped; kept ones are the full load's.
    for (const v of ['|\n  x\n\n  y\n', '>-\n  x\n  y\n\n  z\n', '|-\n  1\n    2\n']) {
      expect(agree(`a: ${v}b: 1\n`)).toBe(true);
    }
    expect(agree('a: |+\n  x\n\n')).toBe(false);
    // Double-quoted escapes; escaped surrogates stay two code points in Python: the full load's.
    for (const v of ['"{\\"a\\":1}"', '"\\x41\\u00e9\\U0001F600"', '"\\N\\_\\L\\P\\0\\e"']) {
      expect(agree(`a: ${v}\n`)).toBe(true);
    }
    expect(agree('a: "\\uD83D\\uDE00"\n')).toBe(false);
    expect(agree('a: "\\ud800"\n')).toBe(false);
    // Astral characters are text; a lone surrogate is PyYAML's error, left to the full load.
    expect(agree('a: 😀 x\n')).toBe(true);
    expect(agree('a: \ud800\n')).toBe(false);
    // An impossible date: left to the full load, which reports it.
    expect(agree(text.replace('  g: 2001-12-14', '  g: 2001-02-30'))).toBe(false);
  });

  it('agrees on generated manifests', () => {
    const scalar = fc.oneof(
      fc.constantFrom(
        'yes',
        'No',
        '~',
        '1',
        '0x10',
        '010',
        '1:20',
        '1.5',
        '.nan',
        'a b',
        'é',
        '-x',
      ),
      fc.constantFrom('2001-01-01', '2001-1-1 1:02:03', '<<', '=', '1_000', '+1', '0b11'),
      fc.string({ maxLength: 8 }),
      // Multi-line text: the serializer writes block scalars (literal, folded, kept, indented).
      fc.string({ unit: fc.constantFrom('a', 'b', ' ', '\n', '#', ':', '-', '"'), maxLength: 16 }),
      fc.integer(),
      fc.double(),
      fc.boolean(),
      fc.constant(null),
    );
    const key = fc.oneof(
      fc.constantFrom('a', 'b', 'on', '1', '1.0', 'x y', 'name'),
      fc.string({ maxLength: 5 }),
    );
    const { tree } = fc.letrec<{ tree: unknown; node: unknown }>((tie) => ({
      tree: fc.oneof({ depthSize: 'small', withCrossShrink: true }, scalar, tie('node')),
      node: fc.oneof(
        fc.array(tie('tree'), { maxLength: 4 }),
        fc.dictionary(key, tie('tree'), { maxKeys: 4 }),
      ),
    }));
    let taken = 0;
    fc.assert(
      fc.property(
        fc.dictionary(key, tree, { minKeys: 1, maxKeys: 5 }),
        fc.boolean(),
        (doc, indentSeq) => {
          const text = `---\n${stringify(doc, { indentSeq, lineWidth: 0, minContentWidth: 0 })}`;
          if (agree(text)) taken++;
        },
      ),
      { numRuns: 400 },
    );
    expect(taken).toBeGreaterThan(100);
  });

  it('agrees on lines put together at random', () => {
    const line = fc.tuple(
      fc.constantFrom('', ' ', '  ', '    '),
      fc.constantFrom('', '- ', '-  ', '- - ', '-'),
      fc.constantFrom('', 'a:', 'b:', 'a: ', "'k':", '"k":', 'on:', '1:', '=:', '? ', 'x:y:'),
      fc.constantFrom(
        ...['', ' 1', ' v', ' v # c', ' #c', ' a: b', " 'q # x'", ' "d"', ' "e\\\\n"', ' ='],
        ...[' "e\\n"', ' "a\\"b"', ' "\\x41\\u00e9"', ' "\\ud800"', ' "\\uD83D\\uDE00"'],
        ...[' "\\q"', ' "\\N\\_\\L"', ' "a\\', ' "\\"', ' "\\U0001F600"', ' "\\0"'],
        ...[' |', ' |-', ' >', ' >-', ' |+', ' | #c', ' |2', '   text', '  x y', ' # c'],
        ...[' {}', ' []', ' [a, 1]', ' {a: 1}', ' {a: [1]}', ' &x v', ' *x', ' |', ' !!str 1'],
        ...[' -1', ' - x', ' ~', ' yes', ' 1:30', ' 2001-01-01', ' 2001-02-30', ' a#b', ' <<'],
      ),
    );
    let taken = 0;
    fc.assert(
      fc.property(fc.array(line, { minLength: 1, maxLength: 8 }), (lines) => {
        if (agree(`${lines.map((parts) => parts.join('').trimEnd()).join('\n')}\n`)) taken++;
      }),
      { numRuns: 2000 },
    );
    expect(taken).toBeGreaterThan(50);
  });
});
