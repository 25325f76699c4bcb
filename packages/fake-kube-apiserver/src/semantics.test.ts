import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type ClusterHandle, type FakeKubeApiServer, startFakeKubeApiServer } from './server.ts';
import { call, SETTLED } from './test-support/client.ts';

let server: FakeKubeApiServer;
let c: ClusterHandle;

beforeAll(async () => {
  server = await startFakeKubeApiServer({
    clusters: [{ name: 'ocp', openshift: true }],
    workloadReadyDelayMs: 5,
  });
  c = server.cluster('ocp');
});
afterAll(() => server.close());

const merge = (path: string, body: unknown) =>
  call(c, 'PATCH', path, { body, contentType: 'application/merge-patch+json' });

describe('services', () => {
  it('allocates a clusterIP, keeps it when an update omits it and refuses to change it', async () => {
    const created = await call(c, 'POST', '/api/v1/namespaces/default/services', {
      body: { metadata: { name: 's' }, spec: { selector: { app: 's' }, ports: [{ port: 80 }] } },
    });
    const ip = created.body.spec.clusterIP;
    expect(ip).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    expect(created.body.spec).toMatchObject({
      type: 'ClusterIP',
      clusterIPs: [ip],
      ports: [{ port: 80, protocol: 'TCP', targetPort: 80 }],
    });
    const { clusterIP: _ip, clusterIPs: _ips, ...withoutIp } = created.body.spec;
    const replaced = await call(c, 'PUT', '/api/v1/namespaces/default/services/s', {
      body: { ...created.body, spec: withoutIp },
    });
    expect(replaced.status).toBe(200);
    expect(replaced.body.spec.clusterIP).toBe(ip);
    const changed = await merge('/api/v1/namespaces/default/services/s', {
      spec: { clusterIP: '10.0.0.9', clusterIPs: ['10.0.0.9'] },
    });
    expect(changed.status).toBe(422);
    const unset = await merge('/api/v1/namespaces/default/services/s', {
      spec: { clusterIP: '', clusterIPs: [] },
    });
    expect(unset.body.message).toBe(
      'Service "s" is invalid: spec.clusterIPs[0]: Invalid value: []string{}: primary clusterIP can not be unset',
    );
    const moved = await merge('/api/v1/namespaces/default/services/s', {
      spec: { clusterIPs: ['10.0.0.8'] },
    });
    expect(moved.body.message).toBe(
      'Service "s" is invalid: spec.clusterIPs[0]: Invalid value: []string{"10.0.0.8"}: may not change once set',
    );
    expect(changed.body).toMatchObject({
      reason: 'Invalid',
      message:
        'Service "s" is invalid: spec.clusterIP: Invalid value: "10.0.0.9": field is immutable',
      details: {
        name: 's',
        kind: 'Service',
        causes: [{ reason: 'FieldValueInvalid', field: 'spec.clusterIP' }],
      },
    });
  });
});

describe('routes', () => {
  it('default the host, wildcard policy and backend weight as the OpenShift router does', async () => {
    const reply = await call(c, 'POST', '/apis/route.openshift.io/v1/namespaces/default/routes', {
      body: { metadata: { name: 'web' }, spec: { to: { kind: 'Service', name: 'web' } } },
    });
    expect(reply.status).toBe(201);
    expect(reply.body.spec).toEqual({
      host: 'web-default.apps.ocp.example.com',
      to: { kind: 'Service', name: 'web', weight: 100 },
      wildcardPolicy: 'None',
    });
  });
});

