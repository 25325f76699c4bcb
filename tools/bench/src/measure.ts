import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { launchFlags } from '@qontract/core/launch';
import type { InFlightCounts } from '@qontract/fake-kube-apiserver';
import type { ChildMeasurement, ChildTask } from './child-tasks.ts';

const CHILD = join(import.meta.dirname, 'child.ts');
const RESULT_PREFIX = 'BENCH_RESULT ';

export interface MeasureOptions {
  /** Write a V8 CPU profile of the child into this directory (`node --cpu-prof`). */
  readonly cpuProfileDir?: string | undefined;
}

/** Runs `task` in a fresh Node process and returns what it measured about itself. */
export function measureInChild(
  task: ChildTask,
  options: MeasureOptions = {},
): Promise<ChildMeasurement> {
  const profile = options.cpuProfileDir
    ? ['--cpu-prof', '--cpu-prof-dir', options.cpuProfileDir]
    : [];
  // The V8 flags a command's launcher would give it (collector tuning; a heap
  // size in a container with a memory limit), so the child measures what runs.
  const launcher = launchFlags({ ...process.env, NODE_OPTIONS: '' }, []);
  const child = spawn(process.execPath, [...launcher, ...profile, CHILD, JSON.stringify(task)], {
    stdio: ['ignore', 'pipe', 'pipe'],
    // The parent's event loop serves the simulated clusters; the child must not inherit --inspect etc.
    // It runs in production, as the launcher of every command sets it (graphql-js skips its
    // development checks), unless NODE_ENV says otherwise.
    env: { ...process.env, NODE_OPTIONS: '', NODE_ENV: process.env.NODE_ENV ?? 'production' },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
  child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      const line = stdout.split('\n').find((l) => l.startsWith(RESULT_PREFIX));
      if (!line) {
        reject(
          new Error(`benchmark child exited ${code} without a result: ${stderr.slice(-2000)}`),
        );
        return;
      }
      resolve(JSON.parse(line.slice(RESULT_PREFIX.length)) as ChildMeasurement);
    });
  });
}

/** A peer's requests of a measured run: how many, the most in flight at once, the mean while busy. */
export interface InFlightSummary {
  readonly requests: number;
  readonly max: number;
  readonly mean: number;
}

export function inFlightSummary(counts: InFlightCounts): InFlightSummary {
  return {
    requests: counts.started,
    max: counts.max,
    mean: counts.busyMs > 0 ? counts.requestMs / counts.busyMs : 0,
  };
}
