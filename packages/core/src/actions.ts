import pLimit from 'p-limit';
import type { ErrorRegistry } from './errors.ts';
import type { RunReport } from './integration.ts';
import type { Logger } from './logging.ts';

/**
 * What an integration tells the executor about its actions. The executor owns
 * the run rules (dry-run, the deletion gate, concurrency, error registration,
 * the summary count); the handler only says what each action is and how to
 * write it.
 */
export interface ActionHandler<A> {
  /** The action's name (`apply`, `delete`, `add_user_to_group`): counted in the summary and named when it is disabled. */
  name(action: A): string;
  /** What the summary counts for the action when it is done (default: its name, once). */
  counts?(action: A): readonly string[];
  /**
   * The actions are side effects of the run (a state record, a Vault copy, a
   * promotion record), not changes of the system it manages: their lines are
   * logged at DEBUG, the summary does not count them (unless `counts` says
   * otherwise). Dry-run and failures are decided as for any action.
   */
  readonly sideEffect?: boolean;
  /** The line(s) logged for the action, dry-run or not, in the original's shape. */
  describe(action: A): string | readonly string[];
  /**
   * Whether the action destroys something. Destructive actions run only after
   * every other action of the call has ended, and each one only while no error
   * is registered in the run (in its removal scope, see `removalScope`).
   */
  destructive(action: A): boolean;
  /**
   * Writes the action (wet run only). Resolving to `'skipped'` says nothing was
   * written and nothing failed (the summary counts it as `<name> skipped`);
   * anything else counts as done.
   */
  execute(action: A): Promise<unknown>;
  /** Read-only work a dry-run does for an action (e.g. list the pods a change would restart). */
  preview?(action: A): Promise<void>;
  /**
   * The removal scope of the action (its organisation, its group), for
   * integrations that scope the deletion gate: a destructive action is then
   * held back only by an error of its scope or a run-wide one, and a failed
   * action's error is registered in its scope. Without it every error holds
   * back every destructive action.
   */
  removalScope?(action: A): string;
  /** Where a failure is registered and what it says (never a secret). */
  failure(action: A, error: unknown): { readonly scope: string; readonly message: string };
  /**
   * The action as `--plan-out` writes it: plain data, no body that may hold a
   * secret; one action may stand for several entries (a group's members).
   * Without it the action is not part of the plan (a side effect such as a
   * state record).
   */
  planEntry?(action: A): Record<string, unknown> | readonly Record<string, unknown>[];
}

/** The part of a run the executor needs (a `RunContext` is one). */
export interface ActionRun {
  readonly dryRun: boolean;
  readonly log: Logger;
  readonly errors: ErrorRegistry;
  readonly report?: RunReport;
  readonly signal?: AbortSignal;
}

type ActionOutcome =
  /** Written (wet run). */
  | 'done'
  /** Logged only (dry-run). */
  | 'dry-run'
  /** Not written: the handler said so, or the run was interrupted. */
  | 'skipped'
  /** A destructive action held back because the run has an error. */
  | 'disabled'
  /** The write failed; the error is registered. */
  | 'failed';

export interface ExecutedAction<A> {
  readonly action: A;
  readonly outcome: ActionOutcome;
}

/**
 * Executes actions with the run's rules, the one place where integrations
 * write (the engine's plans go through it too):
 *
 * 1. every non-destructive action first, at most `concurrency` at a time;
 * 2. then the destructive ones, each checking the run's error registry
 *    immediately before it starts: once any error exists — registered by this
 *    call's writes, by another cluster, or by an earlier phase of the run —
 *    nothing more is destroyed ("'delete' action is disabled due to previous
 *    errors (N held back).", once); a handler with `removalScope` narrows this to errors of the
 *    action's scope and run-wide ones;
 * 3. dry-run logs every action (and runs `preview`) and writes nothing;
 * 4. a failure is registered on the run and the rest goes on;
 * 5. once the run's signal is aborted no new action starts, and a write it
 *    cut short is not reported as that object's error (the runner reports
 *    the interruption);
 * 6. `--plan-out` is what it did: with `planEntry`, every action is recorded
 *    on the run's report with its outcome (`disabled`: held back by the gate).
 *
 * `actions` may also come in batches, as the caller plans them (the engine:
 * one cluster's changes as soon as that cluster is read). The non-destructive
 * actions of a batch start at once, beside what earlier batches still write;
 * the destructive ones of every batch wait until the source has ended and
 * every other action has. A source that fails stops taking batches: the
 * actions already started end, no destructive one runs, and the failure is
 * thrown. Results are in the order the actions came.
 */
