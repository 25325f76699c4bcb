import { errorMessage, type Logger, type RunContext, sleep } from '@qontract/core';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { type ApiResource, apiVersionOf, KindNotFoundError } from '../cluster/api-resources.ts';
import {
  apiResourceOf,
  type ClusterHandle,
  isClusterProblem,
  type KeptClusters,
} from '../cluster/cluster-map.ts';
import { keepClustersBetweenRuns } from '../cluster/for-run.ts';
import { credentialId, KubeApiError, KubeClient, type KubeObject } from '../cluster/kube-client.ts';
import { namespacesKey } from '../cluster/listed-objects.ts';
import { type CacheEvent, WatchCache } from '../cluster/watch-cache.ts';
import type { InventoryItem } from '../inventory/index.ts';
import { reconcileTimeObserver } from '../reconcile-time.ts';
import { OpenshiftResource } from '../resource/openshift-resource.ts';
import { pyDeepCopy } from '../resource/py-values.ts';
import { admitCurrent } from './admission.ts';
import { executePlan } from './apply.ts';
import type { BundleSource } from './bundle-source.ts';
import type { CurrentStateSpec, FetchedState } from './fetch.ts';
import { planItem } from './plan.ts';
import type { PlannedAction } from './plan-types.ts';
import {
  fieldManagerFor,
  type ReconcileResult,
  type ReconcileSettings,
  reconcileResources,
} from './reconcile.ts';
import {
  driftMessage,
  type EventTarget,
  recordWatchEvent,
  type WatchEvent,
} from './watch-events.ts';

/** What one desired-state version reconciles: `reconcileResources`' settings without the run. */
export type WatchedState = Omit<ReconcileSettings, 'ctx' | 'readCurrent'>;

/** When an object keeps being changed back after our fixes. */
interface FightPolicy {
  /** This many fixes of one object within `windowMs` make a fight. */
  readonly threshold: number;
  readonly windowMs: number;
  /** The first wait of a fight, doubled with every further fix, up to `maxBackoffMs`. */
  readonly backoffMs: number;
  readonly maxBackoffMs: number;
}

export interface WatchModeSettings {
  readonly ctx: RunContext;
  /** The desired state of the bundle `ctx` reads (clusters, specs, desired); undefined: nothing to do. */
  readonly prepare: (ctx: RunContext) => Promise<WatchedState | undefined>;
  /** How long this run reacts to events; the next run (the loop's) is the full resync. */
  readonly resyncSeconds: number;
  /** Changes of the desired state: polled every `bundlePollMs`. */
  readonly bundle?: BundleSource;
  readonly bundlePollMs?: number;
  /** Events of one object within this time are handled once. Default 50 ms. */
  readonly debounceMs?: number;
  readonly fight?: Partial<FightPolicy>;
  /** Reactions in flight at once. Default: the state's `concurrency` (`--thread-pool-size`), else 10. */
  readonly concurrency?: number;
  /**
   * After each full iteration (the first, a new bundle), what the integration
   * does with its result besides the cluster (openshift-serviceaccount-tokens
   * writes the tokens to Vault).
   */
  readonly afterIteration?: (result: ReconcileResult) => Promise<void>;
}

const DEFAULT_FIGHT: FightPolicy = {
  threshold: 3,
  windowMs: 60_000,
  backoffMs: 1_000,
  maxBackoffMs: 300_000,
};

/**
 * Watch mode (`--watch`): the engine as an operator. The run's first
 * iteration is the ordinary full reconcile, its current state read from
 * list+watch caches that outlive the run (one per cluster, credential and
 * managed kind; the next run, the periodic full resync, lists nothing). Then,
 * until `resyncSeconds` pass or the stop signal: an event on a managed object
 * re-plans that object alone against the desired state and applies the fix; a
 * new app-interface bundle recomputes the desired state and reconciles it from
 * the caches. Every rule of the full run holds: unannotated objects are left
 * alone unless taking over, an error registered in the run stops deletions
 * for the rest of it (the next clean full iteration allows them again),
 * dry-run only logs, and an object that keeps being changed back is backed
 * off exponentially and reported once with the field manager that changed it.
 * Each fix after an event and each fight is also a Kubernetes Event on the
 * object (`watch-events.ts`), for `oc get events`.
 */
