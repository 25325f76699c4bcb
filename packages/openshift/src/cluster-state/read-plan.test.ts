import {
  createLogger,
  createMetrics,
  ErrorRegistry,
  LoopScope,
  SecretRedactor,
  silentLogger,
} from '@qontract/core';
import { type FakeKubeApiServer, startFakeKubeApiServer } from '@qontract/fake-kube-apiserver';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ClusterMap, type ClusterMapSettings, isClusterProblem } from '../cluster/cluster-map.ts';
import { type KubeObject, RequestAbortedError } from '../cluster/kube-client.ts';
// The polling entry the engine calls: the read plan with the relist strategy.
import { fetchCurrentState } from '../engine/fetch.ts';
import type { CurrentStateSpec, FetchedState } from './read-plan.ts';
import { watchCurrentState, watchStatesOf } from './watch.ts';

let server: FakeKubeApiServer;
let clusters: ClusterMap;
const SETTLED = { timeout: 10_000, interval: 20 } as const;

const info = (name: string) => ({
  name,
  serverUrl: server.cluster(name).url,
  insecureSkipTLSVerify: true,
  automationToken: { path: `creds/${name}`, field: 'token' },
});
const secrets = {
  read: async () => '',
  readAll: async ({ path }: { path: string }) => {
    const name = path.split('/')[1]!;
    return { server: server.cluster(name).url, token: server.cluster(name).token };
  },
};
const clusterMap = (extra: Partial<ClusterMapSettings> = {}) =>
  ClusterMap.fromClusters([info('c1'), info('c2')], { integration: 'test', secrets, ...extra });

beforeAll(async () => {
  server = await startFakeKubeApiServer({
    clusters: [
      { name: 'c1', token: 't1' },
      { name: 'c2', token: 't2' },
    ],
  });
  clusters = await clusterMap();
  const cms = (ns: string, n: number) =>
    Array.from({ length: n }, (_, i) => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: `cm-${i}`, namespace: ns },
    }));
  server.seed('c1', [...cms('a', 2), ...cms('b', 3), ...cms('c', 1), ...cms('not-ours', 4)]);
  server.seed('c2', cms('a', 2));
});
afterAll(async () => server.close());
beforeEach(() => server.resetLog());
afterEach(() => server.faults.clear());

const spec = (
  cluster: string,
  namespace: string,
  extra: Partial<CurrentStateSpec> = {},
): CurrentStateSpec => ({
  cluster,
  namespace,
  kind: 'ConfigMap',
  privileged: false,
  ...extra,
});
const count = (r: Awaited<ReturnType<typeof fetchCurrentState>>) =>
  Object.fromEntries(
    r.map((x) => [
      `${x.spec.cluster}/${x.spec.namespace}`,
      x.items.map((i) => i.metadata?.name).sort(),
    ]),
  );

const configMap = (namespace: string, name: string, k = name): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace },
  data: { k },
});

/** ConfigMaps cm-0 and cm-1 in four namespaces of c1 and one of c2, and specs reading them every way. */
function scenario(prefix: string): CurrentStateSpec[] {
  const ns = (n: string) => `${prefix}-${n}`;
  server.seed('c1', [
    ...['a', 'b', 'c', 'd'].flatMap((n) => [configMap(ns(n), 'cm-0'), configMap(ns(n), 'cm-1')]),
  ]);
  server.seed('c2', [configMap(ns('a'), 'cm-0'), configMap(ns('a'), 'cm-1')]);
  return [
    // Three namespaces of one kind: one cluster-wide list.
    spec('c1', ns('a')),
    spec('c1', ns('b')),
    spec('c1', ns('c')),
    // Names: GETs when polling, from the namespace's list when watching; in the names' order.
    spec('c1', ns('d'), { resourceNames: ['cm-1', 'missing', 'cm-0'] }),
    // One namespace: a list of its own.
    spec('c2', ns('a')),
    // A cluster-scoped kind.
    spec('c2', 'cluster', { kind: 'Namespace' }),
  ];
}

const scopeOf = (s: FetchedState) =>
  `${s.spec.cluster}/${s.spec.namespace}/${s.spec.kind}/${s.spec.resourceNames?.join(',') ?? '*'}`;
const revisions = (states: readonly FetchedState[]) =>
  Object.fromEntries(states.map((s) => [scopeOf(s), s.revision]));
const names = (states: readonly FetchedState[]) =>
  Object.fromEntries(states.map((s) => [scopeOf(s), s.items.map((i) => i.metadata?.name)]));
const settings = () => ({ clusters, errors: new ErrorRegistry(), log: silentLogger() });

