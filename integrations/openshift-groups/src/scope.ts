/** The cluster fields scope is decided on. */
export interface ScopeCluster {
  readonly name: string;
  readonly internal?: boolean | null;
  readonly managedGroups?: readonly string[] | null;
  readonly disable?: { readonly integrations?: readonly string[] | null } | null;
}

export interface ClusterScopeFilter {
  /** Sharding on the cluster name. */
  readonly isInShard: (key: string) => boolean;
  /** This integration's name: clusters listing it in `disable.integrations` are skipped. */
  readonly integration: string;
  /** `--internal` (true) / `--external` (false) / all clusters (undefined). */
  readonly internal?: boolean | undefined;
}

export interface ClusterScope<C extends ScopeCluster> {
  /** Clusters with groups to manage: they get a client. */
  readonly managed: C[];
  /**
   * Clusters in scope without `managedGroups`: nothing is read from them,
   * but access granted on them still reaches the managedGroups validation.
   */
  readonly unmanaged: C[];
}

/**
 * The clusters of this run. Only clusters with `managedGroups` are
 * connected to: the original connected to every cluster of the shard, which
 * made a cluster without a token or out of reach a problem although there
 * was nothing to do on it.
 */
export function clusterScope<C extends ScopeCluster>(
  clusters: readonly C[],
  filter: ClusterScopeFilter,
): ClusterScope<C> {
  const managed: C[] = [];
  const unmanaged: C[] = [];
  for (const c of clusters) {
    if (!filter.isInShard(c.name)) continue;
    if (c.disable?.integrations?.includes(filter.integration)) continue;
    if (filter.internal !== undefined && Boolean(c.internal) !== filter.internal) continue;
    (c.managedGroups?.length ? managed : unmanaged).push(c);
  }
  return { managed, unmanaged };
}
