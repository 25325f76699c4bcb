import type { RunContext } from '@qontract/core';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { ApiResource } from '../cluster/api-resources.ts';
import type { ClusterHandle, KeptClusters } from '../cluster/cluster-map.ts';
import { keepClustersBetweenRuns } from '../cluster/for-run.ts';
import { KubeApiError, KubeClient } from '../cluster/kube-client.ts';
import { namespacesKey } from '../cluster/listed-objects.ts';
import { type CacheEvent, WatchCache } from '../cluster/watch-cache.ts';
import { ClusterState, ClusterStates, connectionKey } from './cluster-state.ts';
import {
  type CurrentStateSpec,
  type FetchedState,
  type ReadSettings,
  readCurrentState,
} from './read-plan.ts';

/**
 * The watch strategy (watch mode): each scope the read plan lists is a
 * list+watch cache (`WatchCache`: one paginated list, then a watch from its
 * resourceVersion, resumed after drops, re-listed after 410) of the cluster
 * connection's ClusterState, started by the first read that asks for it and
 * read from memory by the next ones; the caches outlive a run (the next one,
 * the periodic full resync, lists nothing) and tell their state's subscribers
 * of every change (watch-mode.ts reacts to them).
 */

/** One list+watch cache of a ClusterState: a kind in a namespace, or cluster-wide (for a set of namespaces). */
export interface WatchScope {
  readonly key: string;
  readonly cluster: string;
  readonly cache: WatchCache;
  readonly client: KubeClient;
  readonly started: Promise<void>;
  size: number;
  generation: number;
}

type WatchListener = (scope: WatchScope, event: CacheEvent) => void;

/** A cluster connection's caches, and who listens to their events. */
export class WatchClusterState extends ClusterState {
  readonly caches = new Map<string, WatchScope>();
  readonly #listeners = new Set<WatchListener>();

