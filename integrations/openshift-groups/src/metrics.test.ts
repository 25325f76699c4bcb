import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { publishManagedGroupsGauge } from './metrics.ts';

describe('publishManagedGroupsGauge', () => {
  it('publishes the managed groups per cluster on the shared inventory gauge', async () => {
    const registry = new Registry();
    publishManagedGroupsGauge(registry, 'openshift-groups', new Map([['c1', 2]]));
    // A second publisher in the same run reuses the gauge.
    publishManagedGroupsGauge(registry, 'openshift-groups', new Map([['c2', 0]]));
    const text = await registry.metrics();
    expect(text).toContain(
      'qontract_reconcile_openshift_resource_inventory{integration="openshift-groups",cluster="c1",namespace="cluster",kind="Group",state="desired"} 2',
    );
    expect(text).toContain(
      'qontract_reconcile_openshift_resource_inventory{integration="openshift-groups",cluster="c2",namespace="cluster",kind="Group",state="desired"} 0',
    );
  });
});
