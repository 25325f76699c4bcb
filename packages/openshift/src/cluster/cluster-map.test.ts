import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { type FakeKubeApiServer, startFakeKubeApiServer } from '@qontract/fake-kube-apiserver';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { KindNotFoundError } from './api-resources.ts';
import {
  apiResourceOf,
  ClusterMap,
  type ClusterMapSettings,
  isClusterProblem,
  KeptClusters,
} from './cluster-map.ts';

let server: FakeKubeApiServer;

beforeAll(async () => {
  server = await startFakeKubeApiServer({ clusters: [{ name: 'c1', token: 't1' }] });
});
afterAll(async () => server.close());
beforeEach(() => server.faults.clear());

const info = () => ({
  name: 'c1',
  serverUrl: server.cluster('c1').url,
  insecureSkipTLSVerify: true,
  automationToken: { path: 'creds/c1', field: 'token' },
});
const settings = (extra: Partial<ClusterMapSettings> = {}): ClusterMapSettings => ({
  integration: 'test',
  secrets: {
    read: async () => '',
    readAll: async () => ({ server: server.cluster('c1').url, token: server.cluster('c1').token }),
  },
  clientOptions: { backoffMs: 1 },
  ...extra,
});

describe('the reachability check (GET /version)', () => {
  // `/version` is neither a resource nor discovery: the fake server's verb `other`.
  it('is retried after a 503, as lists are', async () => {
    server.faults.set('c1', { verb: 'other', status: 503, times: 1 });
    const map = await ClusterMap.fromClusters([info()], settings());
    expect(map.problems()).toEqual([]);
    expect(isClusterProblem(map.get('c1'))).toBe(false);
  });

  it('is retried after a 429, waiting as Retry-After says', async () => {
    server.faults.set('c1', { verb: 'other', status: 429, retryAfter: 1, times: 1 });
    server.resetLog();
    const map = await ClusterMap.fromClusters([info()], settings());
    expect(map.problems()).toEqual([]);
    const versions = server.requests({ cluster: 'c1' }).filter((r) => r.path === '/version');
    expect(versions.map((r) => r.status)).toEqual([429, 200]);
  });

  it('still makes a cluster that keeps failing a problem of that cluster', async () => {
    server.faults.set('c1', { verb: 'other', status: 503 });
    const map = await ClusterMap.fromClusters(
      [info()],
      settings({ clientOptions: { backoffMs: 1, attempts: 2 } }),
    );
    expect(map.problems().map((p) => p.message)).toEqual([
      '[c1] is unreachable: [c1]: the server is currently unable to handle the request',
    ]);
  });
});

describe('connecting to many clusters', () => {
  it('reads the tokens `concurrency` at a time and checks the clusters side by side', async () => {
    const names = ['m1', 'm2', 'm3', 'm4', 'm5', 'm6'];
    const many = await startFakeKubeApiServer({ clusters: names.map((name) => ({ name })) });
    // Each check waits long enough for every other one to be sent meanwhile.
    for (const name of names) many.faults.set(name, { verb: 'other', latencyMs: 300 });
    let reading = 0;
    let maxReading = 0;
    let checking = 0;
    let maxChecking = 0;
    const versions = new Set<object>();
    const sent = (message: unknown) => {
      const { request } = message as { request: { path?: string } };
      if (request.path !== '/version') return;
      versions.add(request);
      maxChecking = Math.max(maxChecking, ++checking);
    };
    const answered = (message: unknown) => {
      const { request } = message as { request: object };
      if (versions.delete(request)) checking--;
    };
    subscribe('http.client.request.start', sent);
    subscribe('http.client.response.finish', answered);
    try {
      const map = await ClusterMap.fromClusters(
        names.map((name) => ({
          name,
          serverUrl: many.cluster(name).url,
          insecureSkipTLSVerify: true,
          automationToken: { path: `creds/${name}`, field: 'token' },
        })),
        {
          integration: 'test',
          concurrency: 2,
          secrets: {
            read: async () => '',
            readAll: async ({ path }) => {
              maxReading = Math.max(maxReading, ++reading);
              await new Promise((r) => setTimeout(r, 20));
              reading--;
              const name = path.replace('creds/', '');
              return { server: many.cluster(name).url, token: many.cluster(name).token };
            },
          },
        },
      );
      expect(map.problems()).toEqual([]);
      expect(map.clusters()).toEqual(names);
      expect(maxReading).toBe(2);
      expect(maxChecking).toBe(names.length);
      await map.close();
    } finally {
      unsubscribe('http.client.request.start', sent);
      unsubscribe('http.client.response.finish', answered);
      await many.close();
    }
  });
});

