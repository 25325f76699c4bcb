import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  messages,
  objectNames,
  planLines,
  runQontractReconcile,
  useExampleEnvironment,
} from './harness.ts';

const start = useExampleEnvironment();

describe('openshift-namespaces end to end (examples/ against simulated clusters)', () => {
  it('plans in dry-run without writing, converges in a wet run, and then has nothing to do', async () => {
    const env = await start();
    const { server, configPath } = env;
    server.seed('appint-ex-02', [
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'example-app-legacy' } },
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'not-in-app-interface' } },
    ]);

    const dry = await runQontractReconcile([
      '--config',
      configPath,
      '--dry-run',
      'openshift-namespaces',
    ]);
    expect(dry.code).toBe(0);
    expect(messages(dry)).toEqual(
      expect.arrayContaining([
        "['create', 'appint-ex-01', 'app-sre-observability']",
        "['create', 'appint-ex-01', 'app-sre-pipelines']",
        "['create', 'appint-ex-01', 'example-app-stage']",
        "['create', 'appint-ex-02', 'example-app-production']",
        "['create', 'appint-ex-k8s', 'example-app-edge']",
        "['delete', 'appint-ex-02', 'example-app-legacy']",
      ]),
    );
    expect(dry.logs.every((l) => l.dry_run === true)).toBe(true);
    expect(server.mutatingRequests()).toEqual([]);

    const wet = await runQontractReconcile(['--config', configPath, 'openshift-namespaces']);
    expect(wet.code).toBe(0);
    expect(objectNames(env, 'appint-ex-01', 'v1', 'Namespace')).toEqual(
      expect.arrayContaining(['app-sre-observability', 'app-sre-pipelines', 'example-app-stage']),
    );
    // The API server finishes a namespace's deletion a moment after answering the DELETE.
    await expect
      .poll(() => objectNames(env, 'appint-ex-02', 'v1', 'Namespace'))
      .not.toContain('example-app-legacy');
    const ex02 = objectNames(env, 'appint-ex-02', 'v1', 'Namespace');
    expect(ex02).toContain('example-app-production');
    expect(ex02).toContain('not-in-app-interface');
    expect(objectNames(env, 'appint-ex-k8s', 'v1', 'Namespace')).toContain('example-app-edge');
    // OpenShift clusters get a ProjectRequest (as `oc new-project`), plain Kubernetes a Namespace.
    expect(
      server.mutatingRequests({ cluster: 'appint-ex-01', verb: 'create' }).map((r) => r.resource),
    ).toEqual(['projectrequests', 'projectrequests', 'projectrequests']);
    expect(
      server.mutatingRequests({ cluster: 'appint-ex-k8s', verb: 'create' }).map((r) => r.resource),
    ).toEqual(['namespaces']);

    server.resetLog();
    const again = await runQontractReconcile(['--config', configPath, 'openshift-namespaces']);
    expect(again.code).toBe(0);
    expect(server.mutatingRequests()).toEqual([]);
    expect(planLines(again)).toEqual([]);
  });

  it('reports duplicate definitions, exits 1 and deletes nothing', async () => {
    const env = await start();
    const { server, configPath, appInterfaceDir } = env;
    server.seed('appint-ex-02', [
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'example-app-legacy' } },
    ]);
    await writeFile(
      join(appInterfaceDir, 'data/services/example-app/namespaces/example-app-production-copy.yml'),
      [
        '---',
        '$schema: /openshift/namespace-1.yml',
        'labels: {}',
        'name: example-app-production',
        'description: an accidental second definition',
        'cluster:',
        '  $ref: /openshift/appint-ex-02/cluster.yml',
        'app:',
        '  $ref: /services/example-app/app.yml',
        'environment:',
        '  $ref: /products/example/environments/production.yml',
        '',
      ].join('\n'),
    );
    const run = await runQontractReconcile(['--config', configPath, 'openshift-namespaces']);
    expect(run.code).toBe(1);
    expect(messages(run, 50)).toContainEqual(
      expect.stringMatching(
        /^Found multiple definitions for the namespace appint-ex-02\/example-app-production: \/.*\.yml, \/.*\.yml$/,
      ),
    );
    expect(messages(run, 50)).toContain(
      "'delete' action is disabled due to previous errors (1 held back).",
    );
    expect(objectNames(env, 'appint-ex-02', 'v1', 'Namespace')).toContain('example-app-legacy');
    expect(server.mutatingRequests({ verb: 'delete' })).toEqual([]);
    // The other namespaces are still created.
    expect(objectNames(env, 'appint-ex-01', 'v1', 'Namespace')).toContain('example-app-stage');
  });

  it('goes on with the other clusters when one is unreachable, and exits 1', async () => {
    const env = await start({ down: ['appint-ex-02'] });
    const run = await runQontractReconcile(['--config', env.configPath, 'openshift-namespaces']);
    expect(run.code).toBe(1);
    expect(messages(run, 50).some((m) => m.startsWith('[appint-ex-02] is unreachable'))).toBe(true);
    expect(objectNames(env, 'appint-ex-01', 'v1', 'Namespace')).toContain('example-app-stage');
    expect(objectNames(env, 'appint-ex-k8s', 'v1', 'Namespace')).toContain('example-app-edge');
  });

  it("creates a cluster's namespaces while a slower cluster is still listed; deletes wait for it", async () => {
    const env = await start();
    const { server, configPath } = env;
    server.seed('appint-ex-02', [
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'example-app-legacy' } },
    ]);
    server.faults.set('appint-ex-k8s', { verb: 'list', resource: 'namespaces', latencyMs: 700 });
    server.resetLog();
    const run = await runQontractReconcile(['--config', configPath, 'openshift-namespaces']);
    expect(run.code).toBe(0);
    // The request log is in the order the fake answered.
    const order = server
      .requests()
      .filter((r) => r.verb === 'list' || r.verb === 'create' || r.verb === 'delete')
      .map((r) => `${r.cluster} ${r.verb}`);
    const at = (entry: string) => {
      expect(order).toContain(entry);
      return order.indexOf(entry);
    };
    // appint-ex-01's namespaces are created while appint-ex-k8s is still being listed; the
    // deletion on appint-ex-02 waits for that list and for every create.
    expect(at('appint-ex-01 create')).toBeLessThan(at('appint-ex-k8s list'));
    expect(at('appint-ex-02 delete')).toBeGreaterThan(at('appint-ex-k8s list'));
    expect(at('appint-ex-02 delete')).toBeGreaterThan(order.lastIndexOf('appint-ex-k8s create'));
    await expect
      .poll(() => objectNames(env, 'appint-ex-02', 'v1', 'Namespace'))
      .not.toContain('example-app-legacy');
  });

  it('honours --cluster-name and --namespace-name', async () => {
    const env = await start();
    const run = await runQontractReconcile([
      '--config',
      env.configPath,
      'openshift-namespaces',
      '--cluster-name',
      'appint-ex-01',
      '--namespace-name',
      'example-app-stage',
    ]);
    expect(run.code).toBe(0);
    expect(env.server.mutatingRequests().map((r) => `${r.cluster}/${r.resource}`)).toEqual([
      'appint-ex-01/projectrequests',
    ]);
  });
});
