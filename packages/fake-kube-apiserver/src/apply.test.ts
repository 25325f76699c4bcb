import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { type ClusterHandle, type FakeKubeApiServer, startFakeKubeApiServer } from './server.ts';
import { call } from './test-support/client.ts';

let server: FakeKubeApiServer;
let c: ClusterHandle;

beforeAll(async () => {
  server = await startFakeKubeApiServer({ clusters: [{ name: 'a' }], workloadReadyDelayMs: -1 });
  c = server.cluster('a');
});
afterAll(() => server.close());

const DEPLOY = '/apis/apps/v1/namespaces/default/deployments';

function apply(path: string, body: unknown, manager: string, force = false) {
  return call(c, 'PATCH', `${path}?fieldManager=${manager}${force ? '&force=true' : ''}`, {
    body: stringify(body),
    contentType: 'application/apply-patch+yaml',
  });
}

const deployment = (containers: unknown[], extra: Record<string, unknown> = {}) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web' },
  spec: {
    selector: { matchLabels: { app: 'web' } },
    template: { metadata: { labels: { app: 'web' } }, spec: { containers } },
    ...extra,
  },
});

describe('server-side apply', () => {
  it('creates the object and records the manager in FieldsV1 format', async () => {
    const reply = await apply(
      `${DEPLOY}/web`,
      deployment([
        {
          name: 'app',
          image: 'app:1',
          env: [{ name: 'A', value: '1' }],
          ports: [{ containerPort: 8080 }],
        },
      ]),
      'qontract',
    );
    expect(reply.status).toBe(201);
    const [entry] = reply.body.metadata.managedFields;
    expect(entry).toMatchObject({
      manager: 'qontract',
      operation: 'Apply',
      apiVersion: 'apps/v1',
      fieldsType: 'FieldsV1',
    });
    const containers = entry.fieldsV1['f:spec']['f:template']['f:spec']['f:containers'];
    expect(containers['k:{"name":"app"}']).toEqual({
      '.': {},
      'f:env': { 'k:{"name":"A"}': { '.': {}, 'f:name': {}, 'f:value': {} } },
      'f:image': {},
      'f:name': {},
      'f:ports': {
        'k:{"containerPort":8080,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {} },
      },
    });
    expect(entry.fieldsV1['f:spec']['f:selector']).toEqual({ 'f:matchLabels': { 'f:app': {} } });
    expect(reply.body.spec.template.spec.containers[0].ports[0].protocol).toBe('TCP');
  });

  it('merges associative lists by key across managers', async () => {
    const reply = await apply(
      `${DEPLOY}/web`,
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'web' },
        spec: { template: { spec: { containers: [{ name: 'sidecar', image: 'side:1' }] } } },
      },
      'injector',
    );
    expect(reply.status).toBe(200);
    expect(reply.body.spec.template.spec.containers.map((x: { name: string }) => x.name)).toEqual([
      'app',
      'sidecar',
    ]);
    expect(reply.body.metadata.managedFields.map((m: { manager: string }) => m.manager)).toEqual([
      'qontract',
      'injector',
    ]);
  });

  it('keeps the defaulted rolling update when an apply switches to Recreate: 422, as the real server', async () => {
    const path = '/apis/apps/v1/namespaces/default/deployments/op';
    const op = (extra: Record<string, unknown>) => ({
      ...deployment([{ name: 'app', image: 'app:1' }], extra),
      metadata: { name: 'op' },
    });
    const created = await apply(path, op({}), 'qontract');
    expect(created.body.spec.strategy).toEqual({
      type: 'RollingUpdate',
      rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' },
    });
    // Defaults belong to no manager: applying the type alone leaves them in place.
    const refused = await apply(path, op({ strategy: { type: 'Recreate' } }), 'qontract', true);
    expect(refused.status).toBe(422);
    expect(refused.body.message).toBe(
      'Deployment.apps "op" is invalid: spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is \'Recreate\'',
    );
    // Removing them with the type change (a JSON patch) is accepted, and so is the apply after it.
    const patched = await call(c, 'PATCH', path, {
      body: JSON.stringify([
        { op: 'remove', path: '/spec/strategy/rollingUpdate' },
        { op: 'replace', path: '/spec/strategy/type', value: 'Recreate' },
      ]),
      contentType: 'application/json-patch+json',
    });
    expect(patched.body.spec.strategy).toEqual({ type: 'Recreate' });
    const again = await apply(path, op({ strategy: { type: 'Recreate' } }), 'qontract', true);
    expect(again.status).toBe(200);
    expect(again.body.spec.strategy).toEqual({ type: 'Recreate' });
  });

  it('answers a conflicting apply with 409 listing the fields', async () => {
    const one = await apply(
      `${DEPLOY}/web`,
      deployment([{ name: 'app', image: 'app:2' }], { replicas: 5 }),
      'intruder',
    );
    expect(one.status).toBe(409);
    expect(one.body.reason).toBe('Conflict');
    expect(one.body.message).toBe(
      'Apply failed with 1 conflict: conflict with "qontract": .spec.template.spec.containers[name="app"].image',
    );
    expect(one.body.details.causes).toEqual([
      {
        type: 'FieldManagerConflict',
        message: 'conflict with "qontract"',
        field: '.spec.template.spec.containers[name="app"].image',
      },
    ]);
    const body = deployment([{ name: 'app', image: 'app:2', env: [{ name: 'A', value: '2' }] }]);
    const two = await apply(`${DEPLOY}/web`, body, 'intruder');
    expect(two.body.message).toBe(
      'Apply failed with 2 conflicts: conflicts with "qontract":\n' +
        '- .spec.template.spec.containers[name="app"].env[name="A"].value\n' +
        '- .spec.template.spec.containers[name="app"].image',
    );
  });

  it('overrides with force and moves the fields to the new manager', async () => {
    const reply = await apply(
      `${DEPLOY}/web`,
      deployment([{ name: 'app', image: 'app:2' }]),
      'intruder',
      true,
    );
    expect(reply.status).toBe(200);
    expect(reply.body.spec.template.spec.containers[0].image).toBe('app:2');
    const qontract = reply.body.metadata.managedFields.find(
      (m: { manager: string }) => m.manager === 'qontract',
    );
    const app =
      qontract.fieldsV1['f:spec']['f:template']['f:spec']['f:containers']['k:{"name":"app"}'];
    expect(app['f:image']).toBeUndefined();
    expect(app['f:env']).toBeDefined();
  });

  it('removes fields a manager stops applying unless another manager owns them', async () => {
    // qontract drops env A and the port; the image stays (intruder owns it).
    const reply = await apply(
      `${DEPLOY}/web`,
      deployment([{ name: 'app', image: 'app:2' }]),
      'qontract',
    );
    expect(reply.status).toBe(200);
    const app = reply.body.spec.template.spec.containers.find(
      (x: { name: string }) => x.name === 'app',
    );
    expect(app).toEqual({ name: 'app', image: 'app:2' });
    // The sidecar manager stops applying its container: it goes away.
    const gone = await apply(
      `${DEPLOY}/web`,
      { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' } },
      'injector',
    );
    expect(gone.body.spec.template.spec.containers.map((x: { name: string }) => x.name)).toEqual([
      'app',
    ]);
    expect(
      gone.body.metadata.managedFields.map((m: { manager: string }) => m.manager),
    ).not.toContain('injector');
  });

  it('treats other lists as atomic', async () => {
    const path = '/api/v1/namespaces/default/configmaps/atomic';
    const cm = (args: string[]) => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'atomic', annotations: { x: JSON.stringify(args) } },
      data: { a: '1' },
    });
    await apply(path, cm(['a']), 'one');
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p' },
      spec: { containers: [{ name: 'c', image: 'i', args: ['x', 'y'] }] },
    };
    const created = await apply('/api/v1/namespaces/default/pods/p', pod, 'one');
    const fields = created.body.metadata.managedFields[0].fieldsV1;
    expect(fields['f:spec']['f:containers']['k:{"name":"c"}']['f:args']).toEqual({});
    pod.spec.containers[0]!.args = ['z'];
    const updated = await apply('/api/v1/namespaces/default/pods/p', pod, 'one');
    expect(updated.body.spec.containers[0].args).toEqual(['z']);
  });

  it('refuses an object naming another namespace than the path', async () => {
    const reply = await apply(
      '/api/v1/namespaces/default/configmaps/elsewhere',
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'elsewhere', namespace: 'other' } },
      'm',
    );
    expect(reply.status).toBe(400);
    expect(reply.body.message).toBe(
      'the namespace of the provided object does not match the namespace sent on the request',
    );
  });

  it("lets an applier's own Update entry conflict with it, as managers differ by operation", async () => {
    await call(c, 'POST', '/api/v1/namespaces/default/configmaps?fieldManager=same', {
      body: { metadata: { name: 'same' }, data: { k: 'created' } },
    });
    const reply = await apply(
      '/api/v1/namespaces/default/configmaps/same',
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'same' }, data: { k: 'applied' } },
      'same',
    );
    expect(reply.status).toBe(409);
    expect(reply.body.message).toMatch(
      /^Apply failed with 1 conflict: conflict with "same" using v1 at \S+: \.data\.k$/,
    );
  });

  it('requires a field manager', async () => {
    const reply = await call(c, 'PATCH', '/api/v1/namespaces/default/configmaps/nm', {
      body: 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: nm}\n',
      contentType: 'application/apply-patch+yaml',
    });
    expect(reply.status).toBe(422);
    expect(reply.body.message).toContain('fieldManager: Required value');
  });
});

