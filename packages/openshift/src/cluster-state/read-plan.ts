import { type ErrorRegistry, errorMessage, type Logger } from '@qontract/core';
import pLimit, { type LimitFunction } from 'p-limit';
import { type ApiResource, KindNotFoundError } from '../cluster/api-resources.ts';
import {
  apiResourceOf,
  type ClusterHandle,
  type ClusterMap,
  isClusterProblem,
} from '../cluster/cluster-map.ts';
import {
  KubeApiError,
  type KubeClient,
  type KubeObject,
  RequestAbortedError,
} from '../cluster/kube-client.ts';

/**
 * The one read plan of the current state, for polling runs and watch mode
 * alike: which lists and GETs answer a run's specs, what a refusal or a
 * failure means, and when a cluster is given up. How a list or GET is
 * answered is the strategy's (relist.ts: a request each run; watch.ts: a
 * list+watch cache).
 */

/** What to read: one kind in one namespace (or `cluster` for cluster-scoped kinds). */
export interface CurrentStateSpec {
  readonly cluster: string;
  readonly namespace: string;
  /** The inventory's resource type (a kind string). */
  readonly kind: string;
  readonly privileged: boolean;
  /** Only these names (managedResourceNames); all when undefined. */
  readonly resourceNames?: readonly string[] | undefined;
}

export interface FetchedState {
  readonly spec: CurrentStateSpec;
  readonly items: KubeObject[];
  /**
   * The revision of the spec's scope on its cluster connection: the same
   * number in two reads of a loop exactly when `items` are the same objects
   * in the same order (see `ClusterState`). Undefined when not known (a
   * polling run outside a loop, the loop caches or list reuse off).
   */
  readonly revision?: number;
}

export interface ReadSettings {
  readonly clusters: ClusterMap;
  readonly errors: ErrorRegistry;
  readonly log: Logger;
  readonly concurrency?: number | undefined;
  /**
   * From how many namespaces of one cluster on one kind a single cluster-wide
   * list (paginated) replaces the per-namespace lists. A cluster-wide list
   * that is refused (403) falls back to per-namespace lists.
   */
  readonly clusterWideFrom?: number;
  /**
   * Called once a cluster's read has ended, with what was read of it (the
   * same states the result holds), so the caller can go on with that cluster
   * while the others are read. Not called for a cluster given up.
   */
  readonly onCluster?: (cluster: string, states: readonly FetchedState[]) => void;
}

/** One list the plan asks for. */
interface ListRequest {
  readonly resource: ApiResource;
  /** The namespace listed; undefined: cluster-wide. */
  readonly namespace: string | undefined;
  /** A cluster-wide list of a namespaced kind keeps only these namespaces' objects. */
  readonly namespaces: ReadonlySet<string> | undefined;
  /** The specs the list answers. */
  readonly specs: readonly CurrentStateSpec[];
}

/** How one cluster connection (a ClusterState) answers the plan within one read. */
interface ScopeReader {
  /** The objects of one list (shared by the specs it answers: not to be changed). */
  list(request: ListRequest): Promise<KubeObject[]>;
  /**
   * One object by name, undefined when there is none. Without it, named
   * specs are answered from their namespace's list (a watch cache).
   */
  readonly get?: (
    resource: ApiResource,
    namespace: string | undefined,
    name: string,
  ) => Promise<KubeObject | undefined>;
  /** The revision of a scope (see FetchedState.revision); undefined when not kept. */
  revision(scope: string, items: readonly KubeObject[]): number | undefined;
}

export interface ReadStrategy {
  /** The reader of `handle`'s connection in this read. */
  reader(handle: ClusterHandle): ScopeReader;
  /**
   * Whether the cluster map's read time-out gives a cluster up: the relist's
   * requests are the run's; watch caches list on clients of their own that
   * outlive the run.
   */
  readonly deadline: boolean;
}