/** A client of `cluster` for writes by someone else than the engine. */
function writer(cluster: string) {
  const handle = clusters.get(cluster);
  if (isClusterProblem(handle)) throw new Error(handle.message);
  return { client: handle.client, configMaps: handle.catalog.get('ConfigMap') };
}

describe('fetchCurrentState', () => {
  it('uses one cluster-wide list when enough namespaces want a kind, and keeps only their objects', async () => {
    const result = await fetchCurrentState(
      [spec('c1', 'a'), spec('c1', 'b'), spec('c1', 'c')],
      settings(),
    );
    expect(count(result)).toEqual({
      'c1/a': ['cm-0', 'cm-1'],
      'c1/b': ['cm-0', 'cm-1', 'cm-2'],
      'c1/c': ['cm-0'],
    });
    expect(server.requests({ cluster: 'c1', verb: 'list' }).map((r) => r.namespace)).toEqual(['']);
  });

  it('lists per namespace below the threshold', async () => {
    const result = await fetchCurrentState([spec('c1', 'a'), spec('c2', 'a')], settings());
    expect(count(result)).toEqual({ 'c1/a': ['cm-0', 'cm-1'], 'c2/a': ['cm-0', 'cm-1'] });
    expect(
      server
        .requests({ verb: 'list' })
        .map((r) => `${r.cluster}/${r.namespace}`)
        .sort(),
    ).toEqual(['c1/a', 'c2/a']);
  });

  it('keeps the compact form: no managedFields field sets, no last-applied copy, the writers kept', async () => {
    const lastApplied = 'kubectl.kubernetes.io/last-applied-configuration';
    server.seed('c2', [
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: {
          name: 'applied',
          namespace: 'compact',
          annotations: { [lastApplied]: '{"big":"copy"}', keep: 'me' },
        },
        data: { a: '1' },
      },
    ]);
    const wide = [spec('c2', 'compact'), spec('c2', 'x'), spec('c2', 'y')];
    const named = [spec('c2', 'compact', { resourceNames: ['applied'] })];
    for (const specs of [[spec('c2', 'compact')], wide, named]) {
      const [listed] = (await fetchCurrentState(specs, settings())).filter(
        (r) => r.spec.namespace === 'compact',
      );
      const object = listed!.items[0]!;
      expect(object.data).toEqual({ a: '1' });
      expect(object.metadata?.annotations).toEqual({ keep: 'me' });
      const managed = object.metadata?.managedFields as Record<string, unknown>[];
      expect(managed.length).toBeGreaterThan(0);
      for (const entry of managed) {
        expect(entry.manager).toBeTypeOf('string');
        expect(entry).not.toHaveProperty('fieldsV1');
      }
    }
  });

  it('reads named resources one by one and ignores missing ones', async () => {
    const result = await fetchCurrentState(
      [spec('c1', 'b', { resourceNames: ['cm-2', 'nope'] })],
      settings(),
    );
    expect(count(result)).toEqual({ 'c1/b': ['cm-2'] });
    expect(server.requests({ verb: 'list' })).toEqual([]);
  });

  it('returns named resources in the order of their names, whichever answer came first', async () => {
    server.faults.set('c1', { verb: 'get', name: 'cm-0', latencyMs: 150 });
    const result = await fetchCurrentState(
      [spec('c1', 'b', { resourceNames: ['cm-0', 'cm-2', 'cm-1'] })],
      settings(),
    );
    expect(result[0]?.items.map((i) => i.metadata?.name)).toEqual(['cm-0', 'cm-2', 'cm-1']);
  });

  it('warns about kinds the cluster does not serve, without an error', async () => {
    const s = settings();
    const result = await fetchCurrentState([spec('c1', 'a', { kind: 'Route' })], s);
    expect(result).toEqual([]);
    expect(s.errors.hasErrors).toBe(false);
  });

  it('registers a cluster error when its reads fail and keeps the other clusters', async () => {
    server.faults.set('c2', { verb: 'list', status: 403 });
    const s = settings();
    const result = await fetchCurrentState([spec('c1', 'a'), spec('c2', 'a')], s);
    server.faults.clear();
    expect(Object.keys(count(result))).toEqual(['c1/a']);
    expect(s.errors.hasClusterError('c2')).toBe(true);
  });
});