describe('managed fields of ordinary writes', () => {
  it('records Update entries named by fieldManager or the User-Agent', async () => {
    const created = await call(
      c,
      'POST',
      '/api/v1/namespaces/default/configmaps?fieldManager=kubectl-create',
      {
        body: { metadata: { name: 'upd', labels: { a: 'b' } }, data: { k: 'v' } },
      },
    );
    expect(created.body.metadata.managedFields).toEqual([
      {
        manager: 'kubectl-create',
        operation: 'Update',
        apiVersion: 'v1',
        time: expect.any(String),
        fieldsType: 'FieldsV1',
        fieldsV1: {
          'f:data': { '.': {}, 'f:k': {} },
          'f:metadata': { 'f:labels': { '.': {}, 'f:a': {} } },
        },
      },
    ]);
    const edited = await call(c, 'PATCH', '/api/v1/namespaces/default/configmaps/upd', {
      body: { data: { k: 'w' } },
      contentType: 'application/merge-patch+json',
      headers: { 'User-Agent': 'kubectl-edit/v1.32.0 (linux/amd64)' },
    });
    const managers = edited.body.metadata.managedFields.map(
      (m: { manager: string; fieldsV1: unknown }) => [m.manager, m.fieldsV1],
    );
    expect(managers).toEqual([
      [
        'kubectl-create',
        { 'f:data': { '.': {} }, 'f:metadata': { 'f:labels': { '.': {}, 'f:a': {} } } },
      ],
      ['kubectl-edit', { 'f:data': { 'f:k': {} } }],
    ]);
  });

  it('represents client-side-applied objects and lets a write replace their managed fields', async () => {
    const lastApplied = JSON.stringify({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'csa' },
      data: { old: '1' },
    });
    server.seed('a', [
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: {
          name: 'csa',
          namespace: 'default',
          annotations: { 'kubectl.kubernetes.io/last-applied-configuration': lastApplied },
          managedFields: [
            {
              manager: 'kubectl-client-side-apply',
              operation: 'Update',
              apiVersion: 'v1',
              time: '2024-01-01T00:00:00Z',
              fieldsType: 'FieldsV1',
              fieldsV1: {
                'f:data': { '.': {}, 'f:old': {} },
                'f:metadata': {
                  'f:annotations': {
                    '.': {},
                    'f:kubectl.kubernetes.io/last-applied-configuration': {},
                  },
                },
              },
            },
          ],
        },
        data: { old: '1' },
      },
    ]);
    const seeded = server.get('a', 'v1', 'ConfigMap', 'default', 'csa') as
      | { metadata: { managedFields: { manager: string }[] } }
      | undefined;
    expect(seeded?.metadata.managedFields[0]?.manager).toBe('kubectl-client-side-apply');
    // Migration: hand the CSA manager's fields to the SSA manager, as kubectl's csaupgrade does.
    const migrated = await call(c, 'PATCH', '/api/v1/namespaces/default/configmaps/csa', {
      contentType: 'application/json-patch+json',
      body: [
        {
          op: 'replace',
          path: '/metadata/managedFields',
          value: [
            {
              manager: 'qontract',
              operation: 'Apply',
              apiVersion: 'v1',
              fieldsType: 'FieldsV1',
              fieldsV1: { 'f:data': { 'f:old': {} } },
            },
          ],
        },
      ],
    });
    expect(migrated.status).toBe(200);
    expect(migrated.body.metadata.managedFields.map((m: { manager: string }) => m.manager)).toEqual(
      ['qontract'],
    );
    // The next apply without `old` removes it: it is now owned by the applier alone.
    const applied = await apply(
      '/api/v1/namespaces/default/configmaps/csa',
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'csa' }, data: { new: '2' } },
      'qontract',
    );
    expect(applied.body.data).toEqual({ new: '2' });
  });
});

