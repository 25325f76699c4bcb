import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ExampleEnvironment } from '@qontract/testing';
import { beforeAll, describe, expect, it } from 'vitest';
import { editFile, messages, runQontractReconcile, useExampleEnvironment } from './harness.ts';

const start = useExampleEnvironment();
let env: ExampleEnvironment;
let stateDir: string;
beforeAll(async () => {
  // Labels go on existing namespaces: create them the way production does.
  env = await start({ namespaces: true });
  // The managed label keys live in the state store: examples/config.toml's local
  // directory, beside the environment's copy of the config.
  stateDir = join(env.dir, '.state');
});

const labelsOf = (cluster: string, namespace: string) =>
  (
    (env.server.get(cluster, 'v1', 'Namespace', '', namespace)?.metadata ?? {}) as {
      labels?: Record<string, string>;
    }
  ).labels ?? {};

const stateOf = async (key: string) =>
  JSON.parse(
    await readFile(join(stateDir, 'state/openshift-namespace-labels', key), 'utf8'),
  ) as unknown;

const namespaceFile = (name: string) =>
  join(env.appInterfaceDir, 'data/services/example-app/namespaces', `${name}.yml`);

async function editLabels(file: string, labels: string[]): Promise<void> {
  await editFile(file, (text) => {
    const replaced = text.replace(
      /^labels:\n(?: {2}.*\n)*/m,
      `labels:\n${labels.map((l) => `  ${l}\n`).join('')}`,
    );
    expect(replaced).not.toBe(text);
    return replaced;
  });
}

// Each test runs the CLI several times in a row.
describe('openshift-namespace-labels end to end', { timeout: 30_000 }, () => {
  it('plans without writing, converges, then has nothing to do', async () => {
    const { server, configPath } = env;
    server.resetLog();
    const planFile = join(env.dir, 'plan.json');
    const dry = await runQontractReconcile([
      '--config',
      configPath,
      '--dry-run',
      '--plan-out',
      planFile,
      'openshift-namespace-labels',
    ]);
    expect(dry.code).toBe(0);
    const plan = JSON.parse(await readFile(planFile, 'utf8')) as { actions: unknown[] };
    expect(plan.actions).toContainEqual({
      action: 'label',
      cluster: 'appint-ex-01',
      namespace: 'example-app-stage',
      kind: 'Namespace',
      name: 'example-app-stage',
      labels: { environment: 'stage', team: 'example' },
      outcome: 'dry-run',
    });
    expect(messages(dry)).toEqual(
      expect.arrayContaining([
        "[dry-run] Updating labels on appint-ex-01/app-sre-observability: {'team': 'app-sre'}",
        "[dry-run] Updating labels on appint-ex-01/example-app-stage: {'environment': 'stage', 'team': 'example'}",
        "[dry-run] Updating labels on appint-ex-k8s/example-app-edge: {'environment': 'production', 'team': 'example', 'tier': 'edge'}",
      ]),
    );
    expect(server.mutatingRequests()).toEqual([]);
    expect(await readdir(stateDir).catch(() => [])).toEqual([]);

    const wet = await runQontractReconcile(['--config', configPath, 'openshift-namespace-labels']);
    expect(wet.code).toBe(0);
    expect(labelsOf('appint-ex-01', 'example-app-stage')).toMatchObject({
      team: 'example',
      environment: 'stage',
    });
    expect(labelsOf('appint-ex-02', 'example-app-production')).toMatchObject({
      team: 'example',
      environment: 'production',
    });
    expect(labelsOf('appint-ex-k8s', 'example-app-edge')).toMatchObject({ tier: 'edge' });
    // GraphQL returns the labels map with sorted keys.
    expect(await stateOf('appint-ex-01/example-app-stage-managed-labels')).toEqual([
      'environment',
      'team',
    ]);

    server.resetLog();
    const again = await runQontractReconcile([
      '--config',
      configPath,
      'openshift-namespace-labels',
    ]);
    expect(again.code).toBe(0);
    expect(server.mutatingRequests()).toEqual([]);
    expect(messages(again).filter((m) => m.includes('Updating labels'))).toEqual([]);
  });

  it('changes and removes only the labels it manages', async () => {
    const { server, configPath } = env;
    server.seed('appint-ex-01', [
      {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: {
          name: 'example-app-stage',
          labels: { ...labelsOf('appint-ex-01', 'example-app-stage'), 'hand-made': 'yes' },
        },
      },
    ]);
    await editLabels(namespaceFile('example-app-stage'), ['team: example-two']);
    const run = await runQontractReconcile(['--config', configPath, 'openshift-namespace-labels']);
    expect(run.code).toBe(0);
    expect(messages(run)).toContain(
      "Updating labels on appint-ex-01/example-app-stage: {'team': 'example-two', 'environment': None}",
    );
    const labels = labelsOf('appint-ex-01', 'example-app-stage');
    expect(labels).toMatchObject({ team: 'example-two', 'hand-made': 'yes' });
    expect(labels).not.toHaveProperty('environment');
    // The key stays managed until it is gone from the namespace; the next run forgets it.
    const next = await runQontractReconcile(['--config', configPath, 'openshift-namespace-labels']);
    expect(next.code).toBe(0);
    expect(await stateOf('appint-ex-01/example-app-stage-managed-labels')).toEqual(['team']);
  });

  it('refuses to take over a label someone else set, and reports invalid labels and duplicates, exit 1', async () => {
    const { server, configPath, appInterfaceDir } = env;
    await editLabels(namespaceFile('example-app-stage'), [
      'team: example-two',
      "'hand-made': 'no'",
    ]);
    await editLabels(namespaceFile('example-app-production'), [
      'team: example',
      'environment: production',
      "'kubernetes.io/owner': someone",
    ]);
    await writeFile(
      join(
        appInterfaceDir,
        'data/openshift/appint-ex-01/namespaces/app-sre-observability-copy.yml',
      ),
      (
        await readFile(
          join(appInterfaceDir, 'data/openshift/appint-ex-01/namespaces/app-sre-observability.yml'),
          'utf8',
        )
      ).replace('team: app-sre', 'team: someone-else'),
    );
    await editLabels(namespaceFile('example-app-edge'), [
      'team: example',
      'environment: production',
      'tier: edge',
      'cache: varnish',
    ]);
    server.resetLog();
    const run = await runQontractReconcile(['--config', configPath, 'openshift-namespace-labels']);
    expect(run.code).toBe(1);
    const errors = messages(run, 50);
    expect(errors).toContain(
      'appint-ex-01/example-app-stage: Label conflict: desired hand-made=no vs current hand-made=yes',
    );
    expect(errors).toContain(
      'appint-ex-02/example-app-production: Label key prefix is reserved: kubernetes.io',
    );
    expect(errors).toContain(
      'appint-ex-01/app-sre-observability: Found 2 definitions of namespace appint-ex-01/app-sre-observability; its labels are left alone',
    );
    expect(labelsOf('appint-ex-01', 'example-app-stage')['hand-made']).toBe('yes');
    expect(labelsOf('appint-ex-01', 'app-sre-observability').team).toBe('app-sre');
    // Good namespaces are still reconciled.
    expect(labelsOf('appint-ex-k8s', 'example-app-edge').cache).toBe('varnish');
    expect(
      server.mutatingRequests().map((r) => `${r.cluster}/${r.resource}/${r.name ?? ''}`),
    ).toEqual(['appint-ex-k8s/namespaces/example-app-edge']);
  });
});

