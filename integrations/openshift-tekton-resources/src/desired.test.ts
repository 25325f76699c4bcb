import { parseResource } from '@qontract/openshift';
import { TektonNameTooLongError } from '@qontract/saas';
import { describe, expect, it } from 'vitest';
import { computeResources, desiredTektonObjects } from './desired.ts';
import {
  activeProviders,
  type ObjectTemplate,
  OpenshiftTektonResourcesBadConfigError,
  selectProviders,
  type TektonProvider,
  type TektonSaasFile,
} from './providers.ts';
import type { OpenshiftTektonResourcesQuery } from './tekton-resources.generated.ts';
import { renderProviderTemplates, templateKey } from './templates.ts';

const DEPLOY_TASK = `apiVersion: tekton.dev/v1
kind: Task
metadata:
  name: openshift-saas-deploy
spec:
  steps:
  - name: prepare
    image: quay.io/app-sre/qontract-reconcile:{{ tag }}
  - name: qontract-reconcile
    image: quay.io/app-sre/qontract-reconcile:{{ tag }}
`;
const STATUS_TASK = `apiVersion: tekton.dev/v1
kind: Task
metadata:
  name: status
spec:
  steps:
  - name: push
    image: ubi
`;
const PIPELINE = `apiVersion: tekton.dev/v1
kind: Pipeline
metadata:
  name: saas-deploy
spec:
  tasks:
  - name: openshift-saas-deploy
    taskRef:
      name: openshift-saas-deploy
  finally:
  - name: status
    taskRef:
      name: status
`;
const RESOURCES: Record<string, string> = {
  '/deploy.task.yaml.j2': DEPLOY_TASK,
  '/status.task.yaml.j2': STATUS_TASK,
  '/saas-deploy.pipeline.yaml.j2': PIPELINE,
  '/unknown-task.pipeline.yaml.j2': PIPELINE.replace('- name: status', '- name: other'),
  '/no-step.task.yaml.j2': DEPLOY_TASK.replace('- name: qontract-reconcile', '- name: deploy'),
};

const deployTask: ObjectTemplate = {
  name: 'openshift-saas-deploy',
  type: 'onePerSaasFile',
  path: '/deploy.task.yaml.j2',
  variables: '{"tag": "abc123"}',
};
const statusTask: ObjectTemplate = {
  name: 'status',
  type: 'onePerNamespace',
  path: '/status.task.yaml.j2',
  variables: null,
};
const pipelineTemplate: ObjectTemplate = {
  name: 'saas-deploy',
  type: 'onePerSaasFile',
  path: '/saas-deploy.pipeline.yaml.j2',
  variables: null,
};

const saasFile = (name: string, extra: Partial<TektonSaasFile> = {}): TektonSaasFile => ({
  path: `/services/x/${name}.yml`,
  name,
  timeout: null,
  deployResources: null,
  pipelinesProvider: { name: 'p1', provider: 'tekton' },
  ...extra,
});

const namespace = (extra: Partial<TektonProvider['namespace']> = {}) => ({
  path: '/openshift/c1/namespaces/pipelines.yml',
  name: 'pipelines',
  delete: null,
  clusterAdmin: null,
  cluster: {
    name: 'c1',
    serverUrl: 'https://c1',
    internal: null,
    insecureSkipTLSVerify: null,
    automationToken: null,
    clusterAdminAutomationToken: null,
    disable: null,
  },
  ...extra,
});

const provider = (extra: Partial<TektonProvider> = {}): TektonProvider => ({
  name: 'p1',
  namespace: namespace(),
  taskTemplates: [deployTask, statusTask],
  pipelineTemplate,
  deployResources: null,
  saasFiles: [saasFile('saas1')],
  ...extra,
});

async function build(providers: TektonProvider[]) {
  const rendered = await renderProviderTemplates(providers, async (path) => {
    const text = RESOURCES[path];
    if (text === undefined) throw new Error(`no resource ${path}`);
    return text;
  });
  return desiredTektonObjects(providers, rendered);
}

// biome-ignore lint/suspicious/noExplicitAny: reading into built bodies
const bodyOf = (objects: Awaited<ReturnType<typeof build>>, kind: string, name: string): any =>
  objects.find((o) => o.kind === kind && o.body.metadata.name === name)?.body;