  /** Calls `listener` with every event of this state's caches until the returned function is called. */
  subscribe(listener: WatchListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  emit(scope: WatchScope, event: CacheEvent): void {
    for (const listener of this.#listeners) listener(scope, event);
  }
}

/** The watch ClusterStates of one loop: they outlive a run and close with the loop. */
export class WatchStates extends ClusterStates<WatchClusterState> {
  /**
   * The runs' cluster clients, kept too: a period borrows the last one's
   * connections and discovery instead of opening and repeating them.
   */
  readonly clusters: KeptClusters;
  /** Cluster-wide lists refused (403), by connection and resource: per namespace from then on. */
  readonly refused = new Map<string, unknown>();
  generation = 0;
  #reaper: ReturnType<typeof setTimeout> | undefined;

  constructor(clusters: KeptClusters) {
    super((key, next) => new WatchClusterState(key, next));
    this.clusters = clusters;
  }

  /** Caches open. */
  get size(): number {
    let n = 0;
    for (const state of this.values()) n += state.caches.size;
    return n;
  }

  /** Objects held in every cache. */
  get objects(): number {
    let n = 0;
    for (const state of this.values()) for (const scope of state.caches.values()) n += scope.size;
    return n;
  }

  /** The cache `key` of `state`, made and started by `create` when missing. */
  acquire(
    state: WatchClusterState,
    key: string,
    create: (scope: () => WatchScope | undefined) => {
      cache: WatchCache;
      client: KubeClient;
      cluster: string;
    },
  ): WatchScope {
    const existing = state.caches.get(key);
    if (existing) {
      existing.generation = this.generation;
      return existing;
    }
    const made = create(() => state.caches.get(key));
    const scope: WatchScope = {
      key,
      ...made,
      started: made.cache.start(),
      size: 0,
      generation: this.generation,
    };
    scope.started.catch(() => this.#drop(state, key));
    state.caches.set(key, scope);
    return scope;
  }

  #drop(state: WatchClusterState, key: string): void {
    const scope = state.caches.get(key);
    if (!scope) return;
    state.caches.delete(key);
    scope.cache.close();
    void scope.client.close();
  }

  /** Closes the caches the current desired state no longer needs. */
  prune(generation: number): void {
    if (this.#reaper) clearTimeout(this.#reaper);
    for (const state of [...this.values()]) {
      for (const [key, scope] of state.caches) {
        if (scope.generation < generation) this.#drop(state, key);
      }
      if (state.caches.size === 0) this.delete(state.key);
    }
  }

  /**
   * A run ended. The loop's next run comes at once; a process that runs no
   * further one (a single CLI run) must not keep watching forever.
   */
  release(generation: number, resyncSeconds: number): void {
    this.#reaper = setTimeout(
      () => {
        if (this.generation === generation) this.closeAll();
      },
      (2 * resyncSeconds + 60) * 1000,
    );
    this.#reaper.unref();
  }

  closeAll(): void {
    for (const state of [...this.values()]) {
      for (const key of [...state.caches.keys()]) this.#drop(state, key);
      this.delete(state.key);
    }
    this.clusters.closeAll();
  }
}

/** The watch states of the loop's runs (with WATCH=true, each run lasts SLEEP_DURATION_SECS). */
export function watchStatesOf(ctx: Pick<RunContext, 'loop'>): WatchStates {
  return ctx.loop.keep(
    'watch:caches',
    () => new WatchStates(keepClustersBetweenRuns(ctx.loop)),
    (states) => states.closeAll(),
  );
}

/** What the caches take from the run that starts them (they outlive it: the loop's stop signal). */
type WatchContext = Pick<RunContext, 'integration' | 'signal' | 'log' | 'metrics' | 'loop'>;

export interface WatchReadSettings extends Omit<ReadSettings, 'onCluster'> {
  readonly ctx: WatchContext;
  readonly states: WatchStates;
  /** The integration whose caches these are (each has its own). */
  readonly integration: string;
  /** Which specs each cache answered in this read: where a reaction finds its object. */
  readonly routes: Map<WatchScope, CurrentStateSpec[]>;
  /** Each ClusterState read (the caller subscribes to its events). */
  readonly onState?: (state: WatchClusterState) => void;
}

/**
 * The current state of `specs` by the read plan, from the caches, starting
 * the ones missing (a list each); a failed list is the cluster's error, as a
 * polling run's, and a cache whose list fails is dropped (the next read
 * starts it again).
 */
export async function watchCurrentState(
  specs: readonly CurrentStateSpec[],
  settings: WatchReadSettings,
): Promise<FetchedState[]> {
  const { ctx, states, routes } = settings;
  const metrics = cacheMetrics(ctx.metrics.registry);
  // Revisions are known where the loop keeps what it reads (not with QONTRACT_LIST_REUSE=off or
  // QONTRACT_LOOP_CACHES=off): the caches themselves are how watch mode works and stay.
  const known = ctx.loop.tuning.listReuse;
  const read = states.beginRead();
  try {
    return await readCurrentState(specs, settings, {
      // The caches' lists run on clients of their own, which outlive the run.
      deadline: false,
      reader: (handle) => {
        const connection = connectionKey(handle.client.connection, handle.privileged);
        const state = states.of(`${settings.integration}\u0000${connection}`);
        settings.onState?.(state);
        return {
          list: async ({ resource, namespace, namespaces, specs: served }) => {
            const wide = resource.namespaced && namespace === undefined;
            const refusedKey = `${state.key}\u0000${resourceKey(resource)}`;
            if (wide && states.refused.has(refusedKey)) throw states.refused.get(refusedKey);
            const key = [resourceKey(resource), namespace ?? '', ...namespacesKey(namespaces)].join(
              '\u0000',
            );
            const scope = states.acquire(state, key, (self) =>
              newCache(ctx, states, state, handle, resource, namespace, namespaces, metrics, self),
            );
            try {
              await scope.started;
            } catch (e) {
              if (wide && e instanceof KubeApiError && e.status === 403) {
                states.refused.set(refusedKey, e);
              }
              throw e;
            }
            const route = routes.get(scope);
            if (route) route.push(...served);
            else routes.set(scope, [...served]);
            return scope.cache.items();
          },
          revision: (scope, items) => (known ? state.revision(scope, items, read) : undefined),
        };
      },
    });
  } finally {
    states.endRead(read, () => false);
  }
}

function resourceKey(resource: ApiResource): string {
  return `${resource.group}\u0000${resource.version}\u0000${resource.name}`;
}

function newCache(
  ctx: WatchContext,
  states: WatchStates,
  state: WatchClusterState,
  handle: ClusterHandle,
  resource: ApiResource,
  namespace: string | undefined,
  namespaces: ReadonlySet<string> | undefined,
  metrics: CacheMetrics,
  self: () => WatchScope | undefined,
): { cache: WatchCache; client: KubeClient; cluster: string } {
  const cluster = handle.name;
  const client = new KubeClient(handle.client.connection, {
    signal: ctx.signal,
    stats: handle.client.stats,
  });
  const labels = { integration: ctx.integration, cluster, kind: resource.kind };
  const log = ctx.log;
  const sizes = () => {
    let n = 0;
    for (const s of states.values()) {
      for (const scope of s.caches.values()) {
        if (scope.cluster === cluster && scope.cache.resource.kind === resource.kind)
          n += scope.size;
      }
    }
    metrics.objects.set(labels, n);
  };
  const cache = new WatchCache({
    client,
    resource,
    ...(namespace !== undefined ? { namespace } : {}),
    ...(namespaces ? { namespaces } : {}),
    onEvent: (event) => {
      metrics.events.inc({ ...labels, type: event.type });
      const scope = self();
      if (scope) state.emit(scope, event);
    },
    onRestart: (reason) => metrics.restarts.inc({ ...labels, reason }),
    onSize: (size) => {
      const scope = self();
      if (scope) scope.size = size;
      sizes();
    },
    onError: (message) =>
      log.warn(
        `[${cluster}] watch of ${resource.kind}${namespace ? ` in ${namespace}` : ''}: ${message}`,
      ),
  });
  return { cache, client, cluster };
}

interface CacheMetrics {
  readonly events: Counter<'integration' | 'cluster' | 'kind' | 'type'>;
  readonly restarts: Counter<'integration' | 'cluster' | 'kind' | 'reason'>;
  readonly objects: Gauge<'integration' | 'cluster' | 'kind'>;
}

/** A metric of `registry` by name, made (and registered there) by `make` the first time. */
export function metricOf<M>(registry: Registry, name: string, make: () => M): M {
  return (registry.getSingleMetric(name) as M | undefined) ?? make();
}

function cacheMetrics(registry: Registry): CacheMetrics {
  const registers = [registry];
  return {
    events: metricOf(
      registry,
      'qontract_reconcile_watch_events_total',
      () =>
        new Counter({
          name: 'qontract_reconcile_watch_events_total',
          help: 'Watch events received, by cluster, kind and event type',
          labelNames: ['integration', 'cluster', 'kind', 'type'],
          registers,
        }),
    ),
    restarts: metricOf(
      registry,
      'qontract_reconcile_watch_restarts_total',
      () =>
        new Counter({
          name: 'qontract_reconcile_watch_restarts_total',
          help: 'Watches opened again: closed by the server, failed, or expired (410: re-listed)',
          labelNames: ['integration', 'cluster', 'kind', 'reason'],
          registers,
        }),
    ),
    objects: metricOf(
      registry,
      'qontract_reconcile_watch_cache_objects',
      () =>
        new Gauge({
          name: 'qontract_reconcile_watch_cache_objects',
          help: 'Objects held in the watch caches',
          labelNames: ['integration', 'cluster', 'kind'],
          registers,
        }),
    ),
  };
}