describe('patches', () => {
  const path = '/apis/apps/v1/namespaces/default/deployments/web';

  it('applies strategic merge patches by merge key, with $patch directives', async () => {
    const reply = await call(c, 'PATCH', path, {
      contentType: 'application/strategic-merge-patch+json',
      body: {
        spec: {
          template: {
            spec: {
              containers: [
                { name: 'app', env: [{ name: 'X', value: '1' }] },
                { name: 'extra', image: 'e:1' },
              ],
            },
          },
        },
      },
    });
    expect(reply.status).toBe(200);
    const containers = reply.body.spec.template.spec.containers;
    expect(containers).toEqual([
      { name: 'app', image: 'app:2', env: [{ name: 'X', value: '1' }] },
      { name: 'extra', image: 'e:1' },
    ]);
    const deleted = await call(c, 'PATCH', path, {
      contentType: 'application/strategic-merge-patch+json',
      body: { spec: { template: { spec: { containers: [{ name: 'extra', $patch: 'delete' }] } } } },
    });
    expect(deleted.body.spec.template.spec.containers.map((x: { name: string }) => x.name)).toEqual(
      ['app'],
    );
  });

  it('applies JSON merge patches and JSON patches', async () => {
    const merged = await call(c, 'PATCH', path, {
      contentType: 'application/merge-patch+json',
      body: { metadata: { labels: { team: 'a' } } },
    });
    expect(merged.body.metadata.labels).toEqual({ team: 'a' });
    const jsonPatched = await call(c, 'PATCH', path, {
      contentType: 'application/json-patch+json',
      body: [
        { op: 'test', path: '/metadata/labels/team', value: 'a' },
        { op: 'replace', path: '/spec/replicas', value: 4 },
      ],
    });
    expect(jsonPatched.body.spec.replicas).toBe(4);
    const failed = await call(c, 'PATCH', path, {
      contentType: 'application/json-patch+json',
      body: [{ op: 'test', path: '/spec/replicas', value: 1 }],
    });
    expect(failed.status).toBe(422);
    expect(failed.body).toMatchObject({
      reason: 'Invalid',
      message: 'the server rejected our request due to an error in our request',
    });
  });

  it('refuses strategic merge patches on custom resources with 415', async () => {
    server.seed('a', [
      {
        apiVersion: 'monitoring.coreos.com/v1',
        kind: 'ServiceMonitor',
        metadata: { name: 'sm', namespace: 'default' },
        spec: { endpoints: [] },
      },
    ]);
    const reply = await call(
      c,
      'PATCH',
      '/apis/monitoring.coreos.com/v1/namespaces/default/servicemonitors/sm',
      {
        contentType: 'application/strategic-merge-patch+json',
        body: { spec: {} },
      },
    );
    expect(reply.status).toBe(415);
  });
});
