import { OpenshiftResource } from '@qontract/openshift';
import { describe, expect, it } from 'vitest';
import { limitRangeBody } from './desired.ts';
import { QONTRACT_INTEGRATION, QONTRACT_INTEGRATION_VERSION } from './index.ts';

const values = (cpu: string | null, memory: string | null) => ({ cpu, memory });
const item = (extra: Record<string, unknown>) => ({
  type: null,
  default: null,
  defaultRequest: null,
  max: null,
  maxLimitRequestRatio: null,
  min: null,
  ...extra,
});

// Expected digests computed with Python: sha256(json.dumps(canonical body, sort_keys=True)).
describe('annotation identity', () => {
  it.each([
    {
      title: 'the example LimitRange, with an inner null the original keeps',
      limitRange: {
        name: 'example-default',
        limits: [
          item({
            type: 'Container',
            default: values('500m', '512Mi'),
            defaultRequest: values('100m', '128Mi'),
            max: values('2', '2Gi'),
          }),
          item({ type: 'Pod', max: values('4', null) }),
        ],
      },
      sha: '44988bd6eed5b8e0083c3907ccacc5f0076787dc9331b48beed5a7457e3a1846',
    },
    {
      title: 'an empty limits list (null)',
      limitRange: { name: 'empty', limits: [] },
      sha: '8593a2460c2403f1aa8961304f10805dcaf8b39b7294d7498992f0146cc16745',
    },
  ])('hashes like the original: $title', ({ limitRange, sha }) => {
    const resource = new OpenshiftResource(
      limitRangeBody(limitRange),
      QONTRACT_INTEGRATION,
      QONTRACT_INTEGRATION_VERSION,
    );
    expect(resource.sha256sum()).toBe(sha);
    const annotations = resource.annotate({ now: new Date('2026-11-21T00:00:00Z') }).annotations;
    expect(annotations).toMatchObject({
      'qontract.integration': 'openshift-limitranges',
      'qontract.integration_version': '0.1.0',
      'qontract.sha256sum': sha,
    });
  });
});