describe('desiredTektonObjects', () => {
  it('names each Task and Pipeline as the original and rewrites the taskRefs by task type', async () => {
    const objects = await build([provider({ saasFiles: [saasFile('saas1'), saasFile('saas2')] })]);
    expect(
      objects.map((o) => `${o.cluster}/${o.namespace}/${o.kind}/${o.body.metadata.name}`),
    ).toEqual([
      'c1/pipelines/Task/o-openshift-saas-deploy-saas1',
      'c1/pipelines/Task/o-openshift-saas-deploy-saas2',
      'c1/pipelines/Task/o-status',
      'c1/pipelines/Pipeline/o-saas-deploy-saas1',
      'c1/pipelines/Pipeline/o-saas-deploy-saas2',
    ]);
    const pipeline = bodyOf(objects, 'Pipeline', 'o-saas-deploy-saas2');
    expect(pipeline.spec.tasks[0].taskRef.name).toBe('o-openshift-saas-deploy-saas2');
    expect(pipeline.spec.finally[0].taskRef.name).toBe('o-status');
    expect(pipeline.spec.tasks[0].timeout).toBeUndefined();
    expect(objects[0]?.source).toBe('/deploy.task.yaml.j2 (pipelines provider p1)');
  });

  it('renders the templates with their variables', async () => {
    const objects = await build([provider()]);
    const task = bodyOf(objects, 'Task', 'o-openshift-saas-deploy-saas1');
    expect(task.spec.steps[0].image).toBe('quay.io/app-sre/qontract-reconcile:abc123');
  });

  it.each([
    {
      title: 'the original defaults without any setting',
      providerResources: null,
      saasResources: null,
      expected: {
        requests: { cpu: '300m', memory: '600Mi' },
        limits: { cpu: '300m', memory: '600Mi' },
      },
    },
    {
      title: "the provider's",
      providerResources: {
        requests: { cpu: '10m', memory: '1Mi' },
        limits: { cpu: null, memory: '100Mi' },
      },
      saasResources: null,
      expected: { requests: { cpu: '10m', memory: '1Mi' }, limits: { memory: '100Mi' } },
    },
    {
      title: "the saas file's over the provider's",
      providerResources: {
        requests: { cpu: '10m', memory: '1Mi' },
        limits: { cpu: '10m', memory: '100Mi' },
      },
      saasResources: {
        requests: { cpu: '100m', memory: '200Mi' },
        limits: { cpu: '1', memory: '1Gi' },
      },
      expected: { requests: { cpu: '100m', memory: '200Mi' }, limits: { cpu: '1', memory: '1Gi' } },
    },
  ])(
    'gives the deploy step $title resources',
    async ({ providerResources, saasResources, expected }) => {
      const objects = await build([
        provider({
          deployResources: providerResources,
          saasFiles: [saasFile('saas1', { deployResources: saasResources })],
        }),
      ]);
      const task = bodyOf(objects, 'Task', 'o-openshift-saas-deploy-saas1');
      expect(task.spec.steps[1].computeResources).toEqual(expected);
      // only the deploy step
      expect(task.spec.steps[0].computeResources).toBeUndefined();
    },
  );

  it.each([
    { timeout: '90m', expected: '1h30m0s' },
    { timeout: '1d2h', expected: '26h0m0s' },
    { timeout: '45s', expected: '45s' },
  ])(
    "sets the saas file's timeout $timeout on every task as $expected",
    async ({ timeout, expected }) => {
      const objects = await build([provider({ saasFiles: [saasFile('saas1', { timeout })] })]);
      const pipeline = bodyOf(objects, 'Pipeline', 'o-saas-deploy-saas1');
      expect(pipeline.spec.tasks[0].timeout).toBe(expected);
      expect(pipeline.spec.finally[0].timeout).toBe(expected);
    },
  );

  it('builds each object from its own copy of the template', async () => {
    const providers = [provider({ saasFiles: [saasFile('a', { timeout: '1m' }), saasFile('b')] })];
    const objects = await build(providers);
    expect(bodyOf(objects, 'Pipeline', 'o-saas-deploy-b').spec.tasks[0].timeout).toBeUndefined();
  });

  it.each([
    {
      title: 'an unknown task type',
      p: provider({ taskTemplates: [{ ...statusTask, type: 'onePerCluster' }] }),
      error: 'Unknown type [onePerCluster] in tekton provider [p1]',
    },
    {
      title: 'duplicate task template names',
      p: provider({ taskTemplates: [deployTask, statusTask, statusTask] }),
      error: 'There are duplicates in task templates names in tekton provider p1',
    },
    {
      title: 'a pipeline task without a task template',
      p: provider({
        pipelineTemplate: { ...pipelineTemplate, path: '/unknown-task.pipeline.yaml.j2' },
      }),
      error: 'Unknown task other in pipeline template saas-deploy',
    },
    {
      title: 'a onePerSaasFile task without the deploy step',
      p: provider({
        taskTemplates: [{ ...deployTask, path: '/no-step.task.yaml.j2' }, statusTask],
      }),
      error:
        'Cannot find a step named qontract-reconcile to set resources in task template openshift-saas-deploy',
    },
  ])('refuses $title with the original error', async ({ p, error }) => {
    const attempt = build([p]);
    await expect(attempt).rejects.toThrow(OpenshiftTektonResourcesBadConfigError);
    await expect(attempt).rejects.toThrow(error);
  });

  it.each([
    // o-saas-deploy- + 43 characters: 57
    { title: 'a Pipeline name over 56', templates: [statusTask], saas: 'x'.repeat(43), limit: 56 },
    // o-openshift-saas-deploy- + 40 characters: 64
    { title: 'a Task name over 63', templates: [deployTask], saas: 'x'.repeat(40), limit: 63 },
  ])('refuses $title characters', async ({ templates, saas, limit }) => {
    const attempt = build([provider({ taskTemplates: templates, saasFiles: [saasFile(saas)] })]);
    await expect(attempt).rejects.toThrow(TektonNameTooLongError);
    await expect(attempt).rejects.toThrow(`is longer than ${limit} characters`);
  });

  it('names the template of a render failure', async () => {
    const attempt = build([provider({ taskTemplates: [{ ...deployTask, variables: '{}' }] })]);
    await expect(attempt).rejects.toThrow('/deploy.task.yaml.j2');
    await expect(attempt).rejects.toThrow(/tag/);
  });
});

