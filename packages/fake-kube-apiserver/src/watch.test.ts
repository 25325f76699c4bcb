import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ClusterHandle, type FakeKubeApiServer, startFakeKubeApiServer } from './server.ts';
import { call, watchEvents } from './test-support/client.ts';

let server: FakeKubeApiServer;
let c: ClusterHandle;

beforeAll(async () => {
  server = await startFakeKubeApiServer({ clusters: [{ name: 'a' }] });
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

  it('refuses a version ahead of the server with 504 ResourceVersionTooLarge', async () => {
    const ahead = c.state.store.resourceVersion + 100;
    const reply = await call(
      c,
      'GET',
      `/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=${ahead}`,
    );
    expect(reply.status).toBe(504);
    expect(reply.body.details.causes[0].reason).toBe('ResourceVersionTooLarge');
    expect(reply.body.message).toMatch(/^Too large resource version: \d+, current: \d+$/);
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
