import type { RunContext } from '@qontract/core';
import type { ClusterInput, ClusterPlan } from './cluster-plan.ts';

/**
 * The plans of a loop's previous run that did nothing, by cluster: a
 * cluster whose specs, desired objects and read objects are those of that
 * run, and that has no error, has the same empty plan. Its inventory
 * entries and warnings are taken over instead of being built and compared
 * again (a polling loop's warm run spends most of its time there otherwise).
 *
 * The key is made of what a cluster's plan depends on: its specs, a digest
 * of its desired objects and the revision of each scope read (the cluster
 * state's: the same exactly while the scope holds the same objects). The
 * desired objects count by identity: the desired cache hands the same frozen
 * body for an unchanged resource; a body built afresh, or a scope without a
 * revision, has no key, and its cluster is planned.
 */
export class PlanMemo {
  readonly #plans = new Map<string, { readonly key: string; readonly plan: ClusterPlan }>();
  readonly #ids = new WeakMap<object, number>();
  #nextId = 0;

  /** The previous run's plan of the cluster, when this run's input is the same. */
  lookup(input: ClusterInput): ClusterPlan | undefined {
    if (input.hasClusterError) return undefined;
    const kept = this.#plans.get(input.cluster);
    return kept && kept.key === this.#key(input) ? kept.plan : undefined;
  }

  /**
   * Remembers a plan for the next run when it is empty and clean; forgets the
   * cluster's otherwise (`clean`: no error of the run concerns the cluster).
   */
  save(input: ClusterInput, plan: ClusterPlan, clean: boolean): void {
    const key =
      clean && plan.actions.length === 0 && !plan.skipped && plan.errors.length === 0
        ? this.#key(input)
        : undefined;
    if (key === undefined) this.#plans.delete(input.cluster);
    else this.#plans.set(input.cluster, { key, plan });
  }

  /** What the plan depends on, as one string; undefined when an object has no identity to trust. */
  #key(input: ClusterInput): string | undefined {
    const parts: Array<string | number> = [];
    for (const s of input.specs) {
      parts.push(s.namespace, s.kind, String(s.privileged), s.resourceNames?.join('\u0001') ?? '*');
    }
    parts.push('\u0002');
    for (const d of input.desired) {
      const id = this.#id(d.resource.body);
      if (id === undefined) return undefined;
      const r = d.resource;
      parts.push(id, d.namespace, String(Boolean(d.privileged)), d.source ?? '');
      parts.push(r.callerName ?? '', r.integration, r.integrationVersion);
    }
    parts.push('\u0002');
    for (const { spec, revision } of input.states) {
      if (revision === undefined) return undefined;
      parts.push(spec.namespace, spec.kind, String(spec.privileged), revision);
    }
    return parts.join('\u0000');
  }

  /** A number for a frozen desired body, the same as long as the body lives. */
  #id(value: unknown): number | undefined {
    if (typeof value !== 'object' || value === null || !Object.isFrozen(value)) return undefined;
    let id = this.#ids.get(value);
    if (id === undefined) {
      id = this.#nextId++;
      this.#ids.set(value, id);
    }
    return id;
  }
}

/** What a plan memo is shared by: runs with these settings plan alike. */
export interface PlanMemoSettings {
  readonly integration: string;
  readonly integrationVersion: string;
  readonly takeOver?: boolean | undefined;
  readonly caller?: string | undefined;
  readonly allCallers?: readonly string[] | undefined;
  readonly filterCurrentByCaller?: boolean | undefined;
  readonly leaveOtherCallers?: boolean | undefined;
  readonly skipCurrent?: unknown;
}

/**
 * The plan memo of the runs of `ctx`'s loop with these settings: only where
 * the runs repeat in this process and reuse what they list (the objects of an
 * unchanged list are then the same objects), not with the loop caches off.
 * Runs that overlap (shards of one process) do not share one: a run takes it
 * and gives it back when it ends (`done`).
 */
export function planMemoOf(
  ctx: RunContext,
  s: PlanMemoSettings,
): { readonly memo: PlanMemo; readonly done: () => void } | undefined {
  if (!ctx.loop.tuning.listReuse) return undefined;
  const memos = ctx.loop.repeatCache(
    'engine:plan-memo',
    () => new Map<string, { skipCurrent: unknown; memo: PlanMemo }>(),
  );
  if (!memos) return undefined;
  const key = JSON.stringify([
    ctx.integration,
    s.integration,
    s.integrationVersion,
    s.takeOver ?? false,
    s.caller ?? '',
    s.allCallers ?? [],
    s.filterCurrentByCaller ?? true,
    s.leaveOtherCallers ?? false,
  ]);
  const last = memos.get(key);
  memos.delete(key);
  const memo = last && last.skipCurrent === s.skipCurrent ? last.memo : new PlanMemo();
  return { memo, done: () => memos.set(key, { skipCurrent: s.skipCurrent, memo }) };
}