describe('openshift-namespace-labels with an unreachable cluster', { timeout: 30_000 }, () => {
  it('labels the namespaces of the other clusters and exits 1', async () => {
    const down = await start({ down: ['appint-ex-02'] });
    expect(
      (await runQontractReconcile(['--config', down.configPath, 'openshift-namespaces'])).code,
    ).toBe(1);
    const run = await runQontractReconcile([
      '--config',
      down.configPath,
      'openshift-namespace-labels',
    ]);
    expect(run.code).toBe(1);
    expect(messages(run, 50).some((m) => m.startsWith('[appint-ex-02] is unreachable'))).toBe(true);
    const stage = down.server.get('appint-ex-01', 'v1', 'Namespace', '', 'example-app-stage');
    expect((stage!.metadata as { labels?: Record<string, string> }).labels).toMatchObject({
      team: 'example',
    });
  });
});

describe('openshift-namespace-labels with bad state and a refused patch', {
  timeout: 30_000,
}, () => {
  it('reports both, labels the other namespaces and exits 1', async () => {
    const bad = await start();
    expect(
      (await runQontractReconcile(['--config', bad.configPath, 'openshift-namespaces'])).code,
    ).toBe(0);
    const dir = join(bad.dir, '.state/state/openshift-namespace-labels/appint-ex-01');
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'app-sre-pipelines-managed-labels'), '{"team": 1}');
    bad.server.faults.set('appint-ex-k8s', { verb: 'patch', status: 403 });
    const run = await runQontractReconcile([
      '--config',
      bad.configPath,
      'openshift-namespace-labels',
    ]);
    expect(run.code).toBe(1);
    const errors = messages(run, 50);
    expect(errors).toContain(
      'appint-ex-01/app-sre-pipelines: state appint-ex-01/app-sre-pipelines-managed-labels is not a list of label keys',
    );
    expect(errors.some((m) => m.startsWith('appint-ex-k8s/example-app-edge: '))).toBe(true);
    const labels = (ns: string) =>
      (
        bad.server.get('appint-ex-01', 'v1', 'Namespace', '', ns)!.metadata as {
          labels?: Record<string, string>;
        }
      ).labels ?? {};
    expect(labels('example-app-stage')).toMatchObject({ team: 'example' });
    expect(labels('app-sre-pipelines')).not.toHaveProperty('team');
  });
});
