import { type FakeKubeApiServer, startFakeKubeApiServer } from '@qontract/fake-kube-apiserver';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ApiResourceCatalog } from './api-resources.ts';
import { compactObject } from './compact-object.ts';
import { KubeClient, type KubeObject } from './kube-client.ts';
import { type CacheEvent, WatchCache, type WatchRestartReason } from './watch-cache.ts';

let server: FakeKubeApiServer;
let client: KubeClient;
let catalog: ApiResourceCatalog;
const caches: WatchCache[] = [];
const SETTLED = { timeout: 10_000, interval: 10 } as const;

beforeAll(async () => {
  server = await startFakeKubeApiServer({ clusters: [{ name: 'c1' }] });
  const c = server.cluster('c1');
  const caData = server.kubeconfigObject().clusters[0]!.cluster['certificate-authority-data'];
  client = new KubeClient(
    { name: 'c1', server: c.url, token: c.token, caData },
    { backoffMs: 1, pageSize: 2 },
  );
  catalog = await client.discover();
});
afterEach(() => {
  for (const c of caches.splice(0)) c.close();
  server.faults.clear();
});
afterAll(async () => {
  await client.close();
  await server.close();
});

const cm = (namespace: string, name: string, data: Record<string, string> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace },
  data,
});

function startCache(
  namespace: string,
  options: { watchTimeoutSeconds?: number; kind?: string } = {},
) {
  const events: CacheEvent[] = [];
  const restarts: WatchRestartReason[] = [];
  const cache = new WatchCache({
    client,
    resource: catalog.get(options.kind ?? 'ConfigMap'),
    namespace,
    backoffMs: { min: 10, max: 100 },
    pageSize: 2,
    ...(options.watchTimeoutSeconds
      ? { watchTimeoutSeconds: () => options.watchTimeoutSeconds! }
      : {}),
    onEvent: (e) => events.push(e),
    onRestart: (r) => restarts.push(r),
  });
  caches.push(cache);
  const seen = () =>
    events.map((e) =>
      `${e.type} ${e.name} ${(e.object.data as { k?: string } | undefined)?.k ?? ''}`.trim(),
    );
  return { cache, events, restarts, seen };
}

const names = (cache: WatchCache) =>
  cache
    .items()
    .map((o) => `${o.metadata?.name}=${(o.data as Record<string, string> | undefined)?.k ?? ''}`)
    .sort();

const lists = (namespace: string) =>
  server.requests({ cluster: 'c1', verb: 'list', namespace, resource: 'configmaps' }).length;

