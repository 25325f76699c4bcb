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
  type WatchStates,
  watchCurrentState,
  watchStatesOf,
} from '../cluster-state/watch.ts';
import type { InventoryItem } from '../inventory/index.ts';
import { reconcileTimeObserver } from '../reconcile-time.ts';
import { admitCurrent } from './admission.ts';
import { type ExecuteSettings, executePlan } from './apply.ts';
import type { BundleSource } from './bundle-source.ts';
import type { CurrentStateSpec } from './fetch.ts';
import { type ItemPlan, planItem } from './plan.ts';
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
import { DEFAULT_FIGHT, type FightPolicy, FightRecord, type FixCount } from './watch-fight.ts';

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
  const deadline = performance.now() + s.resyncSeconds * 1000;
  const bundleVersion = await s.bundle?.version();
  const events = new CacheEvents();
  /**
   * Full iterations (the first, a new bundle) run alone; reactions to single
   * objects run side by side (at most the run's concurrency), never during one.
   */
  const gate = new IterationGate(s.concurrency ?? 10);
  const iterate = (state: WatchedState) => iteration(s, state, caches, events);

  let first: Iteration | undefined;
  try {
    const state = await s.prepare(ctx);
    if (state) {
      gate.limit = Math.max(1, s.concurrency ?? state.concurrency ?? 10);
      first = await gate.exclusive(() => iterate(state));
    }
  } catch (e) {
    events.close();
    caches.release(generation, s.resyncSeconds);
    throw e;
  }
  caches.prune(generation);
  ctx.log.info(
    `watching ${caches.size} kind cache(s) (${caches.objects} objects) for ${Math.round(s.resyncSeconds)}s before the next full resync`,
  );

  const reactions = new Reactions(first, {
    ctx,
    gate,
    metrics,
    fight: { ...DEFAULT_FIGHT, ...s.fight },
    debounceMs: s.debounceMs ?? 50,
    fieldManager: fieldManagerFor(ctx.integration),
  });
  events.deliver((scope, event) => reactions.onEvent(scope, event));
  try {
    await Promise.all([
      s.bundle &&
        pollBundles(s, s.bundle, {
          version: bundleVersion,
          deadline,
          gate,
          stopped: () => reactions.stopped,
          reiterate: async (state) => {
            reactions.view = await iterate(state);
          },
        }),
      sleep(Math.max(0, deadline - performance.now()), ctx.signal).then(() => reactions.stop()),
    ]);
  } finally {
    reactions.stop();
    events.close();
    await gate.idle();
    caches.release(generation, s.resyncSeconds);
  }
}

/**
 * A full iteration: `reconcileResources` reading the current state from the
 * watch caches (subscribing to each cluster state it reads), then what a
 * reaction needs of it.
 */
async function iteration(
  s: WatchModeSettings,
  state: WatchedState,
  caches: WatchStates,
  events: CacheEvents,
): Promise<Iteration> {
  const { ctx } = s;
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
        onState: (clusterState) => events.subscribe(clusterState),
      }),
  });
  await s.afterIteration?.(result);
  // A reaction reads the object from its cache: the iteration's current objects are not kept.
  const items = new Map<string, ReactionItem>();
  for (const { cluster, namespace, kind, desired, useAdminToken } of result.inventory.items()) {
    items.set(itemKey({ cluster, namespace, kind }), { desired, useAdminToken });
  }
  return { state, routes, items };
}

/**
 * The events of the caches of the cluster states a run read. Those that
 * arrive before the run can react (during its first iteration) are held and
 * handed on once it can; after `close`, none.
 */
class CacheEvents {
  readonly #subscriptions = new Map<WatchClusterState, () => void>();
  readonly #early: Array<[WatchScope, CacheEvent]> = [];
  #handler: ((scope: WatchScope, event: CacheEvent) => void) | undefined;
  #closed = false;

