import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { IncomingMessage } from 'node:http';
import { type FakeKubeApiServer, startFakeKubeApiServer } from '@qontract/fake-kube-apiserver';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { compactObject } from './compact-object.ts';
import {
  ClusterTimeoutError,
  ClusterUnreachableError,
  KubeApiError,
  KubeClient,
  RequestAbortedError,
} from './kube-client.ts';
import { type ClusterListedObjects, ListedObjects } from './listed-objects.ts';

let server: FakeKubeApiServer;
let client: KubeClient;
const caData = () => server.kubeconfigObject().clusters[0]!.cluster['certificate-authority-data'];

beforeAll(async () => {
  server = await startFakeKubeApiServer({
    clusters: [{ name: 'c1', token: 'tok-c1', openshift: true }],
  });
});
afterAll(async () => server.close());
beforeEach(() => {
  server.faults.clear();
  const c = server.cluster('c1');
  client = new KubeClient(
    { name: 'c1', server: c.url, token: c.token, caData: caData() },
    { backoffMs: 1, pageSize: 3 },
  );
});

/** `count` ConfigMaps of `namespace`, named and filled by index. */
/**
 * One run of a loop whose listed objects `store` keeps: a client of c1 and what
 * c1's lists returned before, for `use`, and the counts.
 */
async function inLoopRun<T>(
  store: ListedObjects,
  options: { pageSize?: number },
  use: (client: KubeClient, reuse: ClusterListedObjects) => Promise<T>,
): Promise<{ result: T; counts: { reused: number; read: number } }> {
  const run = store.beginRun();
  const c = server.cluster('c1');
  const result = await use(
    new KubeClient({ name: 'c1', server: c.url, token: c.token, caData: caData() }, options),
    run.forCluster('c1'),
  );
  run.end();
  return { result, counts: run.counts };
}

function configMaps(
  count: number,
  namespace: string,
  data: (i: number) => Record<string, string>,
  name: (i: number) => string = (i) => `cm-${i}`,
) {
  return Array.from({ length: count }, (_, i) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: name(i), namespace },
    data: data(i),
  }));
}

