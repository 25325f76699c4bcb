import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ClusterHandle, type FakeKubeApiServer, startFakeKubeApiServer } from './server.ts';
import { call, SETTLED } from './test-support/client.ts';

let server: FakeKubeApiServer;
let c: ClusterHandle;

beforeAll(async () => {
  server = await startFakeKubeApiServer({ clusters: [{ name: 'a', openshift: true }] });
  c = server.cluster('a');
});
afterAll(() => server.close());

const cm = (
  name: string,
  data: Record<string, string> = { a: '1' },
  labels: Record<string, string> = {},
) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, labels },
  data,
});

async function namespace(name: string) {
  const reply = await call(c, 'POST', '/api/v1/namespaces', { body: { metadata: { name } } });
  expect(reply.status).toBe(201);
  return reply.body;
}

describe('create and get', () => {
  it('sets uid, creationTimestamp and a global resourceVersion', async () => {
    await namespace('crud');
    const one = await call(c, 'POST', '/api/v1/namespaces/crud/configmaps', { body: cm('one') });
    const two = await call(c, 'POST', '/api/v1/namespaces/crud/configmaps', { body: cm('two') });
    expect(one.status).toBe(201);
    expect(one.body.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(one.body.metadata.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(Number(two.body.metadata.resourceVersion)).toBeGreaterThan(
      Number(one.body.metadata.resourceVersion),
    );
    expect(one.body.metadata.generation).toBeUndefined();
    const got = await call(c, 'GET', '/api/v1/namespaces/crud/configmaps/one');
    expect(got.body).toEqual(one.body);
  });

  it('fails in a missing namespace as the real server does', async () => {
    const reply = await call(c, 'POST', '/api/v1/namespaces/nowhere/configmaps', { body: cm('x') });
    expect(reply.status).toBe(404);
    expect(reply.body).toMatchObject({
      reason: 'NotFound',
      message: 'namespaces "nowhere" not found',
      details: { name: 'nowhere', kind: 'namespaces' },
      code: 404,
    });
  });

  it('refuses duplicates and unknown names with the real wording', async () => {
    const dup = await call(c, 'POST', '/api/v1/namespaces/crud/configmaps', { body: cm('one') });
    expect(dup.status).toBe(409);
    expect(dup.body).toMatchObject({
      reason: 'AlreadyExists',
      message: 'configmaps "one" already exists',
    });
    const missing = await call(c, 'GET', '/apis/apps/v1/namespaces/crud/deployments/nope');
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({
      message: 'deployments.apps "nope" not found',
      details: { name: 'nope', group: 'apps', kind: 'deployments' },
    });
  });

  it('refuses a create carrying a resourceVersion with the bare 500 of the real storage', async () => {
    const reply = await call(c, 'POST', '/api/v1/namespaces/crud/configmaps', {
      body: { metadata: { name: 'copied', resourceVersion: '12' } },
    });
    expect(reply.status).toBe(500);
    expect(reply.body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'resourceVersion should not be set on objects to be created',
      code: 500,
    });
  });

  it('validates names with 422 Invalid', async () => {
    const reply = await call(c, 'POST', '/api/v1/namespaces/crud/configmaps', {
      body: cm('Bad_Name'),
    });
    expect(reply.status).toBe(422);
    expect(reply.body.reason).toBe('Invalid');
    expect(reply.body.message).toMatch(
      /^ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain/,
    );
    const generated = await call(c, 'POST', '/api/v1/namespaces/crud/configmaps', {
      body: { metadata: { generateName: 'gen-' }, data: {} },
    });
    expect(generated.body.metadata.name).toMatch(/^gen-[a-z0-9]{5}$/);
  });

  it('keeps cluster-scoped objects out of namespaces', async () => {
    const reply = await call(c, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
      body: { metadata: { name: 'reader', namespace: 'ignored' }, rules: [] },
    });
    expect(reply.status).toBe(201);
    expect(reply.body.metadata.namespace).toBeUndefined();
    expect(
      (await call(c, 'GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles/reader')).status,
    ).toBe(200);
  });
});

