import { type ErrorRegistry, errorMessage, type Logger } from '@qontract/core';
import pLimit, { type LimitFunction } from 'p-limit';
import { type ApiResource, KindNotFoundError } from '../cluster/api-resources.ts';
import { apiResourceOf, type ClusterMap, isClusterProblem } from '../cluster/cluster-map.ts';
import { compactObject } from '../cluster/compact-object.ts';
import {
  KubeApiError,
  type KubeClient,
  type KubeObject,
  RequestAbortedError,
} from '../cluster/kube-client.ts';

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
}

export interface FetchSettings {
  readonly clusters: ClusterMap;
  readonly errors: ErrorRegistry;
  readonly log: Logger;
  readonly concurrency?: number;
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

/**
 * Reads the current state of every spec with as few requests as it can: one
 * cluster-wide list per (cluster, credential, kind) when enough namespaces
 * want that kind, per-namespace lists otherwise, single GETs for named
 * resources. A failing cluster registers its error and the others go on.
 *
 * A slow or hung cluster does not hold the others: clusters are read side by
 * side (`concurrency` clusters at a time, each with at most `concurrency`
 * requests in flight), and a cluster whose read takes longer than the cluster
 * map's `readTimeoutMs`, or one of whose requests times out, is given up for
 * the run with one error naming it and what timed out.
 */
export async function fetchCurrentState(
  specs: readonly CurrentStateSpec[],
  settings: FetchSettings,
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
  // What the engine keeps of a listed or fetched object: no managedFields field sets, no
  // last-applied copy. In a loop, an object read unchanged since the previous run (the same
  // bytes, in a list or a GET by name) is that run's object.
  const compact = { each: compactObject, reuse: true };
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
        {
          clusterWide: true,
        },
      );
    };
    const named = group.filter((s) => s.resourceNames !== undefined);
    const listed = group.filter((s) => s.resourceNames === undefined);

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
              found[i] = await handle.client.get(resource, ns, name, compact);
            } catch (e) {
              failed(spec, e);
            }
          }),
        ),
      );
      const items = found.filter((o): o is KubeObject => o !== undefined);
      results.push({ spec, items });
    }

    if (listed.length === 0) return;
    if (!resource.namespaced) {
      await limit(async () => {
        try {
          const items = await handle.client.list(resource, undefined, compact);
          for (const spec of listed) results.push({ spec, items });
        } catch (e) {
          for (const spec of listed) failed(spec, e);
        }
      });
      return;
    }
    if (listed.length >= threshold) {
      // Objects of the namespaces no spec reads are not even decoded.
      const namespaces = new Set(listed.map((s) => s.namespace));
      const all = await limit(async () => {
        try {
          return await handle.client.list(resource, undefined, { ...compact, namespaces });
        } catch (e) {
          if (e instanceof KubeApiError && e.status === 403) return undefined;
          for (const spec of listed) failed(spec, e);
          return null;
        }
      });
      if (all === null) return;
      if (all !== undefined) {
        const byNamespace = new Map<string, KubeObject[]>();
        for (const item of all) {
          const ns = item.metadata?.namespace ?? '';
          const list = byNamespace.get(ns);
          if (list) list.push(item);
          else byNamespace.set(ns, [item]);
        }
        for (const spec of listed)
          results.push({ spec, items: byNamespace.get(spec.namespace) ?? [] });
        return;
      }
      settings.log.debug(
        `[${first.cluster}] cluster-wide list of ${first.kind} refused; listing per namespace`,
      );
    }
    await Promise.all(
      listed.map((spec) =>
        limit(async () => {
          try {
            results.push({
              spec,
              items: await handle.client.list(resource, spec.namespace, compact),
            });
          } catch (e) {
            failed(spec, e);
          }
        }),
      ),
    );
  };

  await Promise.all(
    [...byCluster].map(([cluster, groups]) =>
      clusterSlots(async () => {
        // The cluster's clients (its own and the cluster-admin one) share its deadline.
        const clients = new Set<KubeClient>();
        for (const privileged of [false, true]) {
          const handle = settings.clusters.get(cluster, privileged);
          if (!isClusterProblem(handle)) clients.add(handle.client);
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
  const listed = settings.clusters.listed;
  if (listed) {
    settings.log.debug(
      `listed objects: ${listed.reused} unchanged since the previous run, ${listed.read} read`,
    );
  }
  return [...byCluster.keys()].flatMap((cluster) => results.get(cluster) ?? []);
}

/** A namespace as far as reading one fixed kind in it cares. */
export interface NamespaceForSpecs {
  readonly name: string;
  readonly clusterAdmin?: boolean | null;
  readonly cluster: { readonly name: string };
  readonly managedResourceNames?: ReadonlyArray<{
    readonly resource: string;
    readonly resourceNames: readonly string[];
  }> | null;
}

/**
 * One spec per namespace for an integration that manages one fixed kind (the
 * original's `override_managed_types`): read with the cluster-admin token when
 * the namespace says `clusterAdmin`, restricted to the names listed for that
 * kind in `managedResourceNames` (the last entry wins; other kinds' entries are
 * ignored, as upstream does with an override list).
 */
export function specsForKind(
  namespaces: readonly NamespaceForSpecs[],
  kind: string,
): CurrentStateSpec[] {
  return namespaces.map((ns) => {
    const names = (ns.managedResourceNames ?? []).filter((m) => m.resource === kind).at(-1);
    return {
      cluster: ns.cluster.name,
      namespace: ns.name,
      kind,
      privileged: Boolean(ns.clusterAdmin),
      ...(names ? { resourceNames: names.resourceNames } : {}),
    };
  });
}
