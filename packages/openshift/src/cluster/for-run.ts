import { defineClient, type LoopScope, type RunContext } from '@qontract/core';
import {
  type ClusterInfo,
  ClusterMap,
  type ClusterMapSettings,
  KeptClusters,
  type NamespaceClusterInfo,
} from './cluster-map.ts';

/** What the cluster map of a run reads from its context (`signal`: the run's stop signal). */
export type RunClusterContext = Pick<RunContext, 'integration' | 'secrets' | 'errors' | 'env'> &
  Partial<Pick<RunContext, 'signal' | 'client' | 'loop'>>;

/** The cluster maps of a run, closed when the run ends (keep-alive connections and TLS state). */
const runClusterMaps = defineClient(
  'openshift:cluster-maps',
  () => new Set<ClusterMap>(),
  async (maps) => {
    await Promise.all([...maps].map((map) => map.close()));
  },
);

/** The loop scope's key of the cluster clients its runs keep (`KeptClusters`). */
const KEPT_CLUSTERS = 'openshift:kept-clusters';

/**
 * The cluster clients kept for the runs of a loop: in every loop that runs
 * again in this process (run-integration, polling or watching), and where an
 * operator asked for them in a single run (`keepClustersBetweenRuns`).
 */
function keptClustersOf(loop: LoopScope | undefined): KeptClusters | undefined {
  if (!loop) return undefined;
  return loop.repeats ? keepClustersBetweenRuns(loop) : loop.peek(KEPT_CLUSTERS);
}

/**
 * From now on, the runs of `loop` keep their cluster clients for the next run
 * instead of closing them: see `KeptClusters`. Each cluster map of a run
 * borrows from them and, when it is closed, lets the clients no run used any
 * more go; all are closed when the loop ends.
 */
export function keepClustersBetweenRuns(loop: LoopScope): KeptClusters {
  return loop.keep(
    KEPT_CLUSTERS,
    () => new KeptClusters(),
    (kept) => kept.closeAll(),
  );
}

async function closeWithRun(ctx: RunClusterContext, map: ClusterMap): Promise<ClusterMap> {
  if (ctx.client) (await ctx.client(runClusterMaps)).add(map);
  return map;
}

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
  ctx: RunClusterContext,
  namespaces: readonly NamespaceClusterInfo[],
  options: RunClusterOptions = {},
): Promise<ClusterMap> {
  const map = await ClusterMap.fromNamespaces(namespaces, settingsFor(ctx, options));
  registerProblems(ctx, map);
  return closeWithRun(ctx, map);
}

/** The cluster clients of a run for `clusters` (cluster-scoped integrations). */
export async function clusterMapForClusters(
  ctx: RunClusterContext,
  clusters: readonly ClusterInfo[],
  options: RunClusterOptions = {},
): Promise<ClusterMap> {
  const map = await ClusterMap.fromClusters(clusters, settingsFor(ctx, options));
  registerProblems(ctx, map);
  return closeWithRun(ctx, map);
}

function settingsFor(
  ctx: Omit<RunClusterContext, 'errors'>,
  options: RunClusterOptions,
): ClusterMapSettings {
  const vars = ctx.env.vars;
  // The reachability check waits 5 s, like upstream's `oc version --request-timeout=5`;
  // CLUSTER_REACHABILITY_TIMEOUT_SECS lengthens it for slow links (or loaded test machines).
  const reachability = millis(vars.CLUSTER_REACHABILITY_TIMEOUT_SECS);
  // A hung or slow cluster must not hold the others: every request, and the
  // whole read of each cluster, has a time-out after which that cluster alone
  // is given up for the run.
  const request = millis(vars.CLUSTER_REQUEST_TIMEOUT_SECS);
  const read = millis(vars.CLUSTER_READ_TIMEOUT_SECS);
  // The pause between retries of a transient failure (1 s × attempt by
  // default); tests and benchmarks shrink it, as QONTRACT_GITHUB_RETRY_UNIT_MS.
  const backoff = ctx.loop?.tuning.clusterRetryUnitMs;
  return {
    integration: ctx.integration,
    secrets: ctx.secrets,
    ...(reachability ? { reachabilityTimeoutMs: reachability } : {}),
    ...(read ? { readTimeoutMs: read } : {}),
    // Every request honours the run's stop signal (SIGTERM: abort what waits on the network).
    clientOptions: {
      ...(request ? { timeoutMs: request } : {}),
      ...(backoff !== undefined ? { backoffMs: backoff } : {}),
      signal: ctx.signal,
    },
    internal: options.internal,
    kept: keptClustersOf(ctx.loop),
    concurrency: options.concurrency,
    clusterAdmin: options.clusterAdmin ?? false,
  };
}

function registerProblems(ctx: Pick<RunContext, 'errors'>, map: ClusterMap): void {
  for (const p of map.problems()) ctx.errors.register(p.name, p.message, { clusterWide: true });
}

/** A positive number of seconds from the environment, in milliseconds; undefined otherwise. */
function millis(secs: string | undefined): number | undefined {
  const n = Number(secs);
  return n > 0 ? n * 1000 : undefined;
}