describe('immutable fields', () => {
  const selector = { matchLabels: { app: 'x' } };
  const template = {
    metadata: { labels: { app: 'x' } },
    spec: { containers: [{ name: 'c', image: 'i' }] },
  };

  it('refuses a Deployment selector change', async () => {
    await call(c, 'POST', '/apis/apps/v1/namespaces/default/deployments', {
      body: { metadata: { name: 'd' }, spec: { selector, template } },
    });
    const reply = await merge('/apis/apps/v1/namespaces/default/deployments/d', {
      spec: { selector: { matchLabels: { app: 'y' } } },
    });
    expect(reply.status).toBe(422);
    expect(reply.body.message).toBe(
      'Deployment.apps "d" is invalid: spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"y"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable',
    );
  });

  it('refuses StatefulSet spec updates outside the allowed fields', async () => {
    await call(c, 'POST', '/apis/apps/v1/namespaces/default/statefulsets', {
      body: { metadata: { name: 'st' }, spec: { selector, template, serviceName: 'st' } },
    });
    const allowed = await merge('/apis/apps/v1/namespaces/default/statefulsets/st', {
      spec: { replicas: 2 },
    });
    expect(allowed.status).toBe(200);
    const reply = await merge('/apis/apps/v1/namespaces/default/statefulsets/st', {
      spec: { serviceName: 'other' },
    });
    expect(reply.status).toBe(422);
    expect(reply.body.message).toBe(
      "StatefulSet.apps \"st\" is invalid: spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
    );
  });

  it('refuses a Job template change', async () => {
    await call(c, 'POST', '/apis/batch/v1/namespaces/default/jobs', {
      body: {
        metadata: { name: 'j' },
        spec: {
          template: { spec: { containers: [{ name: 'c', image: 'i' }], restartPolicy: 'Never' } },
        },
      },
    });
    const reply = await merge('/apis/batch/v1/namespaces/default/jobs/j', {
      spec: { template: { spec: { containers: [{ name: 'c', image: 'j' }] } } },
    });
    expect(reply.status).toBe(422);
    expect(reply.body.message).toMatch(
      /^Job\.batch "j" is invalid: spec\.template: Invalid value: .*: field is immutable$/,
    );
  });

  it('refuses changes to immutable Secrets and ConfigMaps', async () => {
    await call(c, 'POST', '/api/v1/namespaces/default/secrets', {
      body: { metadata: { name: 'sec' }, immutable: true, stringData: { a: 'b' } },
    });
    const secret = (await call(c, 'GET', '/api/v1/namespaces/default/secrets/sec')).body;
    expect(secret.data).toEqual({ a: Buffer.from('b').toString('base64') });
    expect(secret.type).toBe('Opaque');
    const reply = await merge('/api/v1/namespaces/default/secrets/sec', { data: { a: 'Yw==' } });
    expect(reply.status).toBe(422);
    expect(reply.body.message).toBe(
      'Secret "sec" is invalid: data: Forbidden: field is immutable when `immutable` is set',
    );
    await call(c, 'POST', '/api/v1/namespaces/default/configmaps', {
      body: { metadata: { name: 'icm' }, immutable: true, data: { a: '1' } },
    });
    const cm = await merge('/api/v1/namespaces/default/configmaps/icm', {
      immutable: false,
      data: { a: '2' },
    });
    expect(cm.body.message).toBe(
      'ConfigMap "icm" is invalid: [immutable: Forbidden: field is immutable when `immutable` is set, data: Forbidden: field is immutable when `immutable` is set]',
    );
    const labelled = await merge('/api/v1/namespaces/default/configmaps/icm', {
      metadata: { labels: { ok: 'yes' } },
    });
    expect(labelled.status).toBe(200);
  });
});

