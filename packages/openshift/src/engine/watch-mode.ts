import { errorMessage, type RunContext, sleep } from '@qontract/core';
import { Counter, Histogram, type Registry } from 'prom-client';
import { apiVersionOf } from '../cluster/api-resources.ts';
import { isClusterProblem } from '../cluster/cluster-map.ts';
import type { KubeObject } from '../cluster/kube-client.ts';
import type { CacheEvent } from '../cluster/watch-cache.ts';
import {
  metricOf,
  type WatchClusterState,
  type WatchScope,
  watchCurrentState,
  watchStatesOf,
} from '../cluster-state/watch.ts';
import type { InventoryItem } from '../inventory/index.ts';
import { reconcileTimeObserver } from '../reconcile-time.ts';
import { admitCurrent } from './admission.ts';
import { executePlan } from './apply.ts';
import type { BundleSource } from './bundle-source.ts';
import type { CurrentStateSpec } from './fetch.ts';
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
import { DEFAULT_FIGHT, type FightPolicy, FightRecord } from './watch-fight.ts';

/** What one desired-state version reconciles: `reconcileResources`' settings without the run. */
export type WatchedState = Omit<ReconcileSettings, 'ctx' | 'readCurrent'>;

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
  const caches = watchStatesOf(ctx);
  const generation = ++caches.generation;
  const metrics = reactionMetrics(ctx.metrics.registry);
  const fight = { ...DEFAULT_FIGHT, ...s.fight };
  const debounceMs = s.debounceMs ?? 50;
  const deadline = performance.now() + s.resyncSeconds * 1000;
  const fieldManager = fieldManagerFor(ctx.integration);

  let bundleVersion = await s.bundle?.version();
  let view: Iteration | undefined;
  let stopped = false;
  /** Events that arrive before the first iteration is done: handled once it is. */
  const early: Array<[WatchScope, CacheEvent]> = [];
  let onEvent: ((scope: WatchScope, event: CacheEvent) => void) | undefined = (scope, event) => {
    early.push([scope, event]);
  };
  /** The cluster states this run read: it hears their caches' events until it ends. */
  const subscriptions = new Map<WatchClusterState, () => void>();
  const subscribe = (state: WatchClusterState) => {
    if (!subscriptions.has(state)) {
      subscriptions.set(
        state,
        state.subscribe((scope, event) => onEvent?.(scope, event)),
      );
    }
  };
  const unsubscribe = () => {
    onEvent = undefined;
    for (const stop of subscriptions.values()) stop();
  };
  /**
   * Full iterations (the first, a new bundle) run alone; reactions to single
   * objects run side by side (at most the run's concurrency), never during one.
   */
  const gate = new IterationGate(s.concurrency ?? 10);

  const iterate = async (state: WatchedState): Promise<Iteration> => {
    const routes = new Map<WatchScope, CurrentStateSpec[]>();
    const result = await reconcileResources({
      ctx,
      ...state,
      readCurrent: (specs) =>
        watchCurrentState(specs, {
          ctx,
          states: caches,
          integration: state.integration,
          clusters: state.clusters,
          errors: ctx.errors,
          log: ctx.log,
          concurrency: state.concurrency,
          routes,
          onState: subscribe,
        }),
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
    unsubscribe();
    caches.release(generation, s.resyncSeconds);
    throw e;
  }
  caches.prune(generation);
  ctx.log.info(
    `watching ${caches.size} kind cache(s) (${caches.objects} objects) for ${Math.round(s.resyncSeconds)}s before the next full resync`,
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
            scheduleIn(o, Math.max(debounceMs, o.fight.backoffUntil - performance.now()));
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
    const { cache } = o.scope;
    if (!item || !view.routes.has(o.scope)) return;
    const state = view.state;
    const object = cache.get(cache.resource.namespaced ? spec.namespace : '', name);
    const current = object ? admitCurrent(object, state) : undefined;
    const desired = item.desired.get(name);
    if (!current && !desired) return;
    const plan = planItem(
      {
        cluster: spec.cluster,
        namespace: spec.namespace,
        kind: spec.kind,
        current: new Map(current ? [[name, current]] : []),
        desired: new Map(desired ? [[name, desired]] : []),
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
      apiVersion: apiVersionOf(cache.resource),
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
    if (done.length > 0) {
      const { fixes, report } = o.fight.fixed(performance.now());
      if (report) {
        metrics.fights.inc({
          integration: ctx.integration,
          cluster: spec.cluster,
          kind: spec.kind,
        });
        const fought = `${spec.kind}/${name} keeps being ${object ? `changed by field manager '${writer ?? 'unknown'}'` : 'deleted'} after our fixes (${fixes} in ${Math.round(fight.windowMs / 1000)}s): backing off (another controller manages it?)`;
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
    // After the reaction time is taken: the Events are a report of the fix, not part of it.
    for (const action of done) {
      await record(action.privileged, {
        type: 'Normal',
        reason: 'DriftReverted',
        message: driftMessage(ctx.integration, action, writer),
      });
    }
  };

  onEvent = (scope, event) => {
    if (!view || stopped) return;
    for (const spec of view.routes.get(scope) ?? []) {
      if (scope.cache.resource.namespaced && spec.namespace !== event.namespace) continue;
      if (spec.resourceNames && !spec.resourceNames.includes(event.name)) continue;
      const key = `${itemKey(spec)}\0${event.name}`;
      let o = objects.get(key);
      if (!o) {
        o = {
          spec,
          name: event.name,
          scope,
          running: false,
          again: false,
          receivedAt: Number.POSITIVE_INFINITY,
          fight: new FightRecord(fight),
        };
        objects.set(key, o);
      }
      o.spec = spec;
      o.scope = scope;
      o.receivedAt = Math.min(o.receivedAt, event.receivedAt);
      scheduleIn(o, Math.max(debounceMs, o.fight.backoffUntil - performance.now()));
    }
  };

  for (const [scope, event] of early.splice(0)) onEvent(scope, event);

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
    unsubscribe();
    for (const o of objects.values()) if (o.timer) clearTimeout(o.timer);
    await gate.idle();
    caches.release(generation, s.resyncSeconds);
  }
}

function shortVersion(v: string | undefined): string {
  return v ? v.slice(0, 12) : 'unknown';
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
  /** The cache it is read from. */
  scope: WatchScope;
  timer?: ReturnType<typeof setTimeout> | undefined;
  running: boolean;
  again: boolean;
  /** When the oldest event not yet handled arrived. */
  receivedAt: number;
  /** Our fixes of it, and how long it waits while it is fought over. */
  readonly fight: FightRecord;
}

/** What a reaction needs of an inventory item: its desired objects and their credentials. */
type ReactionItem = Pick<InventoryItem, 'desired' | 'useAdminToken'>;

interface Iteration {
  readonly state: WatchedState;
  /** The caches the iteration read, and the specs each answered. */
  readonly routes: Map<WatchScope, CurrentStateSpec[]>;
  readonly items: Map<string, ReactionItem>;
}

// --- metrics of the reactions (the caches' own: cluster-state/watch.ts)

interface ReactionMetrics {
  readonly drift: Counter<'integration' | 'cluster' | 'kind'>;
  readonly fights: Counter<'integration' | 'cluster' | 'kind'>;
  readonly latency: Histogram<'integration'>;
}

function reactionMetrics(registry: Registry): ReactionMetrics {
  const registers = [registry];
  return {
    drift: metricOf(
      registry,
      'qontract_reconcile_watch_drift_reverted_total',
      () =>
        new Counter({
          name: 'qontract_reconcile_watch_drift_reverted_total',
          help: 'Objects written back to their desired state after an event',
          labelNames: ['integration', 'cluster', 'kind'],
          registers,
        }),
    ),
    fights: metricOf(
      registry,
      'qontract_reconcile_watch_fights_total',
      () =>
        new Counter({
          name: 'qontract_reconcile_watch_fights_total',
          help: 'Objects found being changed back after our fixes (backed off and reported)',
          labelNames: ['integration', 'cluster', 'kind'],
          registers,
        }),
    ),
    latency: metricOf(
      registry,
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