describe('time-outs: a slow or hung cluster does not hold the others', () => {
  it('gives a cluster that hangs on a list up at the request time-out, once, and reads the others', async () => {
    const map = await clusterMap({ clientOptions: { timeoutMs: 500, backoffMs: 1 } });
    server.faults.set('c2', { verb: 'list', hang: true });
    const s = settings();
    const started = performance.now();
    // Each cluster is reported as soon as its read ends (the engine goes on with it): c1 long
    // before c2 is given up; c2, given up, never.
    const reported: Array<{ cluster: string; read: unknown; errorsThen: number }> = [];
    const result = await fetchCurrentState([spec('c1', 'a'), spec('c2', 'a'), spec('c2', 'b')], {
      ...s,
      clusters: map,
      onCluster: (cluster, states) =>
        reported.push({ cluster, read: count([...states]), errorsThen: s.errors.errors.length }),
    });
    expect(reported).toEqual([
      { cluster: 'c1', read: { 'c1/a': ['cm-0', 'cm-1'] }, errorsThen: 0 },
    ]);
    // Five attempts of the default 60 s were 300 s; one attempt of 0.5 s here.
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(count(result)).toEqual({ 'c1/a': ['cm-0', 'cm-1'] });
    // A time-out is not retried: one list per namespace, both aborted when the first timed out.
    expect(server.requests({ cluster: 'c2', verb: 'list' })).toHaveLength(2);
    expect(s.errors.errors).toEqual([
      {
        scope: 'c2',
        clusterWide: true,
        message: expect.stringMatching(
          /^\[c2\] GET \/api\/v1\/namespaces\/[ab]\/configmaps timed out after 0\.5s; the cluster is skipped for the rest of the run$/,
        ),
      },
    ]);
    expect(s.errors.hasClusterError('c1')).toBe(false);
  });

  it('gives a cluster up when reading it takes longer than the cluster time-out', async () => {
    const map = await clusterMap({ clientOptions: { timeoutMs: 30_000 }, readTimeoutMs: 500 });
    server.faults.set('c2', { verb: 'list', latencyMs: 400 });
    const s = settings();
    const result = await fetchCurrentState(
      [spec('c1', 'a'), ...['a', 'b', 'c', 'd', 'e'].map((ns) => spec('c2', ns))],
      { ...s, clusters: map, concurrency: 1, clusterWideFrom: 10 },
    );
    expect(count(result)).toEqual({ 'c1/a': ['cm-0', 'cm-1'] });
    expect(s.errors.errors.map((e) => e.message)).toEqual([
      '[c2] reading the current state timed out after 0.5s; the cluster is skipped for the rest of the run',
    ]);
  });

  it("ends the read when the run's stop signal aborts it, without blaming the cluster", async () => {
    const controller = new AbortController();
    const map = await clusterMap({ clientOptions: { signal: controller.signal } });
    server.faults.set('c2', { verb: 'list', hang: true });
    const s = settings();
    const reading = fetchCurrentState([spec('c1', 'a'), spec('c2', 'a')], {
      ...s,
      clusters: map,
    }).catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 200));
    controller.abort(new Error('stopped by SIGTERM'));
    expect(await reading).toBeInstanceOf(RequestAbortedError);
    expect(s.errors.errors).toEqual([]);
  });
});

describe('revisions of a relist ClusterState (polling loop)', () => {
  it('stays while a scope holds the same objects; an edit, an addition or a deletion makes a new one there only', async () => {
    const specs = scenario('rl');
    const loop = new LoopScope({ repeats: true, env: {} });
    const read = () => fetchCurrentState(specs, { ...settings(), loop });
    const first = await read();
    const second = await read();
    for (const r of Object.values(revisions(first))) expect(r).toBeTypeOf('number');
    expect(revisions(second)).toEqual(revisions(first));
    // The same revision: the very same objects, in the same order.
    for (const state of second) {
      const before = first.find((s) => scopeOf(s) === scopeOf(state))!;
      expect(state.items).toHaveLength(before.items.length);
      state.items.forEach((item, j) => {
        expect(item).toBe(before.items[j]);
      });
    }

    const { client, configMaps } = writer('c1');
    server.seed('c1', [configMap('rl-a', 'cm-0', 'edited')]); // an edit
    server.seed('c1', [configMap('rl-b', 'cm-2')]); // an addition
    await client.delete(configMaps, 'rl-d', 'cm-0'); // a deletion of a named object
    server.seed('c2', [configMap('rl-a', 'cm-1', 'edited')]);
    const third = await read();
    const changed = Object.entries(revisions(third))
      .filter(([scope, r]) => revisions(second)[scope] !== r)
      .map(([scope]) => scope)
      .sort();
    expect(changed).toEqual([
      'c1/rl-a/ConfigMap/*',
      'c1/rl-b/ConfigMap/*',
      'c1/rl-d/ConfigMap/cm-1,missing,cm-0',
      'c2/rl-a/ConfigMap/*',
    ]);
    expect(names(third)['c1/rl-d/ConfigMap/cm-1,missing,cm-0']).toEqual(['cm-1']);
    // A revision never comes back for other objects.
    const all = [...Object.values(revisions(second)), ...Object.values(revisions(third))];
    expect(new Set(all).size).toBe(new Set(Object.values(revisions(second))).size + 4);
    loop.close();
  });

  it('is unknown where the loop keeps nothing: caches or list reuse off, a single run, no loop', async () => {
    const specs = scenario('off');
    const loops = [
      new LoopScope({ repeats: true, env: { QONTRACT_LOOP_CACHES: 'off' } }),
      new LoopScope({ repeats: true, env: { QONTRACT_LIST_REUSE: 'off' } }),
      new LoopScope({ repeats: false, env: {} }),
      undefined,
    ];
    for (const loop of loops) {
      for (let run = 0; run < 2; run++) {
        const read = await fetchCurrentState(specs, { ...settings(), loop });
        expect(read.map((s) => s.revision)).toEqual(specs.map(() => undefined));
      }
      loop?.close();
    }
  });
});

