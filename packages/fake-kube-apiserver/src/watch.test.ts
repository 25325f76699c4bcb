import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type ClusterHandle, type FakeKubeApiServer, startFakeKubeApiServer } from './server.ts';
import { call, SETTLED, watchEvents } from './test-support/client.ts';

let server: FakeKubeApiServer;
let c: ClusterHandle;

beforeAll(async () => {
  server = await startFakeKubeApiServer({
    clusters: [{ name: 'a' }],
    tooLargeResourceVersionWaitMs: 200,
  });
  c = server.cluster('a');
});
afterAll(() => server.close());

const create = (name: string, labels: Record<string, string> = {}) =>
  call(c, 'POST', '/api/v1/namespaces/default/configmaps', {
    body: { metadata: { name, labels } },
  });

describe('watch', () => {
  it('streams existing objects as ADDED, then changes as they happen', async () => {
    await create('existing');
    const events = watchEvents(c, '/api/v1/namespaces/default/configmaps?watch=1', 4, () => {
      void (async () => {
        await create('fresh');
        await call(c, 'PATCH', '/api/v1/namespaces/default/configmaps/fresh', {
          body: { data: { a: 'b' } },
          contentType: 'application/merge-patch+json',
        });
        await call(c, 'DELETE', '/api/v1/namespaces/default/configmaps/fresh');
      })();
    });
    const got = await events;
    expect(got.map((e) => [e.type, e.object.metadata.name])).toEqual([
      ['ADDED', 'existing'],
      ['ADDED', 'fresh'],
      ['MODIFIED', 'fresh'],
      ['DELETED', 'fresh'],
    ]);
    expect(got[2].object.data).toEqual({ a: 'b' });
  });

  it('resumes from a resourceVersion and filters by label', async () => {
    const list = (await call(c, 'GET', '/api/v1/namespaces/default/configmaps')).body;
    const rv = list.metadata.resourceVersion;
    await create('skip', { pick: 'no' });
    await create('take', { pick: 'yes' });
    const events = await watchEvents(
      c,
      `/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=${rv}&labelSelector=pick%3Dyes`,
      1,
    );
    expect(events.map((e) => [e.type, e.object.metadata.name])).toEqual([['ADDED', 'take']]);
  });

  it('answers a revision older than the kept history with an Expired event', async () => {
    server.seed(
      'a',
      Array.from({ length: 4100 }, (_, i) => ({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: `bulk-${i}`, namespace: 'bulk' },
      })),
    );
    const events = await watchEvents(
      c,
      '/api/v1/namespaces/bulk/configmaps?watch=1&resourceVersion=1001',
      1,
    );
    expect(events).toEqual([
      {
        type: 'ERROR',
        object: expect.objectContaining({ kind: 'Status', code: 410, reason: 'Expired' }),
      },
    ]);
    expect(events[0].object.message).toMatch(/^too old resource version: 1001 \(\d+\)$/);
  });

  it('ends the stream after timeoutSeconds', async () => {
    const events = await watchEvents(
      c,
      '/api/v1/namespaces/kube-system/configmaps?watch=1&timeoutSeconds=1',
      1,
    );
    expect(events).toEqual([]);
  });

  it('sends a bookmark with the current version before a server-side time-out', async () => {
    await create('before-bookmark');
    const events = await watchEvents(
      c,
      '/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=0&allowWatchBookmarks=true&timeoutSeconds=1&fieldSelector=metadata.name%3Dbefore-bookmark',
      10,
    );
    const last = events.at(-1);
    expect(events.map((e) => e.type)).toEqual(['ADDED', 'BOOKMARK']);
    expect(last.object.metadata.resourceVersion).toBe(String(c.state.store.resourceVersion));
    expect(Object.keys(last.object.metadata)).toEqual(['resourceVersion']);
  });

  it('resumes from a bookmark: later changes only, from any client', async () => {
    const events = await watchEvents(
      c,
      '/api/v1/namespaces/default/configmaps?watch=1&allowWatchBookmarks=true&timeoutSeconds=1',
      100,
    );
    const rv = events.at(-1).object.metadata.resourceVersion;
    await create('after-bookmark');
    // A change made by the fake itself (a seed) is an event as well.
    server.seed('a', [
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'seeded', namespace: 'default' } },
    ]);
    const resumed = await watchEvents(
      c,
      `/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=${rv}&allowWatchBookmarks=true&timeoutSeconds=1`,
      3,
    );
    expect(resumed.map((e) => [e.type, e.object.metadata.name])).toEqual([
      ['ADDED', 'after-bookmark'],
      ['ADDED', 'seeded'],
      ['BOOKMARK', undefined],
    ]);
  });

  it('ends the initial events with the initial-events-end bookmark', async () => {
    const events = await watchEvents(
      c,
      '/api/v1/namespaces/default/configmaps?watch=1&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&fieldSelector=metadata.name%3Dseeded',
      2,
    );
    expect(events[1]).toMatchObject({
      type: 'BOOKMARK',
      object: { metadata: { annotations: { 'k8s.io/initial-events-end': 'true' } } },
    });
  });

  it('starts a plain watch from a version ahead of the server: the changes after it', async () => {
    const ahead = c.state.store.resourceVersion + 1;
    const events = await watchEvents(
      c,
      `/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=${ahead}`,
      1,
      () => {
        void (async () => {
          // This write makes the version the watch asked for; only the later ones are after it.
          await create('at-the-version');
          await create('after-the-version');
        })();
      },
    );
    expect(events.map((e) => [e.type, e.object.metadata.name])).toEqual([
      ['ADDED', 'after-the-version'],
    ]);
    expect(Number(events[0].object.metadata.resourceVersion)).toBeGreaterThan(ahead);
  });

  it('waits for a version ahead of the server when the initial events are asked for', async () => {
    const store = c.state.store;
    const subscribe = vi.spyOn(store, 'subscribe');
    try {
      const ahead = store.resourceVersion + 1;
      const events = watchEvents(
        c,
        `/api/v1/namespaces/default/configmaps?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion=${ahead}&fieldSelector=metadata.name%3Darrives`,
        2,
      );
      // The watch subscribes to the store while it waits; another client's write then reaches the version.
      await vi.waitUntil(() => subscribe.mock.calls.length > 0, SETTLED);
      await create('arrives');
      const got = await events;
      expect(got.map((e) => e.type)).toEqual(['ADDED', 'BOOKMARK']);
      expect(got[0].object.metadata).toMatchObject({
        name: 'arrives',
        resourceVersion: String(ahead),
      });
    } finally {
      subscribe.mockRestore();
    }
  });

  it('answers a version that does not come in time with a 504 ResourceVersionTooLarge event', async () => {
    const ahead = c.state.store.resourceVersion + 1000;
    const events = await watchEvents(
      c,
      `/api/v1/namespaces/default/configmaps?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion=${ahead}`,
      2,
    );
    expect(events).toEqual([
      {
        type: 'ERROR',
        object: expect.objectContaining({
          kind: 'Status',
          code: 504,
          reason: 'Timeout',
          details: {
            causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
            retryAfterSeconds: 1,
          },
        }),
      },
    ]);
    expect(events[0].object.message).toBe(
      `Timeout: Too large resource version: ${ahead}, current: ${c.state.store.resourceVersion}`,
    );
  });

  it('leaves nothing behind when the client goes away while the watch waits', async () => {
    const store = c.state.store;
    const unsubscribed = vi.fn();
    const original = store.subscribe.bind(store);
    const subscribe = vi.spyOn(store, 'subscribe').mockImplementation((listener) => {
      const unsubscribe = original(listener);
      return () => {
        unsubscribed();
        return unsubscribe();
      };
    });
    try {
      const ahead = store.resourceVersion + 1000;
      const { request } = await import('node:https');
      const req = request(
        new URL(
          `/api/v1/namespaces/default/configmaps?watch=1&sendInitialEvents=true&resourceVersion=${ahead}`,
          c.url,
        ),
        { headers: { Authorization: `Bearer ${c.token}` }, ca: c.caCertificate, agent: false },
      );
      req.on('error', () => {});
      req.end();
      await vi.waitUntil(() => subscribe.mock.calls.length > 0, SETTLED);
      req.destroy();
      await vi.waitUntil(() => unsubscribed.mock.calls.length > 0, SETTLED);
      expect(unsubscribed).toHaveBeenCalledTimes(subscribe.mock.calls.length);
    } finally {
      subscribe.mockRestore();
    }
  });

  it('lists a version ahead of the server after waiting for it, or answers 504', async () => {
    const store = c.state.store;
    const ahead = store.resourceVersion + 1000;
    const waited = await call(
      c,
      'GET',
      `/api/v1/namespaces/default/configmaps?resourceVersion=${ahead}`,
    );
    expect(waited.status).toBe(504);
    expect(waited.body.details).toEqual({
      causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
      retryAfterSeconds: 1,
    });
    // etcd serves a paginated list: it answers at once, without a retry delay.
    const paged = await call(
      c,
      'GET',
      `/api/v1/namespaces/default/configmaps?resourceVersion=${ahead}&limit=10`,
    );
    expect(paged.status).toBe(504);
    expect(paged.body.details.retryAfterSeconds).toBeUndefined();
    const subscribe = vi.spyOn(store, 'subscribe');
    try {
      const next = store.resourceVersion + 1;
      const listed = call(
        c,
        'GET',
        `/api/v1/namespaces/default/configmaps?resourceVersion=${next}&resourceVersionMatch=NotOlderThan&fieldSelector=metadata.name%3Dlisted-late`,
      );
      await vi.waitUntil(() => subscribe.mock.calls.length > 0, SETTLED);
      await create('listed-late');
      const reply = await listed;
      expect(reply.status).toBe(200);
      expect(reply.body.items.map((i: { metadata: { name: string } }) => i.metadata.name)).toEqual([
        'listed-late',
      ]);
    } finally {
      subscribe.mockRestore();
    }
  });

  it('streams Table rows to clients that ask for tables (kubectl get --watch)', async () => {
    const url = new URL(
      '/api/v1/namespaces/default/configmaps?watch=1&fieldSelector=metadata.name%3Dtake',
      c.url,
    );
    const reply = await new Promise<string>((resolve, reject) => {
      import('node:https').then(({ request }) => {
        const req = request(
          url,
          {
            headers: {
              Authorization: `Bearer ${c.token}`,
              Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json',
            },
            ca: c.caCertificate,
            agent: false,
          },
          (res) => {
            res.once('data', (chunk: Buffer) => {
              req.destroy();
              resolve(chunk.toString('utf8'));
            });
          },
        );
        req.on('error', reject);
        req.end();
      }, reject);
    });
    const event = JSON.parse(reply.split('\n')[0] ?? '');
    expect(event.type).toBe('ADDED');
    expect(event.object.kind).toBe('Table');
    expect(event.object.rows[0].cells[0]).toBe('take');
    expect(event.object.rows[0].object.kind).toBe('PartialObjectMetadata');
  });
});

