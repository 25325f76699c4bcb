import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ExampleEnvironment } from '@qontract/testing';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  messages,
  objectNames,
  planLines,
  runQontractReconcile,
  useExampleEnvironment,
} from './harness.ts';

const start = useExampleEnvironment();
let env: ExampleEnvironment;
beforeAll(async () => {
  // Resources live in namespaces: create them first, as production does.
  env = await start({ namespaces: true });
});

const quotas = (cluster: string, namespace: string) =>
  objectNames(env, cluster, 'v1', 'ResourceQuota', namespace);

const line = (action: string, cluster: string, namespace: string, name: string) =>
  `['${action}', 'privileged=False', '${cluster}', '${namespace}', 'ResourceQuota', '${name}']`;

// Each run starts the CLI in-process; the CI machine is small and shared.
describe('openshift-resourcequotas end to end', { timeout: 30_000 }, () => {
  it('plans without writing, converges, then has nothing to do', async () => {
    const { server, configPath } = env;
    server.resetLog();
    const dry = await runQontractReconcile([
      '--config',
      configPath,
      '--dry-run',
      'openshift-resourcequotas',
    ]);
    expect(dry.code).toBe(0);
    const planned = planLines(dry);
    expect(planned.sort()).toEqual(
      [
        line('apply', 'appint-ex-01', 'example-app-stage', 'example-compute'),
        line('apply', 'appint-ex-01', 'example-app-stage', 'example-pods'),
        line('apply', 'appint-ex-02', 'example-app-production', 'example-compute'),
        line('apply', 'appint-ex-02', 'example-app-production', 'example-pods'),
        line('apply', 'appint-ex-k8s', 'example-app-edge', 'example-compute'),
        line('apply', 'appint-ex-k8s', 'example-app-edge', 'example-pods'),
      ].sort(),
    );
    expect(server.mutatingRequests()).toEqual([]);

    const wet = await runQontractReconcile(['--config', configPath, 'openshift-resourcequotas']);
    expect(wet.code).toBe(0);
    expect(quotas('appint-ex-01', 'example-app-stage')).toEqual([
      'example-compute',
      'example-pods',
    ]);
    const compute = server.get(
      'appint-ex-02',
      'v1',
      'ResourceQuota',
      'example-app-production',
      'example-compute',
    ) as { metadata: { annotations: Record<string, string> }; spec: unknown };
    expect(compute.metadata.annotations['qontract.integration']).toBe('openshift-resourcequotas');
    expect(compute.metadata.annotations['qontract.integration_version']).toBe('0.1.0');
    expect(compute.spec).toEqual({
      hard: {
        pods: '20',
        'limits.cpu': '4',
        'limits.memory': '8Gi',
        'requests.cpu': '2',
        'requests.memory': '4Gi',
      },
      scopes: ['NotTerminating'],
    });
    const pods = server.get(
      'appint-ex-02',
      'v1',
      'ResourceQuota',
      'example-app-production',
      'example-pods',
    ) as {
      spec: Record<string, unknown>;
    };
    expect(pods.spec).toEqual({ hard: { pods: '10' } });

    server.resetLog();
    const again = await runQontractReconcile(['--config', configPath, 'openshift-resourcequotas']);
    expect(again.code).toBe(0);
    expect(server.mutatingRequests()).toEqual([]);
    expect(planLines(again)).toEqual([]);
  });

  it('deletes only its own stale quotas: --take-over is accepted and ignored, as upstream', async () => {
    const { server, configPath } = env;
    const ours = server.get(
      'appint-ex-01',
      'v1',
      'ResourceQuota',
      'example-app-stage',
      'example-pods',
    )!;
    server.seed('appint-ex-01', [
      {
        ...ours,
        metadata: {
          ...(ours.metadata as object),
          name: 'example-retired',
          uid: undefined,
          resourceVersion: undefined,
        },
      },
      {
        apiVersion: 'v1',
        kind: 'ResourceQuota',
        metadata: { name: 'hand-made', namespace: 'example-app-stage' },
        spec: { hard: { pods: '100' } },
      },
    ]);
    const run = await runQontractReconcile([
      '--config',
      configPath,
      'openshift-resourcequotas',
      '--take-over',
    ]);
    expect(run.code).toBe(0);
    expect(messages(run)).toContain(
      line('delete', 'appint-ex-01', 'example-app-stage', 'example-retired'),
    );
    expect(quotas('appint-ex-01', 'example-app-stage')).toEqual([
      'example-compute',
      'example-pods',
      'hand-made',
    ]);
  });

  it('reports an unknown cluster and duplicate quota names, exits 1 and deletes nothing', async () => {
    const { server, configPath, appInterfaceDir } = env;
    const ours = server.get(
      'appint-ex-02',
      'v1',
      'ResourceQuota',
      'example-app-production',
      'example-pods',
    )!;
    server.seed('appint-ex-02', [
      {
        ...ours,
        metadata: {
          ...(ours.metadata as object),
          name: 'example-retired',
          uid: undefined,
          resourceVersion: undefined,
        },
      },
    ]);
    // A cluster config.toml has no token for, and a namespace on it.
    await mkdir(join(appInterfaceDir, 'data/openshift/appint-ex-03/namespaces'), {
      recursive: true,
    });
    await writeFile(
      join(appInterfaceDir, 'data/openshift/appint-ex-03/cluster.yml'),
      [
        '---',
        '$schema: /openshift/cluster-1.yml',
        'labels: {}',
        'name: appint-ex-03',
        'description: a cluster nobody gave us a token for',
        'serverUrl: https://127.0.0.1:1',
        'consoleUrl: https://console.appint-ex-03.example.com',
        'prometheusUrl: https://prometheus.appint-ex-03.example.com',
        'elbFQDN: elb.apps.appint-ex-03.example.com',
        'internal: false',
        'auth: []',
        'automationToken:',
        '  path: clusters/appint-ex-03',
        '  field: token',
        '',
      ].join('\n'),
    );
    await writeFile(
      join(appInterfaceDir, 'data/openshift/appint-ex-03/namespaces/elsewhere.yml'),
      [
        '---',
        '$schema: /openshift/namespace-1.yml',
        'labels: {}',
        'name: elsewhere',
        'description: a namespace on that cluster',
        'cluster:',
        '  $ref: /openshift/appint-ex-03/cluster.yml',
        'app:',
        '  $ref: /services/example-app/app.yml',
        'environment:',
        '  $ref: /products/example/environments/production.yml',
        'quota:',
        '  $ref: /openshift/quotas/example-small.yml',
        '',
      ].join('\n'),
    );
    // Two items of one quota with the same name.
    await writeFile(
      join(appInterfaceDir, 'data/openshift/quotas/example-small.yml'),
      [
        '---',
        '$schema: /openshift/quota-1.yml',
        'labels: {}',
        'name: example-small',
        'description: A small compute quota for the example namespaces.',
        'quotas:',
        '  - name: example-pods',
        '    resources:',
        '      pods: 10',
        '  - name: example-pods',
        '    resources:',
        '      pods: 12',
        '',
      ].join('\n'),
    );
    server.resetLog();
    const run = await runQontractReconcile(['--config', configPath, 'openshift-resourcequotas']);
    expect(run.code).toBe(1);
    const errors = messages(run, 50);
    expect(
      errors.some((m) => /^\[appint-ex-03\] secret \S+ not found in config file/.test(m)),
    ).toBe(true);
    expect(
      errors.some((m) =>
        m.startsWith(
          '[appint-ex-02/example-app-production] desired item already exists: ResourceQuota/example-pods.',
        ),
      ),
    ).toBe(true);
    expect(errors).toContainEqual(
      expect.stringMatching(
        /^'delete' action is disabled due to previous errors \(\d+ held back\)\.$/,
      ),
    );
    expect(server.mutatingRequests({ verb: 'delete' })).toEqual([]);
    expect(quotas('appint-ex-02', 'example-app-production')).toContain('example-retired');
  });
});