describe('WatchCache against the fake API server', () => {
  it('lists every page, then streams changes made by any client', async () => {
    server.seed('c1', [cm('w1', 'a', { k: '1' }), cm('w1', 'b'), cm('w1', 'c')]);
    const { cache, seen } = startCache('w1');
    await cache.start();
    expect(names(cache)).toEqual(['a=1', 'b=', 'c=']);
    expect(cache.items()[0]).toMatchObject({ apiVersion: 'v1', kind: 'ConfigMap' });
    const r = catalog.get('ConfigMap');
    await client.create(r, 'w1', cm('w1', 'd'));
    await client.patch(r, 'w1', 'a', { data: { k: '2' } }, 'merge');
    await client.delete(r, 'w1', 'b');
    await expect.poll(seen, SETTLED).toEqual(['ADDED d', 'MODIFIED a 2', 'DELETED b']);
    expect(names(cache)).toEqual(['a=2', 'c=', 'd=']);
    expect(lists('w1')).toBe(2); // one list of two pages
  });

  it('keeps only the namespaces it is for, cluster-wide: the others are neither kept nor reported', async () => {
    server.seed('c1', [
      cm('k1', 'a', { k: '1' }),
      cm('k2', 'b'),
      cm('k3', 'c'),
      cm('k3', 'd'),
      cm('k1', 'e'),
    ]);
    const events: CacheEvent[] = [];
    const sizes: number[] = [];
    const cache = new WatchCache({
      client,
      resource: catalog.get('ConfigMap'),
      namespaces: new Set(['k1', 'k2']),
      backoffMs: { min: 10, max: 100 },
      pageSize: 2,
      onEvent: (e) => events.push(e),
      onSize: (n) => sizes.push(n),
    });
    caches.push(cache);
    await cache.start();
    const kept = () =>
      cache
        .items()
        .map((o) => `${o.metadata?.namespace}/${o.metadata?.name}`)
        .sort();
    expect(kept()).toEqual(['k1/a', 'k1/e', 'k2/b']);
    expect(sizes.at(-1)).toBe(3);
    expect(cache.get('k3', 'c')).toBeUndefined();
    const r = catalog.get('ConfigMap');
    await client.create(r, 'k3', cm('k3', 'new'));
    await client.patch(r, 'k3', 'c', { data: { k: 'x' } }, 'merge');
    await client.patch(r, 'k1', 'a', { data: { k: '2' } }, 'merge');
    await expect
      .poll(() => events.map((e) => `${e.type} ${e.namespace}/${e.name}`), SETTLED)
      .toEqual(['MODIFIED k1/a']);
    // The other namespaces' events still move the version on: the watch resumes after them.
    expect(Number(cache.resourceVersion)).toBeGreaterThan(0);
    expect(kept()).toEqual(['k1/a', 'k1/e', 'k2/b']);
    expect(cache.get('k1', 'a')?.data).toEqual({ k: '2' });
  });

  it('hands every reader the one frozen compact object it keeps', async () => {
    server.seed('c1', [cm('w6', 'a', { k: '1' })]);
    const { cache } = startCache('w6');
    await cache.start();
    const [item] = cache.items('w6');
    expect(cache.get('w6', 'a')).toBe(item);
    expect(Object.isFrozen(item)).toBe(true);
    expect(Object.isFrozen(item!.metadata)).toBe(true);
    expect(Object.isFrozen(item!.data)).toBe(true);
    // A reader that writes fails where it writes; the cache stays as listed.
    expect(() => {
      (item!.data as Record<string, string>).k = 'changed';
    }).toThrow(TypeError);
    expect(names(cache)).toEqual(['a=1']);
  });

  it('resumes a dropped watch from its version without losing an event or listing again', async () => {
    server.seed('c1', [cm('w2', 'a'), cm('w2', 'b')]);
    const { cache, restarts, seen } = startCache('w2');
    await cache.start();
    const listed = lists('w2');
    await server.faults.down('c1');
    // Changes while the watch is gone, made inside the fake.
    server.seed('c1', [cm('w2', 'a', { k: 'changed' }), cm('w2', 'new')]);
    await server.faults.up('c1');
    await expect.poll(seen, SETTLED).toEqual(['MODIFIED a changed', 'ADDED new']);
    expect(restarts[0]).toBe('error');
    expect(lists('w2')).toBe(listed);
    expect(names(cache)).toEqual(['a=changed', 'b=', 'new=']);
  });

  it('re-lists after 410 Gone and reports what changed meanwhile as events', async () => {
    server.seed('c1', [cm('w3', 'keep'), cm('w3', 'edit'), cm('w3', 'drop')]);
    const { cache, restarts, events, seen } = startCache('w3');
    await cache.start();
    await server.faults.down('c1');
    server.seed('c1', [cm('w3', 'edit', { k: 'x' }), cm('w3', 'added')]);
    server.cluster('c1').state.store.remove('/configmaps', 'w3', 'drop');
    // Enough writes elsewhere that the server's history no longer reaches the cache's version.
    server.seed(
      'c1',
      Array.from({ length: 4100 }, (_, i) => cm('bulk', `bulk-${i}`)),
    );
    await server.faults.up('c1');
    await expect.poll(() => restarts, SETTLED).toContain('expired');
    await expect
      .poll(() => seen().sort(), SETTLED)
      .toEqual(['ADDED added', 'DELETED drop', 'MODIFIED edit x']);
    expect(events.every((e) => e.fromRelist)).toBe(true);
    expect(names(cache)).toEqual(['added=', 'edit=x', 'keep=']);
    expect(lists('w3')).toBe(2 * 2); // the first list and the re-list, two pages each
    // Watching goes on from the re-list.
    await client.create(catalog.get('ConfigMap'), 'w3', cm('w3', 'later'));
    await expect.poll(() => seen().includes('ADDED later'), SETTLED).toBe(true);
  });

  it('moves its version on with bookmarks and resumes from them after a server-side time-out', async () => {
    server.seed('c1', [cm('w4', 'a')]);
    const { cache, restarts, seen } = startCache('w4', { watchTimeoutSeconds: 1 });
    await cache.start();
    const listedAt = Number(cache.resourceVersion);
    // Writes to other objects move the server's version, not this watch's events.
    server.seed('c1', [cm('elsewhere', 'x'), cm('elsewhere', 'y')]);
    await expect.poll(() => restarts.includes('closed'), SETTLED).toBe(true);
    expect(Number(cache.resourceVersion)).toBeGreaterThan(listedAt);
    const watches = server.requests({ cluster: 'c1', verb: 'watch', namespace: 'w4' });
    await expect
      .poll(
        () => server.requests({ cluster: 'c1', verb: 'watch', namespace: 'w4' }).length,
        SETTLED,
      )
      .toBeGreaterThan(1);
    const resumed = server.requests({ cluster: 'c1', verb: 'watch', namespace: 'w4' })[1]!;
    expect(resumed.path).toContain(`resourceVersion=${cache.resourceVersion}`);
    expect(resumed.path).toContain('allowWatchBookmarks=true');
    expect(watches.length).toBeGreaterThanOrEqual(1);
    expect(seen()).toEqual([]);
  });
});

