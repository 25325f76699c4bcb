import { request } from 'node:https';
import { join } from 'node:path';
import { createMetrics, type Metrics } from '@qontract/core';
import type { ExampleEnvironment } from '@qontract/testing';
import { describe, expect, it, onTestFinished } from 'vitest';
import { runCli } from '../main.ts';
import { runIntegrationLoop } from '../run-integration.ts';
import {
  commitBundle,
  editFile,
  observedReconcileTimes,
  useExampleEnvironment,
} from './harness.ts';

const start = useExampleEnvironment();

const CLUSTER = 'appint-ex-01';
const NS = 'example-app-stage';
/** Convergence waits: generous for a loaded 2-core machine; nothing here asserts a duration. */
const CONVERGED = { timeout: 20_000, interval: 20 } as const;
const OUR_MANAGER = 'qontract-reconcile-openshift-resources';

type Obj = {
  metadata: { name: string; annotations?: Record<string, string> };
  data?: Record<string, string>;
};

interface WatchRun {
  /** Log messages so far at or above `level`. */
  messages(level?: number): string[];
  /** Stops the run (the stop signal) and returns its exit code. */
  stop(): Promise<number>;
  readonly metrics: Metrics;
}

/** `qontract-reconcile ... --watch` in-process, until `stop()`; resolves once the first iteration is done. */
async function startWatching(env: ExampleEnvironment, args: readonly string[]): Promise<WatchRun> {
  const controller = new AbortController();
  const metrics = createMetrics();
  let stderr = '';
  const running = runCli(['--log-format', 'json', '--config', env.configPath, ...args, '--watch'], {
    env: {
      CLUSTER_REACHABILITY_TIMEOUT_SECS: '30',
      SLEEP_DURATION_SECS: '300',
      WATCH_BUNDLE_POLL_SECS: '0.2',
    },
    signal: controller.signal,
    metrics,
    io: { stdout: { write: () => true }, stderr: { write: (s: string) => (stderr += s) } },
  });
  const messages = (level = 30) =>
    stderr
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { msg: string; level: number })
      .filter((l) => l.level >= level)
      .map((l) => l.msg);
  let stopped = false;
  const stop = async () => {
    if (!stopped) controller.abort(new Error('test over'));
    stopped = true;
    return running;
  };
  onTestFinished(async () => {
    await stop();
  });
  await expect
    .poll(() => messages().some((m) => m.startsWith('watching ')), {
      ...CONVERGED,
      timeout: 60_000,
    })
    .toBe(true);
  return { messages, stop, metrics };
}

