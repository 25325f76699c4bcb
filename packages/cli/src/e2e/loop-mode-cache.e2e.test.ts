import { join } from 'node:path';
import { LoopScope } from '@qontract/core';
import type { ExampleEnvironment } from '@qontract/testing';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  type CliRun,
  editFile,
  messages,
  runQontractReconcile,
  useExampleEnvironment,
} from './harness.ts';

const start = useExampleEnvironment();

/** What the pipeline says it reused: `[from earlier runs, built]` of its desired objects. */
function reuse(run: CliRun): [number, number] {
  const line = messages(run, 20).find((m) => m.startsWith('desired objects:'));
  const m = /(\d+) from earlier runs, (\d+) built/.exec(line ?? '');
  if (!m) throw new Error(`no desired-cache line in:\n${run.stderr}`);
  return [Number(m[1]), Number(m[2])];
}

/** What the engine says of its lists: `[unchanged since the previous run, read]`. */
function listed(run: CliRun): [number, number] {
  const line = messages(run, 20).find((m) => m.startsWith('listed objects:'));
  const m = /(\d+) unchanged since the previous run, (\d+) read/.exec(line ?? '');
  if (!m) throw new Error(`no listed-objects line in:\n${run.stderr}`);
  return [Number(m[1]), Number(m[2])];
}

/** What the engine says it took over: `[clusters unchanged since the previous run, clusters]`. */
function unchangedClusters(run: CliRun): [number, number] {
  const line = messages(run, 20).find((m) => m.startsWith('clusters unchanged since'));
  const m = /previous run: (\d+) of (\d+)/.exec(line ?? '');
  if (!m) throw new Error(`no plan-memo line in:\n${run.stderr}`);
  return [Number(m[1]), Number(m[2])];
}

const data = (env: ExampleEnvironment, name: string) =>
  (
    env.server.get('appint-ex-01', 'v1', 'ConfigMap', 'example-app-stage', name) as
      | { data?: Record<string, string> }
      | undefined
  )?.data;

/** `kubectl edit` of the example ConfigMap on appint-ex-01: another field manager's value. */
function editByHand(env: ExampleEnvironment): void {
  const live = env.server.get(
    'appint-ex-01',
    'v1',
    'ConfigMap',
    'example-app-stage',
    'example-app-config',
  )!;
  env.server.seed(
    'appint-ex-01',
    [{ ...live, data: { ...(live.data as object), CACHE_TTL_SECONDS: '1' } }],
    { manager: 'kubectl-edit' },
  );
}

