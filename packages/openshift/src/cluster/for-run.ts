import type { RunContext } from '@qontract/core';
import { type ClusterInfo, ClusterMap, type NamespaceClusterInfo } from './cluster-map.ts';

export interface RunClusterOptions {
  readonly internal?: boolean | undefined;
  readonly concurrency?: number | undefined;
  readonly clusterAdmin?: boolean;
}

/**
 * The cluster clients of a run for `namespaces`, with every error-level
 * problem (missing token, unreachable cluster, ...) registered as that
 * cluster's error: the run goes on for the other clusters and exits 1.
 */
export async function clusterMapForNamespaces(
  ctx: Pick<RunContext, 'integration' | 'secrets' | 'errors' | 'env'>,
  namespaces: readonly NamespaceClusterInfo[],
  options: RunClusterOptions = {},
): Promise<ClusterMap> {
  const map = await ClusterMap.fromNamespaces(namespaces, settingsFor(ctx, options));
  registerProblems(ctx, map);
  return map;
}

/** The cluster clients of a run for `clusters` (cluster-scoped integrations). */
export async function clusterMapForClusters(
  ctx: Pick<RunContext, 'integration' | 'secrets' | 'errors' | 'env'>,
  clusters: readonly ClusterInfo[],
  options: RunClusterOptions = {},
): Promise<ClusterMap> {
  const map = await ClusterMap.fromClusters(clusters, settingsFor(ctx, options));
  registerProblems(ctx, map);
  return map;
}

function settingsFor(
  ctx: Pick<RunContext, 'integration' | 'secrets' | 'env'>,
  options: RunClusterOptions,
) {
  // The reachability check waits 5 s, like upstream's `oc version --request-timeout=5`;
  // CLUSTER_REACHABILITY_TIMEOUT_SECS lengthens it for slow links (or loaded test machines).
  const timeout = Number(ctx.env.vars.CLUSTER_REACHABILITY_TIMEOUT_SECS);
  return {
    integration: ctx.integration,
    secrets: ctx.secrets,
    ...(timeout > 0 ? { reachabilityTimeoutMs: timeout * 1000 } : {}),
    internal: options.internal,
    concurrency: options.concurrency,
    clusterAdmin: options.clusterAdmin ?? false,
  };
}

function registerProblems(ctx: Pick<RunContext, 'errors'>, map: ClusterMap): void {
  for (const p of map.problems()) ctx.errors.register(p.name, p.message, { clusterWide: true });
}