/** Another client of the cluster: plain HTTPS requests, as any tool would send them. */
function clientOf(env: ExampleEnvironment) {
  const c = env.server.cluster(CLUSTER);
  const send = (method: string, path: string, body?: unknown): Promise<number> =>
    new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const req = request(
        new URL(path, c.url),
        {
          method,
          ca: c.caCertificate,
          agent: false,
          headers: {
            Authorization: `Bearer ${c.token}`,
            ...(payload ? { 'Content-Type': 'application/merge-patch+json' } : {}),
          },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  const path = (name: string) => `/api/v1/namespaces/${NS}/configmaps/${name}`;
  return {
    patch: (name: string, data: Record<string, string>, fieldManager = 'someone-else') =>
      send('PATCH', `${path(name)}?fieldManager=${fieldManager}`, { data }),
    delete: (name: string) => send('DELETE', path(name)),
  };
}

const cm = (env: ExampleEnvironment, name: string) =>
  env.server.get(CLUSTER, 'v1', 'ConfigMap', NS, name) as Obj | undefined;

describe('--watch: openshift-resources as an operator', () => {
  it('reverts edits and deletions, leaves unmanaged objects alone, applies a changed resource file without listing', async () => {
    const env = await start({ namespaces: true });
    const { server } = env;
    server.seed(CLUSTER, [
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'unmanaged', namespace: NS },
        data: { a: '1' },
      },
    ]);
    const watching = await startWatching(env, ['openshift-resources']);
    const desired = cm(env, 'example-app-settings')!;
    expect(desired.metadata.annotations?.['qontract.integration']).toBe('openshift_resources');
    const lists = server.requests({ verb: 'list' }).length;
    server.resetLog();

    // An edit by another client is written back.
    const other = clientOf(env);
    await other.patch('example-app-settings', { GREETING: 'hijacked' }, 'someone-else');
    await expect.poll(() => cm(env, 'example-app-settings')?.data, CONVERGED).toEqual(desired.data);

    // A deletion is re-created.
    await other.delete('example-app-banner');
    await expect.poll(() => cm(env, 'example-app-banner') !== undefined, CONVERGED).toBe(true);

    // An object without our annotations, in a managed kind, is never touched.
    await other.patch('unmanaged', { a: '2' });
    await other.delete('unmanaged');

    // A changed resource file: the new desired state is applied from the caches.
    await editFile(join(env.appInterfaceDir, 'resources/example-app/configmap.yml'), (t) =>
      t.replace('CACHE_TTL_SECONDS: "300"', 'CACHE_TTL_SECONDS: "900"'),
    );
    await expect
      .poll(() => cm(env, 'example-app-config')?.data?.CACHE_TTL_SECONDS, CONVERGED)
      .toBe('900');

    const code = await watching.stop();
    expect(lists).toBeGreaterThan(0);
    // Nothing was listed after the first iteration: events and the caches did it all.
    expect(server.requests({ verb: 'list' })).toEqual([]);
    const ours = server
      .mutatingRequests({ cluster: CLUSTER })
      .filter((r) => r.fieldManager === OUR_MANAGER);
    expect(ours.map((r) => r.name)).not.toContain('unmanaged');
    expect(server.mutatingRequests({ name: 'unmanaged' }).map((r) => r.verb)).toEqual([
      'patch',
      'delete',
    ]);
    expect(server.mutatingRequests({ verb: 'delete' }).map((r) => r.name)).toEqual([
      'example-app-banner',
      'unmanaged',
    ]);
    expect(
      watching.messages(50).filter((m) => !m.includes('interrupted by a stop signal')),
    ).toEqual([]);
    expect(code).toBe(1); // interrupted by the stop signal, as any stopped run
    const exported = await watching.metrics.registry.metrics();
    expect(exported).toMatch(
      /qontract_reconcile_watch_drift_reverted_total\{integration="openshift-resources",cluster="appint-ex-01",kind="ConfigMap"\} [1-9]/,
    );
    expect(exported).toMatch(/qontract_reconcile_watch_reaction_seconds_count\{[^}]*\} [1-9]/);
    expect(exported).toMatch(
      /qontract_reconcile_watch_cache_objects\{[^}]*kind="ConfigMap"\} [1-9]/,
    );
  });

  it("times each reverted drift since the bundle's commit, as a run times its writes", async () => {
    const env = await start({ namespaces: true });
    await commitBundle(env.appInterfaceDir, 60);
    const watching = await startWatching(env, ['openshift-resources']);
    const desired = cm(env, 'example-app-settings')!;
    const applied = () => observedReconcileTimes(watching.metrics, 'apply', 'openshift-resources');
    const first = await applied();
    expect(first).toBeGreaterThan(0); // the first iteration's applies
    await clientOf(env).patch('example-app-settings', { GREETING: 'hijacked' }, 'someone-else');
    await expect.poll(() => cm(env, 'example-app-settings')?.data, CONVERGED).toEqual(desired.data);
    await expect.poll(applied, CONVERGED).toBe(first + 1);
    await watching.stop();
  });

  it('backs off from a writer that keeps changing an object back, and reports it once', async () => {
    const env = await start({ namespaces: true });
    const watching = await startWatching(env, ['openshift-resources']);
    const rival = clientOf(env);
    env.server.resetLog();
    const reports = () => watching.messages(50).filter((m) => m.includes('keeps being changed'));
    let reportedAt: number | undefined;
    // Another controller: whenever the object is not its way, it changes it back, for 2.5 s
    // after our report.
    while (reportedAt === undefined || performance.now() - reportedAt < 2_500) {
      if (cm(env, 'example-app-settings')?.data?.GREETING !== 'mine') {
        await rival.patch('example-app-settings', { GREETING: 'mine' }, 'rival-controller');
      }
      if (reportedAt === undefined && reports().length > 0) reportedAt = performance.now();
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(reports()).toEqual([
      expect.stringMatching(
        /^\[appint-ex-01\/example-app-stage\] ConfigMap\/example-app-settings keeps being changed by field manager 'rival-controller' after our fixes \(3 in 60s\): backing off/,
      ),
    ]);
    // Backed off (1 s, then 2 s, ...) rather than a fix every few milliseconds.
    const fixes = ourApplies(env, 'example-app-settings');
    expect(fixes).toBeGreaterThanOrEqual(3);
    expect(fixes).toBeLessThanOrEqual(5);
    expect(
      await watching.metrics.registry.getSingleMetricAsString(
        'qontract_reconcile_watch_fights_total',
      ),
    ).toMatch(
      /qontract_reconcile_watch_fights_total\{[^}]*cluster="appint-ex-01"[^}]*kind="ConfigMap"\} 1/,
    );
    await watching.stop();
  });

  it('--dry-run --watch only logs what it would do', async () => {
    const env = await start({ namespaces: true });
    const wet = await startWatching(env, ['openshift-resources']);
    await wet.stop();
    const dry = await startWatching(env, ['--dry-run', 'openshift-resources']);
    env.server.resetLog();
    await clientOf(env).patch('example-app-settings', { GREETING: 'edited' });
    await clientOf(env).delete('example-app-banner');
    await expect
      .poll(() => dry.messages().filter((m) => m.startsWith("['apply'")), CONVERGED)
      .toEqual(
        expect.arrayContaining([
          `['apply', 'privileged=False', '${CLUSTER}', '${NS}', 'ConfigMap', 'example-app-settings']`,
          `['apply', 'privileged=False', '${CLUSTER}', '${NS}', 'ConfigMap', 'example-app-banner']`,
        ]),
      );
    await dry.stop();
    // Only the test's own two writes reached the cluster.
    expect(env.server.mutatingRequests().map((r) => r.verb)).toEqual(['patch', 'delete']);
    expect(cm(env, 'example-app-settings')?.data?.GREETING).toBe('edited');
    expect(cm(env, 'example-app-banner')).toBeUndefined();
  });
});