describe('workload rollout', () => {
  it('moves Deployment status to ready shortly after each spec change', async () => {
    const path = '/apis/apps/v1/namespaces/default/deployments/d';
    await merge(path, { spec: { replicas: 3 } });
    const status = await vi.waitUntil(async () => {
      const s = (await call(c, 'GET', path)).body.status;
      return s?.observedGeneration === 2 ? s : undefined;
    }, SETTLED);
    expect(status).toMatchObject({
      replicas: 3,
      readyReplicas: 3,
      updatedReplicas: 3,
      availableReplicas: 3,
    });
  });

  it('keeps one ReplicaSet per pod template, owned by the Deployment, with revisions', async () => {
    const path = '/apis/apps/v1/namespaces/default/deployments/d';
    type ReplicaSet = {
      metadata: {
        name: string;
        labels: Record<string, string>;
        annotations: Record<string, string>;
        ownerReferences: { uid: string; controller: boolean }[];
      };
      spec: { replicas: number; selector: { matchLabels: Record<string, string> } };
    };
    const replicaSets = async () =>
      (
        (await call(c, 'GET', '/apis/apps/v1/namespaces/default/replicasets')).body
          .items as ReplicaSet[]
      ).filter((rs) => rs.metadata.name.startsWith('d-'));
    const deployment = (await call(c, 'GET', path)).body;
    const [first] = await vi.waitUntil(
      async () => ((await replicaSets()).length === 1 ? replicaSets() : undefined),
      SETTLED,
    );
    const hash = first?.metadata.labels['pod-template-hash'] ?? '';
    expect(first?.metadata.name).toBe(`d-${hash}`);
    expect(first?.metadata.ownerReferences).toEqual([
      expect.objectContaining({ uid: deployment.metadata.uid, controller: true }),
    ]);
    expect(first?.spec).toMatchObject({
      replicas: 3,
      selector: { matchLabels: { app: 'x', 'pod-template-hash': hash } },
    });
    expect(deployment.metadata.annotations['deployment.kubernetes.io/revision']).toBe('1');

    await merge(path, {
      spec: { template: { spec: { containers: [{ name: 'c', image: 'i:2' }] } } },
    });
    const both = await vi.waitUntil(async () => {
      const list = await replicaSets();
      return list.length === 2 && list.some((rs) => rs.spec.replicas === 0) ? list : undefined;
    }, SETTLED);
    const current = both.find((rs) => rs.metadata.name !== first?.metadata.name);
    expect(current?.metadata.annotations['deployment.kubernetes.io/revision']).toBe('2');
    expect(current?.spec.replicas).toBe(3);
    const rolled = await vi.waitUntil(async () => {
      const d = (await call(c, 'GET', path)).body;
      return d.metadata.annotations['deployment.kubernetes.io/revision'] === '2' ? d : undefined;
    }, SETTLED);
    expect(rolled.status.observedGeneration).toBe(rolled.metadata.generation);
  });

  it('rolls out every workload kind', async () => {
    const podSpec = { containers: [{ name: 'c', image: 'i' }] };
    const template = { metadata: { labels: { app: 'w' } }, spec: podSpec };
    const selector = { matchLabels: { app: 'w' } };
    const workloads: [
      string,
      Record<string, unknown>,
      (status: Record<string, unknown>) => boolean,
    ][] = [
      [
        '/apis/apps/v1/namespaces/default/statefulsets',
        { selector, template, serviceName: 'w', replicas: 2 },
        (s) => s.readyReplicas === 2,
      ],
      [
        '/apis/apps/v1/namespaces/default/daemonsets',
        { selector, template },
        (s) => s.numberReady === 1,
      ],
      [
        '/apis/apps/v1/namespaces/default/replicasets',
        { selector, template, replicas: 1 },
        (s) => s.readyReplicas === 1,
      ],
      [
        '/apis/apps.openshift.io/v1/namespaces/default/deploymentconfigs',
        { selector: { app: 'w' }, template, replicas: 1 },
        (s) => s.availableReplicas === 1,
      ],
      [
        '/apis/batch/v1/namespaces/default/jobs',
        { template: { spec: { ...podSpec, restartPolicy: 'Never' } } },
        (s) => s.succeeded === 1,
      ],
    ];
    for (const [path, spec, ready] of workloads) {
      const created = await call(c, 'POST', path, { body: { metadata: { name: 'w' }, spec } });
      expect(created.status, path).toBe(201);
      const status = await vi.waitUntil(async () => {
        const s = (await call(c, 'GET', `${path}/w`)).body.status;
        return s && ready(s) ? s : undefined;
      }, SETTLED);
      if (!path.includes('/jobs')) expect(status.observedGeneration, path).toBe(1);
    }
  });

  it('never reports ready when the rollout delay is negative', async () => {
    const stuck = await startFakeKubeApiServer({
      clusters: [{ name: 's' }],
      workloadReadyDelayMs: -1,
    });
    try {
      const created = await call(
        stuck.cluster('s'),
        'POST',
        '/apis/apps/v1/namespaces/default/deployments',
        {
          body: { metadata: { name: 'd' }, spec: { selector: { matchLabels: { a: 'b' } } } },
        },
      );
      expect(created.body.status).toBeUndefined();
      const entry = stuck.cluster('s').state;
      expect(entry.workloadReadyDelayMs).toBe(-1);
    } finally {
      await stuck.close();
    }
  });
});