/**
 * Reads the current state of every spec with as few requests as it can: one
 * cluster-wide list per (cluster, credential, kind) when enough namespaces
 * want that kind (all of them for a cluster-scoped kind), per-namespace lists
 * otherwise, single GETs for named resources where the strategy has them. A
 * kind the cluster does not serve is a warning; a failing read registers its
 * cluster's error and the others go on.
 *
 * A slow or hung cluster does not hold the others: clusters are read side by
 * side (`concurrency` clusters at a time, each with at most `concurrency`
 * requests in flight), and a cluster whose read takes longer than the cluster
 * map's `readTimeoutMs`, or one of whose requests times out, is given up for
 * the run with one error naming it and what timed out.
 *
 * The result holds the clusters in the order of the specs.
 */
export async function readCurrentState(
  specs: readonly CurrentStateSpec[],
  settings: ReadSettings,
  strategy: ReadStrategy,
): Promise<FetchedState[]> {
  const concurrency = Math.max(1, settings.concurrency ?? 10);
  const clusterSlots = pLimit(concurrency);
  const threshold = settings.clusterWideFrom ?? 3;
  const byCluster = new Map<string, Map<string, CurrentStateSpec[]>>();
  for (const spec of specs) {
    const groups = byCluster.get(spec.cluster) ?? new Map<string, CurrentStateSpec[]>();
    const key = `${spec.privileged}\u0000${spec.kind}`;
    groups.set(key, [...(groups.get(key) ?? []), spec]);
    byCluster.set(spec.cluster, groups);
  }
  const results = new Map<string, FetchedState[]>();
  const givenUp = new Set<string>();

  const readGroup = async (
    group: CurrentStateSpec[],
    limit: LimitFunction,
    results: FetchedState[],
  ) => {
    const first = group[0]!;
    const handle = settings.clusters.get(first.cluster, first.privileged);
    if (isClusterProblem(handle)) return; // registered when the cluster map was built
    let resource: ApiResource;
    try {
      resource = await apiResourceOf(handle, first.kind);
    } catch (e) {
      if (e instanceof KindNotFoundError) {
        settings.log.warn(`[${first.cluster}] cluster has no API resource ${first.kind}.`);
        return;
      }
      throw e;
    }
    const reader = strategy.reader(handle);
    const failed = (spec: CurrentStateSpec, e: unknown) => {
      // A stopped run is not the cluster's error: it ends the read (and the run) at once.
      if (e instanceof RequestAbortedError) throw e;
      if (e === handle.client.failure) {
        // The cluster was given up (a time-out): one error for the cluster, not one per read.
        if (givenUp.has(spec.cluster)) return;
        givenUp.add(spec.cluster);
        settings.errors.register(spec.cluster, errorMessage(e), { clusterWide: true });
        return;
      }
      settings.errors.register(
        spec.cluster,
        `[${spec.cluster}/${spec.namespace}] ${errorMessage(e)}`,
        { clusterWide: true },
      );
    };
    const done = (spec: CurrentStateSpec, items: KubeObject[]) => {
      results.push({ spec, items, revision: reader.revision(scopeOf(spec), items) });
    };
    const { get } = reader;
    const named = get ? group.filter((s) => s.resourceNames !== undefined) : [];
    const listed = get ? group.filter((s) => s.resourceNames === undefined) : group;

    // Named resources: one GET per name, a missing one is simply absent. The objects are in
    // the order of the names, whichever answer came first (a loop compares them run to run).
    for (const spec of named) {
      const names = spec.resourceNames ?? [];
      const found: Array<KubeObject | undefined> = new Array(names.length);
      await Promise.all(
        names.map((name, i) =>
          limit(async () => {
            try {
              const ns =
                resource.namespaced && spec.namespace !== 'cluster' ? spec.namespace : undefined;
              found[i] = await get?.(resource, ns, name);
            } catch (e) {
              failed(spec, e);
            }
          }),
        ),
      );
      done(
        spec,
        found.filter((o): o is KubeObject => o !== undefined),
      );
    }

    if (listed.length === 0) return;
    /** One list for `served`: null when it failed (registered), undefined when refused and that is fine. */
    const list = (
      served: readonly CurrentStateSpec[],
      namespace: string | undefined,
      namespaces: ReadonlySet<string> | undefined,
      refusedIsFine = false,
    ) =>
      limit(async () => {
        try {
          return await reader.list({ resource, namespace, namespaces, specs: served });
        } catch (e) {
          if (refusedIsFine && e instanceof KubeApiError && e.status === 403) return undefined;
          for (const spec of served) failed(spec, e);
          return null;
        }
      });

    if (!resource.namespaced) {
      const items = await list(listed, undefined, undefined);
      if (items) for (const spec of listed) done(spec, ofNames(spec, items));
      return;
    }
    if (listed.length >= threshold) {
      // Objects of the namespaces no spec reads are not even decoded.
      const namespaces = new Set(listed.map((s) => s.namespace));
      const all = await list(listed, undefined, namespaces, true);
      if (all === null) return;
      if (all !== undefined) {
        const byNamespace = new Map<string, KubeObject[]>();
        for (const item of all) {
          const ns = item.metadata?.namespace ?? '';
          const list = byNamespace.get(ns);
          if (list) list.push(item);
          else byNamespace.set(ns, [item]);
        }
        for (const spec of listed) done(spec, ofNames(spec, byNamespace.get(spec.namespace) ?? []));
        return;
      }
      settings.log.debug(
        `[${first.cluster}] cluster-wide list of ${first.kind} refused; reading per namespace`,
      );
    }
    await Promise.all(
      [...Map.groupBy(listed, (s) => s.namespace)].map(async ([namespace, served]) => {
        const items = await list(served, namespace, undefined);
        if (items) for (const spec of served) done(spec, ofNames(spec, items));
      }),
    );
  };

  await Promise.all(
    [...byCluster].map(([cluster, groups]) =>
      clusterSlots(async () => {
        // The cluster's clients (its own and the cluster-admin one) share its deadline.
        const clients = new Set<KubeClient>();
        for (const privileged of [false, true]) {
          const handle = settings.clusters.get(cluster, privileged);
          if (strategy.deadline && !isClusterProblem(handle)) clients.add(handle.client);
        }
        const readTimeoutMs = settings.clusters.readTimeoutMs;
        const stops = [...clients].map((c) =>
          c.deadline(readTimeoutMs, 'reading the current state'),
        );
        const limit = pLimit(concurrency);
        const read: FetchedState[] = [];
        try {
          await Promise.all([...groups.values()].map((group) => readGroup(group, limit, read)));
        } finally {
          for (const stop of stops) stop();
        }
        // A cluster given up is failed for the run: nothing of it is planned.
        if (givenUp.has(cluster)) return;
        results.set(cluster, read);
        settings.onCluster?.(cluster, read);
      }),
    ),
  );
  return [...byCluster.keys()].flatMap((cluster) => results.get(cluster) ?? []);
}

/** A spec's scope on its cluster connection: its kind, namespace and names. */
function scopeOf(spec: CurrentStateSpec): string {
  return `${spec.kind}\u0000${spec.namespace}\u0000${spec.resourceNames?.join('\u0001') ?? '*'}`;
}

/**
 * A list's objects a spec reads: all of them, or its names' in the order of
 * the names (as GETs by name return them).
 */
function ofNames(spec: CurrentStateSpec, items: KubeObject[]): KubeObject[] {
  const names = spec.resourceNames;
  if (!names) return items;
  const byName = new Map(items.map((i) => [i.metadata?.name ?? '', i]));
  const found: KubeObject[] = [];
  for (const name of names) {
    const item = byName.get(name);
    if (item) found.push(item);
  }
  return found;
}
