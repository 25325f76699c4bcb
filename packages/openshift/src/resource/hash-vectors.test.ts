import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { canonicalize } from './canonicalize.ts';
import { OpenshiftResource } from './openshift-resource.ts';
import { parseResource } from './parse-resource.ts';
import { pyJsonDumps } from './py-json.ts';
import { bodiesWithSharedNodes, pyDeepCopy } from './py-values.ts';
import { compatVectors } from './test-fixtures/compat.ts';

interface HashVector {
  id: string;
  format: 'yaml' | 'json';
  text: string;
  sha256?: string;
  canonical?: string;
  error?: string;
  error_stage?: string;
}

const vectorsPath = fileURLToPath(compatVectors('hash-vectors-sample.json'));
const vectors = JSON.parse(readFileSync(vectorsPath, 'utf8')) as HashVector[];

function hashOf(v: HashVector): { canonical: string; sha256: string } {
  const body = parseResource(v.text, v.format);
  const resource = new OpenshiftResource(body, 'openshift_resources', '1.9.3');
  return { canonical: resource.canonicalJson(), sha256: resource.sha256sum() };
}

describe('compat hash vectors (computed by the original)', () => {
  it('has vectors to check', () => {
    expect(vectors.length).toBeGreaterThan(50);
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

describe('copy-on-write canonicalisation', () => {
  for (const v of vectors.filter((x) => x.error === undefined)) {
    it(`${v.id}: equals canonicalising a full deep copy and leaves the body untouched`, () => {
      const body = parseResource(v.text, v.format);
      const before = pyDeepCopy(body);
      const fast = pyJsonDumps(canonicalize(body));
      const deepCopy = pyDeepCopy(body);
      if (typeof deepCopy === 'object' && deepCopy !== null) bodiesWithSharedNodes.add(deepCopy);
      expect(fast).toBe(pyJsonDumps(canonicalize(deepCopy)));
      expect(body).toEqual(before);
    });
  }

  it('keeps YAML aliases shared, like Python deepcopy', () => {
    const body = parseResource(
      'apiVersion: v1\nkind: ManagedCluster\nmetadata:\n  name: c\n  labels: &l {clusterID: x, keep: y}\nspec:\n  selector: *l\n',
      'yaml',
    );
    expect(new OpenshiftResource(body, 'i', '1.0.0').canonicalJson()).toBe(
      '{"apiVersion": "v1", "kind": "ManagedCluster", "metadata": {"annotations": {}, "labels": {"keep": "y"}, "name": "c"}, "spec": {"selector": {"keep": "y"}}}',
    );
  });
});