describe('the automation token secret', () => {
  const withSecret = (readAll: () => Promise<Record<string, string>>) =>
    settings({ secrets: { read: async () => '', readAll } });

  it('names an unreachable Vault as such, not as a missing secret', async () => {
    const map = await ClusterMap.fromClusters(
      [info()],
      withSecret(async () => {
        throw new Error('Vault at https://vault.example unreachable: ECONNREFUSED');
      }),
    );
    expect(map.problems().map((p) => p.message)).toEqual([
      '[c1] Vault at https://vault.example unreachable: ECONNREFUSED',
    ]);
  });

  it('names the secret and the missing key when the secret has no server', async () => {
    const map = await ClusterMap.fromClusters(
      [info()],
      withSecret(async () => ({ token: 'not-shown' })),
    );
    const messages = map.problems().map((p) => p.message);
    expect(messages).toEqual([
      `[c1] secret creds/c1 has no key 'server' (expected ${server.cluster('c1').url})`,
    ]);
    expect(messages.join('')).not.toContain('not-shown');
  });

  it('names both URLs when they differ', async () => {
    const map = await ClusterMap.fromClusters(
      [info()],
      withSecret(async () => ({ server: 'https://elsewhere:6443', token: 'not-shown' })),
    );
    expect(map.problems().map((p) => p.message)).toEqual([
      `[c1] server URL mismatch: secret creds/c1 says https://elsewhere:6443, the cluster's serverUrl is ${server.cluster('c1').url}`,
    ]);
  });
});