/** A watch-mode context of a loop (what the caches take from the run that starts them). */
function watchRun(loop: LoopScope) {
  const ctx = {
    integration: 'test',
    signal: new AbortController().signal,
    log: silentLogger(),
    metrics: createMetrics(),
    loop,
  };
  const states = watchStatesOf(ctx);
  return (specs: readonly CurrentStateSpec[], extra: Partial<ReturnType<typeof settings>> = {}) =>
    watchCurrentState(specs, {
      ...settings(),
      ...extra,
      ctx,
      states,
      integration: 'test',
      routes: new Map(),
    });
}

describe('revisions of a watch ClusterState (watch mode)', () => {
  it('stays between reads of unchanged caches; an event makes a new one for its scope only', async () => {
    const specs = scenario('w');
    const loop = new LoopScope({ repeats: true, env: {} });
    const read = watchRun(loop);
    try {
      const first = await read(specs);
      const second = await read(specs);
      for (const r of Object.values(revisions(first))) expect(r).toBeTypeOf('number');
      expect(revisions(second)).toEqual(revisions(first));

      server.seed('c1', [configMap('w-b', 'cm-1', 'edited')]);
      let third: FetchedState[] = [];
      await expect
        .poll(async () => {
          third = await read(specs);
          return revisions(third)['c1/w-b/ConfigMap/*'];
        }, SETTLED)
        .not.toBe(revisions(second)['c1/w-b/ConfigMap/*']);
      expect({ ...revisions(third), 'c1/w-b/ConfigMap/*': 0 }).toEqual({
        ...revisions(second),
        'c1/w-b/ConfigMap/*': 0,
      });

      // A deletion is an event too.
      const { client, configMaps } = writer('c2');
      await client.delete(configMaps, 'w-a', 'cm-0');
      await expect
        .poll(async () => revisions(await read(specs))['c2/w-a/ConfigMap/*'], SETTLED)
        .not.toBe(revisions(third)['c2/w-a/ConfigMap/*']);
    } finally {
      loop.close();
    }
  });

  it('is unknown with the loop caches off', async () => {
    const specs = scenario('woff');
    const loop = new LoopScope({ repeats: true, env: { QONTRACT_LOOP_CACHES: 'off' } });
    const read = watchRun(loop);
    try {
      expect((await read(specs)).map((s) => s.revision)).toEqual(specs.map(() => undefined));
    } finally {
      loop.close();
    }
  });
});

describe('one read plan for polling and watch mode', () => {
  it('answers the same specs with the same objects in the same order, and the same warnings', async () => {
    const specs = [
      ...scenario('same'),
      { cluster: 'c1', namespace: 'same-a', kind: 'Widget', privileged: false },
    ];
    const warnings = () => {
      const lines: string[] = [];
      const redactor = new SecretRedactor();
      const log = createLogger({
        level: 'WARNING',
        dryRun: false,
        redactor,
        destination: { write: (l: string) => lines.push(JSON.parse(l).msg) },
      });
      return { log, lines };
    };
    const polled = warnings();
    const polling = await fetchCurrentState(specs, { ...settings(), log: polled.log });
    const loop = new LoopScope({ repeats: true, env: {} });
    const watched = warnings();
    try {
      const watching = await watchRun(loop)(specs, { log: watched.log });
      const bySpec = (states: readonly FetchedState[]) =>
        states
          .map((s) => ({ scope: scopeOf(s), items: s.items }))
          .sort((x, y) => x.scope.localeCompare(y.scope));
      expect(bySpec(watching)).toEqual(bySpec(polling));
      expect(names(polling)['c1/same-d/ConfigMap/cm-1,missing,cm-0']).toEqual(['cm-1', 'cm-0']);
      expect(polling).toHaveLength(specs.length - 1);
      expect(watched.lines).toEqual(polled.lines);
      expect(polled.lines).toEqual(['[c1] cluster has no API resource Widget.']);
    } finally {
      loop.close();
    }
  });
});
