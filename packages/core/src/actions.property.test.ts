import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type ActionHandler, type ActionRun, executeActions } from './actions.ts';
import { ErrorRegistry } from './errors.ts';
import type { RunReport } from './integration.ts';
import type { Logger } from './logging.ts';

/** The values an arbitrary generates. */
type ArbValue<A> = A extends fc.Arbitrary<infer T> ? T : never;

/**
 * The executor's safety rules (README "Safety rules") as properties over
 * random action lists: random destructive flags, failures at random times,
 * errors registered elsewhere in the run while writes are under way,
 * pre-existing errors, concurrency and a stop signal at a random point.
 */

interface FakeAction {
  readonly id: number;
  readonly destructive: boolean;
  /** Event-loop turns before the write ends. */
  readonly delay: number;
  /** The write throws after its delay. */
  readonly fails: boolean;
  /** While the write is under way, another part of the run (another cluster) registers an error. */
  readonly registersElsewhere: boolean;
  /** The write says nothing was written (`'skipped'`). */
  readonly skips: boolean;
}

type Event =
  | { readonly type: 'register'; readonly scope: string }
  | { readonly type: 'start'; readonly id: number; readonly destructive: boolean }
  | { readonly type: 'end'; readonly id: number; readonly destructive: boolean }
  | { readonly type: 'preview'; readonly id: number }
  | { readonly type: 'abort' };

const actionArb = fc.record({
  destructive: fc.boolean(),
  delay: fc.nat({ max: 4 }),
  fails: fc.boolean(),
  registersElsewhere: fc.constantFrom(false, false, false, true),
  skips: fc.constantFrom(false, false, false, true),
});

const scenarioArb = fc.record({
  actions: fc
    .array(actionArb, { maxLength: 12 })
    .map((list) => list.map((a, id): FakeAction => ({ ...a, id }))),
  concurrency: fc.integer({ min: 1, max: 6 }),
  dryRun: fc.boolean(),
  preExistingErrors: fc.nat({ max: 2 }).map((n) => (n === 2 ? 0 : n)),
  /** Abort when the n-th write (or preview) starts; never when undefined. */
  abortAt: fc.option(fc.nat({ max: 12 }), { nil: undefined }),
});

const turn = () => new Promise((resolve) => setImmediate(resolve));

async function runScenario(s: ArbValue<typeof scenarioArb>) {
  const events: Event[] = [];
  const errors = new ErrorRegistry();
  const register = errors.register.bind(errors);
  errors.register = (scope, error, options) => {
    events.push({ type: 'register', scope });
    register(scope, error, options);
  };
  for (let i = 0; i < s.preExistingErrors; i++) errors.register(`earlier-${i}`, 'earlier phase');
  const silent = () => {};
  const log = { info: silent, error: silent, warn: silent, debug: silent } as unknown as Logger;
  const counts: Record<string, number> = {};
  const report: RunReport = {
    actions: counts,
    count: (action, n = 1) => {
      counts[action] = (counts[action] ?? 0) + n;
    },
  };
  const controller = new AbortController();
  let started = 0;
  const maybeAbort = () => {
    if (s.abortAt !== undefined && started++ === s.abortAt && !controller.signal.aborted) {
      controller.abort();
      events.push({ type: 'abort' });
    }
  };
  const run: ActionRun = { dryRun: s.dryRun, log, errors, report, signal: controller.signal };
  const handler: ActionHandler<FakeAction> = {
    name: (a) => (a.destructive ? 'delete' : 'apply'),
    describe: (a) => `action ${a.id}`,
    destructive: (a) => a.destructive,
    execute: async (a) => {
      events.push({ type: 'start', id: a.id, destructive: a.destructive });
      maybeAbort();
      try {
        for (let i = 0; i < a.delay; i++) {
          await turn();
          if (a.registersElsewhere && i === 0) errors.register('other-cluster', 'went away');
        }
        if (a.registersElsewhere && a.delay === 0) errors.register('other-cluster', 'went away');
        if (a.fails) throw new Error(`action ${a.id} refused`);
        return a.skips ? 'skipped' : undefined;
      } finally {
        events.push({ type: 'end', id: a.id, destructive: a.destructive });
      }
    },
    preview: async (a) => {
      events.push({ type: 'preview', id: a.id });
      maybeAbort();
      await turn();
    },
    failure: (a, e) => ({ scope: `scope-${a.id}`, message: String(e) }),
  };
  const results = await executeActions(run, s.actions, handler, { concurrency: s.concurrency });
  return { events, results, errors, counts };
}

