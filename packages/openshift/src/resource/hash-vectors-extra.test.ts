import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { canonicalize } from './canonicalize.ts';
import { OpenshiftResource } from './openshift-resource.ts';
import { parseResource } from './parse-resource.ts';
import { pyJsonDumps } from './py-json.ts';
import { bodiesWithSharedNodes, pyDeepCopy } from './py-values.ts';

/**
 * `!!omap` loading and Role `rules` sorting, by class. Expected values come from
 * test-fixtures/hash-oracle.py (the original's documented loader and canonicalisation, run on
 * PyYAML 6.0.3 under Python 3.13); regenerate the JSON with the command in its docstring.
 */
interface HashVector {
  id: string;
  text: string;
  sha256?: string;
  canonical?: string;
  error?: string;
  error_stage?: string;
}

const vectors = JSON.parse(
  readFileSync(new URL('./test-fixtures/hash-vectors-extra.json', import.meta.url), 'utf8'),
) as HashVector[];

function hashOf(v: HashVector): { canonical: string; sha256: string } {
  const resource = new OpenshiftResource(
    parseResource(v.text, 'yaml'),
    'openshift_resources',
    '1.9.3',
  );
  return { canonical: resource.canonicalJson(), sha256: resource.sha256sum() };
}

describe('omap and Role-sort hash vectors (python oracle)', () => {
  it('has vectors of both classes', () => {
    expect(vectors.filter((v) => v.id.startsWith('omap-')).length).toBeGreaterThan(10);
    expect(vectors.filter((v) => v.id.startsWith('role-')).length).toBeGreaterThan(10);
  });
  for (const v of vectors) {
    if (v.error !== undefined) {
      it(`${v.id}: rejected (${v.error_stage})`, () => {
        expect(() => hashOf(v)).toThrow();
      });
    } else {
      it(`${v.id}: canonical text and sha256`, () => {
        expect(hashOf(v)).toEqual({ canonical: v.canonical, sha256: v.sha256 });
      });
    }
  }
});

describe('copy-on-write canonicalisation of the omap and Role-sort vectors', () => {
  for (const v of vectors.filter((x) => x.error === undefined)) {
    it(`${v.id}: equals canonicalising a full deep copy and leaves the body untouched`, () => {
      const body = parseResource(v.text, 'yaml');
      const before = pyDeepCopy(body);
      const fast = pyJsonDumps(canonicalize(body));
      const deepCopy = pyDeepCopy(body);
      if (typeof deepCopy === 'object' && deepCopy !== null) bodiesWithSharedNodes.add(deepCopy);
      expect(fast).toBe(pyJsonDumps(canonicalize(deepCopy)));
      expect(body).toEqual(before);
    });
  }
});
