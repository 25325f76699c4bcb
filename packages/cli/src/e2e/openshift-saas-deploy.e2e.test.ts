import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createMetrics } from '@qontract/core';
import { describe, expect, it, vi } from 'vitest';
import { type CliRun, createNamespaces, editFile, messages, planLines } from './harness.ts';
import { type SaasEnvironment, useSaasEnvironment } from './saas-environment.ts';

const start = useSaasEnvironment();

const APP = ['--saas-file-name', 'saas-example-app'];
const STAGE = ['--env-name', 'example-stage'];
const PRODUCTION = ['--env-name', 'example-production'];
const SAAS_DIR = 'data/services/example-app/cicd';

type KubeObject = {
  metadata: { name: string; annotations?: Record<string, string> };
  spec?: {
    replicas?: number;
    template?: { spec: { containers: Array<{ image: string }> } };
  };
};

function deployment(e: SaasEnvironment, cluster: string, namespace: string, name: string) {
  return e.env.server
    .list(cluster, 'apps/v1', 'Deployment', namespace)
    .find((o) => (o as KubeObject).metadata.name === name) as KubeObject | undefined;
}

/** The apply lines of a run's plan, without the `privileged=...` flag. */
const applies = (run: CliRun) =>
  planLines(run)
    .filter((l) => l.startsWith("['apply'"))
    .map((l) => l.replace(" 'privileged=False',", ''));

const imageOf = (d: KubeObject | undefined) => d?.spec?.template?.spec.containers[0]?.image;

/** The promotion records under `.state` of the environment: `<channel>/<uid>/<sha>` → record. */
async function promotionRecords(
  e: SaasEnvironment,
): Promise<Record<string, Record<string, unknown>>> {
  const dir = join(e.env.dir, '.state', 'state', 'openshift-saas-deploy', 'promotions_v2');
  const out: Record<string, Record<string, unknown>> = {};
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    const file = join(entry.parentPath, entry.name);
    const key = file.slice(dir.length + 1);
    out[key] = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
  }
  return out;
}