export async function executeActions<A>(
  run: ActionRun,
  actions: readonly A[] | AsyncIterable<readonly A[]>,
  handler: ActionHandler<A>,
  options: { readonly concurrency?: number | undefined } = {},
): Promise<ExecutedAction<A>[]> {
  const limit = pLimit(Math.max(1, options.concurrency ?? 10));
  const all: A[] = [];
  const outcomes = new Map<number, ActionOutcome>();
  const start = (index: number, destructive: boolean) =>
    limit(async () => {
      outcomes.set(index, await executeOne(run, all[index] as A, handler, destructive));
    });
  const writing: Promise<void>[] = [];
  const destructive: number[] = [];
  const take = (batch: readonly A[]) => {
    for (const action of batch) {
      const index = all.push(action) - 1;
      if (handler.destructive(action)) destructive.push(index);
      else writing.push(start(index, false));
    }
  };
  if (isAsyncIterable(actions)) {
    try {
      for await (const batch of actions) take(batch);
    } catch (e) {
      await Promise.allSettled(writing);
      throw e;
    }
  } else {
    take(actions);
  }
  await Promise.all(writing);
  await Promise.all(destructive.map((index) => start(index, true)));
  logHeldBack(
    run.log,
    destructive.filter((i) => outcomes.get(i) === 'disabled').map((i) => handler.name(all[i] as A)),
  );
  const results = all.map((action, index) => ({
    action,
    outcome: outcomes.get(index) ?? 'skipped',
  }));
  // `--plan-out` is what the executor did: every action with its outcome (the runner writes it).
  const { planEntry } = handler;
  const record = run.report?.plan;
  if (planEntry && record) {
    for (const { action, outcome } of results) {
      const entries = planEntry(action);
      for (const entry of Array.isArray(entries) ? entries : [entries])
        record({ ...entry, outcome });
    }
  }
  return results;
}

/**
 * The original's line for destructive actions held back by an error, once per
 * action name with how many were held back (the original says it after each
 * one): `'delete' action is disabled due to previous errors (3 held back).`
 * Each held-back action's own line is logged before it, as any action's.
 */
function logHeldBack(log: Logger, names: readonly string[]): void {
  const counts = new Map<string, number>();
  for (const name of names) counts.set(name, (counts.get(name) ?? 0) + 1);
  for (const [name, n] of counts) {
    log.error(`'${name}' action is disabled due to previous errors (${n} held back).`);
  }
}

function isAsyncIterable<A>(
  value: readonly A[] | AsyncIterable<readonly A[]>,
): value is AsyncIterable<readonly A[]> {
  return Symbol.asyncIterator in value;
}

async function executeOne<A>(
  run: ActionRun,
  action: A,
  handler: ActionHandler<A>,
  destructive: boolean,
): Promise<ActionOutcome> {
  if (run.signal?.aborted) return 'skipped';
  const lines = handler.describe(action);
  for (const line of typeof lines === 'string' ? [lines] : lines) {
    if (handler.sideEffect) run.log.debug(line);
    else run.log.info(line);
  }
  const name = handler.name(action);
  if (destructive && run.errors.holdsRemovals(handler.removalScope?.(action))) {
    return 'disabled'; // said once for all of them, with their count (logHeldBack)
  }
  let outcome: ActionOutcome;
  try {
    if (run.dryRun) {
      await handler.preview?.(action);
      outcome = 'dry-run';
    } else {
      outcome = (await handler.execute(action)) === 'skipped' ? 'skipped' : 'done';
    }
  } catch (e) {
    const { scope, message } = handler.failure(action, e);
    if (run.signal?.aborted) {
      // Cut short by the stop signal, not refused: the runner reports the
      // interruption (exit 1); nothing starts after it, deletes included.
      run.log.warn(`${scope}: interrupted by the stop signal`);
      return 'skipped';
    }
    run.errors.register(scope, message, { removalScope: handler.removalScope?.(action) });
    return 'failed';
  }
  if (outcome === 'skipped') {
    // Said in the summary: an action line followed by "no actions" would hide it.
    run.report?.count(`${name} skipped`);
  } else {
    const counted = handler.counts?.(action) ?? (handler.sideEffect ? [] : [name]);
    for (const c of counted) run.report?.count(c);
  }
  return outcome;
}
