import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import {
  ConfigSecretReader,
  configFromObject,
  createLogger,
  DEFAULT_GLOBAL_OPTIONS,
  defineIntegration,
  LoopScope,
  type RunContext,
  runIntegration,
  SecretRedactor,
} from '@qontract/core';
import { type FakeKubeApiServer, startFakeKubeApiServer } from '@qontract/fake-kube-apiserver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterMapForClusters } from '../cluster/for-run.ts';
import { OpenshiftResource } from '../resource/openshift-resource.ts';
import type { BundleSource } from './bundle-source.ts';
import { runWatchMode, type WatchedState } from './watch-mode.ts';

const INTEGRATION = 'openshift_watch_test';
const VERSION = '1.0.0';
const NAMESPACES = ['a1', 'a2', 'a3', 'a4'];
const CONVERGED = { timeout: 20_000, interval: 20 } as const;
let server: FakeKubeApiServer;

beforeAll(async () => {
  server = await startFakeKubeApiServer({ clusters: [{ name: 'c1', token: 't1' }] });
  server.seed(
    'c1',
    NAMESPACES.map((name) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } })),
  );
});
afterAll(async () => server.close());

const cm = (name: string, data: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name },
  data,
});
const get = (ns: string, name: string) =>
  server.get('c1', 'v1', 'ConfigMap', ns, name) as { data?: Record<string, string> } | undefined;

/**
 * One watch-mode run through core's runner; `bundle` is what the desired state
 * reads, and its version what the bundle source reports.
 */
function watch(
  bundle: { version: number; greeting: string; namespaces?: readonly string[] },
  stop: AbortSignal,
  resyncSeconds = 60,
  loop?: LoopScope,
  /** An error the run registers elsewhere (a failed read of another cluster, say). */
  errorElsewhere?: string,
) {
  const logs: Array<{ msg: string; level: number }> = [];
  const redactor = new SecretRedactor();
  const config = configFromObject({
    graphql: { server: 'file://unused' },
    creds: { c1: { server: server.cluster('c1').url, token: 't1' } },
  });
  const source: BundleSource = {
    version: async () => String(bundle.version),
    open: async (ctx) => ({ ctx, close: async () => {} }),
  };
  const prepare = async (ctx: RunContext): Promise<WatchedState> => {
    if (errorElsewhere) ctx.errors.register('elsewhere', errorElsewhere);
    const clusters = await clusterMapForClusters(ctx, [
      {
        name: 'c1',
        serverUrl: server.cluster('c1').url,
        insecureSkipTLSVerify: true,
        automationToken: { path: 'creds/c1', field: 'token' },
      },
    ]);
    return {
      integration: INTEGRATION,
      integrationVersion: VERSION,
      clusters,
      specs: (bundle.namespaces ?? NAMESPACES).map((namespace) => ({
        cluster: 'c1',
        namespace,
        kind: 'ConfigMap',
        privileged: false,
      })),
      desired: (bundle.namespaces ?? NAMESPACES).map((namespace) => ({
        cluster: 'c1',
        namespace,
        resource: new OpenshiftResource(
          cm('settings', { greeting: bundle.greeting }),
          INTEGRATION,
          VERSION,
        ),
      })),
    };
  };
  const def = defineIntegration({
    name: 'openshift-watch-test',
    version: VERSION,
    description: 'watch test',
    options: {},
    run: (ctx) => runWatchMode({ ctx, prepare, resyncSeconds, bundle: source, bundlePollMs: 50 }),
  });
  const result = runIntegration({
    definition: def,
    options: {},
    globals: { ...DEFAULT_GLOBAL_OPTIONS, configPath: '' },
    config,
    log: createLogger({
      level: 'DEBUG',
      dryRun: false,
      redactor,
      destination: { write: (l: string) => logs.push(JSON.parse(l)) },
    }),
    redactor,
    env: { vars: {} },
    secrets: () => new ConfigSecretReader(config, redactor),
    signal: stop,
    ...(loop ? { loop } : {}),
  });
  return { result, messages: () => logs.map((l) => l.msg) };
}