describe('update', () => {
  it('answers a stale resourceVersion with 409 and the real message', async () => {
    const live = (await call(c, 'GET', '/api/v1/namespaces/crud/configmaps/one')).body;
    const updated = await call(c, 'PUT', '/api/v1/namespaces/crud/configmaps/one', {
      body: { ...live, data: { a: '2' } },
    });
    expect(updated.status).toBe(200);
    const stale = await call(c, 'PUT', '/api/v1/namespaces/crud/configmaps/one', {
      body: { ...live, data: { a: '3' } },
    });
    expect(stale.status).toBe(409);
    expect(stale.body).toMatchObject({
      reason: 'Conflict',
      message:
        'Operation cannot be fulfilled on configmaps "one": the object has been modified; please apply your changes to the latest version and try again',
    });
  });

  it('lets exactly one of concurrent writers with the same resourceVersion win', async () => {
    const live = (await call(c, 'GET', '/api/v1/namespaces/crud/configmaps/two')).body;
    const replies = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        call(c, 'PUT', '/api/v1/namespaces/crud/configmaps/two', {
          body: { ...live, data: { writer: String(i) } },
        }),
      ),
    );
    expect(replies.map((r) => r.status).sort()).toEqual([200, 409, 409, 409, 409, 409, 409, 409]);
  });

  it('bumps generation on spec changes only', async () => {
    const deploy = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'gen' },
      spec: {
        selector: { matchLabels: { app: 'gen' } },
        template: {
          metadata: { labels: { app: 'gen' } },
          spec: { containers: [{ name: 'c', image: 'i:1' }] },
        },
      },
    };
    const created = await call(c, 'POST', '/apis/apps/v1/namespaces/crud/deployments', {
      body: deploy,
    });
    expect(created.body.metadata.generation).toBe(1);
    const labelled = await call(c, 'PATCH', '/apis/apps/v1/namespaces/crud/deployments/gen', {
      body: { metadata: { labels: { x: 'y' } } },
      contentType: 'application/merge-patch+json',
    });
    expect(labelled.body.metadata.generation).toBe(1);
    const changed = await call(c, 'PATCH', '/apis/apps/v1/namespaces/crud/deployments/gen', {
      body: { spec: { replicas: 3 } },
      contentType: 'application/merge-patch+json',
    });
    expect(changed.body.metadata.generation).toBe(2);
  });

  it('leaves status alone on main-resource writes and takes it on /status', async () => {
    const path = '/apis/apps/v1/namespaces/crud/deployments/gen';
    await expect
      .poll(async () => (await call(c, 'GET', path)).body.status?.observedGeneration, SETTLED)
      .toBe(2);
    const live = (await call(c, 'GET', path)).body;
    const main = await call(c, 'PUT', path, { body: { ...live, status: { replicas: 99 } } });
    expect(main.body.status.replicas).toBe(3);
    const status = await call(c, 'PUT', `${path}/status`, {
      body: { ...main.body, status: { replicas: 7 } },
    });
    expect(status.status).toBe(200);
    expect(status.body.status).toEqual({ replicas: 7 });
  });
});

describe('list', () => {
  beforeAll(async () => {
    await namespace('listing');
    for (let i = 0; i < 12; i++) {
      const tier = i % 3 === 0 ? 'front' : i % 3 === 1 ? 'back' : 'db';
      await call(c, 'POST', '/api/v1/namespaces/listing/configmaps', {
        body: cm(
          `cm-${String(i).padStart(2, '0')}`,
          {},
          { tier, ...(i < 6 ? { old: 'yes' } : {}) },
        ),
      });
    }
  });

  const names = (body: { items: { metadata: { name: string } }[] }) =>
    body.items.map((i) => i.metadata.name);

  it('returns a typed list with a resourceVersion', async () => {
    const list = (await call(c, 'GET', '/api/v1/namespaces/listing/configmaps')).body;
    expect(list.kind).toBe('ConfigMapList');
    expect(list.apiVersion).toBe('v1');
    expect(list.items).toHaveLength(12);
    // As from the real server: items of built-in typed lists have no apiVersion/kind.
    expect(list.items[0].kind).toBeUndefined();
    expect(list.items[0].metadata.name).toBe('cm-00');
    expect(Number(list.metadata.resourceVersion)).toBeGreaterThan(0);
  });

  it('filters by label selector', async () => {
    const q = (s: string) =>
      call(
        c,
        'GET',
        `/api/v1/namespaces/listing/configmaps?labelSelector=${encodeURIComponent(s)}`,
      );
    expect(names((await q('tier=front')).body)).toEqual(['cm-00', 'cm-03', 'cm-06', 'cm-09']);
    expect((await q('tier!=front')).body.items).toHaveLength(8);
    expect(names((await q('tier in (db),old')).body)).toEqual(['cm-02', 'cm-05']);
    expect((await q('tier notin (front,back),!old')).body.items).toHaveLength(2);
    expect((await q('tier=front,old=yes')).body.items).toHaveLength(2);
  });

  it('filters by metadata.name and refuses other field labels', async () => {
    const one = await call(c, 'GET', '/api/v1/configmaps?fieldSelector=metadata.name%3Dcm-04');
    expect(names(one.body)).toEqual(['cm-04']);
    const bad = await call(c, 'GET', '/api/v1/configmaps?fieldSelector=data.a%3Db');
    expect(bad.status).toBe(400);
    expect(bad.body.message).toBe('field label not supported: data.a');
  });

  it('paginates with limit and continue', async () => {
    const seen: string[] = [];
    let token = '';
    let pages = 0;
    do {
      const page = (
        await call(
          c,
          'GET',
          `/api/v1/namespaces/listing/configmaps?limit=5${token ? `&continue=${token}` : ''}`,
        )
      ).body;
      seen.push(...names(page));
      token = page.metadata.continue ?? '';
      if (pages === 0) expect(page.metadata.remainingItemCount).toBe(7);
      pages++;
    } while (token);
    expect(pages).toBe(3);
    expect(seen).toEqual(Array.from({ length: 12 }, (_, i) => `cm-${String(i).padStart(2, '0')}`));
  });

  it('lists across namespaces in namespace/name order', async () => {
    const all = (await call(c, 'GET', '/api/v1/configmaps')).body.items as {
      metadata: { namespace: string };
    }[];
    const keys = all.map((i) => i.metadata.namespace);
    expect([...keys].sort()).toEqual(keys);
    expect(new Set(keys)).toEqual(new Set(['crud', 'listing']));
  });
});

