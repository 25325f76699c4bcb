import type { Logger } from './logging.ts';
import { LoopScope } from './loop-scope.ts';
import type { Metrics } from './metrics.ts';
import { type PushgatewayTarget, pushRunMetrics } from './pushgateway.ts';

export interface LoopSettings {
  /** `RUN_ONCE`: any non-empty value means one run (even `false`, as upstream). */
  readonly runOnce: boolean;
  readonly sleepSeconds: number;
  readonly sleepOnErrorSeconds: number;
  readonly signal: AbortSignal;
  readonly log: Logger;
  readonly metrics: Metrics;
  readonly labels: { integration: string; shards: string; shard_id: string };
  /** The process environment: the loop scope's tuning variables. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /**
   * One run, in the loop's scope (what its runs share); `crashed` selects
   * SLEEP_ON_ERROR for the next sleep, as an exception does upstream.
   */
  readonly execute: (loop: LoopScope) => Promise<{ exitCode: number; crashed: boolean }>;
  /**
   * `PUSHGATEWAY_ENABLED`: each run's duration and status are pushed there
   * (or the configuration error is reported); a failed push fails the run, as upstream.
   */
  readonly pushgateway?: PushgatewayTarget | { readonly error: string } | undefined;
}

/**
 * The run-integration loop: run, record metrics, sleep, again. A stop signal
 * lets the current run finish, interrupts the sleep, and returns the last
 * exit code. The loop's scope (what its runs share) is closed when it ends.
 */
export async function runLoop(settings: LoopSettings): Promise<number> {
  const loop = new LoopScope({ repeats: !settings.runOnce, env: settings.env });
  try {
    return await loopRuns(settings, loop);
  } finally {
    loop.close();
  }
}

async function loopRuns(settings: LoopSettings, loop: LoopScope): Promise<number> {
  const { metrics, labels, log, signal } = settings;
  let lastExitCode = 0;
  for (;;) {
    metrics.executionCounter.inc(labels);
    const started = performance.now();
    const { exitCode, crashed } = await settings.execute(loop);
    lastExitCode = exitCode;
    const runSeconds = (performance.now() - started) / 1000;
    metrics.lastRunSeconds.set(labels, runSeconds);
    metrics.lastRunStatus.set(labels, exitCode);
    const push = settings.pushgateway;
    if (push) {
      const failure =
        'error' in push
          ? push.error
          : await pushRunMetrics(push, labels, { seconds: runSeconds, exitCode });
      if (failure) {
        log.error(failure);
        lastExitCode = 1;
      }
    }
    if (settings.runOnce) return lastExitCode;
    if (signal.aborted) break;
    const seconds = crashed ? settings.sleepOnErrorSeconds : settings.sleepSeconds;
    log.debug(`sleeping ${seconds}s before the next run`);
    await sleep(seconds * 1000, signal);
    if (signal.aborted) break;
  }
  log.info(`stopping after a stop signal; last exit code ${lastExitCode}`);
  return lastExitCode;
}

/** Resolves after `ms`, or as soon as `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

const SIGNAL_NUMBERS: Record<string, number> = { SIGINT: 2, SIGTERM: 15 };

/**
 * First SIGTERM/SIGINT: abort the controller. The run starts no new work and
 * aborts every request that waits on the network (the RunContext's signal),
 * ends with exit code 1 (interrupted) unless it already failed otherwise, and
 * the loop stops. A second one exits at once with 128 + the signal number.
 */
export function installStopSignals(
  controller: AbortController,
  log: Pick<Logger, 'warn'>,
  proc: Pick<NodeJS.Process, 'on' | 'off' | 'exit'> = process,
): () => void {
  const handler = (sig: NodeJS.Signals) => {
    if (controller.signal.aborted) {
      log.warn(`received ${sig} again, exiting now`);
      proc.exit(128 + (SIGNAL_NUMBERS[sig] ?? 0));
      return;
    }
    log.warn(`received ${sig}, aborting the current run before exiting`);
    controller.abort(new Error(`stopped by ${sig}`));
  };
  proc.on('SIGTERM', handler);
  proc.on('SIGINT', handler);
  return () => {
    proc.off('SIGTERM', handler);
    proc.off('SIGINT', handler);
  };
}