describe('computeResources', () => {
  it('drops unset values', () => {
    expect(
      computeResources({
        requests: { cpu: '1', memory: '1Gi' },
        limits: { cpu: null, memory: '2Gi' },
      }),
    ).toEqual({ requests: { cpu: '1', memory: '1Gi' }, limits: { memory: '2Gi' } });
  });
});

describe('selectProviders', () => {
  const raw = (name: string, extra: Record<string, unknown> = {}) => ({
    name,
    provider: 'tekton',
    namespace: namespace(),
    defaults: {
      taskTemplates: [deployTask],
      pipelineTemplates: { openshiftSaasDeploy: pipelineTemplate },
      deployResources: null,
    },
    taskTemplates: null,
    pipelineTemplates: null,
    deployResources: null,
    ...extra,
  });
  const data = (
    providers: ReturnType<typeof raw>[],
    saasFiles: TektonSaasFile[],
  ): OpenshiftTektonResourcesQuery =>
    ({ saas_files: saasFiles, pipelines_providers: providers }) as OpenshiftTektonResourcesQuery;
  const all = { isInShard: () => true };

  it('keeps the providers used by the saas files, with their defaults filled in', () => {
    const own = { requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: null, memory: '1Gi' } };
    const selected = selectProviders(
      data(
        [raw('p1', { taskTemplates: [], deployResources: own }), raw('unused')],
        [saasFile('s1'), saasFile('s2')],
      ),
      all,
    );
    expect(selected.map((p) => [p.name, p.saasFiles.map((s) => s.name)])).toEqual([
      ['p1', ['s1', 's2']],
    ]);
    expect(selected[0]?.taskTemplates).toEqual([deployTask]);
    expect(selected[0]?.pipelineTemplate).toEqual(pipelineTemplate);
    expect(selected[0]?.deployResources).toEqual(own);
  });

  it('narrows to --saas-file-name, and to nothing for an unknown name', () => {
    const d = data(
      [raw('p1'), raw('p2')],
      [saasFile('s1'), saasFile('s2', { pipelinesProvider: { name: 'p2', provider: 'tekton' } })],
    );
    expect(selectProviders(d, { ...all, saasFileName: 's2' }).map((p) => p.name)).toEqual(['p2']);
    expect(selectProviders(d, { ...all, saasFileName: 'nope' })).toEqual([]);
  });

  it('shards by provider name', () => {
    const d = data(
      [raw('p1'), raw('p2')],
      [saasFile('s1'), saasFile('s2', { pipelinesProvider: { name: 'p2', provider: 'tekton' } })],
    );
    expect(selectProviders(d, { isInShard: (k) => k === 'p2' }).map((p) => p.name)).toEqual(['p2']);
  });

  it('refuses duplicate provider names with the original error', () => {
    expect(() => selectProviders(data([raw('p1'), raw('p1')], [saasFile('s1')]), all)).toThrow(
      'There are duplicates in tekton providers names: p1',
    );
  });

  it('names a saas file whose provider is not a tekton provider', () => {
    expect(() => selectProviders(data([raw('p2')], [saasFile('s1')]), all)).toThrow(
      'saas file s1 (/services/x/s1.yml) uses pipelines provider p1, which is not a tekton provider',
    );
  });

  it('leaves out providers whose namespace is being deleted', () => {
    const selected = selectProviders(
      data([raw('p1', { namespace: namespace({ delete: true }) })], [saasFile('s1')]),
      all,
    );
    expect(selected).toHaveLength(1);
    expect(activeProviders(selected)).toEqual([]);
  });
});

describe('templateKey', () => {
  it('renders a template once per resource and variables', async () => {
    const reads: string[] = [];
    const rendered = await renderProviderTemplates(
      [provider(), provider({ name: 'p2' })],
      async (path) => {
        reads.push(path);
        return RESOURCES[path] ?? '';
      },
    );
    expect(reads.sort()).toEqual([
      '/deploy.task.yaml.j2',
      '/saas-deploy.pipeline.yaml.j2',
      '/status.task.yaml.j2',
    ]);
    expect(rendered.get(templateKey(statusTask))).toEqual(parseResource(STATUS_TASK));
  });
});
