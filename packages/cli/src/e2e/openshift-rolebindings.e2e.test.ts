import type { ExampleEnvironment } from '@qontract/testing';
import { beforeAll, describe, expect, it } from 'vitest';
import { messages, objectNames, runQontractReconcile, useExampleEnvironment } from './harness.ts';

const start = useExampleEnvironment();
let env: ExampleEnvironment;
beforeAll(async () => {
  // Resources live in namespaces: create them first, as production does.
  env = await start({ namespaces: true });
});

const bindings = (cluster: string, namespace: string) =>
  objectNames(env, cluster, 'rbac.authorization.k8s.io/v1', 'RoleBinding', namespace);

describe('openshift-rolebindings end to end', () => {
  it('plans without writing, converges, then has nothing to do; expired roles grant nothing', async () => {
    const { server, configPath } = env;
    server.resetLog();
    const dry = await runQontractReconcile([
      '--config',
      configPath,
      '--dry-run',
      'openshift-rolebindings',
    ]);
    expect(dry.code).toBe(0);
    expect(messages(dry)).toEqual(
      expect.arrayContaining([
        "['apply', 'privileged=False', 'appint-ex-01', 'example-app-stage', 'RoleBinding.rbac.authorization.k8s.io', 'edit-alice-gh']",
        "['apply', 'privileged=False', 'appint-ex-02', 'example-app-production', 'RoleBinding.rbac.authorization.k8s.io', 'view-app-sre-pipelines-example-ci']",
      ]),
    );
    expect(server.mutatingRequests()).toEqual([]);

    const wet = await runQontractReconcile(['--config', configPath, 'openshift-rolebindings']);
    expect(wet.code).toBe(0);
    expect(bindings('appint-ex-01', 'example-app-stage')).toEqual([
      'edit-alice-gh',
      'edit-app-sre-pipelines-example-ci',
      'edit-bob-gh',
      'edit-dave-gh',
      'view-app-sre-pipelines-example-ci',
      'view-carol-gh',
    ]);
    expect(bindings('appint-ex-02', 'example-app-production')).toEqual([
      'view-alice-gh',
      'view-app-sre-pipelines-example-ci',
      'view-bob-gh',
      'view-dave-gh',
    ]);
    expect(bindings('appint-ex-01', 'app-sre-observability')).toEqual(['admin-alice-gh']);
    const rb = server.get(
      'appint-ex-01',
      'rbac.authorization.k8s.io/v1',
      'RoleBinding',
      'example-app-stage',
      'edit-alice-gh',
    ) as {
      metadata: { annotations: Record<string, string> };
      roleRef: Record<string, string>;
      subjects: unknown[];
    };
    expect(rb.metadata.annotations['qontract.integration']).toBe('openshift-rolebindings');
    expect(rb.metadata.annotations['qontract.integration_version']).toBe('0.3.0');
    expect(rb.roleRef).toMatchObject({ kind: 'ClusterRole', name: 'edit' });
    expect(rb.subjects).toEqual([{ kind: 'User', name: 'alice-gh' }]);

    server.resetLog();
    const again = await runQontractReconcile(['--config', configPath, 'openshift-rolebindings']);
    expect(again.code).toBe(0);
    expect(server.mutatingRequests()).toEqual([]);
  });

  it('deletes a binding of ours that no role asks for, and never a binding it does not own', async () => {
    const { server, configPath } = env;
    const ours = server.get(
      'appint-ex-01',
      'rbac.authorization.k8s.io/v1',
      'RoleBinding',
      'example-app-stage',
      'edit-bob-gh',
    )!;
    server.seed('appint-ex-01', [
      {
        ...ours,
        metadata: {
          ...(ours.metadata as object),
          name: 'edit-mallory-gh',
          uid: undefined,
          resourceVersion: undefined,
        },
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name: 'hand-made', namespace: 'example-app-stage' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
        subjects: [{ kind: 'User', name: 'someone' }],
      },
    ]);
    const run = await runQontractReconcile(['--config', configPath, 'openshift-rolebindings']);
    expect(run.code).toBe(0);
    expect(messages(run)).toContain(
      "['delete', 'privileged=False', 'appint-ex-01', 'example-app-stage', 'RoleBinding.rbac.authorization.k8s.io', 'edit-mallory-gh']",
    );
    expect(bindings('appint-ex-01', 'example-app-stage')).toContain('hand-made');
    expect(bindings('appint-ex-01', 'example-app-stage')).not.toContain('edit-mallory-gh');
  });
});