describe('watch with a selector', () => {
  const path = '/api/v1/namespaces/default/configmaps/mover';
  const patch = (body: unknown) =>
    call(c, 'PATCH', path, { body, contentType: 'application/merge-patch+json' });
  const selection = '/api/v1/namespaces/default/configmaps?watch=1&labelSelector=pick%3Dyes';
  let before = '';
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON shapes
  let live: any[] = [];
  const versions: string[] = [];

  it('sees an object enter, change within and leave its selection', async () => {
    await create('mover', { pick: 'no' });
    before = String(c.state.store.resourceVersion);
    live = await watchEvents(c, `${selection}&resourceVersion=${before}`, 3, () => {
      void (async () => {
        for (const body of [
          { metadata: { labels: { pick: 'yes' } } },
          { data: { k: 'v' } },
          { metadata: { labels: { pick: 'gone' } } },
          { data: { k: 'unseen' } },
        ]) {
          versions.push((await patch(body)).body.metadata.resourceVersion);
        }
      })();
    });
    expect(
      live.map((e) => [e.type, e.object.metadata.labels, e.object.metadata.resourceVersion]),
    ).toEqual([
      ['ADDED', { pick: 'yes' }, versions[0]],
      ['MODIFIED', { pick: 'yes' }, versions[1]],
      // The state the watcher knew, at the version of the change that took it out.
      ['DELETED', { pick: 'yes' }, versions[2]],
    ]);
    expect(live[2].object.data).toEqual({ k: 'v' });
  });

  it('replays the same transitions from an older resourceVersion', async () => {
    await vi.waitUntil(() => versions.length === 4, SETTLED);
    const replayed = await watchEvents(
      c,
      `${selection}&resourceVersion=${before}&allowWatchBookmarks=true&timeoutSeconds=1`,
      4,
    );
    expect(replayed.slice(0, -1)).toEqual(live);
    expect(replayed.at(-1).type).toBe('BOOKMARK');
  });
});