describe('service-account token Secrets', () => {
  const tokenSecret = (name: string, account: string) => ({
    metadata: { name, annotations: { 'kubernetes.io/service-account.name': account } },
    type: 'kubernetes.io/service-account-token',
  });

  it('get their token, CA and namespace from the token controller', async () => {
    const account = await call(c, 'POST', '/api/v1/namespaces/default/serviceaccounts', {
      body: { metadata: { name: 'bot' } },
    });
    await call(c, 'POST', '/api/v1/namespaces/default/secrets', {
      body: tokenSecret('bot-token-12345', 'bot'),
    });
    const secret = await vi.waitUntil(async () => {
      const s = (await call(c, 'GET', '/api/v1/namespaces/default/secrets/bot-token-12345')).body;
      return s.data?.token ? s : undefined;
    }, SETTLED);
    const token = Buffer.from(secret.data.token, 'base64').toString('utf8');
    const claims = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8'));
    expect(claims.sub).toBe('system:serviceaccount:default:bot');
    expect(Buffer.from(secret.data.namespace, 'base64').toString('utf8')).toBe('default');
    expect(Buffer.from(secret.data['ca.crt'], 'base64').toString('utf8')).toBe(c.caCertificate);
    expect(secret.metadata.annotations['kubernetes.io/service-account.uid']).toBe(
      account.body.metadata.uid,
    );
  });

  it('are deleted when their service account does not exist', async () => {
    await call(c, 'POST', '/api/v1/namespaces/default/secrets', {
      body: tokenSecret('ghost-token-1', 'ghost'),
    });
    await expect
      .poll(
        async () =>
          (await call(c, 'GET', '/api/v1/namespaces/default/secrets/ghost-token-1')).status,
        SETTLED,
      )
      .toBe(404);
  });
});

describe('OpenShift projects', () => {
  it('creates a Project and its Namespace from a ProjectRequest', async () => {
    const reply = await call(c, 'POST', '/apis/project.openshift.io/v1/projectrequests', {
      body: {
        apiVersion: 'project.openshift.io/v1',
        kind: 'ProjectRequest',
        metadata: { name: 'team' },
        displayName: 'Team',
      },
    });
    expect(reply.status).toBe(201);
    expect(reply.body).toMatchObject({
      kind: 'Project',
      metadata: { name: 'team' },
      status: { phase: 'Active' },
    });
    const ns = (await call(c, 'GET', '/api/v1/namespaces/team')).body;
    expect(ns.metadata.annotations['openshift.io/display-name']).toBe('Team');
    const project = await call(c, 'GET', '/apis/project.openshift.io/v1/projects/team');
    expect(project.body.metadata.uid).toBe(ns.metadata.uid);
    const names = (await call(c, 'GET', '/apis/project.openshift.io/v1/projects')).body.items.map(
      (p: { metadata: { name: string } }) => p.metadata.name,
    );
    expect(names).toContain('team');
    const again = await call(c, 'POST', '/apis/project.openshift.io/v1/projectrequests', {
      body: { metadata: { name: 'team' } },
    });
    expect(again.status).toBe(409);
    expect(again.body.message).toBe('project.project.openshift.io "team" already exists');
  });

  it('keeps a namespace Terminating while contents hold finalizers, refusing new content', async () => {
    await call(c, 'POST', '/api/v1/namespaces/team/configmaps', {
      body: { metadata: { name: 'x', finalizers: ['keep/me'] } },
    });
    await call(c, 'POST', '/api/v1/namespaces/team/configmaps', {
      body: { metadata: { name: 'plain' } },
    });
    const deleting = await call(c, 'DELETE', '/apis/project.openshift.io/v1/projects/team');
    expect(deleting.body).toMatchObject({ kind: 'Project', status: { phase: 'Terminating' } });
    expect((await call(c, 'GET', '/api/v1/namespaces/team/configmaps/plain')).status).toBe(404);
    const held = await call(c, 'GET', '/api/v1/namespaces/team/configmaps/x');
    expect(held.body.metadata.deletionTimestamp).toBeDefined();
    const reply = await call(c, 'POST', '/api/v1/namespaces/team/configmaps', {
      body: { metadata: { name: 'y' } },
    });
    expect(reply.status).toBe(403);
    expect(reply.body.message).toBe(
      'configmaps "y" is forbidden: unable to create new content in namespace team because it is being terminated',
    );
    expect((await call(c, 'GET', '/api/v1/namespaces/team')).status).toBe(200);
    await merge('/api/v1/namespaces/team/configmaps/x', { metadata: { finalizers: null } });
    await expect
      .poll(async () => (await call(c, 'GET', '/api/v1/namespaces/team')).status, SETTLED)
      .toBe(404);
  });
});
