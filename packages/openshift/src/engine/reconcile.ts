import { arrivals, EventLoopSlices, errorMessage, type RunContext } from '@qontract/core';
import { Gauge, type Registry } from 'prom-client';
import type { ClusterMap } from '../cluster/cluster-map.ts';
import type { KubeObject } from '../cluster/kube-client.ts';
import {
  ResourceInventory,
  ResourceKeyExistsError,
  ResourceNotManagedError,
  ResourceTypeNotInitializedError,
} from '../inventory/index.ts';
import { reconcileTimeObserver } from '../reconcile-time.ts';
import type { OpenshiftResource } from '../resource/openshift-resource.ts';
import { dictGet, isDict } from '../resource/py-values.ts';
import { admitCurrent, otherCaller } from './admission.ts';
import { type ActionResult, executePlan } from './apply.ts';
import { AdmittedDesired, type DesiredInput, desiredSourceOf } from './desired-source.ts';
import { type CurrentStateSpec, type FetchedState, fetchCurrentState } from './fetch.ts';
import type { NamespaceWait } from './namespace-wait.ts';
import { type PlanOptions, planItem } from './plan.ts';
import type { PlannedAction } from './plan-types.ts';
import {
  allFrozen,
  concernsCluster,
  frozenCurrent,
  sameCurrent,
  sameDesired,
  specsKey,
  type UnchangedCluster,
  type UnchangedClusters,
} from './unchanged-clusters.ts';

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
 * The shared OpenShift reconcile run: read the current state of the managed
 * kinds, add the desired objects, plan with the original's rules, print the
 * plan (dry-run) or execute it with server-side apply. Errors are registered
 * on the run; once any exists, nothing is deleted.
 *
 * A wet run goes on with each cluster as soon as its read has ended: its
 * objects are planned and its applies start while the other clusters are
 * still being read (they would be applied whatever those reads find). Deletes
 * wait for every cluster and every apply, and are decided once, on the whole
 * run's errors. A dry-run plans each cluster as it is read too, but prints its
 * lines once everything is read, in the inventory's order; the plan
 * (`--plan-out`, the result) is in that order either way.
 */
