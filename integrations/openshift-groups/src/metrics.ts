import { Gauge, type Registry } from 'prom-client';

const NAME = 'qontract_reconcile_openshift_resource_inventory';

/**
 * The original's `publish_cluster_desired_metrics_from_state`: the shared
 * inventory gauge with namespace `cluster`, state `desired` and, per
 * cluster, the number of managed groups. Written here because the engine
 * keeps its own publisher private.
 */
export function publishManagedGroupsGauge(
  registry: Registry,
  integration: string,
  managedGroupsPerCluster: ReadonlyMap<string, number>,
): void {
  const gauge =
    (registry.getSingleMetric(NAME) as Gauge | undefined) ??
    new Gauge({
      name: NAME,
      help: 'Inventory of resources managed by an openshift integration',
      labelNames: ['integration', 'cluster', 'namespace', 'kind', 'state'],
      registers: [registry],
    });
  for (const [cluster, count] of managedGroupsPerCluster) {
    gauge.set(
      { integration, cluster, namespace: 'cluster', kind: 'Group', state: 'desired' },
      count,
    );
  }
}
