import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { HEAP_SIZE_ENV, heapSizeForMemoryLimit } from '@qontract/core/launch';
import type { FakeKubeApiServer } from '@qontract/fake-kube-apiserver';
import { fieldManagerFor } from '@qontract/openshift';
import { clusterState } from './cluster-state.ts';
import { NO_DRIFT } from './drift.ts';
import type { ScaleEnvironment } from './environment.ts';
import { INTEGRATION_OF, type LoopScenario } from './scenarios.ts';
import { REPO_ROOT } from './tree.ts';

const RUN_INTEGRATION = join(REPO_ROOT, 'packages/cli/bin/run-integration.js');
/** Between two runs: long enough to read the RSS while the loop sleeps, short enough not to matter. */
const SLEEP_SECONDS = '0.1';
/** Linux reports process CPU times in USER_HZ, 100 per second on every architecture Node runs on. */
const USER_HZ = 100;

export interface LoopMeasurement {
  readonly wallMs: number;
  readonly cpuMs: number;
  readonly peakRssBytes: number;
  readonly exitCode: number;
  /** The `--max-old-space-size` on the process's command line, if any. */
  readonly heapFlag: string | null;
  /** VmRSS right after each run (the loop then sleeps). */
  readonly rssBytes: readonly number[];
  /** Each run's own duration, from its summary line. */
  readonly runSeconds: readonly number[];
  /**
   * CPU time (user + system, whole process) of each run: the reading after it
   * minus the one after the previous run (the first includes module loading).
   */
  readonly runCpuMs: readonly number[];
  /** Open file descriptors (sockets included) right after each run. */
  readonly openFds: readonly number[];
  readonly requests: number;
}

/** One run of a `run-integration` loop, read when its summary line appears. */
interface LoopRun {
  /** 1-based. */
  readonly index: number;
  readonly exitCode: number;
  /** The summary's error count. */
  readonly errors: number;
  readonly durationSeconds: number;
  /** VmRSS right after the run. */
  readonly rssBytes: number;
  /** Open file descriptors (sockets included) right after the run. */
  readonly openFds: number;
  /** User + system CPU of the whole process so far. */
  readonly cpuMs: number;
  /** The run's log lines (stdout), its summary last. */
  readonly lines: readonly string[];
}

export interface LoopProcessOptions {
  readonly iterations: number;
  /** The entry point's environment on top of this process's (INTEGRATION_NAME, CONFIG, ...). */
  readonly env: Readonly<Record<string, string>>;
  readonly cpuProfileDir?: string;
  /**
   * Called after each run while the process is stopped (SIGSTOP, then SIGCONT
   * once the returned promise settles), so whatever it changes is in place
   * before the next run starts. Throwing ends the loop with that error.
   */
  readonly afterRun?: (run: LoopRun) => unknown;
}

export interface LoopProcessResult {
  readonly runs: readonly LoopRun[];
  readonly wallMs: number;
  readonly cpuMs: number;
  readonly peakRssBytes: number;
  /** The process's own exit code (it is sent SIGTERM after the last run). */
  readonly exitCode: number;
  /** The `--max-old-space-size` on the process's command line, if any. */
  readonly heapFlag: string | null;
}

/**
 * The container entry point as a pod runs it: `run-integration` (the real bin,
 * launcher included) in loop mode, read from /proc after every run. Used by
 * the loop scenarios (a steady dry-run, RSS watch) and by the soak.
 */
export async function runLoopProcess(options: LoopProcessOptions): Promise<LoopProcessResult> {
  const started = performance.now();
  const profile = options.cpuProfileDir
    ? ['--cpu-prof', '--cpu-prof-dir', options.cpuProfileDir]
    : [];
  const child = spawn(process.execPath, [...profile, RUN_INTEGRATION], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NODE_OPTIONS: '', ...options.env },
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error(`could not start ${RUN_INTEGRATION}`);
  const runs: LoopRun[] = [];
  let lines: string[] = [];
  let outputTail = '';
  let pending = '';
  let heapFlag: string | null = null;
  let cpuMs = 0;
  let peakRssBytes = 0;
  // Hooks run one after the other, in run order.
  let hooks: Promise<unknown> = Promise.resolve();
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  const done = new Promise<void>((resolve, reject) => {
    child.on('close', (code) => {
      if (runs.length < options.iterations) {
        reject(
          new Error(`run-integration exited ${code} after ${runs.length} run(s): ${outputTail}`),
        );
      }
    });
    // What fails before the log exists (Node's own messages) goes to stderr.
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      outputTail = (outputTail + chunk).slice(-2000);
    });
    // run-integration logs to stdout, as the original's run_integration.py.
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      outputTail = (outputTail + chunk).slice(-2000);
      pending += chunk;
      const complete = pending.split('\n');
      pending = complete.pop() ?? '';
      for (const line of complete) {
        if (runs.length >= options.iterations) continue;
        lines.push(line);
        const summary = summaryOf(line);
        if (!summary) continue;
        const status = procStatus(pid);
        const run: LoopRun = {
          index: runs.length + 1,
          exitCode: summary.exitCode,
          errors: summary.errors,
          durationSeconds: summary.durationSeconds,
          rssBytes: status.rssBytes,
          openFds: readdirSync(`/proc/${pid}/fd`).length,
          cpuMs: cpuMsOf(pid),
          lines,
        };
        lines = [];
        runs.push(run);
        const last = runs.length === options.iterations;
        if (last) {
          heapFlag = heapFlagOf(pid);
          cpuMs = run.cpuMs;
          peakRssBytes = status.peakRssBytes;
        }
        const { afterRun } = options;
        if (!afterRun) {
          if (last) resolve();
          continue;
        }
        if (!last) child.kill('SIGSTOP');
        hooks = hooks
          .then(() => afterRun(run))
          .then(
            () => {
              if (last) resolve();
              else child.kill('SIGCONT');
            },
            (e: unknown) => reject(e),
          );
      }
    });
  });
  try {
    await done;
  } finally {
    // A stopped process does not act on SIGTERM until it is continued.
    child.kill('SIGTERM');
    child.kill('SIGCONT');
  }
  return {
    runs,
    wallMs: performance.now() - started,
    cpuMs,
    peakRssBytes,
    exitCode: (await exited) ?? 1,
    heapFlag,
  };
}

