import { resolveSaasFiles } from '@qontract/saas';
import { rawNamespace, rawSaasFile, rawTarget } from '@qontract/saas/test-support';
import { describe, expect, it } from 'vitest';
import { containerImageSpec } from './images.ts';
import { movingCommitSpec } from './moving-commits.ts';

const stage = rawNamespace('app-stage', { cluster: 'c1', env: 'stage' });
const image = (org: string, name: string) => ({
  org: { name: org, instance: { url: 'quay.io' } },
  name,
});
const [saasFile] = resolveSaasFiles(
  [
    rawSaasFile('saas-app', [
      rawTarget({
        namespace: stage,
        ref: 'main',
        images: [image('org', 'web'), image('org', 'api')],
      }),
    ]),
  ],
  [stage],
);
const rt = saasFile!.resourceTemplates[0]!;
const target = rt.targets[0]!;
const SHA = 'a'.repeat(40);

// Expected keys and contents written from reconcile/utils/saasherder/models.py and saasherder.py.
describe('the moving-commits spec', () => {
  it('is keyed <saas>/<rt>/<cluster>/<namespace>/<env>/<ref> and stores the commit sha', () => {
    const spec = movingCommitSpec(saasFile!, rt, target, SHA, true);
    expect(spec.stateKey).toBe('saas-app/rt/c1/app-stage/stage/main');
    expect(spec.stateContent).toBe(SHA);
    expect(spec.targetRef).toBe(SHA);
    expect(spec.reason).toBe(`https://github.com/org/app/commit/${SHA}`);
    expect(movingCommitSpec(saasFile!, rt, target, SHA, false).reason).toBeNull();
  });
});

describe('the container-image spec', () => {
  it('is keyed by the sorted images joined by / and stores the tag', () => {
    const spec = containerImageSpec(saasFile!, rt, target, { sha: SHA, tag: 'aaaaaaa' }, true);
    expect(spec.stateKey).toBe('saas-app/rt/c1/app-stage/stage/quay.io/org/api/quay.io/org/web');
    expect(spec.stateContent).toBe('aaaaaaa');
    expect(spec.targetRef).toBe(SHA);
    expect(spec.reason).toBe(
      `https://github.com/org/app/commit/${SHA} build quay.io/org/api:aaaaaaa, quay.io/org/web:aaaaaaa`,
    );
  });
});