describe('openshift-resources in loop mode (runs in one process)', () => {
  it('reuses unchanged objects, rebuilds an edited file, and still reverts a hand edit', async () => {
    const env = await start({ namespaces: true });
    const { server, configPath, appInterfaceDir } = env;
    // The runs of one loop (run-integration) share its scope.
    const loop = new LoopScope({ repeats: true, env: {} });
    onTestFinished(() => loop.close());
    const runOnce = () =>
      runQontractReconcile(
        ['--config', configPath, '--log-level', 'DEBUG', 'openshift-resources'],
        {},
        loop,
      );

    const first = await runOnce();
    expect(first.code).toBe(0);
    // Nothing is kept yet: every listed object is read, every cluster planned.
    expect(listed(first)[0]).toBe(0);
    const [, clusters] = unchangedClusters(first);
    expect(unchangedClusters(first)).toEqual([0, clusters]);
    expect(clusters).toBeGreaterThan(1);
    // Namespaces that share a resource file build it once.
    const [sharedInFirstRun, builtInFirstRun] = reuse(first);
    expect(builtInFirstRun).toBeGreaterThan(1);
    const built = sharedInFirstRun + builtInFirstRun;

    // Nothing changed: everything comes from the cache, nothing is written.
    server.resetLog();
    const second = await runOnce();
    expect(second.code).toBe(0);
    expect(reuse(second)).toEqual([built, 0]);
    expect(server.mutatingRequests()).toEqual([]);
    // The first run's cluster clients are kept: each cluster is checked, not discovered again.
    expect(server.requests({ verb: 'discovery' })).toEqual([]);
    expect(server.requests({ verb: 'other' }).map((r) => r.path)).toContain('/version');
    const [unchanged, read] = listed(second);
    const objects = unchanged + read;
    expect(objects).toBeGreaterThan(1);
    // The first run applied to every cluster: each one is planned again.
    expect(unchangedClusters(second)).toEqual([0, clusters]);

    // Again: the cluster objects are listed again, and none of them is decoded again.
    server.resetLog();
    const steady = await runOnce();
    expect(steady.code).toBe(0);
    expect(server.requests({ verb: 'list' }).length).toBeGreaterThan(0);
    expect(listed(steady)).toEqual([objects, 0]);
    expect(server.mutatingRequests()).toEqual([]);
    // The second run planned nothing and read the same objects: no cluster is compared again,
    // appint-ex-02 included, which reads a Deployment by name (managedResourceNames, a GET).
    expect(unchangedClusters(steady)).toEqual([clusters, clusters]);

    // Edited by hand on the cluster: the cached desired object still reverts it.
    editByHand(env);
    server.resetLog();
    const third = await runOnce();
    expect(third.code).toBe(0);
    expect(reuse(third)).toEqual([built, 0]);
    // The object edited by hand is read afresh (its bytes changed), the others are not; its
    // cluster is planned again, the others are not.
    expect(listed(third)).toEqual([objects - 1, 1]);
    expect(unchangedClusters(third)).toEqual([clusters - 1, clusters]);
    expect(data(env, 'example-app-config')?.CACHE_TTL_SECONDS).toBe('300');
    expect(server.mutatingRequests().map((r) => r.name)).toEqual(['example-app-config']);

    // A resource file edited between runs: only it is built again, and applied.
    await editFile(join(appInterfaceDir, 'resources/example-app/configmap.yml'), (t) =>
      t.replace('CACHE_TTL_SECONDS: "300"', 'CACHE_TTL_SECONDS: "600"'),
    );
    server.resetLog();
    const fourth = await runOnce();
    expect(fourth.code).toBe(0);
    const [reused, rebuilt] = reuse(fourth);
    expect(rebuilt).toBeGreaterThanOrEqual(1);
    expect(reused).toBeGreaterThan(0);
    expect(reused + rebuilt).toBe(built);
    // The third run's apply changed the object: read afresh once more.
    expect(listed(fourth)).toEqual([objects - 1, 1]);
    expect(data(env, 'example-app-config')?.CACHE_TTL_SECONDS).toBe('600');
    expect(server.mutatingRequests().every((r) => r.name === 'example-app-config')).toBe(true);
    expect(unchangedClusters(fourth)[0]).toBeLessThan(clusters - 1);
    // The loop stops: its kept clients are closed.
    loop.close();
  });

  it('with QONTRACT_LOOP_CACHES=off, the same loop keeps nothing between runs and does the same', async () => {
    const env = await start({ namespaces: true });
    const { server, configPath, appInterfaceDir } = env;
    const loop = new LoopScope({ repeats: true, env: { QONTRACT_LOOP_CACHES: 'off' } });
    onTestFinished(() => loop.close());
    const runOnce = () =>
      runQontractReconcile(
        ['--config', configPath, '--log-level', 'DEBUG', 'openshift-resources'],
        { QONTRACT_LOOP_CACHES: 'off' },
        loop,
      );
    const applied = () => server.mutatingRequests().map((r) => r.name);
    const first = await runOnce();
    expect(first.code).toBe(0);

    server.resetLog();
    const second = await runOnce();
    expect(second.code).toBe(0);
    // Everything is built again as in the first run (files shared by namespaces built once a
    // run), every cluster planned again; nothing is written.
    expect(reuse(second)).toEqual(reuse(first));
    expect(messages(second, 20).some((m) => m.startsWith('listed objects:'))).toBe(false);
    expect(messages(second, 20).some((m) => m.startsWith('clusters unchanged since'))).toBe(false);
    expect(applied()).toEqual([]);

    // A hand edit is reverted, an edited file applied: as with the caches.
    editByHand(env);
    server.resetLog();
    expect((await runOnce()).code).toBe(0);
    expect(applied()).toEqual(['example-app-config']);
    await editFile(join(appInterfaceDir, 'resources/example-app/configmap.yml'), (t) =>
      t.replace('CACHE_TTL_SECONDS: "300"', 'CACHE_TTL_SECONDS: "600"'),
    );
    server.resetLog();
    expect((await runOnce()).code).toBe(0);
    expect(data(env, 'example-app-config')?.CACHE_TTL_SECONDS).toBe('600');
    expect(applied().every((name) => name === 'example-app-config')).toBe(true);
  });
});
