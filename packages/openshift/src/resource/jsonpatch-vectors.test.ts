import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { type JsonPatchOperation, jsonPatchFromDiff } from './json-patch-diff.ts';

// Python jsonpatch 1.33 `from_diff` results, recorded with the library (dict keys visited in
// insertion order, which is the only intended difference of the port).
const { cases } = JSON.parse(
  readFileSync(new URL('./jsonpatch-vectors.json', import.meta.url), 'utf8'),
) as {
  cases: { src: never; dst: never; ops: JsonPatchOperation[] }[];
};

describe('jsonpatch 1.33 vectors', () => {
  it.each(cases.map((c, i) => [i, c] as const))('case %i', (_i, c) => {
    expect(jsonPatchFromDiff(c.src, c.dst)).toEqual(c.ops);
  });

  it('pairs a removed list item with the same item added further on (index bookkeeping)', () => {
    expect(jsonPatchFromDiff([{ a: 1 }], [1, true, { a: 1 }])).toEqual([
      { op: 'add', path: '/0', value: 1 },
      { op: 'add', path: '/1', value: true },
    ]);
  });
});