export async function runWatchMode(s: WatchModeSettings): Promise<void> {
  const { ctx } = s;
  const caches = cachesFor(ctx);
  const generation = ++caches.generation;
  const metrics = watchMetrics(ctx.metrics.registry);
  const fight = { ...DEFAULT_FIGHT, ...s.fight };
  const debounceMs = s.debounceMs ?? 50;
  const deadline = performance.now() + s.resyncSeconds * 1000;
  const fieldManager = fieldManagerFor(ctx.integration);

  let bundleVersion = await s.bundle?.version();
  let view: Iteration | undefined;
  let stopped = false;
  /** Events that arrive before the first iteration is done: handled once it is. */
  const early: Array<[CacheEntry, CacheEvent]> = [];
  caches.onEvent = (entry, event) => {
    early.push([entry, event]);
  };
  /**
   * Full iterations (the first, a new bundle) run alone; reactions to single
   * objects run side by side (at most the run's concurrency), never during one.
   */
  const gate = new IterationGate(s.concurrency ?? 10);

  const iterate = async (state: WatchedState): Promise<Iteration> => {
    const routes = new Map<string, Route>();
    const result = await reconcileResources({
      ctx,
      ...state,
      readCurrent: (specs) => readFromCaches(specs, state, ctx, caches, routes, metrics),
    });
    await s.afterIteration?.(result);
    // A reaction reads the object from its cache: the iteration's current objects are not kept.
    const items = new Map<string, ReactionItem>();
    for (const { cluster, namespace, kind, desired, useAdminToken } of result.inventory.items()) {
      items.set(itemKey({ cluster, namespace, kind }), { desired, useAdminToken });
    }
    return { state, routes, items };
  };

  try {
    const first = await s.prepare(ctx);
    if (first) {
      gate.limit = Math.max(1, s.concurrency ?? first.concurrency ?? 10);
      view = await gate.exclusive(() => iterate(first));
    }
  } catch (e) {
    caches.onEvent = undefined;
    caches.release(generation, s.resyncSeconds);
    throw e;
  }
  caches.prune(generation);
  let cachedObjects = 0;
  for (const e of caches.entries.values()) cachedObjects += e.cache.size;
  ctx.log.info(
    `watching ${caches.size} kind cache(s) (${cachedObjects} objects) for ${Math.round(s.resyncSeconds)}s before the next full resync`,
  );

  // --- reactions to events on single objects
  const objects = new Map<string, ObjectState>();
  const scheduleIn = (o: ObjectState, ms: number) => {
    if (o.timer || o.running) {
      if (o.running) o.again = true;
      return;
    }
    o.timer = setTimeout(() => {
      o.timer = undefined;
      o.running = true;
      gate
        .shared(() => react(o))
        .catch((e: unknown) =>
          ctx.errors.register(`${o.spec.cluster}/${o.spec.namespace}`, errorMessage(e)),
        )
        .finally(() => {
          o.running = false;
          if (o.again && !stopped) {
            o.again = false;
            scheduleIn(o, Math.max(debounceMs, o.backoffUntil - performance.now()));
          }
        });
    }, ms);
  };

  const react = async (o: ObjectState): Promise<void> => {
    if (!view || stopped) return;
    const { spec, name } = o;
    const receivedAt = o.receivedAt;
    o.receivedAt = Number.POSITIVE_INFINITY;
    const item = view.items.get(itemKey(spec));
    const route = view.routes.get(o.routeKey);
    if (!item || !route) return;
    const state = view.state;
    const object = route.entry.cache.get(
      route.entry.cache.resource.namespaced ? spec.namespace : '',
      name,
    );
    const current = object ? admitCurrent(object, state) : undefined;
    const desired = item.desired.get(name);
    if (!current && !desired) return;
    const plan = planItem(
      {
        cluster: spec.cluster,
        namespace: spec.namespace,
        kind: spec.kind,
        current: new Map(current ? [[name, current]] : []),
        desired: new Map(desired ? [[name, copyOf(desired)]] : []),
        useAdminToken: item.useAdminToken,
      },
      {
        takeOver: state.takeOver ?? false,
        caller: state.caller,
        allCallers: state.allCallers,
        clusterHasError: (c) => ctx.errors.hasClusterError(c),
        renderDiff: Boolean(ctx.globals.diff),
      },
    );
    for (const e of plan.errors) ctx.errors.register(e.scope, e.message);
    if (plan.actions.length === 0) return;
    const writer = object ? lastWriter(object, fieldManager) : undefined;
    const target: EventTarget = {
      namespace: spec.namespace,
      kind: spec.kind,
      name,
      object,
      apiVersion: apiVersionOf(route.entry.cache.resource),
    };
    const record = async (privileged: boolean, event: WatchEvent) => {
      const handle = state.clusters.get(spec.cluster, privileged);
      // A stopping run writes nothing more (the request would only fail with the abort).
      if (isClusterProblem(handle) || ctx.signal.aborted) return;
      await recordWatchEvent(handle.client, spec.cluster, ctx.integration, target, event, ctx.log);
    };
    const results = await executePlan(plan.actions, {
      onWritten: await reconcileTimeObserver(ctx),
      dryRun: ctx.dryRun,
      clusters: state.clusters,
      log: ctx.log,
      errors: ctx.errors,
      report: ctx.report,
      fieldManager,
      concurrency: 1,
      signal: ctx.signal,
      recyclePods: state.recyclePods ?? true,
      showDiff: Boolean(ctx.globals.diff),
      ...(state.waitForReady ? { waitForReady: state.waitForReady } : {}),
    });
    const done: PlannedAction[] = results.filter((r) => r.outcome === 'done').map((r) => r.action);
    if (done.length > 0) {
      metrics.drift.inc({ integration: ctx.integration, cluster: spec.cluster, kind: spec.kind });
      if (Number.isFinite(receivedAt)) {
        metrics.latency.observe(
          { integration: ctx.integration },
          (performance.now() - receivedAt) / 1000,
        );
      }
    }
    // Only a fix counts toward a fight: a delete the deletion gate held back wrote nothing.
    const now = performance.now();
    if (done.length > 0) {
      o.fixes = o.fixes.filter((t) => now - t < fight.windowMs);
      if (o.fixes.length === 0) o.reported = false;
      o.fixes.push(now);
      const beyond = o.fixes.length - fight.threshold;
      if (beyond >= 0) {
        o.backoffUntil = now + Math.min(fight.maxBackoffMs, fight.backoffMs * 2 ** beyond);
        if (!o.reported) {
          o.reported = true;
          metrics.fights.inc({
            integration: ctx.integration,
            cluster: spec.cluster,
            kind: spec.kind,
          });
          const fought = `${spec.kind}/${name} keeps being ${object ? `changed by field manager '${writer ?? 'unknown'}'` : 'deleted'} after our fixes (${o.fixes.length} in ${Math.round(fight.windowMs / 1000)}s): backing off (another controller manages it?)`;
          ctx.errors.register(
            `${spec.cluster}/${spec.namespace}`,
            `[${spec.cluster}/${spec.namespace}] ${fought}`,
          );
          await record(item.useAdminToken.get(name) ?? false, {
            type: 'Warning',
            reason: 'FightDetected',
            message: `${ctx.integration}: ${fought}`,
          });
        }
      }
    }
    // After the reaction time is taken: the Events are a report of the fix, not part of it.
    for (const action of done) {
      await record(action.privileged, {
        type: 'Normal',
        reason: 'DriftReverted',
        message: driftMessage(ctx.integration, action, writer),
      });
    }
  };

  caches.onEvent = (entry, event) => {
    if (!view || stopped) return;
    for (const [routeKey, route] of view.routes) {
      if (route.entry !== entry) continue;
      for (const spec of route.specs) {
        if (entry.cache.resource.namespaced && spec.namespace !== event.namespace) continue;
        if (spec.resourceNames && !spec.resourceNames.includes(event.name)) continue;
        const key = `${itemKey(spec)}\0${event.name}`;
        let o = objects.get(key);
        if (!o) {
          o = {
            spec,
            name: event.name,
            routeKey,
            running: false,
            again: false,
            receivedAt: Number.POSITIVE_INFINITY,
            fixes: [],
            backoffUntil: 0,
            reported: false,
          };
          objects.set(key, o);
        }
        o.spec = spec;
        o.routeKey = routeKey;
        o.receivedAt = Math.min(o.receivedAt, event.receivedAt);
        scheduleIn(o, Math.max(debounceMs, o.backoffUntil - performance.now()));
      }
    }
  };

  for (const [entry, event] of early.splice(0)) caches.onEvent?.(entry, event);

  // --- new bundles
  const pollSecs = Number(ctx.env.vars.WATCH_BUNDLE_POLL_SECS);
  const pollMs = s.bundlePollMs ?? (pollSecs > 0 ? pollSecs * 1000 : 5_000);
  // Reading the version of a large local directory stats every file: polled no more than
  // 5 % of the time.
  let wait = pollMs;
  const poll = async () => {
    while (!stopped && !ctx.signal.aborted && s.bundle) {
      await sleep(Math.min(wait, Math.max(0, deadline - performance.now())), ctx.signal);
      if (stopped || ctx.signal.aborted || performance.now() >= deadline) return;
      const asked = performance.now();
      const version = await s.bundle.version();
      wait = Math.max(pollMs, 20 * (performance.now() - asked));
      if (version === undefined || version === bundleVersion) continue;
      ctx.log.info(
        `app-interface changed (${shortVersion(bundleVersion)} -> ${shortVersion(version)}): reconciling the new desired state from the caches`,
      );
      bundleVersion = version;
      try {
        await gate.exclusive(async () => {
          const opened = await s.bundle!.open(ctx);
          try {
            const next = await s.prepare(opened.ctx);
            if (next) view = await iterate({ ...next, desired: await next.desired });
          } finally {
            await opened.close();
          }
        });
      } catch (e) {
        ctx.errors.register(
          ctx.integration,
          `reconciling the new bundle failed: ${errorMessage(e)}`,
        );
      }
    }
  };

  try {
    await Promise.all([
      poll(),
      sleep(Math.max(0, deadline - performance.now()), ctx.signal).then(() => {
        stopped = true;
      }),
    ]);
  } finally {
    stopped = true;
    caches.onEvent = undefined;
    for (const o of objects.values()) if (o.timer) clearTimeout(o.timer);
    await gate.idle();
    caches.release(generation, s.resyncSeconds);
  }
}

