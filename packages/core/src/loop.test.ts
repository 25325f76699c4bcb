import { EventEmitter } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import { silentLogger } from './logging.ts';
import { installStopSignals, runLoop, sleep } from './loop.ts';
import type { LoopScope } from './loop-scope.ts';
import { createMetrics } from './metrics.ts';

const labels = { integration: 'openshift-groups', shards: '1', shard_id: '0' };

describe('runLoop', () => {
  it('returns the exit code of the single run when RUN_ONCE is set', async () => {
    const metrics = createMetrics();
    const scopes: LoopScope[] = [];
    const execute = vi.fn(async (loop: LoopScope) => {
      scopes.push(loop);
      return { exitCode: 1, crashed: false };
    });
    const signal = new AbortController().signal;
    const code = await runLoop({
      runOnce: true,
      sleepSeconds: 600,
      sleepOnErrorSeconds: 10,
      signal,
      log: silentLogger(),
      metrics,
      labels,
      env: {},
      execute,
    });
    expect(code).toBe(1);
    expect(execute).toHaveBeenCalledTimes(1);
    // One run: nothing is worth keeping for a next one.
    expect(scopes[0]?.repeats).toBe(false);
    const text = await metrics.registry.metrics();
    expect(text).toContain(
      'qontract_reconcile_execution_counter_total{integration="openshift-groups",shards="1",shard_id="0"} 1',
    );
    expect(text).toContain(
      'qontract_reconcile_last_run_status{integration="openshift-groups",shards="1",shard_id="0"} 1',
    );
    expect(text).toMatch(
      /qontract_reconcile_last_run_seconds\{integration="openshift-groups",shards="1",shard_id="0"\} \d/,
    );
  });

  it('loops until stopped, finishing the run in progress, and returns the last exit code', async () => {
    const controller = new AbortController();
    const codes = [0, 1, 0, 4];
    let runs = 0;
    const scopes = new Set<LoopScope>();
    let closed = 0;
    const code = await runLoop({
      runOnce: false,
      env: {},
      sleepSeconds: 0,
      sleepOnErrorSeconds: 0,
      signal: controller.signal,
      log: silentLogger(),
      metrics: createMetrics(),
      labels,
      execute: async (loop) => {
        scopes.add(loop);
        loop.keep(
          'probe',
          () => ({}),
          () => closed++,
        );
        const exitCode = codes[runs++]!;
        if (runs === codes.length) controller.abort(); // a stop signal arrives during the 4th run
        return { exitCode, crashed: false };
      },
    });
    expect(runs).toBe(4);
    expect(code).toBe(4);
    // One scope for the loop's runs, which repeat; closed once, when the loop ends.
    expect([...scopes].map((s) => s.repeats)).toEqual([true]);
    expect(closed).toBe(1);
  });

  it('sleeps SLEEP_ON_ERROR after a crash and SLEEP_DURATION_SECS otherwise', async () => {
    const controller = new AbortController();
    const sleeps: number[] = [];
    const spy = vi.spyOn(globalThis, 'setTimeout').mockImplementation(((
      fn: () => void,
      ms: number,
    ) => {
      sleeps.push(ms);
      if (sleeps.length === 2) controller.abort();
      queueMicrotask(fn);
      return 0 as unknown as NodeJS.Timeout;
    }) as typeof setTimeout);
    let run = 0;
    try {
      await runLoop({
        runOnce: false,
        sleepSeconds: 600,
        sleepOnErrorSeconds: 10,
        signal: controller.signal,
        log: silentLogger(),
        metrics: createMetrics(),
        labels,
        env: {},
        execute: async () => ({ exitCode: 1, crashed: run++ === 0 }),
      });
    } finally {
      spy.mockRestore();
    }
    expect(sleeps).toEqual([10_000, 600_000]);
  });

  it('interrupts the sleep when the stop signal arrives', async () => {
    const controller = new AbortController();
    const pending = sleep(3_600_000, controller.signal);
    controller.abort();
    await expect(pending).resolves.toBeUndefined();
  });
});

describe('installStopSignals', () => {
  it('aborts on the first signal and exits 128+n on the second', () => {
    const proc = Object.assign(new EventEmitter(), { exit: vi.fn() });
    const controller = new AbortController();
    const warnings: string[] = [];
    const uninstall = installStopSignals(
      controller,
      { warn: (m: string) => warnings.push(m) } as never,
      proc as never,
    );
    proc.emit('SIGTERM', 'SIGTERM');
    expect(controller.signal.aborted).toBe(true);
    expect(proc.exit).not.toHaveBeenCalled();
    proc.emit('SIGINT', 'SIGINT');
    expect(proc.exit).toHaveBeenCalledWith(130);
    expect(warnings[0]).toBe('received SIGTERM, aborting the current run before exiting');
    uninstall();
    expect(proc.listenerCount('SIGTERM')).toBe(0);
  });
});
