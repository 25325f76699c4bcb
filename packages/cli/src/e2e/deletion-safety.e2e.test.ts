import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FaultRule } from '@qontract/fake-kube-apiserver';
import type { ExampleEnvironment } from '@qontract/testing';
import { describe, expect, it } from 'vitest';
import {
  editFile,
  messages,
  objectNames,
  runQontractReconcile,
  useExampleEnvironment,
} from './harness.ts';

// The rule users trust most: once any error exists in a run, nothing is
// deleted — on any cluster, whatever failed and whenever it failed.

const start = useExampleEnvironment();

/** Where the example's plain ConfigMap (resources/example-app/configmap.yml) lives. */
const CONFIG_MAP_HOMES = [
  ['appint-ex-01', 'example-app-stage'],
  ['appint-ex-02', 'example-app-production'],
  ['appint-ex-k8s', 'example-app-edge'],
] as const;

/** The example environment with openshift-resources converged. */
async function converged(): Promise<ExampleEnvironment> {
  const e = await start({ namespaces: true });
  const run = await runQontractReconcile(['--config', e.configPath, 'openshift-resources']);
  expect(run.code).toBe(0);
  return e;
}

/** Renames the example ConfigMap: the next run applies the new name and deletes the old one everywhere. */
async function renameConfigMap(e: ExampleEnvironment): Promise<void> {
  await editFile(join(e.appInterfaceDir, 'resources/example-app/configmap.yml'), (text) =>
    text.replace('name: example-app-config\n', 'name: example-app-config-v2\n'),
  );
}

function configMaps(e: ExampleEnvironment, cluster: string, namespace: string): string[] {
  return objectNames(e, cluster, 'v1', 'ConfigMap', namespace).filter((n) =>
    n.startsWith('example-app-config'),
  );
}