function shortVersion(v: string | undefined): string {
  return v ? v.slice(0, 12) : 'unknown';
}

/** The desired body is changed by planning (restart annotations): each plan gets its own copy. */
function copyOf(desired: OpenshiftResource): OpenshiftResource {
  return new OpenshiftResource(
    pyDeepCopy(desired.body),
    desired.integration,
    desired.integrationVersion,
    { validate: false, callerName: desired.callerName },
  );
}

/** The manager that wrote the object last, other than us (managedFields), for fight reports. */
function lastWriter(object: KubeObject, ours: string): string | undefined {
  const entries = (object.metadata?.managedFields ?? []) as Array<{
    manager?: string;
    time?: string;
  }>;
  let best: { manager?: string; time?: string } | undefined;
  for (const e of entries) {
    if (!e.manager || e.manager === ours) continue;
    if (!best || (e.time ?? '') >= (best.time ?? '')) best = e;
  }
  return best?.manager;
}

function itemKey(x: { cluster: string; namespace: string; kind: string }): string {
  return `${x.cluster}\0${x.namespace}\0${x.kind}`;
}

/** A readers-writer gate: `exclusive` tasks wait for the shared ones and hold new ones back. */
class IterationGate {
  #exclusive: Promise<unknown> = Promise.resolve();
  readonly #shared = new Set<Promise<unknown>>();
  /** Shared tasks at once. */
  limit: number;
  #running = 0;
  readonly #waiting: Array<() => void> = [];