describe('executeActions: safety properties', () => {
  it('holds the run rules for random actions, failures, concurrency and stop points', async () => {
    const seen = { deleted: 0, disabled: 0, aborted: 0 };
    await fc.assert(
      fc.asyncProperty(scenarioArb, async (s) => {
        const { events, results, errors, counts } = await runScenario(s);
        const starts = events.flatMap((e, i) => (e.type === 'start' ? [{ ...e, at: i }] : []));
        const ends = events.flatMap((e, i) => (e.type === 'end' ? [{ ...e, at: i }] : []));
        const firstRegister = events.findIndex((e) => e.type === 'register');
        const abortAt = events.findIndex((e) => e.type === 'abort');
        seen.deleted += results.filter((r) => r.action.destructive && r.outcome === 'done').length;
        seen.disabled += results.filter((r) => r.outcome === 'disabled').length;
        if (abortAt !== -1) seen.aborted++;

        // No destructive write starts once any error was registered in the run.
        for (const st of starts.filter((e) => e.destructive)) {
          if (firstRegister !== -1) expect(st.at).toBeLessThan(firstRegister);
        }
        // Every non-destructive write starts, and ends, before the first destructive one starts.
        const firstDestructive = starts.find((e) => e.destructive)?.at ?? Number.POSITIVE_INFINITY;
        for (const e of [...starts, ...ends].filter((e) => !e.destructive)) {
          expect(e.at).toBeLessThan(firstDestructive);
        }
        // Nothing starts after the stop signal (the write that saw it come is the last).
        if (abortAt !== -1) {
          for (const e of events.slice(abortAt + 1)) {
            expect(e.type === 'start' || e.type === 'preview').toBe(false);
          }
        }
        // Dry-run never writes.
        if (s.dryRun) expect(starts).toEqual([]);
        // Each action is written at most once; only actions said to be done or failed were started.
        expect(new Set(starts.map((e) => e.id)).size).toBe(starts.length);
        const startedIds = new Set(starts.map((e) => e.id));
        for (const r of results) {
          const id = r.action.id;
          if (r.outcome === 'done' || r.outcome === 'failed') expect(startedIds.has(id)).toBe(true);
          if (r.outcome === 'dry-run' || r.outcome === 'disabled') {
            expect(startedIds.has(id)).toBe(false);
          }
          if (r.outcome === 'disabled') expect(r.action.destructive).toBe(true);
          if (r.outcome === 'dry-run') expect(s.dryRun).toBe(true);
          if (r.outcome === 'failed') expect(r.action.fails).toBe(true);
          if (r.outcome === 'done') expect(r.action.fails || r.action.skips).toBe(false);
        }
        // Without an error or a stop, every action gets its outcome.
        if (errors.errors.length === 0 && abortAt === -1) {
          for (const r of results) {
            expect(r.outcome).toBe(s.dryRun ? 'dry-run' : r.action.skips ? 'skipped' : 'done');
          }
        }
        // The summary counts exactly the actions done (or logged in a dry-run).
        const counted = (destructive: boolean) =>
          results.filter(
            (r) =>
              r.action.destructive === destructive &&
              (r.outcome === 'done' || r.outcome === 'dry-run'),
          ).length;
        expect(counts.apply ?? 0).toBe(counted(false));
        expect(counts.delete ?? 0).toBe(counted(true));
        // Every failure is registered once, under its own scope; nothing else is registered.
        const failed = results
          .filter((r) => r.outcome === 'failed')
          .map((r) => `scope-${r.action.id}`);
        expect(
          errors.errors
            .map((e) => e.scope)
            .filter((scope) => scope.startsWith('scope-'))
            .sort(),
        ).toEqual([...failed].sort());
        expect(errors.errors.filter((e) => e.scope.startsWith('earlier-'))).toHaveLength(
          s.preExistingErrors,
        );
      }),
      { numRuns: 300 },
    );
    // The generators reach every case (the properties are not vacuous).
    expect(seen.deleted).toBeGreaterThan(0);
    expect(seen.disabled).toBeGreaterThan(0);
    expect(seen.aborted).toBeGreaterThan(0);
  });
});
