import { join } from 'node:path';
import type { ExampleEnvironment } from '@qontract/testing';
import { describe, expect, it } from 'vitest';
import {
  editFile,
  messages,
  objectNames,
  planLines,
  runQontractReconcile,
  useExampleEnvironment,
} from './harness.ts';

const start = useExampleEnvironment();

const RBAC = 'rbac.authorization.k8s.io/v1';
const KIND = 'ClusterRoleBinding.rbac.authorization.k8s.io';
const applyLine = (cluster: string, name: string) =>
  `['apply', 'privileged=False', '${cluster}', 'cluster', '${KIND}', '${name}']`;
const deleteLine = (cluster: string, name: string) =>
  `['delete', 'privileged=False', '${cluster}', 'cluster', '${KIND}', '${name}']`;

const bindings = (e: ExampleEnvironment, cluster: string) =>
  objectNames(e, cluster, RBAC, 'ClusterRoleBinding');

/** A binding this integration wrote earlier for a grant that is gone now. */
function seedStaleOwnBinding(e: ExampleEnvironment): void {
  e.server.seed('appint-ex-01', [
    {
      apiVersion: RBAC,
      kind: 'ClusterRoleBinding',
      metadata: {
        name: 'cluster-reader-mallory-gh',
        annotations: {
          'qontract.integration': 'openshift-clusterrolebindings',
          'qontract.integration_version': '0.1.0',
          'qontract.sha256sum': 'f'.repeat(64),
          'qontract.update': '2026-01-01T00:00:00Z',
        },
      },
      roleRef: {
        apiGroup: 'rbac.authorization.k8s.io',
        kind: 'ClusterRole',
        name: 'cluster-reader',
      },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'mallory-gh' }],
    },
    {
      apiVersion: RBAC,
      kind: 'ClusterRoleBinding',
      metadata: { name: 'hand-made' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'someone' }],
    },
  ]);
}

describe('openshift-clusterrolebindings end to end', () => {
  it('plans without writing, converges, then has nothing to do; deletes only its own', async () => {
    const env = await start();
    const { server, configPath } = env;
    seedStaleOwnBinding(env);
    server.resetLog();

    const dry = await runQontractReconcile([
      '--config',
      configPath,
      '--dry-run',
      'openshift-clusterrolebindings',
    ]);
    expect(dry.code).toBe(0);
    const lines = planLines(dry);
    expect(lines.sort()).toEqual(
      [
        applyLine('appint-ex-01', 'cluster-reader-app-sre-pipelines-example-ci'),
        applyLine('appint-ex-01', 'cluster-reader-carol-gh'),
        deleteLine('appint-ex-01', 'cluster-reader-mallory-gh'),
      ].sort(),
    );
    expect(server.mutatingRequests()).toEqual([]);

    const wet = await runQontractReconcile([
      '--config',
      configPath,
      'openshift-clusterrolebindings',
    ]);
    expect(wet.code).toBe(0);
    expect(bindings(env, 'appint-ex-01')).toEqual([
      'cluster-reader-app-sre-pipelines-example-ci',
      'cluster-reader-carol-gh',
      'hand-made',
    ]);
    // Clusters without managedClusterRoles are never touched.
    expect(server.mutatingRequests({ cluster: 'appint-ex-02' })).toEqual([]);
    expect(server.mutatingRequests({ cluster: 'appint-ex-k8s' })).toEqual([]);
    const crb = server.get(
      'appint-ex-01',
      RBAC,
      'ClusterRoleBinding',
      '',
      'cluster-reader-app-sre-pipelines-example-ci',
    ) as {
      metadata: { annotations: Record<string, string> };
      roleRef: Record<string, string>;
      subjects: unknown[];
    };
    expect(crb.metadata.annotations['qontract.integration']).toBe('openshift-clusterrolebindings');
    expect(crb.metadata.annotations['qontract.integration_version']).toBe('0.1.0');
    expect(crb.roleRef).toMatchObject({ kind: 'ClusterRole', name: 'cluster-reader' });
    expect(crb.subjects).toEqual([
      { kind: 'ServiceAccount', name: 'example-ci', namespace: 'app-sre-pipelines' },
    ]);

    server.resetLog();
    const again = await runQontractReconcile([
      '--config',
      configPath,
      'openshift-clusterrolebindings',
    ]);
    expect(again.code).toBe(0);
    expect(server.mutatingRequests()).toEqual([]);
    expect(planLines(again)).toEqual([]);
  });

  it('reports a binding name the API would refuse, exits 1 and deletes nothing', async () => {
    const env = await start();
    const { server, configPath, appInterfaceDir } = env;
    seedStaleOwnBinding(env);
    await editFile(join(appInterfaceDir, 'data/access/roles/cluster-readers.yml'), (text) =>
      text.replace('clusterRole: cluster-reader', 'clusterRole: cluster-reader/extra'),
    );
    server.resetLog();
    const run = await runQontractReconcile([
      '--config',
      configPath,
      'openshift-clusterrolebindings',
    ]);
    expect(run.code).toBe(1);
    expect(messages(run, 50)).toEqual(
      expect.arrayContaining([
        "[appint-ex-01] role cluster-readers: ClusterRoleBinding name 'cluster-reader/extra-carol-gh' may not contain '/'",
        "'delete' action is disabled due to previous errors (1 held back).",
      ]),
    );
    expect(server.mutatingRequests({ verb: 'delete' })).toEqual([]);
    expect(bindings(env, 'appint-ex-01')).toContain('cluster-reader-mallory-gh');
  });

  it('goes on when a managed cluster is unreachable (exit 1); plain Kubernetes clusters work too', async () => {
    const env = await start({ down: ['appint-ex-01'] });
    const { configPath, appInterfaceDir } = env;
    // A second managed cluster, plain Kubernetes, so that one is still reachable.
    await editFile(join(appInterfaceDir, 'data/openshift/appint-ex-k8s/cluster.yml'), (text) =>
      text.replace('auth: []', 'auth: []\nmanagedClusterRoles: true'),
    );
    await editFile(join(appInterfaceDir, 'data/access/roles/cluster-readers.yml'), (text) =>
      text.replace(
        'access:\n',
        'access:\n  - cluster:\n      $ref: /openshift/appint-ex-k8s/cluster.yml\n    clusterRole: view\n',
      ),
    );
    const run = await runQontractReconcile([
      '--config',
      configPath,
      'openshift-clusterrolebindings',
    ]);
    expect(run.code).toBe(1);
    expect(messages(run, 50).some((m) => m.startsWith('[appint-ex-01] is unreachable'))).toBe(true);
    expect(bindings(env, 'appint-ex-k8s')).toEqual([
      'view-app-sre-pipelines-example-ci',
      'view-carol-gh',
    ]);
  });
});
