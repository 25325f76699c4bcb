import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { HEAP_SIZE_ENV, heapSizeForMemoryLimit } from '@qontract/core/launch';
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
  /** Open file descriptors (sockets included) right after each run. */
  readonly openFds: readonly number[];
  readonly requests: number;
}

/**
 * The container entry point as a pod runs it: `run-integration` (the real bin,
 * launcher included) looping over a steady dry-run of the scenario's
 * workload, with the RSS read from /proc after every run. A "pod" variant
 * emulates a container memory limit by the heap size the launcher derives
 * from it; the other one runs with Node's default heap (sizing turned off).
 */
export async function runLoopScenario(
  s: LoopScenario,
  env: ScaleEnvironment,
): Promise<LoopMeasurement> {
  const integration = INTEGRATION_OF[s.workload];
  const state = clusterState(s.workload, s.scale, NO_DRIFT);
  const fake = await env.startClusters(s.latencyMs);
  try {
    const manager = fieldManagerFor(integration);
    for (const [cluster, list] of state.objects) fake.seed(cluster, list, { manager });
    fake.resetLog();
    const heapMiB =
      s.memoryLimitMiB === undefined ? 0 : heapSizeForMemoryLimit(s.memoryLimitMiB * 2 ** 20);
    const started = performance.now();
    const child = spawn(process.execPath, [RUN_INTEGRATION], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: {
        ...process.env,
        NODE_OPTIONS: '',
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
      },
    });
    const pid = child.pid;
    if (pid === undefined) throw new Error(`could not start ${RUN_INTEGRATION}`);
    const rssBytes: number[] = [];
    const runSeconds: number[] = [];
    const openFds: number[] = [];
    let stderrTail = '';
    let pending = '';
    let heapFlag: string | null = null;
    let cpuMs = 0;
    let peakRssBytes = 0;
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    const done = new Promise<void>((resolve, reject) => {
      child.on('close', (code) => {
        if (rssBytes.length < s.iterations) {
          reject(
            new Error(
              `run-integration exited ${code} after ${rssBytes.length} run(s): ${stderrTail}`,
            ),
          );
        }
      });
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        stderrTail = (stderrTail + chunk).slice(-2000);
        pending += chunk;
        const lines = pending.split('\n');
        pending = lines.pop() ?? '';
        for (const line of lines) {
          const summary = summaryOf(line);
          if (!summary || rssBytes.length >= s.iterations) continue;
          const status = procStatus(pid);
          rssBytes.push(status.rssBytes);
          openFds.push(readdirSync(`/proc/${pid}/fd`).length);
          runSeconds.push(summary.durationSeconds);
          if (summary.exitCode !== 0) {
            reject(new Error(`run ${rssBytes.length} exited ${summary.exitCode}: ${stderrTail}`));
          }
          if (rssBytes.length === s.iterations) {
            heapFlag = heapFlagOf(pid);
            cpuMs = cpuMsOf(pid);
            peakRssBytes = status.peakRssBytes;
            resolve();
          }
        }
      });
    });
    try {
      await done;
    } finally {
      child.kill('SIGTERM');
    }
    const exitCode = (await exited) ?? 1;
    return {
      wallMs: performance.now() - started,
      cpuMs,
      peakRssBytes,
      exitCode,
      heapFlag,
      rssBytes,
      runSeconds,
      openFds,
      requests: fake.requestLog.length,
    };
  } finally {
    await fake.close();
  }
}

/** The runner's summary line (`<integration> finished: ...`), if this is one. */
function summaryOf(line: string): { exitCode: number; durationSeconds: number } | undefined {
  if (!line.includes('"summary"')) return undefined;
  try {
    const { summary } = JSON.parse(line) as {
      summary?: { exit_code: number; duration_seconds: number };
    };
    return summary
      ? { exitCode: summary.exit_code, durationSeconds: summary.duration_seconds }
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