describe('KubeClient against the fake API server', () => {
  it('verifies TLS: trusted with the CA, refused without it, allowed when the cluster says insecure', async () => {
    const c = server.cluster('c1');
    expect((await client.version()).major).toBeDefined();
    const noCa = new KubeClient({ name: 'c1', server: c.url, token: c.token }, { attempts: 1 });
    await expect(noCa.version()).rejects.toThrow(/self-signed certificate/);
    const insecure = new KubeClient({
      name: 'c1',
      server: c.url,
      token: c.token,
      insecureSkipTLSVerify: true,
    });
    expect((await insecure.version()).major).toBeDefined();
  });

  it('discovers the API resources, OpenShift groups included', async () => {
    const catalog = await client.discover();
    expect(catalog.get('Deployment').group).toBe('apps');
    expect(catalog.get('Route').group).toBe('route.openshift.io');
    expect(catalog.isKindSupported('Project')).toBe(true);
  });

  it('lists across pages and fills in kind and apiVersion', async () => {
    const catalog = await client.discover();
    server.seed(
      'c1',
      configMaps(7, 'paged', (i) => ({ i: String(i) })),
    );
    server.resetLog();
    const items = await client.list(catalog.get('ConfigMap'), 'paged');
    expect(items.map((i) => i.metadata?.name).sort()).toEqual([
      'cm-0',
      'cm-1',
      'cm-2',
      'cm-3',
      'cm-4',
      'cm-5',
      'cm-6',
    ]);
    expect(items.every((i) => i.kind === 'ConfigMap' && i.apiVersion === 'v1')).toBe(true);
    expect(server.requests({ verb: 'list' })).toHaveLength(3);
  });

  it('reuses across the runs of a loop the objects whose bytes did not change, page after page', async () => {
    const catalog = await client.discover();
    const r = catalog.get('ConfigMap');
    server.seed(
      'c1',
      configMaps(5, 'reused', (i) => ({ i: String(i) })),
    );
    const store = new ListedObjects();
    const listInRun = () =>
      inLoopRun(store, { pageSize: 2 }, (runClient, reuse) =>
        runClient.list(r, 'reused', { each: compactObject, reuse }),
      ).then(({ result: items, counts }) => ({ items, counts }));
    const first = await listInRun();
    expect(first.counts).toEqual({ reused: 0, read: 5 });
    expect(first.items.every((i) => Object.isFrozen(i) && i.kind === 'ConfigMap')).toBe(true);
    const cm2 = server.get('c1', 'v1', 'ConfigMap', 'reused', 'cm-2')!;
    server.seed('c1', [{ ...cm2, data: { i: 'edited' } }]);
    server.resetLog();
    const second = await listInRun();
    // Listed again in full (three pages), and only the edited object read afresh.
    expect(server.requests({ verb: 'list' })).toHaveLength(3);
    expect(second.counts).toEqual({ reused: 4, read: 1 });
    const byName = new Map(second.items.map((i) => [i.metadata?.name, i]));
    expect(byName.get('cm-2')?.data).toEqual({ i: 'edited' });
    expect(byName.get('cm-0')).toBe(first.items.find((i) => i.metadata?.name === 'cm-0'));
  });

  it('reuses across the runs of a loop an object read by name whose bytes did not change', async () => {
    const catalog = await client.discover();
    const r = catalog.get('ConfigMap');
    server.seed(
      'c1',
      configMaps(2, 'named', (i) => ({ i: String(i) })),
    );
    const store = new ListedObjects();
    const getInRun = (...names: string[]) =>
      inLoopRun(store, {}, (runClient, reuse) =>
        Promise.all(
          names.map((name) => runClient.get(r, 'named', name, { each: compactObject, reuse })),
        ),
      ).then(({ result: got, counts }) => ({ got, counts }));
    const first = await getInRun('cm-0', 'cm-1', 'missing');
    expect(first.counts).toEqual({ reused: 0, read: 2 });
    expect(first.got[2]).toBeUndefined();
    expect(first.got.slice(0, 2).every((o) => Object.isFrozen(o) && o?.kind === 'ConfigMap')).toBe(
      true,
    );
    const cm1 = server.get('c1', 'v1', 'ConfigMap', 'named', 'cm-1')!;
    server.seed('c1', [{ ...cm1, data: { i: 'edited' } }]);
    const second = await getInRun('cm-0', 'cm-1', 'missing');
    // Asked again, and only the edited one decoded afresh.
    expect(second.counts).toEqual({ reused: 1, read: 1 });
    expect(second.got[0]).toBe(first.got[0]);
    expect(second.got[1]?.data).toEqual({ i: 'edited' });
    expect(second.got[1]).not.toBe(first.got[1]);
    // Without the loop's store: made the same way, not frozen.
    const plain = await client.get(r, 'named', 'cm-0', { each: compactObject });
    expect(plain).toEqual(first.got[0]);
    expect(Object.isFrozen(plain)).toBe(false);
  });

  it('lists cluster-wide for some namespaces: the items of the others are not made', async () => {
    const catalog = await client.discover();
    const r = catalog.get('Secret');
    const namespaces = ['wanted-a', 'other', 'wanted-b', 'kube-system'];
    server.seed(
      'c1',
      namespaces.flatMap((namespace) =>
        Array.from({ length: 2 }, (_, i) => ({
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: `s-${i}`, namespace, labels: { namespace: 'wanted-a' } },
          data: { token: Buffer.from(`${namespace}-${i}`).toString('base64') },
        })),
      ),
    );
    const made: string[] = [];
    const items = await client.list(r, undefined, {
      each: (o) => {
        made.push(`${o.metadata?.namespace}/${o.metadata?.name}`);
        return compactObject(o);
      },
      namespaces: new Set(['wanted-a', 'wanted-b']),
    });
    const wanted = ['wanted-a/s-0', 'wanted-a/s-1', 'wanted-b/s-0', 'wanted-b/s-1'];
    expect(items.map((o) => `${o.metadata?.namespace}/${o.metadata?.name}`).sort()).toEqual(wanted);
    expect(made.sort()).toEqual(wanted);
    expect(items.every((o) => o.kind === 'Secret' && o.apiVersion === 'v1')).toBe(true);
  });

  it('applies server-side with a field manager and reads it back', async () => {
    const catalog = await client.discover();
    const r = catalog.get('ConfigMap');
    server.seed('c1', [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ssa' } }]);
    const body = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'x', namespace: 'ssa' },
      data: { a: '1' },
    };
    const applied = await client.apply(r, 'ssa', 'x', body, {
      fieldManager: 'qontract-reconcile-test',
    });
    expect(applied.data).toEqual({ a: '1' });
    const managers = (
      applied.metadata!.managedFields as Array<{ manager: string; operation: string }>
    ).map((m) => `${m.manager}/${m.operation}`);
    expect(managers).toEqual(['qontract-reconcile-test/Apply']);
    expect((await client.get(r, 'ssa', 'x'))?.data).toEqual({ a: '1' });
    expect(await client.get(r, 'ssa', 'missing')).toBeUndefined();
    expect(await client.delete(r, 'ssa', 'x')).toBe(true);
    expect(await client.delete(r, 'ssa', 'x')).toBe(false);
  });

  it('maps refusals to KubeApiError with the Status reason and message', async () => {
    const catalog = await client.discover();
    const err = await client
      .apply(
        catalog.get('ConfigMap'),
        'no-such-ns',
        'x',
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'no-such-ns' } },
        { fieldManager: 'm' },
      )
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeApiError);
    expect((err as KubeApiError).status).toBe(404);
    expect((err as KubeApiError).message).toBe('[c1]: namespaces "no-such-ns" not found');
  });

  it('retries transient failures (503, 429 with Retry-After, dropped connections)', async () => {
    server.faults.set('c1', { verb: 'get', status: 503, times: 2 });
    expect((await client.version()).major).toBeDefined();
    const catalog = await client.discover();
    server.faults.set('c1', { verb: 'list', status: 429, retryAfter: 0, times: 1 });
    server.faults.set('c1', { verb: 'list', drop: true, times: 1 });
    await expect(client.list(catalog.get('Namespace'))).resolves.toBeInstanceOf(Array);
  });

  it('gives up after the last attempt and says the cluster is unreachable', async () => {
    const catalog = await client.discover();
    server.faults.set('c1', { verb: 'list', drop: true });
    await expect(client.list(catalog.get('Namespace'))).rejects.toBeInstanceOf(
      ClusterUnreachableError,
    );
  });

  it('does not retry a refused connection: nothing listens there', async () => {
    const { createServer } = await import('node:net');
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', () => r()));
    const { port } = probe.address() as { port: number };
    await new Promise<void>((r) => probe.close(() => r()));
    const closed = new KubeClient(
      {
        name: 'gone',
        server: `https://127.0.0.1:${port}`,
        token: 't',
        insecureSkipTLSVerify: true,
      },
      { backoffMs: 1 },
    );
    await expect(closed.version()).rejects.toThrow(/ECONNREFUSED/);
    expect(closed.stats.total).toBe(1);
  });

  it("honours the run's stop signal: aborts a request in flight, sends no new one", async () => {
    const c = server.cluster('c1');
    const controller = new AbortController();
    const stoppable = new KubeClient(
      { name: 'c1', server: c.url, token: c.token, caData: caData() },
      { signal: controller.signal, backoffMs: 1 },
    );
    const catalog = await stoppable.discover();
    server.faults.set('c1', { verb: 'list', hang: true });
    const hung = stoppable.list(catalog.get('ConfigMap')).catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 100));
    controller.abort(new Error('stopped by SIGTERM'));
    const err = await hung;
    expect(err).toBeInstanceOf(RequestAbortedError);
    expect((err as Error).message).toBe('[c1]: request aborted: stopped by SIGTERM');
    const before = stoppable.stats.total;
    await expect(stoppable.version()).rejects.toBeInstanceOf(RequestAbortedError);
    expect(stoppable.stats.total).toBe(before);
  });

  it('gives the cluster up when a request times out: not retried, later requests fail at once', async () => {
    const c = server.cluster('c1');
    const slow = new KubeClient(
      { name: 'c1', server: c.url, token: c.token, caData: caData() },
      { timeoutMs: 200, backoffMs: 1 },
    );
    const catalog = await slow.discover();
    server.faults.set('c1', { verb: 'list', hang: true });
    server.resetLog();
    const err = await slow.list(catalog.get('ConfigMap')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ClusterTimeoutError);
    expect((err as Error).message).toBe(
      '[c1] GET /api/v1/configmaps timed out after 0.2s; the cluster is skipped for the rest of the run',
    );
    expect(server.requests({ verb: 'list' })).toHaveLength(1);
    expect(slow.failure).toBe(err);
    await expect(slow.version()).rejects.toBe(err);
    expect(server.requests()).toHaveLength(1);
  });

  it('rejects a wrong token with 401', async () => {
    const c = server.cluster('c1');
    const bad = new KubeClient({ name: 'c1', server: c.url, token: 'wrong', caData: caData() });
    await expect(bad.version()).rejects.toMatchObject({ status: 401 });
  });
});

