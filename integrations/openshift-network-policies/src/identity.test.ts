import { OpenshiftResource } from '@qontract/openshift';
import { describe, expect, it } from 'vitest';
import { networkPolicyBody } from './desired.ts';
import { QONTRACT_INTEGRATION, QONTRACT_INTEGRATION_VERSION } from './index.ts';

// Expected digest computed with Python: sha256(json.dumps(canonical body, sort_keys=True)).
describe('annotation identity', () => {
  it('hashes the example policy like the original', () => {
    const resource = new OpenshiftResource(
      networkPolicyBody('app-sre-observability'),
      QONTRACT_INTEGRATION,
      QONTRACT_INTEGRATION_VERSION,
    );
    const sha = '4b72911b547bec5cef2b4f6920ddd01df1fa12a74976eac84353303690a96cc4';
    expect(resource.sha256sum()).toBe(sha);
    expect(resource.annotate({ now: new Date('2026-11-21T00:00:00Z') }).annotations).toMatchObject({
      'qontract.integration': 'openshift-network-policies',
      'qontract.integration_version': '0.1.0',
      'qontract.sha256sum': sha,
    });
  });
});
