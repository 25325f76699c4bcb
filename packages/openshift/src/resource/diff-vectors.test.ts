import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { OpenshiftResource } from './openshift-resource.ts';
import { compatVectors } from './test-fixtures/compat.ts';
import { resourcesEqual, withRecycleAnnotations } from './three-way-diff.ts';

interface DiffVector {
  id: string;
  desired: unknown;
  current: unknown;
  integration: string;
  equal?: boolean;
  error?: string;
  desired_sha256?: string;
}

const vectorsPath = fileURLToPath(compatVectors('diff-vectors-sample.json'));
const { cases } = JSON.parse(readFileSync(vectorsPath, 'utf8')) as { cases: DiffVector[] };

function decide(v: DiffVector): { equal: boolean; desired: OpenshiftResource } {
  const desired = new OpenshiftResource(v.desired, v.integration, '1.9.3');
  const current = new OpenshiftResource(v.current, v.integration, '1.9.3');
  // As the engine plans: the cluster's restart annotations are copied into what is compared.
  const compared = withRecycleAnnotations(desired, current);
  return { equal: resourcesEqual(current, compared), desired: compared };
}

describe('compat diff vectors (computed by the original)', () => {
  it('has vectors to check', () => {
    expect(cases.length).toBeGreaterThan(10);
  });
  for (const v of cases) {
    if (v.error !== undefined) {
      it(`${v.id}: raises like the original`, () => {
        expect(() => decide(v)).toThrow();
      });
    } else {
      it(`${v.id}: equal=${v.equal}`, () => {
        const { equal, desired } = decide(v);
        expect(equal).toBe(v.equal);
        if (v.desired_sha256) expect(desired.sha256sum()).toBe(v.desired_sha256);
      });
    }
  }
});