  constructor(limit: number) {
    this.limit = limit;
  }

  exclusive<T>(task: () => Promise<T>): Promise<T> {
    const run = this.#exclusive.then(async () => {
      await Promise.allSettled([...this.#shared]);
      return task();
    });
    this.#exclusive = run.catch(() => {});
    return run;
  }

  shared<T>(task: () => Promise<T>): Promise<T> {
    const run = (async () => {
      await this.#exclusive;
      if (this.#running >= this.limit) {
        await new Promise<void>((resolve) => this.#waiting.push(resolve));
      }
      this.#running += 1;
      try {
        return await task();
      } finally {
        this.#running -= 1;
        this.#waiting.shift()?.();
      }
    })();
    const tracked = run.catch(() => {});
    this.#shared.add(tracked);
    void tracked.finally(() => this.#shared.delete(tracked));
    return run;
  }

  async idle(): Promise<void> {
    await this.#exclusive;
    await Promise.allSettled([...this.#shared]);
  }
}

interface ObjectState {
  spec: CurrentStateSpec;
  readonly name: string;
  routeKey: string;
  timer?: ReturnType<typeof setTimeout> | undefined;
  running: boolean;
  again: boolean;
  /** When the oldest event not yet handled arrived. */
  receivedAt: number;
  /** When we fixed it, within the fight window. */
  fixes: number[];
  backoffUntil: number;
  reported: boolean;
}

/** What a reaction needs of an inventory item: its desired objects and their credentials. */
type ReactionItem = Pick<InventoryItem, 'desired' | 'useAdminToken'>;

interface Iteration {
  readonly state: WatchedState;
  /** Cache entry key → the specs it serves. */
  readonly routes: Map<string, Route>;
  readonly items: Map<string, ReactionItem>;
}

interface Route {
  readonly entry: CacheEntry;
  readonly specs: CurrentStateSpec[];
}

// --- the caches of a process

interface CacheEntry {
  readonly key: string;
  readonly cluster: string;
  readonly cache: WatchCache;
  readonly client: KubeClient;
  readonly started: Promise<void>;
  size: number;
  generation: number;
}

/** The caches of one stop signal (one process's loop): they outlive a run and close with the signal. */
class WatchCaches {
  readonly entries = new Map<string, CacheEntry>();
  /**
   * The runs' cluster clients, kept too: a period borrows the last one's
   * connections and discovery instead of opening and repeating them.
   */
  readonly clusters: KeptClusters;
  /** Cluster-wide caches whose list was refused (403): per namespace from then on, for the process. */
  readonly refused = new Set<string>();
  generation = 0;
  onEvent: ((entry: CacheEntry, event: CacheEvent) => void) | undefined;
  #reaper: ReturnType<typeof setTimeout> | undefined;

  constructor(clusters: KeptClusters) {
    this.clusters = clusters;
  }

  get size(): number {
    return this.entries.size;
  }

  acquire(
    key: string,
    create: () => { cache: WatchCache; client: KubeClient; cluster: string },
  ): CacheEntry {
    const existing = this.entries.get(key);
    if (existing) {
      existing.generation = this.generation;
      return existing;
    }
    const made = create();
    const entry: CacheEntry = {
      key,
      ...made,
      started: made.cache.start(),
      size: 0,
      generation: this.generation,
    };
    entry.started.catch(() => this.drop(key));
    this.entries.set(key, entry);
    return entry;
  }

  drop(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    entry.cache.close();
    void entry.client.close();
  }

  /** Closes the caches the current desired state no longer needs. */
  prune(generation: number): void {
    if (this.#reaper) clearTimeout(this.#reaper);
    for (const [key, entry] of this.entries) if (entry.generation < generation) this.drop(key);
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
    for (const key of [...this.entries.keys()]) this.drop(key);
    this.clusters.closeAll();
  }
}

/** The watch caches of the loop's runs (with WATCH=true, each run lasts SLEEP_DURATION_SECS). */
function cachesFor(ctx: RunContext): WatchCaches {
  return ctx.loop.keep(
    'watch:caches',
    () => new WatchCaches(keepClustersBetweenRuns(ctx.loop)),
    (caches) => caches.closeAll(),
  );
}

/**
 * The current state of `specs` from the caches, starting the ones missing
 * (a list each): one cluster-wide cache per (cluster, credential, kind) when
 * three or more namespaces want the kind (per namespace when the cluster-wide
 * list is refused), one per namespace otherwise. Failures are registered as
 * the cluster's error, as a failed list is.
 */
async function readFromCaches(
  specs: readonly CurrentStateSpec[],
  state: WatchedState,
  ctx: RunContext,
  caches: WatchCaches,
  routes: Map<string, Route>,
  metrics: WatchMetrics,
): Promise<FetchedState[]> {
  const groups = new Map<string, CurrentStateSpec[]>();
  for (const spec of specs) {
    const key = `${spec.cluster}\0${spec.privileged}\0${spec.kind}`;
    groups.set(key, [...(groups.get(key) ?? []), spec]);
  }
  const results: FetchedState[] = [];

  const readGroup = async (group: CurrentStateSpec[]) => {
    const first = group[0]!;
    const handle = state.clusters.get(first.cluster, first.privileged);
    if (isClusterProblem(handle)) return;
    let resource: ApiResource;
    try {
      resource = await apiResourceOf(handle, first.kind);
    } catch (e) {
      if (e instanceof KindNotFoundError) {
        ctx.log.warn(`[${first.cluster}] cluster has no API resource ${first.kind}.`);
        return;
      }
      throw e;
    }
    const open = (namespace: string | undefined, namespaces?: ReadonlySet<string>) =>
      cacheFor(
        caches,
        ctx,
        state.integration,
        first.cluster,
        handle,
        resource,
        namespace,
        metrics,
        namespaces,
      );
    const serve = (entry: CacheEntry, served: CurrentStateSpec[]) => {
      const route = routes.get(entry.key) ?? { entry, specs: [] };
      route.specs.push(...served);
      routes.set(entry.key, route);
      for (const spec of served) {
        let items = resource.namespaced ? entry.cache.items(spec.namespace) : entry.cache.items();
        if (spec.resourceNames) {
          const names = new Set(spec.resourceNames);
          items = items.filter((i) => names.has(i.metadata?.name ?? ''));
        }
        results.push({ spec, items });
      }
    };
    const failed = (served: CurrentStateSpec[], e: unknown) => {
      for (const spec of served) {
        ctx.errors.register(
          spec.cluster,
          `[${spec.cluster}/${spec.namespace}] ${errorMessage(e)}`,
          {
            clusterWide: true,
          },
        );
      }
    };
    const wide = cacheKey(state.integration, first.cluster, handle, resource, undefined);
    if (!resource.namespaced || (group.length >= 3 && !caches.refused.has(wide))) {
      // A namespaced kind's cache keeps only the namespaces the group reads.
      const entry = open(
        undefined,
        resource.namespaced ? new Set(group.map((s) => s.namespace)) : undefined,
      );
      try {
        await entry.started;
        serve(entry, group);
        return;
      } catch (e) {
        if (!(resource.namespaced && e instanceof KubeApiError && e.status === 403)) {
          failed(group, e);
          return;
        }
        caches.refused.add(wide);
        ctx.log.debug(
          `[${first.cluster}] cluster-wide list of ${first.kind} refused; watching per namespace`,
        );
      }
    }
    const byNamespace = new Map<string, CurrentStateSpec[]>();
    for (const spec of group)
      byNamespace.set(spec.namespace, [...(byNamespace.get(spec.namespace) ?? []), spec]);
    await Promise.all(
      [...byNamespace].map(async ([namespace, served]) => {
        const entry = open(namespace);
        try {
          await entry.started;
          serve(entry, served);
        } catch (e) {
          failed(served, e);
        }
      }),
    );
  };
  await Promise.all([...groups.values()].map(readGroup));
  return results;
}

/**
 * One cache per integration, cluster, credential, resource and namespace (or
 * cluster-wide, for the set of namespaces it keeps: another set, as when a
 * namespace is added, is another cache, listed afresh).
 */
function cacheKey(
  integration: string,
  cluster: string,
  handle: ClusterHandle,
  resource: ApiResource,
  namespace: string | undefined,
  namespaces?: ReadonlySet<string>,
): string {
  const connection = handle.client.connection;
  return [
    integration,
    cluster,
    connection.server,
    credentialId(connection),
    resource.group,
    resource.version,
    resource.name,
    namespace ?? '',
    ...namespacesKey(namespaces),
  ].join('\0');
}

function cacheFor(
  caches: WatchCaches,
  ctx: RunContext,
  integration: string,
  cluster: string,
  handle: ClusterHandle,
  resource: ApiResource,
  namespace: string | undefined,
  metrics: WatchMetrics,
  namespaces?: ReadonlySet<string>,
): CacheEntry {
  const connection = handle.client.connection;
  const key = cacheKey(integration, cluster, handle, resource, namespace, namespaces);
  return caches.acquire(key, () => {
    const client = new KubeClient(connection, { signal: ctx.signal, stats: handle.client.stats });
    const labels = { integration: ctx.integration, cluster, kind: resource.kind };
    const log: Logger = ctx.log;
    const sizes = () => {
      let n = 0;
      for (const e of caches.entries.values()) {
        if (e.cluster === cluster && e.cache.resource.kind === resource.kind) n += e.size;
      }
      metrics.objects.set(labels, n);
    };
    let entry: CacheEntry | undefined;
    const cache = new WatchCache({
      client,
      resource,
      ...(namespace !== undefined ? { namespace } : {}),
      ...(namespaces ? { namespaces } : {}),
      onEvent: (event) => {
        metrics.events.inc({ ...labels, type: event.type });
        entry ??= caches.entries.get(key);
        if (entry) caches.onEvent?.(entry, event);
      },
      onRestart: (reason) => metrics.restarts.inc({ ...labels, reason }),
      onSize: (size) => {
        entry ??= caches.entries.get(key);
        if (entry) entry.size = size;
        sizes();
      },
      onError: (message) =>
        log.warn(
          `[${cluster}] watch of ${resource.kind}${namespace ? ` in ${namespace}` : ''}: ${message}`,
        ),
    });
    return { cache, client, cluster };
  });
}

// --- metrics

interface WatchMetrics {
  readonly events: Counter<'integration' | 'cluster' | 'kind' | 'type'>;
  readonly restarts: Counter<'integration' | 'cluster' | 'kind' | 'reason'>;
  readonly objects: Gauge<'integration' | 'cluster' | 'kind'>;
  readonly drift: Counter<'integration' | 'cluster' | 'kind'>;
  readonly fights: Counter<'integration' | 'cluster' | 'kind'>;
  readonly latency: Histogram<'integration'>;
}

function watchMetrics(registry: Registry): WatchMetrics {
  const get = <M>(name: string, make: () => M): M =>
    (registry.getSingleMetric(name) as M | undefined) ?? make();
  const registers = [registry];
  return {
    events: get(
      'qontract_reconcile_watch_events_total',
      () =>
        new Counter({
          name: 'qontract_reconcile_watch_events_total',
          help: 'Watch events received, by cluster, kind and event type',
          labelNames: ['integration', 'cluster', 'kind', 'type'],
          registers,
        }),
    ),
    restarts: get(
      'qontract_reconcile_watch_restarts_total',
      () =>
        new Counter({
          name: 'qontract_reconcile_watch_restarts_total',
          help: 'Watches opened again: closed by the server, failed, or expired (410: re-listed)',
          labelNames: ['integration', 'cluster', 'kind', 'reason'],
          registers,
        }),
    ),
    objects: get(
      'qontract_reconcile_watch_cache_objects',
      () =>
        new Gauge({
          name: 'qontract_reconcile_watch_cache_objects',
          help: 'Objects held in the watch caches',
          labelNames: ['integration', 'cluster', 'kind'],
          registers,
        }),
    ),
    drift: get(
      'qontract_reconcile_watch_drift_reverted_total',
      () =>
        new Counter({
          name: 'qontract_reconcile_watch_drift_reverted_total',
          help: 'Objects written back to their desired state after an event',
          labelNames: ['integration', 'cluster', 'kind'],
          registers,
        }),
    ),
    fights: get(
      'qontract_reconcile_watch_fights_total',
      () =>
        new Counter({
          name: 'qontract_reconcile_watch_fights_total',
          help: 'Objects found being changed back after our fixes (backed off and reported)',
          labelNames: ['integration', 'cluster', 'kind'],
          registers,
        }),
    ),
    latency: get(
      'qontract_reconcile_watch_reaction_seconds',
      () =>
        new Histogram({
          name: 'qontract_reconcile_watch_reaction_seconds',
          help: 'From a watch event to the fix applied',
          labelNames: ['integration'],
          buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30],
          registers,
        }),
    ),
  };
}
