import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { LoopScope, Metrics } from '@qontract/core';
import { type ExampleEnvironment, startExampleEnvironment } from '@qontract/testing';
import { afterAll, afterEach, beforeEach, vi } from 'vitest';
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
  /** The loop the run is one of: runs that share a repeating scope are a loop (run-integration's). */
  loop?: LoopScope,
  /** The run's metrics, for a test that reads them. */
  metrics?: Metrics,
): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(['--log-format', 'json', ...argv], {
    // A loaded test machine must not make a simulated cluster look unreachable.
    env: { CLUSTER_REACHABILITY_TIMEOUT_SECS: '30', ...env },
    ...(loop ? { loop } : {}),
    ...(metrics ? { metrics } : {}),
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

/** The plan lines of a run: the original's `['apply', ...]`-style action messages. */
export function planLines(run: CliRun): string[] {
  return messages(run).filter((m) => m.startsWith('['));
}

interface StartOptions extends NonNullable<Parameters<typeof startExampleEnvironment>[0]> {
  /**
   * Create the example namespaces with `openshift-namespaces` first, the way
   * production does it: what every integration that fills namespaces starts from.
   */
  readonly namespaces?: boolean;
}

/**
 * The lifecycle of the example environments of an e2e file. Call it once at
 * the top of the file; it returns the function that starts an environment.
 * An environment started by a test is closed when that test ends, one started
 * in `beforeAll` when the file's tests are done, so no test closes anything.
 */
export function useExampleEnvironment(): (options?: StartOptions) => Promise<ExampleEnvironment> {
  const ofTest: ExampleEnvironment[] = [];
  const ofFile: ExampleEnvironment[] = [];
  let inTest = false;
  beforeEach(() => {
    inTest = true;
  });
  afterEach(async () => {
    inTest = false;
    await closeAll(ofTest);
  });
  afterAll(() => closeAll(ofFile));
  return async ({ namespaces = false, ...options } = {}) => {
    const env = await startExampleEnvironment(options);
    (inTest ? ofTest : ofFile).push(env);
    if (namespaces) await createNamespaces(env);
    return env;
  };
}

async function closeAll(envs: ExampleEnvironment[]): Promise<void> {
  await Promise.all(envs.splice(0).map((env) => env.close()));
}

/** Runs `openshift-namespaces` on the environment, as production does before anything fills them. */
export async function createNamespaces(env: ExampleEnvironment): Promise<void> {
  const run = await runQontractReconcile(['--config', env.configPath, 'openshift-namespaces']);
  if (run.code !== 0) {
    throw new Error(`openshift-namespaces failed (exit ${run.code}):\n${run.stderr}`);
  }
}

/** Rewrites a file (of the environment's app-interface copy, usually) through `change`. */
export async function editFile(path: string, change: (text: string) => string): Promise<void> {
  await writeFile(path, change(await readFile(path, 'utf8')));
}

/**
 * A new user in the environment's app-interface copy
 * (`data/access/users/<org_username>.yml`), holding `roles` (role file paths
 * such as `/access/roles/github-developers.yml`).
 */
export async function addUserFile(
  env: ExampleEnvironment,
  user: { orgUsername: string; githubUsername: string; roles: readonly string[] },
): Promise<void> {
  await writeFile(
    join(env.appInterfaceDir, 'data/access/users', `${user.orgUsername}.yml`),
    [
      '---',
      '$schema: /access/user-1.yml',
      'labels: {}',
      `name: ${user.orgUsername}`,
      `org_username: ${user.orgUsername}`,
      `github_username: ${user.githubUsername}`,
      'roles:',
      ...user.roles.map((r) => `  - $ref: ${r}`),
      '',
    ].join('\n'),
  );
}

/**
 * Sorted names of the objects of a kind on a simulated cluster: in a namespace,
 * or all of them (cluster-scoped kinds) without one.
 */
export function objectNames(
  env: ExampleEnvironment,
  cluster: string,
  apiVersion: string,
  kind: string,
  namespace?: string,
): string[] {
  return env.server
    .list(cluster, apiVersion, kind, namespace)
    .map((o) => (o as { metadata: { name: string } }).metadata.name)
    .sort();
}

/** Moved to @qontract/testing (the MR check's e2e points its copy at the fakes too). */
export { rewriteAppInterface } from '@qontract/testing';

const git = promisify(execFile);

export const RECONCILE_TIME = 'qontract_reconcile_function_elapsed_seconds_since_bundle_commit';

/** Makes the app-interface checkout a git repository whose HEAD (the bundle's commit) is `ago` seconds old. */
export async function commitBundle(dir: string, ago: number): Promise<number> {
  const committed = Math.floor(Date.now() / 1000) - ago;
  const vars = {
    ...process.env,
    GIT_AUTHOR_DATE: `@${committed} +0000`,
    GIT_COMMITTER_DATE: `@${committed} +0000`,
  };
  const identity = ['-c', 'user.name=t', '-c', 'user.email=t@example.com'];
  await git('git', ['init', '-q', dir]);
  await git('git', ['-C', dir, 'add', '-A']);
  await git('git', ['-C', dir, ...identity, 'commit', '-q', '-m', 'bundle'], { env: vars });
  return committed;
}

/** The `_count` sample of the histogram for one timed function of one integration. */
export async function observedReconcileTimes(
  metrics: Metrics,
  fn: string,
  integration: string,
): Promise<number> {
  const labels = `name="reconcile.utils.oc.OCCli.${fn}",integration="${integration}"`;
  const line = (await metrics.registry.metrics())
    .split('\n')
    .find((l) => l.startsWith(`${RECONCILE_TIME}_count{${labels}} `));
  return Number(line?.split(' ')[1] ?? 0);
}
