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

const policies = (cluster: string, namespace: string) =>
  objectNames(env, cluster, 'networking.k8s.io/v1', 'NetworkPolicy', namespace);

const line = (action: string, cluster: string, namespace: string, name: string) =>
  `['${action}', 'privileged=False', '${cluster}', '${namespace}', 'NetworkPolicy', '${name}']`;

// Each run starts the CLI in-process; the CI machine is small and shared.
describe('openshift-network-policies end to end', { timeout: 30_000 }, () => {
  it('plans without writing, converges, then has nothing to do', async () => {
    const { server, configPath } = env;
    server.resetLog();
    const dry = await runQontractReconcile([
      '--config',
      configPath,
      '--dry-run',
      'openshift-network-policies',
    ]);
    expect(dry.code).toBe(0);
    expect(planLines(dry)).toEqual([
      line(
        'apply',
        'appint-ex-01',
        'example-app-stage',
        'allow-from-app-sre-observability-namespace',
      ),
      line('apply', 'appint-ex-01', 'example-app-stage', 'allow-from-app-sre-pipelines-namespace'),
    ]);
    expect(server.mutatingRequests()).toEqual([]);

    const wet = await runQontractReconcile(['--config', configPath, 'openshift-network-policies']);
    expect(wet.code).toBe(0);
    expect(policies('appint-ex-01', 'example-app-stage')).toEqual([
      'allow-from-app-sre-observability-namespace',
      'allow-from-app-sre-pipelines-namespace',
    ]);
    const np = server.get(
      'appint-ex-01',
      'networking.k8s.io/v1',
      'NetworkPolicy',
      'example-app-stage',
      'allow-from-app-sre-observability-namespace',
    ) as { metadata: { annotations: Record<string, string> }; spec: unknown };
    expect(np.metadata.annotations['qontract.integration']).toBe('openshift-network-policies');
    expect(np.metadata.annotations['qontract.integration_version']).toBe('0.1.0');
    expect(np.spec).toEqual({
      ingress: [
        {
          from: [
            {
              namespaceSelector: {
                matchLabels: { 'kubernetes.io/metadata.name': 'app-sre-observability' },
              },
            },
          ],
        },
      ],
      podSelector: {},
      policyTypes: ['Ingress'],
    });

    server.resetLog();
    const again = await runQontractReconcile([
      '--config',
      configPath,
      'openshift-network-policies',
    ]);
    expect(again.code).toBe(0);
    expect(server.mutatingRequests()).toEqual([]);
    expect(planLines(again)).toEqual([]);
  });

  it('works on the namespaces of its shard only, and a shard with none is not an error', async () => {
    const { server, configPath } = env;
    const dryRun = (shardId: string) =>
      runQontractReconcile(['--config', configPath, '--dry-run', 'openshift-network-policies'], {
        SHARDS: '2',
        SHARD_ID: shardId,
      });
    // md5('appint-ex-01/example-app-stage') % 2 == 1; it is the only namespace with an allow list.
    server.resetLog();
    const empty = await dryRun('0');
    expect(empty.code).toBe(0);
    expect(server.requests()).toEqual([]);
    const stage = await dryRun('1');
    expect(stage.code).toBe(0);
    expect(messages(stage, 50)).toEqual([]);
    expect(
      server.requests({ cluster: 'appint-ex-01' }).some((r) => r.resource === 'networkpolicies'),
    ).toBe(true);
  });

  it('deletes a policy of ours nobody allows any more, and never one it does not own', async () => {
    const { server, configPath } = env;
    const ours = server.get(
      'appint-ex-01',
      'networking.k8s.io/v1',
      'NetworkPolicy',
      'example-app-stage',
      'allow-from-app-sre-pipelines-namespace',
    )!;
    server.seed('appint-ex-01', [
      {
        ...ours,
        metadata: {
          ...(ours.metadata as object),
          name: 'allow-from-retired-namespace',
          uid: undefined,
          resourceVersion: undefined,
        },
      },
      {
        apiVersion: 'networking.k8s.io/v1',
        kind: 'NetworkPolicy',
        metadata: { name: 'hand-made', namespace: 'example-app-stage' },
        spec: { podSelector: {}, policyTypes: ['Ingress'] },
      },
    ]);
    const run = await runQontractReconcile(['--config', configPath, 'openshift-network-policies']);
    expect(run.code).toBe(0);
    expect(messages(run)).toContain(
      line('delete', 'appint-ex-01', 'example-app-stage', 'allow-from-retired-namespace'),
    );
    expect(policies('appint-ex-01', 'example-app-stage')).toEqual([
      'allow-from-app-sre-observability-namespace',
      'allow-from-app-sre-pipelines-namespace',
      'hand-made',
    ]);
  });

  it('reports a source namespace on another cluster, exits 1, applies the rest and deletes nothing', async () => {
    const { server, configPath, appInterfaceDir } = env;
    const ours = server.get(
      'appint-ex-01',
      'networking.k8s.io/v1',
      'NetworkPolicy',
      'example-app-stage',
      'allow-from-app-sre-pipelines-namespace',
    )!;
    server.seed('appint-ex-01', [
      {
        ...ours,
        metadata: {
          ...(ours.metadata as object),
          name: 'allow-from-retired-namespace',
          uid: undefined,
          resourceVersion: undefined,
        },
      },
      // Someone removed the ingress rule by hand: the run puts it back.
      { ...ours, spec: { podSelector: {}, policyTypes: ['Ingress'] } },
    ]);
    // Stage (appint-ex-01) asks to be reached from the edge namespace on appint-ex-k8s; production
    // asks too, but its cluster disables this integration (`disable.integrations`).
    const namespaceFile = join(appInterfaceDir, 'data/services/example-app/namespaces');
    await editFile(join(namespaceFile, 'example-app-stage.yml'), (t) =>
      t.replace(
        'networkPoliciesAllow:\n',
        'networkPoliciesAllow:\n  - $ref: /services/example-app/namespaces/example-app-edge.yml\n',
      ),
    );
    await editFile(
      join(namespaceFile, 'example-app-production.yml'),
      (t) =>
        `${t}\nnetworkPoliciesAllow:\n  - $ref: /services/example-app/namespaces/example-app-legacy.yml\n`,
    );
    server.resetLog();
    const run = await runQontractReconcile(['--config', configPath, 'openshift-network-policies']);
    expect(run.code).toBe(1);
    const errors = messages(run, 50);
    expect(errors).toContain(
      "[appint-ex-01/example-app-stage] Network Policy from cluster 'appint-ex-k8s' not allowed.",
    );
    expect(messages(run)).toContain(
      line('apply', 'appint-ex-01', 'example-app-stage', 'allow-from-app-sre-pipelines-namespace'),
    );
    expect(
      server.get(
        'appint-ex-01',
        'networking.k8s.io/v1',
        'NetworkPolicy',
        'example-app-stage',
        'allow-from-app-sre-pipelines-namespace',
      )?.spec,
    ).toMatchObject({ ingress: [{ from: [{ namespaceSelector: expect.anything() }] }] });
    expect(errors).toContain("'delete' action is disabled due to previous errors (1 held back).");
    expect(server.mutatingRequests({ verb: 'delete' })).toEqual([]);
    expect(policies('appint-ex-01', 'example-app-stage')).toEqual([
      'allow-from-app-sre-observability-namespace',
      'allow-from-app-sre-pipelines-namespace',
      'allow-from-retired-namespace',
      'hand-made',
    ]);
    expect(policies('appint-ex-02', 'example-app-production')).toEqual([]);
    expect(server.mutatingRequests({ cluster: 'appint-ex-02' })).toEqual([]);
  });
});
