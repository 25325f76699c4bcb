import { describe, expect, it } from 'vitest';
import { type ActionHandler, type ActionRun, executeActions } from './actions.ts';
import { ErrorRegistry } from './errors.ts';
import type { PlanEntry, RunReport } from './integration.ts';
import type { Logger } from './logging.ts';

interface TestAction {
  readonly verb: 'create' | 'delete';
  readonly name: string;
  /** Throws when executed. */
  readonly fails?: boolean;
  /** Resolves after this many event-loop turns. */
  readonly delay?: number;
}

function recordingRun(dryRun: boolean, signal?: AbortSignal) {
  const lines: Array<{ level: string; msg: string }> = [];
  const record = (level: string) => (msg: unknown) => {
    lines.push({ level, msg: String(msg) });
  };
  const log = {
    info: record('info'),
    error: record('error'),
    warn: record('warn'),
    debug: record('debug'),
  } as unknown as Logger;
  const actions: Record<string, number> = {};
  const planned: PlanEntry[] = [];
  const report: RunReport = {
    actions,
    count: (action, n = 1) => {
      actions[action] = (actions[action] ?? 0) + n;
    },
    planned,
    plan: (entry) => planned.push(entry),
  };
  const errors = new ErrorRegistry();
  const run: ActionRun = { dryRun, log, errors, report, ...(signal ? { signal } : {}) };
  return { run, lines, errors, counts: actions, planned };
}

function handler(executed: string[], previewed: string[] = []): ActionHandler<TestAction> {
  return {
    name: (a) => a.verb,
    describe: (a) => `['${a.verb}', '${a.name}']`,
    destructive: (a) => a.verb === 'delete',
    execute: async (a) => {
      for (let i = 0; i < (a.delay ?? 0); i++) await new Promise((r) => setImmediate(r));
      if (a.fails) throw new Error(`${a.name} refused`);
      executed.push(`${a.verb} ${a.name}`);
    },
    preview: async (a) => {
      previewed.push(a.name);
    },
    failure: (a, e) => ({ scope: a.name, message: `[${a.name}] ${(e as Error).message}` }),
  };
}

/** A handler that records how many of its writes ran at once. */
function concurrencyProbe() {
  let running = 0;
  let most = 0;
  const counting: ActionHandler<TestAction> = {
    ...handler([]),
    execute: async () => {
      running++;
      most = Math.max(most, running);
      await new Promise((r) => setTimeout(r, 2));
      running--;
    },
  };
  return { counting, most: () => most };
}