describe('clients kept between the runs of a loop', () => {
  /** TCP connections opened by this process while `task` runs. */
  async function connectionsDuring<T>(task: () => Promise<T>): Promise<[T, number]> {
    let opened = 0;
    const count = () => {
      opened += 1;
    };
    subscribe('net.client.socket', count);
    try {
      return [await task(), opened];
    } finally {
      unsubscribe('net.client.socket', count);
    }
  }
  const paths = () => server.requests({ cluster: 'c1' }).map((r) => r.path);

  it('lends the next run its connection and discovery; the check still goes to the cluster', async () => {
    const kept = new KeptClusters();
    const [first, openedFirst] = await connectionsDuring(() =>
      ClusterMap.fromClusters([info()], settings({ kept })),
    );
    expect(openedFirst).toBeGreaterThan(0);
    await first.close(); // the end of the first run
    expect(kept.size).toBe(1);

    server.resetLog();
    const [second, openedSecond] = await connectionsDuring(async () => {
      const map = await ClusterMap.fromClusters([info()], settings({ kept }));
      const handle = map.get('c1');
      if (isClusterProblem(handle)) throw new Error(handle.message);
      await handle.client.list(handle.catalog.get('ConfigMap'), 'default');
      return map;
    });
    expect(openedSecond).toBe(0);
    expect(paths()).toEqual(['/version', '/api/v1/namespaces/default/configmaps?limit=500']);
    const [a, b] = [first.get('c1'), second.get('c1')];
    if (isClusterProblem(a) || isClusterProblem(b)) throw new Error('no client');
    expect(b.catalog).toBe(a.catalog);
    expect(b.client).not.toBe(a.client);
    await second.close();
    kept.closeAll();
  });

  it('discovers again once the kept discovery is older than its maximum age', async () => {
    const kept = new KeptClusters({ discoveryMaxAgeMs: 0 });
    await (await ClusterMap.fromClusters([info()], settings({ kept }))).close();
    server.resetLog();
    const [, opened] = await connectionsDuring(() =>
      ClusterMap.fromClusters([info()], settings({ kept })),
    );
    expect(opened).toBe(0);
    expect(paths()).toContain('/version');
    expect(paths()).toContain('/api');
    kept.closeAll();
  });

  it('makes a new client for another server address or token, and starts afresh after a failed check', async () => {
    const kept = new KeptClusters();
    await (await ClusterMap.fromClusters([info()], settings({ kept }))).close();
    const elsewhere = server.cluster('c1').url.replace('127.0.0.1', 'localhost');
    const moved = { ...info(), serverUrl: elsewhere };
    const movedSecret = settings({
      kept,
      secrets: {
        read: async () => '',
        readAll: async () => ({ server: elsewhere, token: server.cluster('c1').token }),
      },
    });
    server.resetLog();
    const [, opened] = await connectionsDuring(() => ClusterMap.fromClusters([moved], movedSecret));
    expect(opened).toBeGreaterThan(0);
    expect(paths()).toContain('/api');
    expect(kept.size).toBe(2);

    server.faults.set('c1', { verb: 'other', status: 503 });
    const failed = await ClusterMap.fromClusters(
      [info()],
      settings({ kept, clientOptions: { backoffMs: 1, attempts: 2 } }),
    );
    expect(failed.problems()).toHaveLength(1);
    expect(kept.size).toBe(1);
    server.faults.clear();
    server.resetLog();
    const [, again] = await connectionsDuring(() =>
      ClusterMap.fromClusters([info()], settings({ kept })),
    );
    expect(again).toBeGreaterThan(0);
    expect(paths()).toContain('/api');
    kept.closeAll();
  });

  it('closes, once no run is under way, the clients no run since the last such moment used', async () => {
    const kept = new KeptClusters();
    await (await ClusterMap.fromClusters([info()], settings({ kept }))).close();
    expect(kept.size).toBe(1);
    // Two maps at once (two shards of one process): the first to close drops nothing.
    const a = await ClusterMap.fromClusters([info()], settings({ kept }));
    const b = await ClusterMap.fromClusters([], settings({ kept }));
    await b.close();
    expect(kept.size).toBe(1);
    await a.close();
    expect(kept.size).toBe(1);
    // A run without the cluster.
    await (await ClusterMap.fromClusters([], settings({ kept }))).close();
    expect(kept.size).toBe(0);
  });

  it('discovers again, once, when a run asks for a kind the kept discovery does not know', async () => {
    const kept = new KeptClusters();
    await (await ClusterMap.fromClusters([info()], settings({ kept }))).close();
    server.seed('c1', [
      {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: 'widgets.example.com' },
        spec: {
          group: 'example.com',
          scope: 'Namespaced',
          names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
          versions: [{ name: 'v1', served: true, storage: true }],
        },
      },
    ]);
    server.resetLog();
    const map = await ClusterMap.fromClusters([info()], settings({ kept }));
    const handle = map.get('c1');
    if (isClusterProblem(handle)) throw new Error(handle.message);
    expect(paths()).toEqual(['/version']);
    expect(() => handle.catalog.get('Widget')).toThrow(KindNotFoundError);
    const [widget, again] = await Promise.all([
      apiResourceOf(handle, 'Widget'),
      apiResourceOf(handle, 'Widget.example.com'),
    ]);
    expect(widget).toMatchObject({ group: 'example.com', name: 'widgets', namespaced: true });
    expect(again).toEqual(widget);
    const discoveries = paths().filter((p) => p !== '/version');
    expect(discoveries.length).toBeGreaterThan(0);
    // Still unknown after the one new discovery of the run: no further one.
    await expect(apiResourceOf(handle, 'Gadget')).rejects.toThrow(KindNotFoundError);
    expect(paths().filter((p) => p !== '/version')).toEqual(discoveries);
    await map.close();
    // The next run borrows the new discovery.
    server.resetLog();
    const next = await ClusterMap.fromClusters([info()], settings({ kept }));
    const nextHandle = next.get('c1');
    if (isClusterProblem(nextHandle)) throw new Error(nextHandle.message);
    expect(nextHandle.catalog.get('Widget').name).toBe('widgets');
    expect(paths()).toEqual(['/version']);
    await next.close();
    kept.closeAll();
  });

  it('looks a kind up once where the discovery is the run’s own', async () => {
    const map = await ClusterMap.fromClusters([info()], settings());
    const handle = map.get('c1');
    if (isClusterProblem(handle)) throw new Error(handle.message);
    server.resetLog();
    await expect(apiResourceOf(handle, 'Gizmo')).rejects.toThrow(KindNotFoundError);
    expect(paths()).toEqual([]);
    await map.close();
  });
});
