import {
  ApiException,
  CustomObjectsApi,
  KubeConfig,
  type KubernetesObject,
  KubernetesObjectApi,
  PatchStrategy,
  Watch,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeKubeApiServer, startFakeKubeApiServer } from './server.ts';
import { call } from './test-support/client.ts';

// The Tekton kinds the CD integrations write: openshift-tekton-resources applies Pipelines and
// Tasks, the saas-deploy triggers create PipelineRuns with generateName and the cleaner lists them
// by label and deletes the old ones.

let server: FakeKubeApiServer;
let kc: KubeConfig;
const NS = 'app-sre-pipelines';
const group = 'tekton.dev';
const version = 'v1';

beforeAll(async () => {
  server = await startFakeKubeApiServer({ clusters: [{ name: 'pipelines' }] });
  kc = new KubeConfig();
  kc.loadFromString(server.kubeconfig());
  await call(server.cluster('pipelines'), 'POST', '/api/v1/namespaces', {
    body: { metadata: { name: NS } },
  });
});
afterAll(() => server.close());

/** A PipelineRun as the original's triggers build it (generateName, labels, pipelineRef). */
function pipelineRun(saasFile: string, env: string, prefix = `${saasFile}-${env}-`) {
  return {
    apiVersion: 'tekton.dev/v1',
    kind: 'PipelineRun',
    metadata: {
      generateName: prefix,
      labels: { 'qontract.saas_file_name': saasFile, 'qontract.env_name': env },
      annotations: { 'qontract.trigger_integration': 'openshift-saas-deploy-trigger-configs' },
    },
    spec: {
      pipelineRef: { name: `o-saas-deploy-${saasFile}` },
      params: [
        { name: 'saas_file_name', value: saasFile },
        { name: 'env_name', value: env },
      ],
    },
  };
}