describe('delete', () => {
  it('returns a Success Status and garbage-collects dependents in the background', async () => {
    await namespace('gc');
    const owner = (await call(c, 'POST', '/api/v1/namespaces/gc/configmaps', { body: cm('owner') }))
      .body;
    const ref = { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata.uid };
    await call(c, 'POST', '/api/v1/namespaces/gc/configmaps', {
      body: { metadata: { name: 'child', ownerReferences: [ref] } },
    });
    await call(c, 'POST', '/api/v1/namespaces/gc/secrets', {
      body: { metadata: { name: 'kept', ownerReferences: [ref] } },
    });
    const deleted = await call(c, 'DELETE', '/api/v1/namespaces/gc/configmaps/owner', {
      body: { propagationPolicy: 'Orphan' },
    });
    expect(deleted.body).toMatchObject({
      kind: 'Status',
      status: 'Success',
      details: { name: 'owner', kind: 'configmaps' },
    });
    const kept = (await call(c, 'GET', '/api/v1/namespaces/gc/secrets/kept')).body;
    expect(kept.metadata.ownerReferences).toBeUndefined();
    expect((await call(c, 'GET', '/api/v1/namespaces/gc/configmaps/child')).status).toBe(200);

    const parent = (
      await call(c, 'POST', '/api/v1/namespaces/gc/configmaps', { body: cm('parent') })
    ).body;
    await call(c, 'POST', '/api/v1/namespaces/gc/configmaps', {
      body: {
        metadata: {
          name: 'dependent',
          ownerReferences: [{ ...ref, name: 'parent', uid: parent.metadata.uid }],
        },
      },
    });
    await call(c, 'DELETE', '/api/v1/namespaces/gc/configmaps/parent?propagationPolicy=Background');
    expect((await call(c, 'GET', '/api/v1/namespaces/gc/configmaps/dependent')).status).toBe(404);
  });

  it('checks preconditions', async () => {
    const reply = await call(c, 'DELETE', '/api/v1/namespaces/gc/configmaps/child', {
      body: { preconditions: { uid: 'not-it' } },
    });
    expect(reply.status).toBe(409);
    expect(reply.body.message).toMatch(
      /^Operation cannot be fulfilled on configmaps "child": Precondition failed: UID in precondition: not-it/,
    );
  });

  it('keeps objects with finalizers until the finalizers are gone', async () => {
    await call(c, 'POST', '/api/v1/namespaces/gc/configmaps', {
      body: { metadata: { name: 'fin', finalizers: ['x/y'] } },
    });
    const deleting = await call(c, 'DELETE', '/api/v1/namespaces/gc/configmaps/fin');
    expect(deleting.body.metadata.deletionTimestamp).toBeDefined();
    expect((await call(c, 'GET', '/api/v1/namespaces/gc/configmaps/fin')).status).toBe(200);
    await call(c, 'PATCH', '/api/v1/namespaces/gc/configmaps/fin', {
      body: { metadata: { finalizers: null } },
      contentType: 'application/merge-patch+json',
    });
    expect((await call(c, 'GET', '/api/v1/namespaces/gc/configmaps/fin')).status).toBe(404);
  });

  it('deletes a namespace with its contents', async () => {
    const reply = await call(c, 'DELETE', '/api/v1/namespaces/gc');
    expect(reply.body).toMatchObject({ kind: 'Namespace', status: { phase: 'Terminating' } });
    expect((await call(c, 'GET', '/api/v1/namespaces/gc/configmaps')).body.items).toEqual([]);
    expect((await call(c, 'GET', '/api/v1/namespaces/gc/secrets')).body.items).toEqual([]);
    await expect
      .poll(async () => (await call(c, 'GET', '/api/v1/namespaces/gc')).status, SETTLED)
      .toBe(404);
  });

  it('refuses to delete the system namespaces', async () => {
    const reply = await call(c, 'DELETE', '/api/v1/namespaces/kube-system');
    expect(reply.status).toBe(403);
    expect(reply.body).toMatchObject({
      reason: 'Forbidden',
      message: 'namespaces "kube-system" is forbidden: this namespace may not be deleted',
    });
  });

  it('deletes a collection by label', async () => {
    const reply = await call(
      c,
      'DELETE',
      '/api/v1/namespaces/listing/configmaps?labelSelector=old%3Dyes',
    );
    expect(reply.status).toBe(200);
    expect((await call(c, 'GET', '/api/v1/namespaces/listing/configmaps')).body.items).toHaveLength(
      6,
    );
  });
});