describe('runWatchMode against the fake API server', () => {
  it('falls back to per-namespace watches when the cluster-wide list is refused, reverts drift, applies a new bundle from the caches', async () => {
    // The integration's service account may list only its namespaces.
    server.faults.set('c1', { verb: 'list', namespace: '', status: 403 });
    server.faults.set('c1', { verb: 'watch', namespace: '', status: 403 });
    const bundle = { version: 1, greeting: 'hello' };
    const stop = new AbortController();
    const run = watch(bundle, stop.signal);
    try {
      await expect
        .poll(() => run.messages().some((m) => m.startsWith('watching 4 kind cache(s)')), CONVERGED)
        .toBe(true);
      expect(NAMESPACES.map((ns) => get(ns, 'settings')?.data)).toEqual(
        NAMESPACES.map(() => ({ greeting: 'hello' })),
      );
      server.resetLog();

      server.seed('c1', [
        {
          ...cm('settings', { greeting: 'edited' }),
          metadata: { name: 'settings', namespace: 'a3' },
        },
      ]);
      await expect
        .poll(() => get('a3', 'settings')?.data, CONVERGED)
        .toEqual({ greeting: 'hello' });

      bundle.greeting = 'bonjour';
      bundle.version = 2;
      await expect
        .poll(() => NAMESPACES.map((ns) => get(ns, 'settings')?.data?.greeting), CONVERGED)
        .toEqual(NAMESPACES.map(() => 'bonjour'));
      expect(server.requests({ verb: 'list' })).toEqual([]);
      expect(
        server
          .requests({ verb: 'apply' })
          .map((r) => r.namespace)
          .sort(),
      ).toEqual(['a1', 'a2', 'a3', 'a3', 'a4']);
    } finally {
      stop.abort();
      server.faults.clear();
    }
    const { errors } = await run.result;
    expect(errors.errors).toEqual([]);
  });

  it("records a Kubernetes Event on each reverted drift and on a fight, in the object's namespace", async () => {
    const bundle = { version: 1, greeting: 'hello' };
    const stop = new AbortController();
    const run = watch(bundle, stop.signal);
    const events = () =>
      server.list('c1', 'v1', 'Event', 'a2') as Array<{
        type: string;
        reason: string;
        message: string;
        involvedObject: Record<string, unknown>;
        source: { component: string };
        count: number;
      }>;
    const edits = 3;
    // Events elsewhere (earlier tests share the server), to see that this one adds none there.
    const elsewhere = () =>
      NAMESPACES.filter((ns) => ns !== 'a2').flatMap((ns) => server.list('c1', 'v1', 'Event', ns));
    const before = elsewhere().length;
    try {
      await expect
        .poll(() => run.messages().some((m) => m.startsWith('watching ')), CONVERGED)
        .toBe(true);
      expect(NAMESPACES.map((ns) => get(ns, 'settings')?.data?.greeting)).toEqual(
        NAMESPACES.map(() => 'hello'),
      );
      // The first iteration's writes are the ordinary run, not drift: no Event.
      expect(events()).toEqual([]);
      // Another controller keeps changing it back: each of its edits is reverted...
      for (let i = 1; i <= edits; i++) {
        server.seed(
          'c1',
          [
            {
              ...cm('settings', { greeting: `rival ${i}` }),
              metadata: { name: 'settings', namespace: 'a2' },
            },
          ],
          { manager: 'rival-controller' },
        );
        await expect.poll(() => get('a2', 'settings')?.data?.greeting, CONVERGED).toBe('hello');
      }
      await expect.poll(() => events().length, CONVERGED).toBe(edits + 1);
    } finally {
      stop.abort();
    }
    const configMap = server.get('c1', 'v1', 'ConfigMap', 'a2', 'settings');
    const uid = (configMap?.metadata as { uid?: string } | undefined)?.uid;
    expect(uid).toBeTruthy();
    const involved = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      name: 'settings',
      namespace: 'a2',
      uid,
    };
    const reverted = events().filter((e) => e.reason === 'DriftReverted');
    expect(reverted).toHaveLength(edits);
    for (const e of reverted) {
      expect(e).toMatchObject({
        type: 'Normal',
        involvedObject: involved,
        source: { component: 'qontract-reconcile-openshift-watch-test' },
        count: 1,
        message:
          "ConfigMap/settings was changed (replace /data/greeting) by field manager 'rival-controller': openshift-watch-test applied the desired state again",
      });
    }
    // ...and the third fix within the minute is a fight: a Warning, as the error says.
    expect(events().filter((e) => e.reason === 'FightDetected')).toEqual([
      expect.objectContaining({
        type: 'Warning',
        involvedObject: expect.objectContaining(involved),
        message: expect.stringMatching(
          /^openshift-watch-test: ConfigMap\/settings keeps being changed by field manager 'rival-controller' after our fixes \(3 in 60s\): backing off/,
        ),
      }),
    ]);
    // No other namespace saw anything, and no Event carries the object's data.
    expect(elsewhere()).toHaveLength(before);
    expect(JSON.stringify(events())).not.toContain('rival 1');
    const { errors } = await run.result;
    expect(errors.errors.map((e) => e.message)).toEqual([
      expect.stringContaining("keeps being changed by field manager 'rival-controller'"),
    ]);
  });

  it('a delete the gate holds back is no fix: repeated events on it are not a fight', async () => {
    const bundle = { version: 1, greeting: 'hello' };
    const stop = new AbortController();
    const run = watch(bundle, stop.signal, 60, undefined, 'a failed read elsewhere');
    // An object of ours nothing desires any more: the plan deletes it, the run's error holds it back.
    const stale = (i: number) =>
      new OpenshiftResource(
        { ...cm('stale', { v: String(i) }), metadata: { name: 'stale', namespace: 'a2' } },
        INTEGRATION,
        VERSION,
      ).annotate().body as Record<string, unknown>;
    try {
      await expect
        .poll(() => run.messages().some((m) => m.startsWith('watching ')), CONVERGED)
        .toBe(true);
      for (let i = 1; i <= 4; i++) {
        server.seed('c1', [stale(i)], { manager: 'someone' });
        await expect
          .poll(
            () => run.messages().filter((m) => m.includes("'ConfigMap', 'stale'")).length,
            CONVERGED,
          )
          .toBeGreaterThanOrEqual(i);
      }
    } finally {
      stop.abort();
    }
    const { errors } = await run.result;
    expect(server.get('c1', 'v1', 'ConfigMap', 'a2', 'stale')).toBeDefined();
    expect(run.messages()).toContain(
      "'delete' action is disabled due to previous errors (1 held back).",
    );
    expect(errors.errors.map((e) => e.message)).toEqual(['a failed read elsewhere']);
    const events = server.list('c1', 'v1', 'Event', 'a2') as Array<{
      reason: string;
      involvedObject: { name: string };
    }>;
    expect(events.filter((e) => e.involvedObject.name === 'stale')).toEqual([]);
  });

  it('still reverts drift when the service account may not create Events: a warning, not an error', async () => {
    const bundle = { version: 1, greeting: 'hello' };
    const stop = new AbortController();
    const run = watch(bundle, stop.signal);
    try {
      await expect
        .poll(() => run.messages().some((m) => m.startsWith('watching ')), CONVERGED)
        .toBe(true);
      server.faults.set('c1', { verb: 'create', resource: 'events', status: 403 });
      server.seed('c1', [
        {
          ...cm('settings', { greeting: 'edited' }),
          metadata: { name: 'settings', namespace: 'a4' },
        },
      ]);
      await expect.poll(() => get('a4', 'settings')?.data?.greeting, CONVERGED).toBe('hello');
      await expect
        .poll(
          () =>
            run.messages().filter((m) => m.includes('could not record the DriftReverted event')),
          CONVERGED,
        )
        .toEqual([
          expect.stringMatching(
            /^\[c1\/a4\] could not record the DriftReverted event of ConfigMap\/settings: .*forbidden/,
          ),
        ]);
    } finally {
      stop.abort();
      server.faults.clear();
    }
    const { errors } = await run.result;
    expect(errors.errors).toEqual([]);
  });

  it('keeps only the namespaces it reads in a cluster-wide cache; a namespace added is a new cache, listed once', async () => {
    const bundle = { version: 1, greeting: 'hi', namespaces: ['a1', 'a2', 'a3'] };
    const stop = new AbortController();
    const run = watch(bundle, stop.signal);
    try {
      await expect
        .poll(() => ['a1', 'a2', 'a3'].map((ns) => get(ns, 'settings')?.data?.greeting), CONVERGED)
        .toEqual(['hi', 'hi', 'hi']);
      // a4 is not read: an edit there is nobody's business.
      server.seed('c1', [
        {
          ...cm('settings', { greeting: 'mine' }),
          metadata: { name: 'settings', namespace: 'a4' },
        },
      ]);
      server.resetLog();
      bundle.namespaces = [...NAMESPACES];
      bundle.version = 2;
      await expect.poll(() => get('a4', 'settings')?.data?.greeting, CONVERGED).toBe('hi');
      // One cluster-wide list for the new set of namespaces.
      expect(
        server.requests({ verb: 'list' }).map((r) => `${r.resource} ${r.namespace || '*'}`),
      ).toEqual(['configmaps *']);
      expect(get('a1', 'settings')?.data?.greeting).toBe('hi');
    } finally {
      stop.abort();
    }
    const { errors } = await run.result;
    expect(errors.errors).toEqual([]);
  });

  it('a later period lists nothing and borrows the cluster client of the last: no discovery, no new connection', async () => {
    const bundle = { version: 1, greeting: 'hello' };
    const stop = new AbortController();
    // run-integration with WATCH=true: each run lasts SLEEP_DURATION_SECS, the loop's scope stays.
    const loop = new LoopScope({ repeats: true, env: {} });
    let opened = 0;
    const count = () => {
      opened += 1;
    };
    try {
      expect((await watch(bundle, stop.signal, 0.2, loop).result).errors.errors).toEqual([]);
      server.resetLog();
      subscribe('net.client.socket', count);
      const second = await watch(bundle, stop.signal, 0.2, loop).result;
      expect(second.errors.errors).toEqual([]);
      const paths = server.requests({ cluster: 'c1' }).map((r) => r.path);
      expect(paths).toEqual(['/version']);
      expect(opened).toBe(0);
    } finally {
      unsubscribe('net.client.socket', count);
      stop.abort();
      loop.close();
    }
  });
});