describe('Tekton kinds', () => {
  it('are served in discovery, legacy and aggregated, as Tekton registers them', async () => {
    const c = server.cluster('pipelines');
    const groups = (await call(c, 'GET', '/apis')).body.groups as { name: string }[];
    expect(groups.map((g) => g.name)).toContain('tekton.dev');
    const list = (await call(c, 'GET', '/apis/tekton.dev/v1')).body;
    expect(list).toMatchObject({ kind: 'APIResourceList', groupVersion: 'tekton.dev/v1' });
    const byName = new Map((list.resources as { name: string }[]).map((r) => [r.name, r] as const));
    expect([...byName.keys()].sort()).toEqual([
      'pipelineruns',
      'pipelineruns/status',
      'pipelines',
      'pipelines/status',
      'tasks',
      'tasks/status',
    ]);
    expect(byName.get('pipelineruns')).toMatchObject({
      kind: 'PipelineRun',
      singularName: 'pipelinerun',
      namespaced: true,
      shortNames: ['pr', 'prs'],
      categories: ['tekton', 'tekton-pipelines'],
      verbs: expect.arrayContaining(['create', 'list', 'watch', 'patch', 'delete']),
    });
    expect(byName.get('pipelines')).toMatchObject({ kind: 'Pipeline', namespaced: true });
    expect(byName.get('tasks')).toMatchObject({ kind: 'Task', namespaced: true });
    const accept = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';
    const aggregated = (await call(c, 'GET', '/apis', { headers: { Accept: accept } })).body;
    const tekton = aggregated.items.find(
      (g: { metadata: { name?: string } }) => g.metadata.name === 'tekton.dev',
    );
    expect(
      tekton.versions[0].resources.map((r: { responseKind: { kind: string } }) => r.responseKind),
    ).toEqual(
      expect.arrayContaining([
        { group, version, kind: 'Pipeline' },
        { group, version, kind: 'Task' },
        { group, version, kind: 'PipelineRun' },
      ]),
    );
  });

  it('creates PipelineRuns from generateName as the API server names them', async () => {
    const api = kc.makeApiClient(CustomObjectsApi);
    const names = new Set<string>();
    for (let i = 0; i < 20; i++) {
      const created = (await api.createNamespacedCustomObject({
        group,
        version,
        namespace: NS,
        plural: 'pipelineruns',
        body: pipelineRun('saas-a', 'stage'),
      })) as KubernetesObject;
      const name = created.metadata?.name ?? '';
      // The apiserver's generator: the prefix, then 5 of `bcdfghjklmnpqrstvwxz2456789`.
      expect(name).toMatch(/^saas-a-stage-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
      expect(created.metadata?.generateName).toBe('saas-a-stage-');
      names.add(name);
    }
    expect(names.size).toBe(20);
    // A prefix longer than 58 characters is cut so that the name stays within 63.
    const long = `${'x'.repeat(70)}-`;
    const cut = (await api.createNamespacedCustomObject({
      group,
      version,
      namespace: NS,
      plural: 'pipelineruns',
      body: pipelineRun('saas-long', 'prod', long),
    })) as KubernetesObject;
    expect(cut.metadata?.name).toMatch(/^x{58}[bcdfghjklmnpqrstvwxz2456789]{5}$/);
  });

  it('lists PipelineRuns by label selector and deletes them', async () => {
    const api = kc.makeApiClient(CustomObjectsApi);
    for (const [saasFile, env] of [
      ['saas-b', 'stage'],
      ['saas-b', 'prod'],
      ['saas-c', 'stage'],
    ] as const) {
      await api.createNamespacedCustomObject({
        group,
        version,
        namespace: NS,
        plural: 'pipelineruns',
        body: pipelineRun(saasFile, env),
      });
    }
    const select = async (labelSelector: string) =>
      (
        (await api.listNamespacedCustomObject({
          group,
          version,
          namespace: NS,
          plural: 'pipelineruns',
          labelSelector,
        })) as { kind: string; items: KubernetesObject[] }
      ).items;
    const saasB = await select('qontract.saas_file_name=saas-b');
    expect(saasB.map((x) => x.metadata?.labels?.['qontract.env_name']).sort()).toEqual([
      'prod',
      'stage',
    ]);
    expect(saasB.every((x) => x.kind === 'PipelineRun')).toBe(true);
    const stage = await select(
      'qontract.saas_file_name in (saas-b,saas-c),qontract.env_name=stage',
    );
    expect(stage.map((x) => x.metadata?.labels?.['qontract.saas_file_name']).sort()).toEqual([
      'saas-b',
      'saas-c',
    ]);

    const victim = saasB[0]?.metadata?.name ?? '';
    await api.deleteNamespacedCustomObject({
      group,
      version,
      namespace: NS,
      plural: 'pipelineruns',
      name: victim,
    });
    const left = await select('qontract.saas_file_name=saas-b');
    expect(left.map((x) => x.metadata?.name)).not.toContain(victim);
    expect(left).toHaveLength(1);
    const gone = await api
      .getNamespacedCustomObject({
        group,
        version,
        namespace: NS,
        plural: 'pipelineruns',
        name: victim,
      })
      .catch((e: unknown) => e);
    expect(gone).toBeInstanceOf(ApiException);
    expect((gone as ApiException<string>).code).toBe(404);
    expect(String((gone as ApiException<string>).body)).toContain(
      `pipelineruns.tekton.dev \\"${victim}\\" not found`,
    );
  });

  it('applies Pipelines and Tasks server-side and watches them', async () => {
    const objects = KubernetesObjectApi.makeApiClient(kc);
    const seen: string[] = [];
    let finish: () => void = () => {};
    const done = new Promise<void>((resolve) => {
      finish = resolve;
    });
    const controller = await new Watch(kc).watch(
      `/apis/tekton.dev/v1/namespaces/${NS}/tasks`,
      {},
      (phase, obj: KubernetesObject) => {
        seen.push(`${phase} ${obj.metadata?.name}`);
        if (seen.length === 2) finish();
      },
      () => finish(),
    );
    const task: KubernetesObject & { spec: unknown } = {
      apiVersion: 'tekton.dev/v1',
      kind: 'Task',
      metadata: { name: 'o-openshift-saas-deploy', namespace: NS },
      spec: { steps: [{ name: 'deploy', image: 'qontract-reconcile:1' }] },
    };
    const pipeline: KubernetesObject & { spec: unknown } = {
      apiVersion: 'tekton.dev/v1',
      kind: 'Pipeline',
      metadata: { name: 'o-saas-deploy-saas-a', namespace: NS },
      spec: { tasks: [{ name: 'deploy', taskRef: { name: 'o-openshift-saas-deploy' } }] },
    };
    for (const obj of [task, pipeline]) {
      const applied = await objects.patch(
        obj,
        undefined,
        undefined,
        'qontract-reconcile',
        true,
        PatchStrategy.ServerSideApply,
      );
      expect(applied.metadata?.managedFields?.[0]).toMatchObject({
        manager: 'qontract-reconcile',
        operation: 'Apply',
      });
      expect(applied.metadata?.generation).toBe(1);
    }
    const changed: KubernetesObject & { spec: unknown } = {
      ...task,
      spec: { steps: [{ name: 'deploy', image: 'qontract-reconcile:2' }] },
    };
    const updated = await objects.patch(
      changed,
      undefined,
      undefined,
      'qontract-reconcile',
      true,
      PatchStrategy.ServerSideApply,
    );
    expect(updated.metadata?.generation).toBe(2);
    await done;
    controller.abort();
    expect(seen).toEqual(['ADDED o-openshift-saas-deploy', 'MODIFIED o-openshift-saas-deploy']);
    const pipelines = server.list('pipelines', 'tekton.dev/v1', 'Pipeline', NS);
    expect(pipelines.map((p) => (p as KubernetesObject).metadata?.name)).toEqual([
      'o-saas-deploy-saas-a',
    ]);
  });
});
