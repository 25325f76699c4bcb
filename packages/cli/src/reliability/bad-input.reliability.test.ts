import { join } from 'node:path';
import type { ExampleEnvironment } from '@qontract/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runQontractReconcile, useExampleEnvironment } from '../e2e/harness.ts';
import {
  applyCase,
  type BadInputCase,
  type CaseRun,
  configFor,
  loadCases,
  runCase,
} from './bad-input.ts';

// The bad-input corpus (./bad-input/cases, one TOML file per case): each case
// breaks a copy of the example app-interface one way and runs a real command
// on it. Every case: the expected exit code, an error naming the file (and
// line), no stack trace, nothing deleted. All cases share one set of
// simulated clusters, converged before the first case, so a run that took a
// broken file for a missing one would plan deletions (and, run wet, send them).

const start = useExampleEnvironment();
const cases = await loadCases();
let env: ExampleEnvironment;
/** The runs of the tools (separate processes), started at once, one at a time, beside the in-process cases. */
const toolRuns = new Map<string, Promise<CaseRun>>();

async function prepare(c: BadInputCase): Promise<{ tree: string; config: string }> {
  const tree = join(env.dir, 'cases', c.name);
  const config = join(env.dir, 'cases', `${c.name}.toml`);
  await applyCase(c, env, tree);
  await configFor(env, tree, config);
  return { tree, config };
}

beforeAll(async () => {
  env = await start({ namespaces: true });
  const run = await runQontractReconcile(['--config', env.configPath, 'openshift-resources']);
  expect(run.code, run.stderr).toBe(0);
  let previous: Promise<unknown> = Promise.resolve();
  for (const c of cases.filter((c) => c.run[0] !== 'qontract-reconcile')) {
    const started = previous.then(async () => {
      const { tree, config } = await prepare(c);
      return runCase(c, env, tree, config);
    });
    started.catch(() => undefined);
    toolRuns.set(c.name, started);
    previous = started.catch(() => undefined);
  }
}, 120_000);

afterAll(() => {
  // Whatever ran, no object was ever deleted on any simulated cluster.
  expect(env.server.requestLog.filter((r) => r.verb === 'delete')).toEqual([]);
});

/** A JavaScript stack frame, raw or JSON-escaped in a log line. */
const STACK_FRAME = /(\n|\\n)\s+at \S.*[:(]/;

describe('bad-input corpus', () => {
  it.each(cases.map((c) => [c.name, c] as const))('%s', async (name, c) => {
    const logStart = env.server.requestLog.length;
    let run: CaseRun;
    if (c.run[0] === 'qontract-reconcile') {
      const { tree, config } = await prepare(c);
      run = await runCase(c, env, tree, config);
    } else {
      run = await toolRuns.get(name)!;
    }
    const requests = env.server.requestLog.slice(logStart);

    const shown = `${c.about}\n--- output (exit ${run.code}):\n${run.output.slice(0, 6000)}`;
    expect(run.code, shown).toBe(c.exit);
    for (const pattern of c.errors) expect(run.errorText, shown).toMatch(new RegExp(pattern));
    for (const pattern of c.output) expect(run.output, shown).toMatch(new RegExp(pattern));
    for (const pattern of c.absent) expect(run.output, shown).not.toMatch(new RegExp(pattern));
    expect(run.output, shown).not.toMatch(STACK_FRAME);
    // Planned deletions are logged, as the original does, and each is then
    // held back ("'delete' action is disabled due to previous errors (N held back).").
    if (run.code !== 0) expect(run.disabled, shown).toBe(run.deletions.length);
    if (c.run[0] === 'qontract-reconcile') {
      expect(requests.filter((r) => r.verb === 'delete')).toEqual([]);
      if (c.run.includes('--dry-run')) {
        expect(requests.filter((r) => !r.dryRun && r.method !== 'GET')).toEqual([]);
      }
    }
  });
});