describe('WATCH=true under run-integration: an engine integration as an operator', () => {
  it('resyncs every SLEEP_DURATION_SECS from the caches (no list after the first run) and re-creates a deleted object', async () => {
    const env = await start({ namespaces: true });
    const { server } = env;
    const controller = new AbortController();
    const metrics = createMetrics();
    server.resetLog();
    const loop = runIntegrationLoop(
      {
        INTEGRATION_NAME: 'openshift-limitranges',
        CONFIG: env.configPath,
        WATCH: 'true',
        SLEEP_DURATION_SECS: '1',
        PROMETHEUS_PORT: '0',
        LOG_FORMAT: 'json',
        CLUSTER_REACHABILITY_TIMEOUT_SECS: '30',
      },
      {
        signal: controller.signal,
        metrics,
        io: { stdout: { write: () => true }, stderr: { write: () => true } },
      },
    );
    onTestFinished(async () => {
      controller.abort();
      await loop;
    });
    const runs = async () =>
      Number(
        /qontract_reconcile_execution_counter_total\{[^}]*\} (\d+)/.exec(
          await metrics.registry.metrics(),
        )?.[1] ?? 0,
      );
    const limitRange = () =>
      server.get('appint-ex-02', 'v1', 'LimitRange', 'example-app-production', 'example-default');
    await expect.poll(() => limitRange() !== undefined, CONVERGED).toBe(true);
    await expect.poll(runs, CONVERGED).toBeGreaterThanOrEqual(2);
    const listsOfFirstRun = server.requests({ verb: 'list' }).length;
    await expect.poll(runs, CONVERGED).toBeGreaterThanOrEqual(4);

    const c = server.cluster('appint-ex-02');
    await new Promise<void>((resolve, reject) =>
      request(
        new URL('/api/v1/namespaces/example-app-production/limitranges/example-default', c.url),
        {
          method: 'DELETE',
          ca: c.caCertificate,
          agent: false,
          headers: { Authorization: `Bearer ${c.token}` },
        },
        (res) => res.resume().on('end', resolve),
      )
        .on('error', reject)
        .end(),
    );
    await expect.poll(() => limitRange() !== undefined, CONVERGED).toBe(true);
    controller.abort();
    await loop;
    expect(server.requests({ verb: 'list' }).length).toBe(listsOfFirstRun);
  });
});

function ourApplies(env: ExampleEnvironment, name: string): number {
  return env.server
    .mutatingRequests({ cluster: CLUSTER, name, verb: 'apply' })
    .filter((r) => r.fieldManager === OUR_MANAGER).length;
}
