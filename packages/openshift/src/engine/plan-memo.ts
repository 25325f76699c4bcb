import type { RunContext } from '@qontract/core';
import type { ClusterInput, ClusterPlan } from './cluster-plan.ts';
import type { CurrentStateSpec } from './fetch.ts';

/**
 * The plans of a loop's previous run that did nothing, by cluster: a
 * cluster whose specs, desired objects and read objects are those of that
 * run, and that has no error, has the same empty plan. Its inventory
 * entries and warnings are taken over instead of being built and compared
 * again (a polling loop's warm run spends most of its time there otherwise).
 *
 * The key is what a cluster's plan depends on: its specs, its desired
 * objects and the revision of each scope read (the cluster state's: the same
 * exactly while the scope holds the same objects). The desired objects count
 * by identity: the desired cache hands the same frozen body for an unchanged
 * resource; a body built afresh, or a scope without a revision, is not
 * recognised, and its cluster is planned.
 */
export class PlanMemo {
  readonly #plans = new Map<string, { readonly input: ClusterInput; readonly plan: ClusterPlan }>();

  /** The previous run's plan of the cluster, when this run's input is the same. */
  lookup(input: ClusterInput): ClusterPlan | undefined {
    if (input.hasClusterError) return undefined;
    const kept = this.#plans.get(input.cluster);
    return kept && sameInput(kept.input, input) ? kept.plan : undefined;
  }

  /**
   * Remembers a plan for the next run when it is empty and clean and its
   * input can be recognised; forgets the cluster's otherwise (`clean`: no
   * error of the run concerns the cluster).
   */
  save(input: ClusterInput, plan: ClusterPlan, clean: boolean): void {
    const keep =
      clean &&
      plan.actions.length === 0 &&
      !plan.skipped &&
      plan.errors.length === 0 &&
      recognisable(input);
    if (keep) this.#plans.set(input.cluster, { input, plan });
    else this.#plans.delete(input.cluster);
  }
}

/** Every desired body frozen (the desired cache's) and every scope read with a revision. */
function recognisable(input: ClusterInput): boolean {
  return (
    input.desired.every((d) => Object.isFrozen(d.resource.body)) &&
    input.states.every((state) => state.revision !== undefined)
  );
}

/**
 * Whether two inputs of a cluster plan alike: the same specs, the same
 * desired bodies (by identity) in the same order with the same namespace,
 * token, source and caller, the same scopes at the same revisions. Compared
 * in place: a warm run of a large loop compares tens of thousands of them.
 */
function sameInput(a: ClusterInput, b: ClusterInput): boolean {
  return (
    sameList(a.specs, b.specs, sameSpec) &&
    sameList(a.desired, b.desired, (x, y) => {
      const r = x.resource;
      const q = y.resource;
      return (
        r.body === q.body &&
        x.namespace === y.namespace &&
        Boolean(x.privileged) === Boolean(y.privileged) &&
        x.source === y.source &&
        r.callerName === q.callerName &&
        r.integration === q.integration &&
        r.integrationVersion === q.integrationVersion
      );
    }) &&
    sameList(
      a.states,
      b.states,
      (x, y) => x.revision !== undefined && x.revision === y.revision && sameSpec(x.spec, y.spec),
    )
  );
}

function sameSpec(a: CurrentStateSpec, b: CurrentStateSpec): boolean {
  return (
    a.namespace === b.namespace &&
    a.kind === b.kind &&
    a.privileged === b.privileged &&
    (a.resourceNames?.join('\u0001') ?? '*') === (b.resourceNames?.join('\u0001') ?? '*')
  );
}

function sameList<T>(a: readonly T[], b: readonly T[], same: (x: T, y: T) => boolean): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!same(a[i]!, b[i]!)) return false;
  return true;
}

/** What a plan memo is shared by: runs with these settings plan alike. */
export interface PlanMemoSettings {
  readonly integration: string;
  readonly integrationVersion: string;
  readonly takeOver?: boolean | undefined;
  readonly skipCompare?: boolean | undefined;
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
    s.skipCompare ?? false,
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