describe('openshift-saas-deploy end to end', () => {
  it('plans without writing, deploys the resolved commit, then has nothing to do', async () => {
    const e = await start();
    const setup = e.writes(); // the namespaces openshift-namespaces created
    const dry = await e.run([...APP, ...STAGE], { dryRun: true });
    expect(dry.code, dry.stderr).toBe(0);
    expect(applies(dry)).toEqual([
      "['apply', 'appint-ex-01', 'example-app-stage', 'Deployment', 'example-app']",
      "['apply', 'appint-ex-01', 'example-app-stage', 'Service', 'example-app-metrics']",
    ]);
    expect(e.writes()).toBe(setup);
    expect(await promotionRecords(e)).toEqual({});

    const metrics = createMetrics();
    const wet = await e.run([...APP, ...STAGE], { metrics });
    expect(wet.code, wet.stderr).toBe(0);
    // Each manifest request is counted under the original's metric name and labels.
    const manifests = (await metrics.registryGetManifest.get()).values;
    expect(manifests.map((v) => v.labels)).toEqual([
      {
        integration: 'openshift-saas-deploy',
        shard: '1',
        shard_id: '0',
        registry: e.registry.host,
      },
    ]);
    expect(manifests[0]?.value).toBeGreaterThan(0);
    const d = deployment(e, 'appint-ex-01', 'example-app-stage', 'example-app');
    expect(imageOf(d)).toBe(`${e.registry.host}/example/example-app:${e.seed.appSha.slice(0, 7)}`);
    expect(d?.spec?.replicas).toBe(1);
    expect(d?.metadata.annotations?.['qontract.caller_name']).toBe('saas-example-app');
    expect(d?.metadata.annotations?.['qontract.integration']).toBe('openshift-saas-deploy');
    // The rollout was waited for and stage published its commit.
    expect(messages(wet)).toContainEqual(expect.stringContaining("'validating'"));
    const records = await promotionRecords(e);
    const keys = Object.keys(records);
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatch(
      new RegExp(`^example-app-stage-deployed/[0-9a-f]{40}/${e.seed.appSha}$`),
    );
    expect(records[keys[0]!]).toMatchObject({
      success: true,
      has_succeeded_once: true,
      saas_file: 'saas-example-app',
    });

    const before = e.writes();
    const again = await e.run([...APP, ...STAGE]);
    expect(again.code, again.stderr).toBe(0);
    expect(applies(again)).toEqual([]);
    expect(e.writes()).toBe(before);
  });

  it('production follows stage through the promotion gate; a failed stage blocks it', async () => {
    const e = await start();
    // Nothing was published for production's commit yet: the gate refuses, nothing is applied.
    const early = await e.run([...APP, ...PRODUCTION]);
    expect(early.code).toBe(1);
    expect(messages(early, 50)).toContain('invalid promotions');
    expect(deployment(e, 'appint-ex-02', 'example-app-production', 'example-app')).toBeUndefined();

    expect((await e.run([...APP, ...STAGE])).code).toBe(0);
    const production = await e.run([...APP, ...PRODUCTION]);
    expect(production.code, production.stderr).toBe(0);
    const d = deployment(e, 'appint-ex-02', 'example-app-production', 'example-app');
    expect(imageOf(d)).toBe(`${e.registry.host}/example/example-app:${e.seed.appSha.slice(0, 7)}`);
    expect(d?.spec?.replicas).toBe(3);

    // A new commit on main whose image was never built: that stage target fails, so
    // nothing is published for the commit (as the original: a failed target has no promotion).
    const next = e.github.pushCommit('example/example-app', 'main', { 'README.md': 'v2\n' });
    const failed = await e.run([...APP, ...STAGE]);
    expect(failed.code).toBe(1);
    expect(messages(failed, 50).join('\n')).toContain(
      `Image does not exist: ${e.registry.host}/example/example-app:${next.slice(0, 7)}`,
    );
    expect(Object.keys(await promotionRecords(e)).filter((k) => k.endsWith(`/${next}`))).toEqual(
      [],
    );

    // Its image built later, promoting that commit to production is still refused by the gate.
    e.registry.pushImage('example/example-app', next.slice(0, 7));
    await editFile(join(e.env.appInterfaceDir, SAAS_DIR, 'saas-example-app.yml'), (t) =>
      t.replace(`ref: ${e.seed.appSha}`, `ref: ${next}`),
    );
    const blocked = await e.run([...APP, ...PRODUCTION]);
    expect(blocked.code).toBe(1);
    expect(messages(blocked, 50)).toContain('invalid promotions');
    expect(imageOf(deployment(e, 'appint-ex-02', 'example-app-production', 'example-app'))).toBe(
      imageOf(d),
    );
  });

  it('a stage target whose namespace does not exist yet fails after the wait: no success is published and production refuses the commit', async () => {
    const e = await start({ namespaces: false });
    const stage = await e.run([...APP, ...STAGE], {
      env: { QONTRACT_SAAS_DEPLOY_NAMESPACE_WAIT_SECONDS: '1' },
    });
    expect(stage.code).toBe(1);
    expect(messages(stage)).toContain(
      '[appint-ex-01/example-app-stage] namespace does not exist (yet). waiting...',
    );
    expect(messages(stage, 50)).toContain(
      '[appint-ex-01/example-app-stage] namespace example-app-stage does not exist after waiting 1s',
    );
    expect(messages(stage).at(-1)).toMatch(/finished: failed \(exit code 1\), [1-9]\d* error\(s\)/);
    // The failure is recorded, never a success: subscribers refuse the commit.
    expect(Object.values(await promotionRecords(e))).toEqual([
      expect.objectContaining({ success: false, has_succeeded_once: false }),
    ]);

    await createNamespaces(e.env);
    const production = await e.run([...APP, ...PRODUCTION]);
    expect(production.code).toBe(1);
    expect(messages(production, 50)).toContain('invalid promotions');
    expect(deployment(e, 'appint-ex-02', 'example-app-production', 'example-app')).toBeUndefined();

    // Once stage has really deployed the commit, production takes it.
    expect((await e.run([...APP, ...STAGE])).code).toBe(0);
    const promoted = await e.run([...APP, ...PRODUCTION]);
    expect(promoted.code, promoted.stderr).toBe(0);
    expect(deployment(e, 'appint-ex-02', 'example-app-production', 'example-app')).toBeDefined();
  });

  it('an apply waits for its namespace and goes on once openshift-namespaces has created it', async () => {
    const e = await start({ namespaces: false });
    const running = e.run([...APP, ...STAGE], {
      env: { QONTRACT_SAAS_DEPLOY_NAMESPACE_WAIT_SECONDS: '60' },
    });
    const probes = () =>
      e.env.server.requests({ cluster: 'appint-ex-01', name: 'example-app-stage', verb: 'get' })
        .length;
    await vi.waitFor(() => expect(probes()).toBeGreaterThan(0), { timeout: 30_000 });
    e.env.server.seed('appint-ex-01', [
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'example-app-stage' } },
    ]);
    const run = await running;
    expect(run.code, run.stderr).toBe(0);
    expect(deployment(e, 'appint-ex-01', 'example-app-stage', 'example-app')).toBeDefined();
    expect(Object.values(await promotionRecords(e))).toEqual([
      expect.objectContaining({ success: true }),
    ]);
  });

  it('a new commit on a moving ref redeploys; a parameter change redeploys only its target', async () => {
    const e = await start();
    expect((await e.run([...APP, ...STAGE])).code).toBe(0);
    expect((await e.run(APP)).code).toBe(0);

    const next = e.github.pushCommit('example/example-app', 'main', {
      'openshift/example-app.yaml': (
        await readFile(
          join(
            import.meta.dirname,
            '../../../../examples/repos/github/example/example-app/openshift/example-app.yaml',
          ),
          'utf8',
        )
      ).replace('value: 256Mi', 'value: 300Mi'),
    });
    e.registry.pushImage('example/example-app', next.slice(0, 7));
    const moved = await e.run([...APP, ...STAGE]);
    expect(moved.code, moved.stderr).toBe(0);
    expect(applies(moved)).toEqual([
      "['apply', 'appint-ex-01', 'example-app-stage', 'Deployment', 'example-app']",
    ]);
    expect(imageOf(deployment(e, 'appint-ex-01', 'example-app-stage', 'example-app'))).toBe(
      `${e.registry.host}/example/example-app:${next.slice(0, 7)}`,
    );

    await editFile(join(e.env.appInterfaceDir, SAAS_DIR, 'saas-example-app.yml'), (t) =>
      t.replace('REPLICAS: 3', 'REPLICAS: 2'),
    );
    const changed = await e.run(APP);
    expect(changed.code, changed.stderr).toBe(0);
    expect(applies(changed)).toEqual([
      "['apply', 'appint-ex-02', 'example-app-production', 'Deployment', 'example-app']",
    ]);
    expect(
      deployment(e, 'appint-ex-02', 'example-app-production', 'example-app')?.spec?.replicas,
    ).toBe(2);

    // `delete: true` removes what the target deployed, and only that.
    await editFile(join(e.env.appInterfaceDir, SAAS_DIR, 'saas-example-app.yml'), (t) =>
      t.replace('        ref: 4b825dc', '        delete: true\n        ref: 4b825dc'),
    );
    const deleted = await e.run(APP);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(planLines(deleted).filter((l) => l.startsWith("['delete'"))).toEqual([
      "['delete', 'privileged=False', 'appint-ex-02', 'example-app-production', 'Deployment', 'example-app']",
      "['delete', 'privileged=False', 'appint-ex-02', 'example-app-production', 'Service', 'example-app-metrics']",
    ]);
    expect(deployment(e, 'appint-ex-02', 'example-app-production', 'example-app')).toBeUndefined();
    expect(deployment(e, 'appint-ex-01', 'example-app-stage', 'example-app')).toBeDefined();
  });

  it('an invalid image or a missing secret parameter fails only its target', async () => {
    const e = await start();
    e.registry.deleteTag('example/example-worker', e.seed.workerSha.slice(0, 7));
    await editFile(join(e.env.appInterfaceDir, SAAS_DIR, 'saas-example-app.yml'), (t) =>
      t.replace(
        '        parameters:\n          REPLICAS: 1\n',
        '        parameters:\n          REPLICAS: 1\n        secretParameters:\n          - name: API_KEY\n            secret:\n              path: app-sre/example-app/missing\n              field: api_key\n',
      ),
    );
    const run = await e.run(STAGE);
    expect(run.code).toBe(1);
    const errors = messages(run, 50).join('\n');
    expect(errors).toContain(
      `[saas-example-worker/example-worker] appint-ex-01/example-app-stage: Image does not exist: ${e.registry.host}/example/example-worker:${e.seed.workerSha.slice(0, 7)}`,
    );
    expect(errors).toContain(
      'secret parameter API_KEY (app-sre/example-app/missing, field api_key)',
    );
    // Neither failed target got anything; nothing was deleted.
    expect(deployment(e, 'appint-ex-01', 'example-app-stage', 'example-worker')).toBeUndefined();
    expect(deployment(e, 'appint-ex-01', 'example-app-stage', 'example-app')).toBeUndefined();
    expect(e.env.server.mutatingRequests({ verb: 'delete' })).toEqual([]);

    // With the image back, the worker (from the GitLab repository) deploys although the app still fails.
    e.registry.pushImage('example/example-worker', e.seed.workerSha.slice(0, 7));
    const again = await e.run(STAGE);
    expect(again.code).toBe(1);
    expect(
      e.env.server
        .list('appint-ex-01', 'v1', 'ConfigMap', 'example-app-stage')
        .find((o) => (o as KubeObject).metadata.name === 'example-worker-config'),
    ).toMatchObject({ data: { concurrency: '2' } });
    expect(imageOf(deployment(e, 'appint-ex-01', 'example-app-stage', 'example-worker'))).toBe(
      `${e.registry.host}/example/example-worker:${e.seed.workerSha.slice(0, 7)}`,
    );
  });
});