/**
 * The loop scenario: a steady dry-run of the scenario's workload, with the
 * RSS read after every run. A "pod" variant emulates a container memory
 * limit by the heap size the launcher derives from it; the other one runs
 * with Node's default heap (sizing turned off).
 */
export async function runLoopScenario(
  s: LoopScenario,
  env: ScaleEnvironment,
  /** Called once the clusters are seeded (the lower bound reads what they hold). */
  onSeeded?: (fake: FakeKubeApiServer, state: ReturnType<typeof clusterState>) => void,
  /** Write a V8 CPU profile of the whole loop process (all its runs) into this directory. */
  cpuProfileDir?: string,
): Promise<LoopMeasurement> {
  const integration = INTEGRATION_OF[s.workload];
  const state = clusterState(s.workload, s.scale, NO_DRIFT);
  const fake = await env.startClusters(s.latencyMs);
  try {
    const manager = fieldManagerFor(integration);
    for (const [cluster, list] of state.objects) fake.seed(cluster, list, { manager });
    onSeeded?.(fake, state);
    fake.resetLog();
    const heapMiB =
      s.memoryLimitMiB === undefined ? 0 : heapSizeForMemoryLimit(s.memoryLimitMiB * 2 ** 20);
    const loop = await runLoopProcess({
      iterations: s.iterations,
      ...(cpuProfileDir ? { cpuProfileDir } : {}),
      env: {
        [HEAP_SIZE_ENV]: String(heapMiB ?? 0),
        INTEGRATION_NAME: integration,
        // As the in-process runs: the generated tree has no integrations_v1 entries to validate against.
        INTEGRATION_EXTRA_ARGS: `--thread-pool-size ${s.concurrency} --no-validate-schemas`,
        CONFIG: env.configPath,
        DRY_RUN: '--dry-run',
        SLEEP_DURATION_SECS: SLEEP_SECONDS,
        PROMETHEUS_PORT: '0',
        LOG_FORMAT: 'json',
        LOG_LEVEL: 'INFO',
        ...(s.desiredCacheOff ? { QONTRACT_DESIRED_CACHE: 'off' } : {}),
        // Each run then reacts to events for SLEEP_DURATION_SECS (0.1 s) after its full iteration.
        ...(s.watchCaches ? { WATCH: 'true' } : {}),
      },
      afterRun: (run) => {
        if (run.exitCode !== 0) {
          throw new Error(`run ${run.index} exited ${run.exitCode}: ${run.lines.join('\n')}`);
        }
      },
    });
    let cpuBefore = 0;
    const runCpuMs = loop.runs.map((r) => {
      const ms = r.cpuMs - cpuBefore;
      cpuBefore = r.cpuMs;
      return ms;
    });
    return {
      wallMs: loop.wallMs,
      cpuMs: loop.cpuMs,
      peakRssBytes: loop.peakRssBytes,
      // An operator's period is a run too: the SIGTERM that ends the loop
      // interrupts the next one, which exits 1 (docs/operator.md). Each run
      // measured has its own exit code checked above.
      exitCode: s.watchCaches && loop.exitCode === 1 ? 0 : loop.exitCode,
      heapFlag: loop.heapFlag,
      rssBytes: loop.runs.map((r) => r.rssBytes),
      runSeconds: loop.runs.map((r) => r.durationSeconds),
      runCpuMs,
      openFds: loop.runs.map((r) => r.openFds),
      requests: fake.requestLog.length,
    };
  } finally {
    await fake.close();
  }
}

/** The runner's summary line (`<integration> finished: ...`), if this is one. */
function summaryOf(
  line: string,
): { exitCode: number; errors: number; durationSeconds: number } | undefined {
  if (!line.includes('"summary"')) return undefined;
  try {
    const { summary } = JSON.parse(line) as {
      summary?: { exit_code: number; errors: number; duration_seconds: number };
    };
    return summary
      ? {
          exitCode: summary.exit_code,
          errors: summary.errors,
          durationSeconds: summary.duration_seconds,
        }
      : undefined;
  } catch {
    return undefined;
  }
}

function procStatus(pid: number): { rssBytes: number; peakRssBytes: number } {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1]);
  return { rssBytes: kb('VmRSS') * 1024, peakRssBytes: kb('VmHWM') * 1024 };
}

function heapFlagOf(pid: number): string | null {
  const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  return argv.find((a) => /^--max[-_]old[-_]space[-_]size/.test(a)) ?? null;
}

/** User + system CPU of the process so far (fields 14 and 15 of /proc/PID/stat). */
function cpuMsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may hold spaces; the fields after its closing parenthesis do not.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) / USER_HZ) * 1000;
}