describe('compactObject', () => {
  it('drops the field sets and the last-applied copy, keeps who wrote what', () => {
    const compact = compactObject({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'a',
        annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{}', keep: 'me' },
        managedFields: [
          {
            manager: 'someone',
            operation: 'Update',
            time: '2026-01-01T00:00:00Z',
            fieldsType: 'FieldsV1',
            fieldsV1: { 'f:data': {} },
          },
        ],
      },
      data: { k: 'v' },
    });
    expect(compact.metadata).toEqual({
      name: 'a',
      annotations: { keep: 'me' },
      managedFields: [{ manager: 'someone', operation: 'Update', time: '2026-01-01T00:00:00Z' }],
    });
    expect(compact.data).toEqual({ k: 'v' });
  });

  it('keeps every value as it was, the repeated short ones held once', () => {
    const listed = (i: number): KubeObject => ({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: {
        name: `web-${i}`,
        namespace: 'ns',
        creationTimestamp: '2026-01-01T00:00:00Z',
        labels: { app: 'web', n: i },
        annotations: { 'qontract.integration': 'openshift_resources', long: 'x'.repeat(200) },
        managedFields: [{ manager: 'm', operation: 'Apply', fieldsV1: {} }],
      },
      spec: { replicas: i },
    });
    for (const i of [1, 2]) {
      expect(compactObject(listed(i))).toEqual({
        ...listed(i),
        metadata: { ...listed(i).metadata, managedFields: [{ manager: 'm', operation: 'Apply' }] },
      });
    }
  });

  it('keeps the field sets while client-side apply owns fields (the first apply migrates them)', () => {
    const managedFields = [
      { manager: 'kubectl-client-side-apply', operation: 'Update', fieldsV1: { 'f:data': {} } },
    ];
    expect(
      compactObject({ metadata: { name: 'a', managedFields } }).metadata?.managedFields,
    ).toEqual(managedFields);
  });
});