describe('no deletion after an error in the same run', () => {
  it('the rename works when nothing fails (the old object is deleted on every cluster)', async () => {
    const env = await converged();
    await renameConfigMap(env);
    const run = await runQontractReconcile(['--config', env.configPath, 'openshift-resources']);
    expect(run.code).toBe(0);
    for (const [cluster, namespace] of CONFIG_MAP_HOMES) {
      expect(configMaps(env, cluster, namespace)).toEqual(['example-app-config-v2']);
    }
  });

  it.each<[string, FaultRule]>([
    ['a refused apply (403)', { verb: 'apply', status: 403 }],
    ['a cluster failing mid-apply (connections reset)', { verb: 'apply', drop: true }],
    ['a 429 storm on every apply', { verb: 'apply', status: 429, retryAfter: 0 }],
  ])('openshift-resources: %s on one cluster means zero deletes anywhere', async (_what, rule) => {
    const env = await converged();
    await renameConfigMap(env);
    env.server.faults.set('appint-ex-02', rule);
    env.server.resetLog();

    const run = await runQontractReconcile(['--config', env.configPath, 'openshift-resources']);

    expect(run.code).toBe(1);
    expect(messages(run, 50).join('\n')).toContain('[appint-ex-02/example-app-production]');
    expect(env.server.mutatingRequests({ verb: 'delete' })).toEqual([]);
    // The healthy clusters got the new object and kept the old one.
    expect(configMaps(env, 'appint-ex-01', 'example-app-stage')).toEqual([
      'example-app-config',
      'example-app-config-v2',
    ]);
    expect(configMaps(env, 'appint-ex-k8s', 'example-app-edge')).toEqual([
      'example-app-config',
      'example-app-config-v2',
    ]);
    expect(configMaps(env, 'appint-ex-02', 'example-app-production')).toEqual([
      'example-app-config',
    ]);
    expect(messages(run, 50)).toContainEqual(
      expect.stringMatching(
        /^'delete' action is disabled due to previous errors \(\d+ held back\)\.$/,
      ),
    );
    // The summary and the exit code tell the same story.
    expect(messages(run).at(-1)).toMatch(/finished: failed \(exit code 1\), [1-9]\d* error\(s\)/);
  });

  it('openshift-resources: a resource whose metadata.namespace is not its namespace fails in dry-run, names the file, and deletes nothing in the wet run', async () => {
    const env = await converged();
    await editFile(join(env.appInterfaceDir, 'resources/example-app/configmap.yml'), (text) =>
      text.replace(
        'name: example-app-config\n',
        'name: example-app-config-v2\n  namespace: somewhere-else\n',
      ),
    );
    env.server.resetLog();

    const dry = await runQontractReconcile([
      '--config',
      env.configPath,
      '--dry-run',
      'openshift-resources',
    ]);
    expect(dry.code).toBe(1);
    const errors = messages(dry, 50).join('\n');
    expect(errors).toMatch(
      /\[appint-ex-01\/example-app-stage\] ConfigMap\/example-app-config-v2 \(.*configmap\.yml\): metadata\.namespace 'somewhere-else' does not match the namespace it is declared in \('example-app-stage'\)/,
    );

    const wet = await runQontractReconcile(['--config', env.configPath, 'openshift-resources']);
    expect(wet.code).toBe(1);
    expect(env.server.mutatingRequests({ verb: 'delete' })).toEqual([]);
    for (const [cluster, namespace] of CONFIG_MAP_HOMES) {
      expect(configMaps(env, cluster, namespace)).toEqual(['example-app-config']);
    }
  });

  it('--plan-out says what the one gate did: each delete it held back, as held back, and how many', async () => {
    const env = await converged();
    // The rename plans a delete on every cluster; the bad namespace is an error in the dry-run.
    await editFile(join(env.appInterfaceDir, 'resources/example-app/configmap.yml'), (text) =>
      text.replace(
        'name: example-app-config\n',
        'name: example-app-config-v2\n  namespace: somewhere-else\n',
      ),
    );
    const planOut = join(env.dir, 'plan.json');
    const dry = await runQontractReconcile([
      '--config',
      env.configPath,
      '--dry-run',
      '--plan-out',
      planOut,
      'openshift-resources',
    ]);
    expect(dry.code).toBe(1);
    const plan = JSON.parse(await readFile(planOut, 'utf8')) as {
      heldBack: number;
      actions: Array<{ action: string; name: string; outcome: string }>;
    };
    const deletes = plan.actions.filter((a) => a.action === 'delete');
    expect(deletes.map((a) => [a.name, a.outcome])).toEqual(
      CONFIG_MAP_HOMES.map(() => ['example-app-config', 'disabled']),
    );
    expect(plan.heldBack).toBe(deletes.length);
    expect(plan.actions.filter((a) => a.action === 'apply').map((a) => a.outcome)).not.toContain(
      'disabled',
    );
    // The log says the same: each delete's line, then once how many were held back.
    expect(messages(dry, 50)).toContain(
      `'delete' action is disabled due to previous errors (${deletes.length} held back).`,
    );
  });

  it('openshift-namespaces: a refused create on one cluster holds back a planned delete on another', async () => {
    const env = await start();
    // example-app-legacy is marked `delete: true` in app-interface.
    env.server.seed('appint-ex-02', [
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'example-app-legacy' } },
    ]);
    env.server.faults.set('appint-ex-01', { verb: 'create', status: 403 });

    const run = await runQontractReconcile(['--config', env.configPath, 'openshift-namespaces']);

    expect(run.code).toBe(1);
    expect(messages(run)).toContain("['delete', 'appint-ex-02', 'example-app-legacy']");
    expect(messages(run, 50)).toContainEqual(
      expect.stringMatching(
        /^'delete' action is disabled due to previous errors \(\d+ held back\)\.$/,
      ),
    );
    expect(env.server.mutatingRequests({ verb: 'delete' })).toEqual([]);
    expect(objectNames(env, 'appint-ex-02', 'v1', 'Namespace')).toContain('example-app-legacy');
    // The healthy clusters were still reconciled.
    expect(objectNames(env, 'appint-ex-k8s', 'v1', 'Namespace')).toContain('example-app-edge');
  });
});