describe('dry run', () => {
  it('answers as if written and stores nothing', async () => {
    server.resetLog();
    const created = await call(c, 'POST', '/api/v1/namespaces/crud/configmaps?dryRun=All', {
      body: cm('dry'),
    });
    expect(created.status).toBe(201);
    expect(created.body.metadata.uid).toBeDefined();
    expect((await call(c, 'GET', '/api/v1/namespaces/crud/configmaps/dry')).status).toBe(404);
    const before = (await call(c, 'GET', '/api/v1/namespaces/crud/configmaps/two')).body;
    await call(c, 'PATCH', '/api/v1/namespaces/crud/configmaps/two?dryRun=All', {
      body: { data: { a: 'changed' } },
      contentType: 'application/merge-patch+json',
    });
    await call(c, 'DELETE', '/api/v1/namespaces/crud/configmaps/two?dryRun=All');
    const applied = await call(
      c,
      'PATCH',
      '/api/v1/namespaces/crud/configmaps/applied?fieldManager=m&dryRun=All',
      {
        body: 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: applied}\ndata: {a: b}\n',
        contentType: 'application/apply-patch+yaml',
      },
    );
    expect(applied.status).toBe(201);
    expect(applied.body.data).toEqual({ a: 'b' });
    expect((await call(c, 'GET', '/api/v1/namespaces/crud/configmaps/applied')).status).toBe(404);
    expect((await call(c, 'GET', '/api/v1/namespaces/crud/configmaps/two')).body).toEqual(before);
    expect(server.mutatingRequests()).toEqual([]);
    expect(server.mutatingRequests({ dryRun: true })).toHaveLength(4);
  });
});

describe('request log', () => {
  it('records verb, resource, object and status of every request', async () => {
    server.resetLog();
    await call(c, 'GET', '/api/v1/namespaces/crud/configmaps/one');
    await call(c, 'GET', '/api/v1/namespaces/crud/configmaps?limit=1');
    await call(c, 'PATCH', '/api/v1/namespaces/crud/configmaps/one?fieldManager=me', {
      body: { data: { b: '1' } },
      contentType: 'application/merge-patch+json',
    });
    expect(server.requestLog.map((e) => [e.verb, e.kind, e.name, e.status])).toEqual([
      ['get', 'ConfigMap', 'one', 200],
      ['list', 'ConfigMap', '', 200],
      ['patch', 'ConfigMap', 'one', 200],
    ]);
    expect(server.mutatingRequests({ cluster: 'a' })).toEqual([
      expect.objectContaining({
        verb: 'patch',
        namespace: 'crud',
        resource: 'configmaps',
        fieldManager: 'me',
      }),
    ]);
    expect(server.requests({ verb: 'get' })).toHaveLength(1);
  });
});
