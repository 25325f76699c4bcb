import { QontractError } from '@qontract/core';
import type { NamespaceData, Provider, SelectedNamespace } from './model.ts';

export interface NamespaceFilter {
  readonly isInShard: (key: string) => boolean;
  readonly clusterNames: readonly string[];
  readonly excludeClusters: readonly string[];
  readonly namespaceName?: string | undefined;
  readonly providers: readonly Provider[];
}

/**
 * The original's namespace selection (upstream
 * `reconcile/openshift_resources_base.py` `get_namespaces()` and
 * `canonicalize_namespaces()`): not being deleted, in this shard
 * (`<cluster>/<namespace>`), `--cluster-name` (or `--exclude-cluster`),
 * `--namespace-name`; shared resources appended to the namespace's own; only
 * the pipeline's providers; namespaces left without resources are dropped (so
 * their objects are not deleted, as upstream).
 */
export function selectNamespaces(
  namespaces: readonly NamespaceData[],
  filter: NamespaceFilter,
): SelectedNamespace[] {
  const selected: SelectedNamespace[] = [];
  for (const ns of namespaces) {
    if (ns.delete) continue;
    const cluster = ns.cluster.name;
    if (!filter.isInShard(`${cluster}/${ns.name}`)) continue;
    if (filter.clusterNames.length > 0) {
      if (!filter.clusterNames.includes(cluster)) continue;
    } else if (filter.excludeClusters.includes(cluster)) {
      continue;
    }
    if (filter.namespaceName && ns.name !== filter.namespaceName) continue;
    const all = [
      ...(ns.openshiftResources ?? []),
      ...(ns.sharedResources ?? []).flatMap((s) => s.openshiftResources ?? []),
    ];
    const openshiftResources = all.filter((r) =>
      (filter.providers as readonly string[]).includes((r as { provider: string }).provider),
    );
    if (openshiftResources.length === 0) continue;
    selected.push({ namespace: ns, openshiftResources });
  }
  return selected;
}

/** The original's run guards on the cluster options (each violation: exit 1). */
export function checkClusterOptions(o: {
  clusterNames: readonly string[];
  excludeClusters: readonly string[];
  dryRun: boolean;
}): void {
  if (o.excludeClusters.length > 0 && !o.dryRun) {
    throw new QontractError('--exclude-cluster is only supported in dry-run mode');
  }
  if (o.excludeClusters.length > 0 && o.clusterNames.length > 0) {
    throw new QontractError('--cluster-name and --exclude-cluster can not be used together');
  }
  if (o.clusterNames.length > 1 && !o.dryRun) {
    throw new QontractError('Running with multiple clusters is only supported in dry-run mode');
  }
}