describe('executeActions', () => {
  it('records what it did for --plan-out: each action with its outcome, a held-back delete as disabled', async () => {
    const { run, errors, planned } = recordingRun(false);
    errors.register('elsewhere', 'a failed read');
    await executeActions<TestAction>(
      run,
      [
        { verb: 'delete', name: 'old' },
        { verb: 'create', name: 'new' },
        { verb: 'create', name: 'refused', fails: true },
      ],
      { ...handler([]), planEntry: (a) => ({ action: a.verb, name: a.name }) },
    );
    expect(planned).toEqual([
      { action: 'delete', name: 'old', outcome: 'disabled' },
      { action: 'create', name: 'new', outcome: 'done' },
      { action: 'create', name: 'refused', outcome: 'failed' },
    ]);
  });

  it('side effects: decided like any action in dry-run, said at DEBUG, not counted in the summary', async () => {
    for (const dryRun of [true, false]) {
      const { run, lines, counts } = recordingRun(dryRun);
      const executed: string[] = [];
      await executeActions<TestAction>(run, [{ verb: 'create', name: 'state-record' }], {
        ...handler(executed),
        sideEffect: true,
      });
      expect(executed).toEqual(dryRun ? [] : ['create state-record']);
      expect(lines).toEqual([{ level: 'debug', msg: "['create', 'state-record']" }]);
      expect(counts).toEqual({});
    }
  });

  it('records nothing for a handler without planEntry (a side effect is not part of the plan)', async () => {
    const { run, planned } = recordingRun(true);
    await executeActions<TestAction>(run, [{ verb: 'create', name: 'x' }], handler([]));
    expect(planned).toEqual([]);
  });

  it('runs every non-destructive action before the first destructive one, whatever their order', async () => {
    const { run } = recordingRun(false);
    const executed: string[] = [];
    await executeActions<TestAction>(
      run,
      [
        { verb: 'delete', name: 'old' },
        { verb: 'create', name: 'slow', delay: 20 },
        { verb: 'create', name: 'fast' },
      ],
      handler(executed),
      { concurrency: 5 },
    );
    expect(executed).toEqual(['create fast', 'create slow', 'delete old']);
  });

  it('destroys nothing once a write of the same call failed (a renamed object refused)', async () => {
    const { run, errors, lines } = recordingRun(false);
    const executed: string[] = [];
    const results = await executeActions<TestAction>(
      run,
      [
        { verb: 'delete', name: 'old-name' },
        { verb: 'create', name: 'new-name', fails: true, delay: 5 },
        { verb: 'create', name: 'other' },
      ],
      handler(executed),
    );
    expect(executed).toEqual(['create other']);
    expect(results.map((r) => r.outcome)).toEqual(['disabled', 'failed', 'done']);
    expect(errors.errors).toEqual([{ scope: 'new-name', message: '[new-name] new-name refused' }]);
    expect(lines.filter((l) => l.level === 'error').map((l) => l.msg)).toEqual([
      "'delete' action is disabled due to previous errors (1 held back).",
    ]);
  });

  it('says once, with their count, that the deletes were held back', async () => {
    const { run, errors, lines } = recordingRun(false);
    errors.register('earlier', 'a read failed');
    await executeActions<TestAction>(
      run,
      ['a', 'b', 'c'].map((name) => ({ verb: 'delete' as const, name })),
      handler([]),
    );
    expect(lines.filter((l) => l.level === 'error').map((l) => l.msg)).toEqual([
      "'delete' action is disabled due to previous errors (3 held back).",
    ]);
    // Each held-back delete still has its own line.
    expect(lines.filter((l) => l.level === 'info')).toHaveLength(3);
  });

  it('checks the error state immediately before each delete: a failed delete stops the ones after it', async () => {
    const { run } = recordingRun(false);
    const executed: string[] = [];
    const results = await executeActions<TestAction>(
      run,
      [
        { verb: 'delete', name: 'a', fails: true },
        { verb: 'delete', name: 'b' },
        { verb: 'delete', name: 'c' },
      ],
      handler(executed),
      { concurrency: 1 },
    );
    expect(executed).toEqual([]);
    expect(results.map((r) => r.outcome)).toEqual(['failed', 'disabled', 'disabled']);
  });

  it('sees errors registered elsewhere in the run after the plan was made', async () => {
    const { run, errors } = recordingRun(false);
    const executed: string[] = [];
    const slowWrite: ActionHandler<TestAction> = {
      ...handler(executed),
      execute: async (a) => {
        // Another cluster fails while this call's writes are running.
        if (a.verb === 'create') errors.register('cluster-b', 'cluster-b went away');
        executed.push(`${a.verb} ${a.name}`);
      },
    };
    await executeActions(
      run,
      [
        { verb: 'create', name: 'x' },
        { verb: 'delete', name: 'y' },
      ],
      slowWrite,
    );
    expect(executed).toEqual(['create x']);
  });

  it('with removal scopes, an error holds back the deletes of its scope only; a run-wide one all of them', async () => {
    // Actions named `<org>/<object>`; the handler scopes them by org.
    const scoped = (executed: string[]): ActionHandler<TestAction> => ({
      ...handler(executed),
      removalScope: (a) => a.name.split('/')[0]!,
    });
    const plan: TestAction[] = [
      { verb: 'create', name: 'a/new', fails: true },
      { verb: 'delete', name: 'a/old' },
      { verb: 'delete', name: 'b/old' },
    ];
    const first = recordingRun(false);
    first.errors.register('c', 'org c could not be read', { removalScope: 'c' });
    const executed: string[] = [];
    const results = await executeActions(first.run, plan, scoped(executed));
    expect(results.map((r) => r.outcome)).toEqual(['failed', 'disabled', 'done']);
    expect(executed).toEqual(['delete b/old']);
    expect(first.errors.errors[1]).toEqual({
      scope: 'a/new',
      message: '[a/new] a/new refused',
      removalScope: 'a',
    });

    const second = recordingRun(false);
    second.errors.register('data/x.yml', 'broken');
    const held = await executeActions(second.run, plan.slice(2), scoped([]));
    expect(held.map((r) => r.outcome)).toEqual(['disabled']);
  });

  it('writes nothing in dry-run, previews, logs every action and counts it', async () => {
    const { run, lines, counts } = recordingRun(true);
    const executed: string[] = [];
    const previewed: string[] = [];
    const results = await executeActions(
      run,
      [
        { verb: 'create', name: 'a' },
        { verb: 'delete', name: 'b' },
      ],
      handler(executed, previewed),
    );
    expect(executed).toEqual([]);
    expect(previewed).toEqual(['a', 'b']);
    expect(results.map((r) => r.outcome)).toEqual(['dry-run', 'dry-run']);
    expect(lines.map((l) => l.msg)).toEqual(["['create', 'a']", "['delete', 'b']"]);
    expect(counts).toEqual({ create: 1, delete: 1 });
  });

  it('holds deletes back in dry-run too when the run has an error', async () => {
    const { run, errors, counts } = recordingRun(true);
    errors.register('data/x.yml', 'broken');
    const results = await executeActions(
      run,
      [
        { verb: 'create', name: 'a' },
        { verb: 'delete', name: 'b' },
      ],
      handler([]),
    );
    expect(results.map((r) => r.outcome)).toEqual(['dry-run', 'disabled']);
    expect(counts).toEqual({ create: 1 });
  });

  it('starts no new action once the run is aborted', async () => {
    const controller = new AbortController();
    const { run } = recordingRun(false, controller.signal);
    const executed: string[] = [];
    const aborting: ActionHandler<TestAction> = {
      ...handler(executed),
      execute: async (a) => {
        executed.push(a.name);
        controller.abort();
      },
    };
    const results = await executeActions(
      run,
      [
        { verb: 'create', name: 'a' },
        { verb: 'create', name: 'b' },
        { verb: 'delete', name: 'c' },
      ],
      aborting,
      { concurrency: 1 },
    );
    expect(executed).toEqual(['a']);
    expect(results.map((r) => r.outcome)).toEqual(['done', 'skipped', 'skipped']);
  });

  it('does not register a write cut short by the stop signal as its error, and deletes nothing after it', async () => {
    const controller = new AbortController();
    const { run, errors } = recordingRun(false, controller.signal);
    const executed: string[] = [];
    const interrupted: ActionHandler<TestAction> = {
      ...handler(executed),
      execute: async (a) => {
        if (a.verb === 'delete') executed.push(a.name);
        controller.abort();
        throw new Error('request aborted: stopped by SIGTERM');
      },
    };
    const results = await executeActions<TestAction>(
      run,
      [
        { verb: 'create', name: 'a' },
        { verb: 'delete', name: 'b' },
      ],
      interrupted,
    );
    expect(results.map((r) => r.outcome)).toEqual(['skipped', 'skipped']);
    expect(errors.hasErrors).toBe(false);
    expect(executed).toEqual([]);
  });

  it('counts an action the handler skipped as skipped, not as done', async () => {
    const { run, counts } = recordingRun(false);
    const skipping: ActionHandler<TestAction> = { ...handler([]), execute: async () => 'skipped' };
    const results = await executeActions(run, [{ verb: 'create', name: 'a' }], skipping);
    expect(results[0]?.outcome).toBe('skipped');
    expect(counts).toEqual({ 'create skipped': 1 });
  });

  it('never runs more than `concurrency` actions at once', async () => {
    const { run } = recordingRun(false);
    const { counting, most } = concurrencyProbe();
    const actions = Array.from({ length: 12 }, (_, i) => ({
      verb: 'create' as const,
      name: `n${i}`,
    }));
    await executeActions(run, actions, counting, { concurrency: 3 });
    expect(most()).toBe(3);
  });
});

