import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { ExampleEnvironment } from '@qontract/testing';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  editFile,
  messages,
  objectNames,
  planLines,
  runQontractReconcile,
  useExampleEnvironment,
} from './harness.ts';

// The example pipelines provider (app-sre-pipelines on appint-ex-01) with the defaults'
// templates: a Task per saas file, one shared Task and a Pipeline per saas file.
const CLUSTER = 'appint-ex-01';
const NS = 'app-sre-pipelines';
const TEKTON = 'tekton.dev/v1';

const start = useExampleEnvironment();

const applyLine = (kind: string, name: string) =>
  `['apply', 'privileged=False', '${CLUSTER}', '${NS}', '${kind}', '${name}']`;
const deleteLine = (kind: string, name: string) =>
  `['delete', 'privileged=False', '${CLUSTER}', '${NS}', '${kind}', '${name}']`;

const names = (env: ExampleEnvironment, kind: string) =>
  objectNames(env, CLUSTER, TEKTON, kind, NS);

// biome-ignore lint/suspicious/noExplicitAny: reading into served objects
const get = (env: ExampleEnvironment, kind: string, name: string): any =>
  env.server.get(CLUSTER, TEKTON, kind, NS, name);

/** A Task openshift-resources manages in the same namespace: not this integration's. */
const otherIntegrationsTask = {
  apiVersion: TEKTON,
  kind: 'Task',
  metadata: {
    name: 'o-hand-made',
    namespace: NS,
    annotations: {
      'qontract.integration': 'openshift_resources',
      'qontract.integration_version': '1.9.3',
      'qontract.sha256sum': 'a'.repeat(64),
    },
  },
  spec: { steps: [{ name: 'x', image: 'ubi' }] },
};