describe('list pages in lent buffers', () => {
  it('keeps nothing of a page buffer: objects read from a page stay intact once later pages reuse it', async () => {
    const catalog = await client.discover();
    const payload = (i: number) => `${i}:`.padEnd(4096, String.fromCharCode(97 + (i % 26)));
    server.seed(
      'c1',
      configMaps(
        60,
        'lent',
        (i) => ({ payload: payload(i) }),
        (i) => `big-${String(i).padStart(2, '0')}`,
      ),
    );
    // Pages of 20 objects (about 80 KiB, read in several chunks): one pooled buffer each.
    const paged = new KubeClient(
      { name: 'c1', server: server.cluster('c1').url, token: 'tok-c1', caData: caData() },
      { pageSize: 20 },
    );
    const first = await paged.list(catalog.get('ConfigMap'), 'lent');
    const snapshot = JSON.stringify(first);
    const second = await paged.list(catalog.get('ConfigMap'), 'lent');
    expect(JSON.stringify(first)).toBe(snapshot);
    expect(JSON.stringify(second)).toBe(snapshot);
    expect(first.map((cm) => (cm.data as { payload: string }).payload)).toEqual(
      Array.from({ length: 60 }, (_, i) => payload(i)),
    );
  });
});

describe('compressed answers', () => {
  it('asks for gzip and reads a compressed list page as the same objects', async () => {
    const fake = await startFakeKubeApiServer({
      clusters: [{ name: 'gz', token: 'tok-gz' }],
      compression: true,
    });
    // About 2 KiB each: the page is over kube-apiserver's 128 KiB threshold.
    fake.seed(
      'gz',
      configMaps(100, 'big', (i) => ({ payload: `${i}-`.padEnd(2048, 'x') })),
    );
    const encodings: string[] = [];
    // Node's HTTP client announces every answer on this channel.
    const onHeaders = (message: unknown) => {
      const { headers } = (message as { response: IncomingMessage }).response;
      if (headers['content-encoding']) encodings.push(headers['content-encoding']);
    };
    subscribe('http.client.response.finish', onHeaders);
    try {
      const c = fake.cluster('gz');
      const gz = new KubeClient({
        name: 'gz',
        server: c.url,
        token: c.token,
        caData: fake.kubeconfigObject().clusters[0]!.cluster['certificate-authority-data'],
      });
      const catalog = await gz.discover();
      const items = await gz.list(catalog.get('ConfigMap'), 'big');
      expect(encodings).toEqual(['gzip']);
      expect(items).toHaveLength(100);
      const cm7 = items.find((i) => i.metadata?.name === 'cm-7');
      expect(cm7?.data).toEqual({ payload: '7-'.padEnd(2048, 'x') });
      expect(cm7?.kind).toBe('ConfigMap');
      await gz.close();
    } finally {
      unsubscribe('http.client.response.finish', onHeaders);
      await fake.close();
    }
  });
});

describe('connections', () => {
  it('reuses keep-alive connections instead of one connection per request', async () => {
    const { createServer } = await import('node:http');
    let connections = 0;
    const stub = createServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"major":"1","minor":"31"}');
    });
    stub.on('connection', () => connections++);
    await new Promise<void>((r) => stub.listen(0, '127.0.0.1', () => r()));
    try {
      const { port } = stub.address() as { port: number };
      const c = new KubeClient({
        name: 'keepalive',
        server: `http://127.0.0.1:${port}`,
        token: 't',
        insecureSkipTLSVerify: true,
      });
      for (let i = 0; i < 20; i++) await c.version();
      // Back-to-back requests may reach a second pooled socket; without reuse
      // (an Agent per request, as client-node 2.0.1 built) this would be 20.
      expect(connections).toBeLessThanOrEqual(2);
    } finally {
      stub.closeAllConnections();
      stub.close();
    }
  });
});
