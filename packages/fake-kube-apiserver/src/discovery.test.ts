import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeKubeApiServer, startFakeKubeApiServer } from './server.ts';
import { call } from './test-support/client.ts';

let server: FakeKubeApiServer;

beforeAll(async () => {
  server = await startFakeKubeApiServer({
    clusters: [{ name: 'ocp', openshift: true, token: 'ocp-token' }, { name: 'k8s' }],
  });
});
afterAll(() => server.close());

describe('clusters and authentication', () => {
  it('gives every cluster its own URL and token', () => {
    const ocp = server.cluster('ocp');
    const k8s = server.cluster('k8s');
    expect(ocp.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(k8s.url).not.toBe(ocp.url);
    expect(ocp.token).toBe('ocp-token');
    expect(k8s.token).not.toBe('');
  });

  it('refuses a missing or wrong token with a 401 Status', async () => {
    for (const token of [null, 'wrong', server.cluster('k8s').token]) {
      const reply = await call(server.cluster('ocp'), 'GET', '/api/v1/namespaces', { token });
      expect(reply.status).toBe(401);
      expect(reply.body).toEqual({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'Unauthorized',
        reason: 'Unauthorized',
        code: 401,
      });
    }
  });

  it('writes kubeconfigs with one context per cluster', () => {
    const all = server.kubeconfigObject();
    expect(all.contexts.map((c) => c.name)).toEqual(['ocp', 'k8s']);
    expect(all.clusters[0]?.cluster['certificate-authority-data']).not.toBe('');
    expect(server.cluster('k8s').kubeconfig()).toContain(server.cluster('k8s').url);
    expect(server.cluster('k8s').kubeconfig()).not.toContain(server.cluster('ocp').url);
  });
});

describe('discovery', () => {
  it('serves /version, /api and /api/v1', async () => {
    const c = server.cluster('k8s');
    expect((await call(c, 'GET', '/version')).body.gitVersion).toMatch(/^v1\./);
    expect((await call(c, 'GET', '/api')).body).toMatchObject({
      kind: 'APIVersions',
      versions: ['v1'],
    });
    const core = (await call(c, 'GET', '/api/v1')).body;
    expect(core.kind).toBe('APIResourceList');
    const names = core.resources.map((r: { name: string }) => r.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'namespaces',
        'configmaps',
        'secrets',
        'services',
        'namespaces/status',
      ]),
    );
    const services = core.resources.find((r: { name: string }) => r.name === 'services');
    expect(services.categories).toEqual(['all']);
    const ns = core.resources.find((r: { name: string }) => r.name === 'namespaces');
    expect(ns).toMatchObject({ namespaced: false, kind: 'Namespace', shortNames: ['ns'] });
  });

  it('lists the groups we use, with OpenShift groups only on OpenShift clusters', async () => {
    const groupsOf = async (name: string) =>
      ((await call(server.cluster(name), 'GET', '/apis')).body.groups as { name: string }[]).map(
        (g) => g.name,
      );
    const common = [
      'apps',
      'batch',
      'rbac.authorization.k8s.io',
      'networking.k8s.io',
      'policy',
      'coordination.k8s.io',
      'apiextensions.k8s.io',
      'monitoring.coreos.com',
    ];
    const openshift = [
      'project.openshift.io',
      'user.openshift.io',
      'route.openshift.io',
      'apps.openshift.io',
      'operators.coreos.com',
    ];
    expect(await groupsOf('ocp')).toEqual(expect.arrayContaining([...common, ...openshift]));
    const plain = await groupsOf('k8s');
    expect(plain).toEqual(expect.arrayContaining(common));
    for (const g of openshift) expect(plain).not.toContain(g);
    expect((await call(server.cluster('k8s'), 'GET', '/apis/project.openshift.io/v1')).status).toBe(
      404,
    );
  });

  it('serves aggregated discovery to clients that ask for it', async () => {
    const accept =
      'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json';
    const apis = await call(server.cluster('ocp'), 'GET', '/apis', { headers: { Accept: accept } });
    expect(apis.headers['content-type']).toBe(
      'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList',
    );
    expect(apis.body.kind).toBe('APIGroupDiscoveryList');
    const apps = apis.body.items.find(
      (g: { metadata: { name?: string } }) => g.metadata.name === 'apps',
    );
    const deployments = apps.versions[0].resources.find(
      (r: { resource: string }) => r.resource === 'deployments',
    );
    expect(apps.versions[0]).toMatchObject({ version: 'v1', freshness: 'Current' });
    expect(deployments).toMatchObject({
      responseKind: { group: 'apps', version: 'v1', kind: 'Deployment' },
      scope: 'Namespaced',
      singularResource: 'deployment',
      shortNames: ['deploy'],
      subresources: [{ subresource: 'status', verbs: ['get', 'patch', 'update'] }],
    });
    const core = await call(server.cluster('ocp'), 'GET', '/api', { headers: { Accept: accept } });
    expect(core.body.items).toHaveLength(1);
    expect(
      core.body.items[0].versions[0].resources.map((r: { resource: string }) => r.resource),
    ).toContain('namespaces');
  });

  it('serves a group and its resources', async () => {
    const c = server.cluster('ocp');
    const group = (await call(c, 'GET', '/apis/apps')).body;
    expect(group).toMatchObject({
      kind: 'APIGroup',
      name: 'apps',
      preferredVersion: { groupVersion: 'apps/v1' },
    });
    const projects = (await call(c, 'GET', '/apis/project.openshift.io/v1')).body;
    expect(projects.resources.map((r: { name: string }) => r.name)).toEqual([
      'projects',
      'projectrequests',
    ]);
  });

  it('adds custom resources once their CRD exists, and drops them with it', async () => {
    const c = server.cluster('k8s');
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'widgets.example.com' },
      spec: {
        group: 'example.com',
        scope: 'Namespaced',
        names: { plural: 'widgets', singular: 'widget', kind: 'Widget', shortNames: ['wd'] },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: 'object' } },
          },
        ],
      },
    };
    expect((await call(c, 'GET', '/apis/example.com/v1')).status).toBe(404);
    const created = await call(
      c,
      'POST',
      '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
      { body: crd },
    );
    expect(created.status).toBe(201);
    expect(created.body.status.conditions.map((x: { type: string }) => x.type)).toContain(
      'Established',
    );
    const resources = (await call(c, 'GET', '/apis/example.com/v1')).body.resources;
    expect(resources).toEqual([
      expect.objectContaining({
        name: 'widgets',
        kind: 'Widget',
        namespaced: true,
        shortNames: ['wd'],
      }),
    ]);
    const widget = {
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: { name: 'w' },
      spec: { size: 1 },
    };
    expect(
      (await call(c, 'POST', '/apis/example.com/v1/namespaces/default/widgets', { body: widget }))
        .status,
    ).toBe(201);
    const widgets = (await call(c, 'GET', '/apis/example.com/v1/widgets')).body;
    expect(widgets).toMatchObject({ kind: 'WidgetList', apiVersion: 'example.com/v1' });
    expect(widgets.items).toEqual([expect.objectContaining({ kind: 'Widget', spec: { size: 1 } })]);
    expect(
      (
        await call(
          c,
          'DELETE',
          '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com',
        )
      ).status,
    ).toBe(200);
    expect((await call(c, 'GET', '/apis/example.com/v1/namespaces/default/widgets/w')).status).toBe(
      404,
    );
    expect((await call(c, 'GET', '/apis/example.com/v1')).status).toBe(404);
  });

  it('answers unknown paths with the real 404 Status', async () => {
    const reply = await call(
      server.cluster('k8s'),
      'GET',
      '/apis/apps/v1/namespaces/default/gizmos',
    );
    expect(reply.status).toBe(404);
    expect(reply.body).toMatchObject({
      reason: 'NotFound',
      message: 'the server could not find the requested resource',
    });
  });
});