describe('openshift-tekton-resources end to end', { timeout: 60_000 }, () => {
  let env: ExampleEnvironment;
  beforeAll(async () => {
    env = await start({ namespaces: true });
    env.server.seed(CLUSTER, [otherIntegrationsTask]);
  });

  it('plans without writing, creates the Pipelines and Tasks, then has nothing to do', async () => {
    const { server, configPath } = env;
    server.resetLog();
    const dry = await runQontractReconcile([
      '--config',
      configPath,
      '--dry-run',
      'openshift-tekton-resources',
    ]);
    expect(dry.code).toBe(0);
    expect(planLines(dry).sort()).toEqual(
      [
        applyLine('Pipeline', 'o-openshift-saas-deploy-saas-example-app'),
        applyLine('Pipeline', 'o-openshift-saas-deploy-saas-example-edge'),
        applyLine('Pipeline', 'o-openshift-saas-deploy-saas-example-worker'),
        applyLine('Task', 'o-deploy-status'),
        applyLine('Task', 'o-openshift-saas-deploy-saas-example-app'),
        applyLine('Task', 'o-openshift-saas-deploy-saas-example-edge'),
        applyLine('Task', 'o-openshift-saas-deploy-saas-example-worker'),
      ].sort(),
    );
    expect(server.mutatingRequests()).toEqual([]);

    const wet = await runQontractReconcile(['--config', configPath, 'openshift-tekton-resources']);
    expect(wet.code).toBe(0);
    expect(names(env, 'Pipeline')).toEqual([
      'o-openshift-saas-deploy-saas-example-app',
      'o-openshift-saas-deploy-saas-example-edge',
      'o-openshift-saas-deploy-saas-example-worker',
    ]);
    expect(names(env, 'Task')).toEqual([
      'o-deploy-status',
      'o-hand-made',
      'o-openshift-saas-deploy-saas-example-app',
      'o-openshift-saas-deploy-saas-example-edge',
      'o-openshift-saas-deploy-saas-example-worker',
    ]);

    const pipeline = get(env, 'Pipeline', 'o-openshift-saas-deploy-saas-example-worker');
    expect(pipeline.metadata.annotations).toMatchObject({
      'qontract.integration': 'openshift-tekton-resources',
      'qontract.integration_version': '0.1.0',
    });
    // taskRefs renamed by task type; the worker's `timeout: 90m` on every task
    expect(pipeline.spec.tasks[0]).toMatchObject({
      taskRef: { name: 'o-openshift-saas-deploy-saas-example-worker' },
      timeout: '1h30m0s',
    });
    expect(pipeline.spec.finally[0]).toMatchObject({
      taskRef: { name: 'o-deploy-status' },
      timeout: '1h30m0s',
    });
    // the app's saas file sets no timeout
    const appPipeline = get(env, 'Pipeline', 'o-openshift-saas-deploy-saas-example-app');
    expect(appPipeline.spec.tasks[0].timeout).toBeUndefined();

    // the deploy step gets the provider defaults' deployResources; the others keep theirs
    const task = get(env, 'Task', 'o-openshift-saas-deploy-saas-example-app');
    const steps = new Map(
      (task.spec.steps as { name: string; computeResources?: unknown; image: string }[]).map(
        (s) => [s.name, s] as const,
      ),
    );
    expect(steps.get('qontract-reconcile')?.computeResources).toEqual({
      requests: { cpu: '300m', memory: '600Mi' },
      limits: { memory: '600Mi' },
    });
    expect(steps.get('qontract-reconcile-config')?.computeResources).toEqual({
      requests: { cpu: '10m', memory: '20Mi' },
      limits: { memory: '30Mi' },
    });
    // rendered with the template's variables
    expect(steps.get('qontract-reconcile')?.image).toBe(
      'quay.io/app-sre/qontract-reconcile:latest',
    );

    server.resetLog();
    const again = await runQontractReconcile([
      '--config',
      configPath,
      'openshift-tekton-resources',
    ]);
    expect(again.code).toBe(0);
    expect(planLines(again)).toEqual([]);
    expect(server.mutatingRequests()).toEqual([]);
  });

  it('with --saas-file-name plans only that saas file and deletes no other', async () => {
    const { server, configPath } = env;
    await editFile(
      join(env.appInterfaceDir, 'data/services/example-app/cicd/saas-example-app.yml'),
      (text) => text.replace('managedResourceTypes:', 'timeout: 2h\nmanagedResourceTypes:'),
    );
    server.resetLog();
    const run = await runQontractReconcile([
      '--config',
      configPath,
      '--dry-run',
      'openshift-tekton-resources',
      '--saas-file-name',
      'saas-example-worker',
    ]);
    expect(run.code).toBe(0);
    expect(planLines(run)).toEqual([]);
    const app = await runQontractReconcile([
      '--config',
      configPath,
      '--dry-run',
      'openshift-tekton-resources',
      '--saas-file-name',
      'saas-example-app',
    ]);
    expect(app.code).toBe(0);
    expect(planLines(app)).toEqual([
      applyLine('Pipeline', 'o-openshift-saas-deploy-saas-example-app'),
    ]);
    expect(server.mutatingRequests()).toEqual([]);
  });

  it("deletes a removed saas file's Pipeline and Task, and leaves other integrations' objects alone", async () => {
    const { configPath, appInterfaceDir } = env;
    await rm(join(appInterfaceDir, 'data/services/example-app/cicd/saas-example-worker.yml'));
    await editFile(join(appInterfaceDir, 'data/access/roles/example-app-saas-owners.yml'), (text) =>
      text.replace('      - $ref: /services/example-app/cicd/saas-example-worker.yml\n', ''),
    );
    const run = await runQontractReconcile(['--config', configPath, 'openshift-tekton-resources']);
    expect(run.code).toBe(0);
    expect(planLines(run).sort()).toEqual(
      [
        // the timeout added by the test before
        applyLine('Pipeline', 'o-openshift-saas-deploy-saas-example-app'),
        deleteLine('Pipeline', 'o-openshift-saas-deploy-saas-example-worker'),
        deleteLine('Task', 'o-openshift-saas-deploy-saas-example-worker'),
      ].sort(),
    );
    expect(names(env, 'Pipeline')).toEqual([
      'o-openshift-saas-deploy-saas-example-app',
      'o-openshift-saas-deploy-saas-example-edge',
    ]);
    expect(names(env, 'Task')).toEqual([
      'o-deploy-status',
      'o-hand-made',
      'o-openshift-saas-deploy-saas-example-app',
      'o-openshift-saas-deploy-saas-example-edge',
    ]);
  });

  it.each([
    {
      title: 'duplicate task template names',
      change: (text: string) =>
        text.replace(
          'taskTemplates:\n',
          [
            'taskTemplates:',
            '  - name: deploy-status',
            '    type: onePerNamespace',
            '    path: /tekton/deploy-status.task.yaml.j2',
            '    variables: { ubi_minimal_image_tag: "9" }',
            '',
          ].join('\n'),
        ),
      error:
        'There are duplicates in task templates names in tekton provider tekton-app-sre-pipelines-appint-ex-01',
    },
    {
      title: 'a template variable missing (strict undefined)',
      change: (text: string) =>
        text.replace('      ubi_minimal_image_tag: latest\n', '      other: x\n'),
      error: '/tekton/deploy-status.task.yaml.j2',
    },
  ])('stops on $title: exit 1, a clear error, nothing written', async ({ change, error }) => {
    const fresh = await start({ namespaces: true });
    await editFile(
      join(fresh.appInterfaceDir, 'data/app-sre/tekton-provider-defaults/defaults.yml'),
      change,
    );
    fresh.server.resetLog();
    const run = await runQontractReconcile([
      '--config',
      fresh.configPath,
      'openshift-tekton-resources',
    ]);
    expect(run.code).toBe(1);
    expect(messages(run, 50).join('\n')).toContain(error);
    expect(run.stderr).not.toMatch(/\n\s+at /); // no stack trace
    expect(fresh.server.mutatingRequests()).toEqual([]);
  });
});
