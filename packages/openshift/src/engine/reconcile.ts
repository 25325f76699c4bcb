import { arrivals, type RunContext } from '@qontract/core';
import type { ClusterMap } from '../cluster/cluster-map.ts';
import type { KubeObject } from '../cluster/kube-client.ts';
import type { ResourceInventory } from '../inventory/index.ts';
import { reconcileTimeObserver, type TimedWrite } from '../reconcile-time.ts';
import type { OpenshiftResource } from '../resource/openshift-resource.ts';
import { type ActionResult, executePlan } from './apply.ts';
import { AdmittedDesired, type DesiredInput, desiredSourceOf } from './desired-source.ts';
import { type CurrentStateSpec, type FetchedState, fetchCurrentState } from './fetch.ts';
import type { NamespaceWait } from './namespace-wait.ts';
import type { PlannedAction } from './plan-types.ts';
import { RunPlans } from './run-plans.ts';

/** One desired object of the run. */
export interface DesiredResource {
  readonly cluster: string;
  /** The namespace, or `cluster` for cluster-scoped kinds. */
  readonly namespace: string;
  /** The desired body (not annotated); its kind must be one of the namespace's managed types. */
  readonly resource: OpenshiftResource;
  /** Apply with the cluster-admin token. */
  readonly privileged?: boolean;
  /** Where it came from (an app-interface path), for error messages. */
  readonly source?: string;
}

export interface ReconcileSettings {
  readonly ctx: RunContext;
  /**
   * The `qontract.integration` annotation: the original's module constant
   * (`openshift-rolebindings`; `openshift_resources`, with its underscore, for openshift-resources),
   * not always the CLI name.
   */
  readonly integration: string;
  readonly integrationVersion: string;
  readonly clusters: ClusterMap;
  /** The managed kinds per namespace: what is read from the clusters and may be deleted. */
  readonly specs: readonly CurrentStateSpec[];
  /**
   * The desired objects: an array, its promise, or a source that builds them
   * cluster by cluster (see `DesiredSource`). The current state is read while
   * they are being built (CPU-bound rendering and parsing overlaps the round
   * trips of the lists).
   */
  readonly desired: DesiredInput;
  readonly takeOver?: boolean;
  /**
   * A wet run applies every desired object, unchanged ones too (a saas file's
   * `compare: false`: objects something else changes behind our back are
   * written again each run). A dry-run still compares.
   */
  readonly skipCompare?: boolean | undefined;
  readonly caller?: string | undefined;
  /**
   * Read only the caller's objects (integrations-manager: one manager per
   * upstream shares a namespace). Default true; openshift-saas-deploy reads
   * every object and lets the caller rules of the plan protect the others'.
   */
  readonly filterCurrentByCaller?: boolean;
  /**
   * With `caller` (and the filter above): a desired object whose name an
   * object of another caller already holds is left alone, with a log line,
   * instead of being applied over it. Two integrations-managers of different
   * upstreams sharing a namespace then never write each other's objects
   * (their `qontract-reconcile` Service, or an integration's Deployment while
   * it moves from one manager to the other: the new one creates it once the
   * old one has deleted it).
   */
  readonly leaveOtherCallers?: boolean;
  readonly allCallers?: readonly string[] | undefined;
  readonly concurrency?: number | undefined;
  readonly recyclePods?: boolean;
  readonly waitForReady?: { readonly timeoutMs: number; readonly pollMs?: number };
  /** Wait (bounded) for a missing namespace, then fail the apply (see `ExecuteSettings`). */
  readonly waitForNamespace?: NamespaceWait;
  /**
   * Told about each object written (wet run), right after the write and
   * before its rollout is waited for: openshift-saas-deploy starts following
   * an applied Job's logs there, as the original does before validating.
   */
  readonly onWritten?: (write: TimedWrite) => void;
  /** Current objects the integration must not see (e.g. managed by Argo CD): see `admitCurrent`. */
  readonly skipCurrent?: (item: KubeObject) => boolean;
  /** Warn about managed kinds nothing is desired of (openshift-resources does). */
  readonly warnUnusedTypes?: boolean;
  /**
   * Reads the current state instead of listing the clusters (watch mode: from
   * its list+watch caches).
   */
  readonly readCurrent?: (specs: readonly CurrentStateSpec[]) => Promise<FetchedState[]>;
}

export interface ReconcileResult {
  readonly inventory: ResourceInventory;
  /** Every planned action, with what the executor did with it. */
  readonly results: readonly ActionResult[];
}