describe('executeActions with batches', () => {
  it("starts a batch's writes while the source is still planning, and destroys only after the source ended", async () => {
    const { run } = recordingRun(false);
    const executed: string[] = [];
    let firstWritten!: () => void;
    const written = new Promise<void>((r) => {
      firstWritten = r;
    });
    const writes: ActionHandler<TestAction> = {
      ...handler(executed),
      execute: async (a) => {
        executed.push(`${a.verb} ${a.name}`);
        if (a.name === 'a1') firstWritten();
      },
    };
    async function* batches() {
      yield [
        { verb: 'delete', name: 'a-old' },
        { verb: 'create', name: 'a1' },
      ] as TestAction[];
      // The next batch is only planned once the first one's write happened.
      await written;
      executed.push('planned b');
      yield [{ verb: 'create', name: 'b1', delay: 5 }] as TestAction[];
    }
    const results = await executeActions(run, batches(), writes, { concurrency: 2 });
    expect(executed).toEqual(['create a1', 'planned b', 'create b1', 'delete a-old']);
    expect(results.map((r) => `${r.action.name} ${r.outcome}`)).toEqual([
      'a-old done',
      'a1 done',
      'b1 done',
    ]);
  });

  it('destroys nothing when an error was registered between batches (a cluster read after the first failed)', async () => {
    const { run, errors } = recordingRun(false);
    const executed: string[] = [];
    async function* batches() {
      yield [
        { verb: 'create', name: 'a1' },
        { verb: 'delete', name: 'a-old' },
      ] as TestAction[];
      errors.register('cluster-b', 'cluster-b: 403');
      yield [] as TestAction[];
    }
    const results = await executeActions(run, batches(), handler(executed));
    expect(executed).toEqual(['create a1']);
    expect(results.map((r) => r.outcome)).toEqual(['done', 'disabled']);
  });

  it('lets the started writes end, destroys nothing, and throws when the source fails', async () => {
    const { run } = recordingRun(false);
    const executed: string[] = [];
    async function* batches(): AsyncGenerator<TestAction[]> {
      yield [
        { verb: 'create', name: 'a1', delay: 10 },
        { verb: 'delete', name: 'a-old' },
      ];
      throw new Error('the read of cluster b broke');
    }
    await expect(executeActions(run, batches(), handler(executed))).rejects.toThrow(
      'the read of cluster b broke',
    );
    expect(executed).toEqual(['create a1']);
  });

  it('keeps the concurrency limit across batches', async () => {
    const { run } = recordingRun(false);
    const { counting, most } = concurrencyProbe();
    async function* batches() {
      for (let b = 0; b < 4; b++) {
        yield Array.from({ length: 4 }, (_, i) => ({ verb: 'create' as const, name: `${b}-${i}` }));
      }
    }
    const results = await executeActions(run, batches(), counting, { concurrency: 3 });
    expect(most()).toBe(3);
    expect(results).toHaveLength(16);
  });
});
