import { OpenshiftResource } from '@qontract/openshift';
import { describe, expect, it } from 'vitest';
import { resourceQuotaBody } from './desired.ts';
import { QONTRACT_INTEGRATION, QONTRACT_INTEGRATION_VERSION } from './index.ts';

// Expected digest computed with Python: sha256(json.dumps(canonical body, sort_keys=True)).
describe('annotation identity', () => {
  it('hashes the example quota like the original', () => {
    const resource = new OpenshiftResource(
      resourceQuotaBody({
        name: 'example-compute',
        scopes: ['NotTerminating'],
        resources: {
          pods: 20,
          limits: { cpu: '4', memory: '8Gi' },
          requests: { cpu: '2', memory: '4Gi' },
        },
      }),
      QONTRACT_INTEGRATION,
      QONTRACT_INTEGRATION_VERSION,
    );
    const sha = '67e69caa31fe62f7cd428bed81114d804cc69e30908494708fd4174e99e2a2ac';
    expect(resource.sha256sum()).toBe(sha);
    expect(resource.annotate({ now: new Date('2026-11-21T00:00:00Z') }).annotations).toMatchObject({
      'qontract.integration': 'openshift-resourcequotas',
      'qontract.integration_version': '0.1.0',
      'qontract.sha256sum': sha,
    });
  });
});
