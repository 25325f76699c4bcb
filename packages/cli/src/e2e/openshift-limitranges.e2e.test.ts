import { writeFile } from 'node:fs/promises';
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

const start = useExampleEnvironment();
let env: ExampleEnvironment;
beforeAll(async () => {
  // Resources live in namespaces: create them first, as production does.
  env = await start({ namespaces: true });
});

const limitRanges = (cluster: string, namespace: string) =>
  objectNames(env, cluster, 'v1', 'LimitRange', namespace);

const applyLine = (cluster: string, namespace: string, name: string) =>
  `['apply', 'privileged=False', '${cluster}', '${namespace}', 'LimitRange', '${name}']`;

// Each run starts the CLI in-process; the CI machine is small and shared.
describe('openshift-limitranges end to end', { timeout: 30_000 }, () => {
  it('plans without writing, converges, then has nothing to do', async () => {
    const { server, configPath } = env;
    server.resetLog();
    const dry = await runQontractReconcile([
      '--config',
      configPath,
      '--dry-run',
      'openshift-limitranges',
    ]);
    expect(dry.code).toBe(0);
    expect(planLines(dry)).toEqual(
      expect.arrayContaining([
        applyLine('appint-ex-01', 'app-sre-observability', 'example-default'),
        applyLine('appint-ex-01', 'example-app-stage', 'example-default'),
        applyLine('appint-ex-02', 'example-app-production', 'example-default'),
        applyLine('appint-ex-k8s', 'example-app-edge', 'example-default'),
      ]),
    );
    expect(planLines(dry)).toHaveLength(4);
    expect(server.mutatingRequests()).toEqual([]);

    const wet = await runQontractReconcile(['--config', configPath, 'openshift-limitranges']);
    expect(wet.code).toBe(0);
    expect(limitRanges('appint-ex-01', 'example-app-stage')).toEqual(['example-default']);
    expect(limitRanges('appint-ex-k8s', 'example-app-edge')).toEqual(['example-default']);
    const lr = server.get(
      'appint-ex-02',
      'v1',
      'LimitRange',
      'example-app-production',
      'example-default',
    ) as { metadata: { annotations: Record<string, string> }; spec: unknown };
    expect(lr.metadata.annotations['qontract.integration']).toBe('openshift-limitranges');
    expect(lr.metadata.annotations['qontract.integration_version']).toBe('0.1.0');
    expect(lr.metadata.annotations['qontract.sha256sum']).toMatch(/^[0-9a-f]{64}$/);
    expect(lr.spec).toEqual({
      limits: [
        {
          type: 'Container',
          default: { cpu: '500m', memory: '512Mi' },
          defaultRequest: { cpu: '100m', memory: '128Mi' },
          max: { cpu: '2', memory: '2Gi' },
        },
        { type: 'Pod', max: { cpu: '4', memory: '4Gi' } },
      ],
    });

    server.resetLog();
    const again = await runQontractReconcile(['--config', configPath, 'openshift-limitranges']);
    expect(again.code).toBe(0);
    expect(server.mutatingRequests()).toEqual([]);
    expect(planLines(again)).toEqual([]);
  });

  it('takes over by default: deletes LimitRanges nobody asked for, unless they have an owner', async () => {
    const { server, configPath } = env;
    server.seed('appint-ex-01', [
      {
        apiVersion: 'v1',
        kind: 'LimitRange',
        metadata: { name: 'hand-made', namespace: 'example-app-stage' },
        spec: { limits: [{ type: 'Container', max: { cpu: '1' } }] },
      },
      {
        apiVersion: 'v1',
        kind: 'LimitRange',
        metadata: {
          name: 'owned',
          namespace: 'example-app-stage',
          ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: 'u-1' }],
        },
        spec: { limits: [{ type: 'Container', max: { cpu: '1' } }] },
      },
    ]);
    const kept = await runQontractReconcile([
      '--config',
      configPath,
      'openshift-limitranges',
      '--no-take-over',
    ]);
    expect(kept.code).toBe(0);
    expect(limitRanges('appint-ex-01', 'example-app-stage')).toEqual([
      'example-default',
      'hand-made',
      'owned',
    ]);

    const run = await runQontractReconcile(['--config', configPath, 'openshift-limitranges']);
    expect(run.code).toBe(0);
    expect(messages(run)).toContain(
      "['delete', 'privileged=False', 'appint-ex-01', 'example-app-stage', 'LimitRange', 'hand-made']",
    );
    expect(limitRanges('appint-ex-01', 'example-app-stage')).toEqual(['example-default', 'owned']);
  });

  it('reports an invalid name and a namespace defined twice, exits 1 and deletes nothing', async () => {
    const { server, configPath, appInterfaceDir } = env;
    server.seed('appint-ex-01', [
      {
        apiVersion: 'v1',
        kind: 'LimitRange',
        metadata: { name: 'hand-made', namespace: 'example-app-stage' },
        spec: { limits: [{ type: 'Container', max: { cpu: '1' } }] },
      },
    ]);
    await writeFile(
      join(appInterfaceDir, 'data/openshift/limitranges/bad-name.yml'),
      [
        '---',
        '$schema: /openshift/limitrange-1.yml',
        'labels: {}',
        'name: Bad_Name',
        'description: not a DNS-1123 name',
        'limits:',
        '  - type: Container',
        '    max:',
        '      cpu: "1"',
        '',
      ].join('\n'),
    );
    await editFile(
      join(appInterfaceDir, 'data/openshift/appint-ex-01/namespaces/app-sre-observability.yml'),
      (text) => text.replace('/limitranges/example-default.yml', '/limitranges/bad-name.yml'),
    );
    await writeFile(
      join(appInterfaceDir, 'data/services/example-app/namespaces/example-app-stage-copy.yml'),
      [
        '---',
        '$schema: /openshift/namespace-1.yml',
        'labels: {}',
        'name: example-app-stage',
        'description: an accidental second definition',
        'cluster:',
        '  $ref: /openshift/appint-ex-01/cluster.yml',
        'app:',
        '  $ref: /services/example-app/app.yml',
        'environment:',
        '  $ref: /products/example/environments/stage.yml',
        'limitRanges:',
        '  $ref: /openshift/limitranges/example-default.yml',
        '',
      ].join('\n'),
    );
    server.resetLog();
    const run = await runQontractReconcile(['--config', configPath, 'openshift-limitranges']);
    expect(run.code).toBe(1);
    const errors = messages(run, 50);
    expect(errors.some((m) => m.includes('Bad_Name') && m.includes('DNS-1123'))).toBe(true);
    expect(
      errors.some((m) =>
        m.startsWith(
          '[appint-ex-01/example-app-stage] desired item already exists: LimitRange/example-default.',
        ),
      ),
    ).toBe(true);
    expect(errors).toContainEqual(
      expect.stringMatching(
        /^'delete' action is disabled due to previous errors \(\d+ held back\)\.$/,
      ),
    );
    expect(server.mutatingRequests({ verb: 'delete' })).toEqual([]);
    expect(limitRanges('appint-ex-01', 'example-app-stage')).toContain('hand-made');
  });
});
