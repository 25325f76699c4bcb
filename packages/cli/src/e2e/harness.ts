import { type ExampleEnvironment, startExampleEnvironment } from '@qontract/testing';
import { vi } from 'vitest';
import { runCli } from '../main.ts';

// Each end-to-end test runs the CLI several times against real HTTP servers;
// on a loaded 2-core machine that takes seconds (timings belong in benchmarks).
vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  /** The log records (JSON lines) the run wrote. */
  readonly logs: Array<Record<string, unknown> & { msg: string; level: number }>;
}

/** Runs the umbrella CLI in-process, as `qontract-reconcile ARGV` would, with JSON logs captured. */
export async function runQontractReconcile(
  argv: readonly string[],
  env: Record<string, string> = {},
): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(['--log-format', 'json', ...argv], {
    // A loaded test machine must not make a simulated cluster look unreachable.
    env: { CLUSTER_REACHABILITY_TIMEOUT_SECS: '30', ...env },
    io: {
      stdout: { write: (s: string) => (stdout += s) },
      stderr: { write: (s: string) => (stderr += s) },
    },
  });
  const logs = stderr
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as CliRun['logs'][number]);
  return { code, stdout, stderr, logs };
}

/** The messages of log records at or above `level` (30 info, 40 warning, 50 error). */
export function messages(run: CliRun, level = 30): string[] {
  return run.logs.filter((l) => l.level >= level).map((l) => l.msg);
}

/**
 * The example environment with its namespaces already created by
 * `openshift-namespaces`, the way production does it: what every integration
 * that fills namespaces starts from.
 */
export async function startWithNamespaces(
  options: Parameters<typeof startExampleEnvironment>[0] = {},
): Promise<ExampleEnvironment> {
  const env = await startExampleEnvironment(options);
  const run = await runQontractReconcile(['--config', env.configPath, 'openshift-namespaces']);
  if (run.code !== 0) {
    await env.close();
    throw new Error(`openshift-namespaces failed (exit ${run.code}):\n${run.stderr}`);
  }
  return env;
}

/** Sorted names of the objects of a kind in a namespace of a simulated cluster. */
export function objectNames(
  env: ExampleEnvironment,
  cluster: string,
  apiVersion: string,
  kind: string,
  namespace: string,
): string[] {
  return env.server
    .list(cluster, apiVersion, kind, namespace)
    .map((o) => (o as { metadata: { name: string } }).metadata.name)
    .sort();
}