/**
 * The shared OpenShift reconcile run: each cluster's current state, read
 * while the desired objects are built, joined with its desired objects and
 * planned with the original's rules (`planCluster`, or the previous run's
 * plan when nothing it depends on changed); the plan printed (dry-run) or
 * executed with server-side apply. Errors are registered on the run; once any
 * exists, the executor deletes nothing.
 *
 * A wet run applies a cluster's plan as soon as it is made, while the other
 * clusters are still read or built. Deletes wait for every cluster, every
 * desired object and every apply. A dry-run says everything once every
 * cluster is planned, in the inventory's order, so that its output does not
 * depend on which cluster answered first.
 */
export async function reconcileResources(s: ReconcileSettings): Promise<ReconcileResult> {
  const { ctx } = s;
  const plans = new RunPlans(ctx, s);
  const desired = new AdmittedDesired(
    desiredSourceOf(s.desired),
    (cluster, namespace) => plans.reads(cluster, namespace),
    (e) => ctx.errors.register(`${e.cluster}/${e.namespace}`, e.message),
  );
  async function* batches(): AsyncGenerator<readonly PlannedAction[]> {
    for await (const [cluster, states, objects] of readyClusters(readCurrent(s), desired)) {
      plans.plan(cluster, states, objects);
      if (!ctx.dryRun) yield plans.report(cluster).filter((a) => a.action !== 'delete');
    }
    // Every desired object is in before a delete is decided.
    plans.finish(await desired.all());
    // Every delete goes to the executor, the one deletion gate; a dry-run's applies too.
    yield plans.actions().filter((a) => a.action === 'delete' || ctx.dryRun);
  }
  const observe = await reconcileTimeObserver(ctx);
  const { onWritten } = s;
  const results = await executePlan(batches(), {
    onWritten:
      observe && onWritten
        ? (write) => {
            observe(write);
            onWritten(write);
          }
        : (observe ?? onWritten),
    dryRun: ctx.dryRun,
    clusters: s.clusters,
    log: ctx.log,
    errors: ctx.errors,
    report: ctx.report,
    fieldManager: fieldManagerFor(ctx.integration),
    concurrency: s.concurrency,
    signal: ctx.signal,
    recyclePods: s.recyclePods ?? true,
    showDiff: Boolean(ctx.globals.diff),
    ...(s.waitForReady ? { waitForReady: s.waitForReady } : {}),
    ...(s.waitForNamespace ? { waitForNamespace: s.waitForNamespace } : {}),
  });
  return { inventory: plans.inventory, results };
}

/**
 * Each cluster's read as it ends: the polling read calls back per cluster; a
 * read from caches answers at once. A cluster given up is not among them.
 */
async function* readCurrent(
  s: ReconcileSettings,
): AsyncGenerator<readonly [string, readonly FetchedState[]]> {
  const { ctx } = s;
  const reads = arrivals<readonly [string, readonly FetchedState[]]>();
  const streamed = new Set<string>();
  const fetching = s.readCurrent
    ? s.readCurrent(s.specs)
    : fetchCurrentState(s.specs, {
        clusters: s.clusters,
        errors: ctx.errors,
        log: ctx.log,
        concurrency: s.concurrency,
        loop: ctx.loop,
        onCluster: (cluster, states) => reads.push([cluster, states]),
      });
  fetching.then(reads.end, reads.end);
  for await (const entry of reads) {
    streamed.add(entry[0]);
    yield entry;
  }
  const rest = Map.groupBy(
    (await fetching).filter((state) => !streamed.has(state.spec.cluster)),
    (state) => state.spec.cluster,
  );
  yield* rest;
}

/**
 * The clusters of `reads` once their own desired objects are in too, with
 * those objects, in the order both became ready. A cluster whose objects
 * could not be built ends the loop with that error.
 */
async function* readyClusters(
  reads: AsyncIterable<readonly [string, readonly FetchedState[]]>,
  desired: AdmittedDesired,
): AsyncGenerator<readonly [string, readonly FetchedState[], readonly DesiredResource[]]> {
  const ready = arrivals<readonly [string, readonly FetchedState[], readonly DesiredResource[]]>();
  let failed = false;
  const fail = (e: unknown) => {
    if (failed) return; // once: the loop has stopped at the first
    failed = true;
    ready.fail(e);
  };
  void (async () => {
    const joins: Array<Promise<void>> = [];
    for await (const [cluster, states] of reads) {
      joins.push(
        desired.ofCluster(cluster).then((list) => ready.push([cluster, states, list]), fail),
      );
    }
    await Promise.all(joins);
    if (!failed) ready.end();
  })().catch(fail);
  yield* ready;
}

/** The server-side apply field manager of an integration: stable, one per integration. */
export function fieldManagerFor(integration: string): string {
  return `qontract-reconcile-${integration}`;
}