  subscribe(state: WatchClusterState): void {
    if (this.#subscriptions.has(state)) return;
    this.#subscriptions.set(
      state,
      state.subscribe((scope, event) => {
        if (this.#closed) return;
        if (this.#handler) this.#handler(scope, event);
        else this.#early.push([scope, event]);
      }),
    );
  }

  deliver(handler: (scope: WatchScope, event: CacheEvent) => void): void {
    this.#handler = handler;
    for (const [scope, event] of this.#early.splice(0)) handler(scope, event);
  }

  close(): void {
    this.#closed = true;
    for (const stop of this.#subscriptions.values()) stop();
  }
}

/** What reactions to single objects share for the run. */
interface ReactionSettings {
  readonly ctx: RunContext;
  readonly gate: IterationGate;
  readonly metrics: ReactionMetrics;
  readonly fight: FightPolicy;
  /** Events of one object within this time are handled once. */
  readonly debounceMs: number;
  readonly fieldManager: string;
}

/**
 * Reactions to events on single objects: each object's event, debounced (or
 * held back while it is fought over), re-plans that object against the last
 * iteration's desired state and applies the fix; one reaction per object at
 * a time, a later event runs it again.
 */
class Reactions {
  /** The last full iteration: the desired state reactions plan against, the caches they follow. */
  view: Iteration | undefined;
  readonly #s: ReactionSettings;
  readonly #objects = new Map<string, ObjectState>();
  #stopped = false;

  constructor(view: Iteration | undefined, settings: ReactionSettings) {
    this.view = view;
    this.#s = settings;
  }

  get stopped(): boolean {
    return this.#stopped;
  }

  /** No reaction starts after this (those under way end; `IterationGate.idle` waits for them). */
  stop(): void {
    this.#stopped = true;
    for (const o of this.#objects.values()) if (o.timer) clearTimeout(o.timer);
  }

  /** An event of a cache: every object spec of the iteration it answers is reacted on. */
  onEvent(scope: WatchScope, event: CacheEvent): void {
    if (!this.view || this.#stopped) return;
    for (const spec of this.view.routes.get(scope) ?? []) {
      if (scope.cache.resource.namespaced && spec.namespace !== event.namespace) continue;
      if (spec.resourceNames && !spec.resourceNames.includes(event.name)) continue;
      const key = `${itemKey(spec)}\0${event.name}`;
      let o = this.#objects.get(key);
      if (!o) {
        o = {
          spec,
          name: event.name,
          scope,
          running: false,
          again: false,
          receivedAt: Number.POSITIVE_INFINITY,
          fight: new FightRecord(this.#s.fight),
        };
        this.#objects.set(key, o);
      }
      o.spec = spec;
      o.scope = scope;
      o.receivedAt = Math.min(o.receivedAt, event.receivedAt);
      this.#schedule(o);
    }
  }

  /** After the debounce or the object's backoff; while it runs, once more after it. */
  #schedule(o: ObjectState): void {
    if (o.timer || o.running) {
      if (o.running) o.again = true;
      return;
    }
    const { ctx, gate, debounceMs } = this.#s;
    o.timer = setTimeout(
      () => {
        o.timer = undefined;
        o.running = true;
        gate
          .shared(() => this.#react(o))
          .catch((e: unknown) =>
            ctx.errors.register(`${o.spec.cluster}/${o.spec.namespace}`, errorMessage(e)),
          )
          .finally(() => {
            o.running = false;
            if (o.again && !this.#stopped) {
              o.again = false;
              this.#schedule(o);
            }
          });
      },
      Math.max(debounceMs, o.fight.backoffUntil - performance.now()),
    );
  }

  /** The object from its cache → `admitCurrent` → `planItem` → `executePlan` → metrics, fight, Events. */
  async #react(o: ObjectState): Promise<void> {
    const view = this.view;
    if (!view || this.#stopped) return;
    const { ctx, fieldManager } = this.#s;
    const { spec, name, scope } = o;
    const receivedAt = o.receivedAt;
    o.receivedAt = Number.POSITIVE_INFINITY;
    const item = view.items.get(itemKey(spec));
    if (!item || !view.routes.has(scope)) return;
    const { state } = view;
    const { cache } = scope;
    const object = cache.get(cache.resource.namespaced ? spec.namespace : '', name);
    const plan = planReaction(ctx, state, item, spec, name, object);
    if (!plan) return;
    for (const e of plan.errors) ctx.errors.register(e.scope, e.message);
    if (plan.actions.length === 0) return;
    const writer = object ? lastWriter(object, fieldManager) : undefined;
    const record = eventRecorder(ctx, state, spec, {
      namespace: spec.namespace,
      kind: spec.kind,
      name,
      object,
      apiVersion: apiVersionOf(cache.resource),
    });
    const results = await executePlan(plan.actions, await applySettings(ctx, state, fieldManager));
    const done: PlannedAction[] = results.filter((r) => r.outcome === 'done').map((r) => r.action);
    // Only a fix counts toward a fight: a delete the deletion gate held back wrote nothing.
    if (done.length > 0) {
      const fought = this.#fixed(o, spec, receivedAt);
      if (fought) {
        const message = `${spec.kind}/${name} keeps being ${object ? `changed by field manager '${writer ?? 'unknown'}'` : 'deleted'} after our fixes (${fought.fixes} in ${Math.round(this.#s.fight.windowMs / 1000)}s): backing off (another controller manages it?)`;
        ctx.errors.register(
          `${spec.cluster}/${spec.namespace}`,
          `[${spec.cluster}/${spec.namespace}] ${message}`,
        );
        await record(item.useAdminToken.get(name) ?? false, {
          type: 'Warning',
          reason: 'FightDetected',
          message: `${ctx.integration}: ${message}`,
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
  }

  /** A fix: the metrics, and the fight accounting; the count when the fight is to be reported. */
  #fixed(o: ObjectState, spec: CurrentStateSpec, receivedAt: number): FixCount | undefined {
    const { ctx, metrics } = this.#s;
    const labels = { integration: ctx.integration, cluster: spec.cluster, kind: spec.kind };
    metrics.drift.inc(labels);
    if (Number.isFinite(receivedAt)) {
      metrics.latency.observe(
        { integration: ctx.integration },
        (performance.now() - receivedAt) / 1000,
      );
    }
    const count = o.fight.fixed(performance.now());
    if (!count.report) return undefined;
    metrics.fights.inc(labels);
    return count;
  }
}

/** The plan of one object of `item`: its current state in the cache (admitted) against its desired. */
function planReaction(
  ctx: RunContext,
  state: WatchedState,
  item: ReactionItem,
  spec: CurrentStateSpec,
  name: string,
  object: KubeObject | undefined,
): ItemPlan | undefined {
  const current = object ? admitCurrent(object, state) : undefined;
  const desired = item.desired.get(name);
  if (!current && !desired) return undefined;
  return planItem(
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
}

/** How a reaction applies its plan: as the full run would, one action at a time. */
async function applySettings(
  ctx: RunContext,
  state: WatchedState,
  fieldManager: string,
): Promise<ExecuteSettings> {
  return {
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
  };
}

/** Writes the Kubernetes Events of a reaction on `target`, with the credential of the write. */
function eventRecorder(
  ctx: RunContext,
  state: WatchedState,
  spec: CurrentStateSpec,
  target: EventTarget,
): (privileged: boolean, event: WatchEvent) => Promise<void> {
  return async (privileged, event) => {
    const handle = state.clusters.get(spec.cluster, privileged);
    // A stopping run writes nothing more (the request would only fail with the abort).
    if (isClusterProblem(handle) || ctx.signal.aborted) return;
    await recordWatchEvent(handle.client, spec.cluster, ctx.integration, target, event, ctx.log);
  };
}

interface BundlePolling {
  /** The bundle's version when the run started. */
  readonly version: string | undefined;
  readonly deadline: number;
  readonly gate: IterationGate;
  readonly stopped: () => boolean;
  /** A full iteration of a new desired state: reactions plan against it from then on. */
  readonly reiterate: (state: WatchedState) => Promise<void>;
}

/** Until the deadline: a new app-interface bundle recomputes the desired state and reconciles it. */
async function pollBundles(s: WatchModeSettings, bundle: BundleSource, p: BundlePolling) {
  const { ctx } = s;
  const pollSecs = Number(ctx.env.vars.WATCH_BUNDLE_POLL_SECS);
  const pollMs = s.bundlePollMs ?? (pollSecs > 0 ? pollSecs * 1000 : 5_000);
  // Reading the version of a large local directory stats every file: polled no more than
  // 5 % of the time.
  let wait = pollMs;
  let bundleVersion = p.version;
  while (!p.stopped() && !ctx.signal.aborted) {
    await sleep(Math.min(wait, Math.max(0, p.deadline - performance.now())), ctx.signal);
    if (p.stopped() || ctx.signal.aborted || performance.now() >= p.deadline) return;
    const asked = performance.now();
    const version = await bundle.version();
    wait = Math.max(pollMs, 20 * (performance.now() - asked));
    if (version === undefined || version === bundleVersion) continue;
    ctx.log.info(
      `app-interface changed (${shortVersion(bundleVersion)} -> ${shortVersion(version)}): reconciling the new desired state from the caches`,
    );
    bundleVersion = version;
    try {
      await p.gate.exclusive(async () => {
        const opened = await bundle.open(ctx);
        try {
          const next = await s.prepare(opened.ctx);
          if (next) await p.reiterate({ ...next, desired: await next.desired });
        } finally {
          await opened.close();
        }
      });
    } catch (e) {
      ctx.errors.register(ctx.integration, `reconciling the new bundle failed: ${errorMessage(e)}`);
    }
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