export async function reconcileResources(settings: ReconcileSettings): Promise<ReconcileResult> {
  const { ctx } = settings;
  const read = new Set(settings.specs.map((spec) => `${spec.cluster}/${spec.namespace}`));
  const admitted = new AdmittedDesired(
    desiredSourceOf(settings.desired),
    (cluster, namespace) => read.has(`${cluster}/${namespace}`),
    (e) => ctx.errors.register(`${e.cluster}/${e.namespace}`, e.message),
  );
  const bySource = !Array.isArray(settings.desired) && !(settings.desired instanceof Promise);
  const s = {
    ...settings,
    desired: admitted.all(),
    ...(bySource ? { desiredOfCluster: (c: string) => admitted.ofCluster(c) } : {}),
  };
  const inventory = new ResourceInventory();
  for (const spec of s.specs) {
    inventory.initializeResourceType(spec.cluster, spec.namespace, spec.kind, spec.resourceNames);
  }

  const clustersRead = arrivals<readonly [string, readonly FetchedState[]]>();
  const fetching = s.readCurrent
    ? s.readCurrent(s.specs)
    : fetchCurrentState(s.specs, {
        clusters: s.clusters,
        errors: ctx.errors,
        log: ctx.log,
        concurrency: s.concurrency,
        onCluster: (cluster, states) => clustersRead.push([cluster, states]),
      });
  fetching.then(clustersRead.end, clustersRead.end);

  /** `leaveOtherCallers`: the objects of other callers the filter hid, by item key and name. */
  const heldByOthers = new Map<string, string | null>();
  const addCurrent = (states: readonly FetchedState[]) => {
    for (const { spec, items } of states) {
      for (const item of items) {
        const current = admitCurrent(item, s);
        if (!current) {
          const other = s.leaveOtherCallers ? otherCaller(item, s) : undefined;
          if (other !== undefined)
            heldByOthers.set(heldKey(spec, item.metadata?.name ?? ''), other);
          continue;
        }
        inventory.addCurrent(
          spec.cluster,
          spec.namespace,
          spec.kind,
          item.metadata?.name ?? '',
          current,
        );
      }
    }
  };
  const planned = new Map<string, ClusterPlan>();
  const planCluster = (cluster: string): ClusterPlan => {
    const clusterPlan = planClusterItems(inventory, cluster, s, (item, name) =>
      heldByOthers.get(heldKey(item, name)),
    );
    planned.set(cluster, clusterPlan);
    return clusterPlan;
  };

  // A looping process's previous run: the clusters it planned nothing for. A cluster whose
  // specs, desired objects and listed objects are those of that run, and that has no error,
  // gets the same empty plan: its entries are taken over instead of being built and compared
  // again. Only in polling loops: a watch iteration's inventory is lent to its reactions.
  const memo = s.readCurrent === undefined ? unchangedClustersOf(ctx, s) : undefined;
  const previous = memo?.previous;
  const kept: UnchangedClusters = new Map();
  const specsOf = Map.groupBy(s.specs, (spec) => spec.cluster);
  /** Clusters that may be taken over: their previous run, their desired objects (added if not). */
  const candidates = new Map<
    string,
    { readonly before: UnchangedCluster; readonly desired: readonly DesiredResource[] }
  >();
  const desiredOf = new Map<string, readonly DesiredResource[]>();
  const bodiesOf = new Map<string, OpenshiftResource['body'][]>();
  const readOf = new Map<string, readonly FetchedState[]>();
  const warningsOf = new Map<string, string[]>();
  const takenOver = new Set<string>();
  /** A cluster's read has ended: its objects are planned, or its previous run's are taken over. */
  const settle = (cluster: string, states: readonly FetchedState[]): ClusterPlan => {
    readOf.set(cluster, states);
    const candidate = candidates.get(cluster);
    if (candidate) {
      candidates.delete(cluster);
      const { before } = candidate;
      if (sameCurrent(before, states) && !ctx.errors.hasClusterError(cluster)) {
        inventory.adoptCluster(cluster, before.entries);
        takenOver.add(cluster);
        kept.set(cluster, before);
        const clusterPlan: ClusterPlan = { actions: [], skipped: false, errors: [] };
        planned.set(cluster, clusterPlan);
        return clusterPlan;
      }
      for (const d of candidate.desired) addDesired(inventory, d, ctx);
    }
    addCurrent(states);
    return planCluster(cluster);
  };
  /** What planning a cluster found: its skip line and its errors (caller conflicts). */
  const report = (cluster: string) => {
    const p = planned.get(cluster);
    if (p?.skipped) ctx.log.error(`[${cluster}] skipping realize_data for cluster with errors`);
    for (const e of p?.errors ?? []) ctx.errors.register(e.scope, e.message);
    for (const line of p?.left ?? []) ctx.log.info(line);
  };

  /** A cluster's desired objects as given: a candidate to take over, or remembered for the next run. */
  const considerCandidate = (cluster: string, list: readonly DesiredResource[]) => {
    if (!previous) return;
    desiredOf.set(cluster, list);
    // The bodies as built: planning may replace a body (restart annotations copied in).
    bodiesOf.set(
      cluster,
      list.map((d) => d.resource.body),
    );
    const before = previous.get(cluster);
    if (
      before &&
      before.specs === specsKey(specsOf.get(cluster) ?? []) &&
      sameDesired(before, list)
    ) {
      candidates.set(cluster, { before, desired: list });
    }
  };
  /** Adds desired objects, handing the thread back between slices (the clusters are still read). */
  const addAllDesired = async (list: readonly DesiredResource[], slices: EventLoopSlices) => {
    for (const d of list) {
      if (candidates.has(d.cluster)) continue;
      addDesired(inventory, d, ctx);
      const pause = slices.due();
      if (pause) await pause;
    }
  };
  /** The unused-type warnings of a cluster whose desired objects are in. */
  const unusedTypeWarnings = (cluster: string): string[] => {
    // A candidate's desired objects are not in yet: its warnings are those of its last run.
    const candidate = candidates.get(cluster);
    return candidate
      ? [...candidate.before.unusedTypeWarnings]
      : [...inventory.items(cluster)]
          .filter((item) => item.desired.size === 0)
          .map(
            (item) =>
              `[${item.cluster}/${item.namespace}] unused resource type: ${item.kind}. please remove it in a following PR.`,
          );
  };
  const warnUnusedTypes = (clusters: readonly string[]) => {
    if (!s.warnUnusedTypes) return;
    for (const cluster of clusters) {
      const lines = warningsOf.get(cluster) ?? unusedTypeWarnings(cluster);
      for (const line of lines) ctx.log.warn(line);
      warningsOf.set(cluster, lines);
    }
  };

  async function* batches(): AsyncGenerator<readonly PlannedAction[]> {
    const slices = new EventLoopSlices();
    const streamed = new Set<string>();
    const ofCluster = ctx.dryRun ? undefined : s.desiredOfCluster;
    let desired: readonly DesiredResource[];
    if (ofCluster) {
      // A wet run whose desired objects come cluster by cluster: each cluster is planned and
      // applied once its read has ended and its own objects are in (their errors registered),
      // while the other clusters are still read or built. Its warnings wait for the end, in
      // the inventory's order.
      for await (const [cluster, states, list] of readyClusters(clustersRead, ofCluster)) {
        streamed.add(cluster);
        considerCandidate(cluster, list);
        await addAllDesired(list, slices);
        if (s.warnUnusedTypes) warningsOf.set(cluster, unusedTypeWarnings(cluster));
        const clusterPlan = settle(cluster, states);
        report(cluster);
        const applies = clusterPlan.actions.filter((a) => a.action !== 'delete');
        if (applies.length > 0) yield applies;
      }
      // Every desired object is in before anything else is planned or any delete decided.
      desired = await s.desired;
      const left = desired.filter((d) => !streamed.has(d.cluster));
      const rest = Map.groupBy(left, (d) => d.cluster);
      for (const cluster of inventory.clusters()) {
        if (!streamed.has(cluster)) considerCandidate(cluster, rest.get(cluster) ?? []);
      }
      await addAllDesired(left, slices);
      warnUnusedTypes(inventory.clusters());
    } else {
      // Nothing is planned before every desired object is in: their errors count for their
      // clusters.
      desired = await s.desired;
      if (previous) {
        const all = Map.groupBy(desired, (d) => d.cluster);
        for (const cluster of inventory.clusters())
          considerCandidate(cluster, all.get(cluster) ?? []);
      }
      await addAllDesired(desired, slices);
      warnUnusedTypes(inventory.clusters());
      // Each cluster is planned as soon as its read has ended, while the others are read: a
      // cluster's plan depends on its own objects and errors only. A wet run applies it at once
      // and says what planning found then; a dry-run says it once every cluster is planned, in
      // the inventory's order, so that its output does not depend on which cluster answered first.
      for await (const [cluster, states] of clustersRead) {
        streamed.add(cluster);
        const clusterPlan = settle(cluster, states);
        if (ctx.dryRun) continue;
        report(cluster);
        const applies = clusterPlan.actions.filter((a) => a.action !== 'delete');
        if (applies.length > 0) yield applies;
      }
    }
    // Everything else: a read from caches, clusters that could not be read.
    const fetched = await fetching;
    const unstreamed = Map.groupBy(
      fetched.filter((state) => !streamed.has(state.spec.cluster)),
      (state) => state.spec.cluster,
    );
    for (const cluster of inventory.clusters()) {
      if (!streamed.has(cluster)) settle(cluster, unstreamed.get(cluster) ?? []);
      if (!streamed.has(cluster) || ctx.dryRun) report(cluster);
    }
    publishInventoryMetrics(inventory, ctx.metrics.registry, s.integration);
    if (memo) {
      memo.save(unchangedClusters());
      ctx.log.debug(
        `clusters unchanged since the previous run: ${takenOver.size} of ${inventory.clusters().length} (their objects not compared again)`,
      );
    }

    // Every delete goes to the executor, the one deletion gate: it holds them
    // all back when any error exists once every apply has ended. A dry-run's
    // applies were held back: they come here, in the inventory's order.
    const actions = inventory.clusters().flatMap((cluster) => planned.get(cluster)?.actions ?? []);
    yield actions.filter((a) => a.action === 'delete' || ctx.dryRun || !streamed.has(a.cluster));
  }

  /** The clusters this run planned nothing for and found no error in, for the next run. */
  function unchangedClusters(): UnchangedClusters {
    for (const cluster of inventory.clusters()) {
      const p = planned.get(cluster);
      const clean =
        p !== undefined &&
        p.actions.length === 0 &&
        !p.skipped &&
        p.errors.length === 0 &&
        !concernsCluster(ctx.errors.errors, cluster);
      if (!clean) {
        kept.delete(cluster);
        continue;
      }
      if (takenOver.has(cluster)) continue; // kept as it was
      const bodies = bodiesOf.get(cluster) ?? [];
      const current = frozenCurrent(readOf.get(cluster) ?? []);
      const entries = inventory.clusterEntries(cluster);
      if (!current || !entries || !allFrozen(bodies)) continue;
      kept.set(cluster, {
        specs: specsKey(specsOf.get(cluster) ?? []),
        desired: desiredOf.get(cluster) ?? [],
        bodies,
        current,
        entries,
        unusedTypeWarnings: warningsOf.get(cluster) ?? [],
      });
    }
    return kept;
  }

  fetching.catch(() => {}); // awaited in batches(); a failure before then must not go unhandled
  // Awaited in batches() too, unless a cluster's own objects failed first (desiredOfCluster).
  if (s.desired instanceof Promise) s.desired.catch(() => {});
  const results = await executePlan(batches(), {
    onWritten: await reconcileTimeObserver(ctx),
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
  return { inventory, results };
}

/**
 * What the previous run of this loop left for this one, and where this run
 * leaves its own: only where the runs repeat in this process and reuse what
 * they list (the objects of an unchanged list are then the same objects).
 * Runs with other settings (another integration, caller, take-over) do not
 * share them.
 */
function unchangedClustersOf(
  ctx: RunContext,
  s: Omit<ReconcileSettings, 'desired'>,
): { previous: UnchangedClusters; save: (next: UnchangedClusters) => void } | undefined {
  if (!ctx.loop.tuning.listReuse) return undefined;
  const byKey = ctx.loop.repeatCache(
    'engine:unchanged-clusters',
    () =>
      new Map<
        string,
        { skipCurrent: ReconcileSettings['skipCurrent']; clusters: UnchangedClusters }
      >(),
  );
  if (!byKey) return undefined;
  const key = [
    ctx.integration,
    s.integration,
    s.integrationVersion,
    s.takeOver ?? false,
    s.caller ?? '',
    (s.allCallers ?? []).join('\u0001'),
    s.filterCurrentByCaller ?? true,
    s.leaveOtherCallers ?? false,
    s.warnUnusedTypes ?? false,
  ].join('\u0000');
  const last = byKey.get(key);
  const store = byKey;
  // Taken by this run: runs that overlap (shards of one process) do not hand the same entries on.
  store.delete(key);
  return {
    previous: last && last.skipCurrent === s.skipCurrent ? last.clusters : new Map(),
    save: (clusters) => store.set(key, { skipCurrent: s.skipCurrent, clusters }),
  };
}

/** The server-side apply field manager of an integration: stable, one per integration. */
export function fieldManagerFor(integration: string): string {
  return `qontract-reconcile-${integration}`;
}

function addDesired(inventory: ResourceInventory, d: DesiredResource, ctx: RunContext): void {
  const where = `[${d.cluster}/${d.namespace}]`;
  if (!inventory.isClusterPresent(d.cluster)) {
    ctx.log.error(`Cluster ${d.cluster} not initialized in ResourceInventory`);
    return;
  }
  const kind = String(d.resource.kind);
  const name = String(d.resource.name);
  const declared = declaredNamespace(d.resource);
  if (d.namespace !== 'cluster' && declared !== undefined && declared !== d.namespace) {
    // The API server refuses it at apply time; the dry-run must say so too,
    // and the run must not go on to delete what it was meant to replace.
    ctx.errors.register(
      `${d.cluster}/${d.namespace}`,
      `${where} ${kind}/${name}${d.source ? ` (${d.source})` : ''}: metadata.namespace '${declared}' does not match the namespace it is declared in ('${d.namespace}')`,
    );
    return;
  }
  try {
    inventory.addDesiredResource(d.cluster, d.namespace, d.resource, {
      privileged: d.privileged ?? false,
      ...(d.source ? { source: d.source } : {}),
    });
  } catch (e) {
    let message: string;
    if (e instanceof ResourceTypeNotInitializedError) {
      const source = d.source ? ` (${d.source})` : '';
      message = `${where} unknown kind: ${kind}${source}. hint: is it missing from managedResourceTypes?`;
    } else if (e instanceof ResourceKeyExistsError) {
      message = `${where} desired item already exists: ${kind}/${name}. ${e.message}`;
    } else if (e instanceof ResourceNotManagedError) {
      message = `${where} desired item is not managed: ${kind}/${name}.`;
    } else {
      message = `${where} ${errorMessage(e)}`;
    }
    ctx.errors.register(`${d.cluster}/${d.namespace}`, message);
  }
}

/**
 * The clusters of `reads` once their own desired objects are in too, with
 * those objects, in the order both became ready. A cluster whose objects
 * could not be built ends the loop with that error.
 */
async function* readyClusters(
  reads: AsyncIterable<readonly [string, readonly FetchedState[]]>,
  desiredOfCluster: (cluster: string) => Promise<readonly DesiredResource[]>,
): AsyncGenerator<readonly [string, readonly FetchedState[], readonly DesiredResource[]]> {
  const ready = arrivals<readonly [string, readonly FetchedState[], readonly DesiredResource[]]>();
  let waiting = 0;
  let readsEnded = false;
  let failed = false;
  const endIfDone = () => {
    if (readsEnded && waiting === 0 && !failed) ready.end();
  };
  void (async () => {
    for await (const [cluster, states] of reads) {
      waiting++;
      desiredOfCluster(cluster).then(
        (list) => {
          waiting--;
          ready.push([cluster, states, list]);
          endIfDone();
        },
        (e: unknown) => {
          // Once: the reader has stopped at the first.
          if (failed) return;
          failed = true;
          ready.fail(e);
        },
      );
    }
    readsEnded = true;
    endIfDone();
  })();
  yield* ready;
}

/** `metadata.namespace` of a desired body, when it sets one. */
function declaredNamespace(resource: OpenshiftResource): string | undefined {
  const metadata = isDict(resource.body) ? dictGet(resource.body, 'metadata') : undefined;
  const namespace = isDict(metadata) ? dictGet(metadata, 'namespace') : undefined;
  return namespace === undefined || namespace === null || namespace === ''
    ? undefined
    : String(namespace);
}

/** One cluster's plan, and what its caller reports of it. */
interface ClusterPlan {
  readonly actions: readonly PlannedAction[];
  /** Its items were skipped: the cluster has errors. */
  readonly skipped: boolean;
  /** Errors the rules found (caller conflicts), to register. */
  readonly errors: ReadonlyArray<{ readonly scope: string; readonly message: string }>;
  /** Lines about desired objects left to another caller (`leaveOtherCallers`). */
  readonly left?: readonly string[];
}

/** The key of an object of (cluster, namespace, kind) named `name`, for `leaveOtherCallers`. */
const heldKey = (
  item: { readonly cluster: string; readonly namespace: string; readonly kind: string },
  name: string,
) => JSON.stringify([item.cluster, item.namespace, item.kind, name]);

/**
 * Plans the items of one cluster with the original's rules. Deletes are
 * planned as actions here; the run decides on them once every cluster is
 * planned. Registers nothing: the errors a cluster's plan finds are not the
 * cluster-wide ones that make planning skip a cluster, so when they are
 * registered does not change any plan.
 */
function planClusterItems(
  inventory: ResourceInventory,
  cluster: string,
  s: Omit<ReconcileSettings, 'desired'>,
  heldByOther: PlanOptions['heldByOther'],
): ClusterPlan {
  const { ctx } = s;
  const actions: PlannedAction[] = [];
  const errors: Array<{ scope: string; message: string }> = [];
  const left: string[] = [];
  let skipped = false;
  for (const item of inventory.items(cluster)) {
    const p = planItem(item, {
      takeOver: s.takeOver ?? false,
      caller: s.caller,
      allCallers: s.allCallers,
      ...(s.leaveOtherCallers ? { heldByOther } : {}),
      clusterHasError: (c) => ctx.errors.hasClusterError(c),
      renderDiff: Boolean(ctx.globals.diff || ctx.globals.planOut),
    });
    if (p.skippedForClusterError) skipped = true;
    errors.push(...p.errors);
    actions.push(...p.actions);
    left.push(...p.left);
  }
  return { actions, skipped, errors, left };
}

/** The counts each inventory gauge was last given, by series. */
const publishedCounts = new WeakMap<Gauge, Map<string, number>>();

/** `qontract_reconcile_openshift_resource_inventory{integration, cluster, namespace, kind, state}`, as upstream. */
function publishInventoryMetrics(
  inventory: ResourceInventory,
  registry: Registry,
  integration: string,
): void {
  const name = 'qontract_reconcile_openshift_resource_inventory';
  const gauge =
    (registry.getSingleMetric(name) as Gauge | undefined) ??
    new Gauge({
      name,
      help: 'Inventory of resources managed by an openshift integration',
      labelNames: ['integration', 'cluster', 'namespace', 'kind', 'state'],
      registers: [registry],
    });
  const label = integration.replaceAll('_', '-');
  // A gauge keeps its values: a series whose count is the one this gauge was last given is not
  // set again (a loop's unchanged clusters: thousands of label sets hashed for nothing).
  let given = publishedCounts.get(gauge);
  if (!given) {
    given = new Map();
    publishedCounts.set(gauge, given);
  }
  for (const row of inventory.counts()) {
    const key = `${label}\u0000${row.cluster}\u0000${row.namespace}\u0000${row.kind}\u0000${row.state}`;
    if (given.get(key) === row.count) continue;
    given.set(key, row.count);
    gauge.set(
      {
        integration: label,
        cluster: row.cluster,
        namespace: row.namespace,
        kind: row.kind,
        state: row.state,
      },
      row.count,
    );
  }
}
