import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ExampleEnvironment } from '@qontract/testing';
import { startFakeGitHub } from '@qontract/testing/fake-github';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { runIntegrationLoop } from '../run-integration.ts';
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
  env = await start({ namespaces: true });
});

const NS = 'app-sre-observability';
const STAGE_NS = 'example-app-stage';
const CLUSTER = 'appint-ex-01';
const manager = (...args: string[]) =>
  runQontractReconcile(['--config', env.configPath, 'integrations-manager', ...args]);
const production = ['--environment-name', 'example-production'];

/** Every object the manager owns in a namespace, as `Kind/name`. */
function owned(namespace: string): string[] {
  const kinds: Array<[string, string]> = [
    ['apps/v1', 'Deployment'],
    ['apps/v1', 'StatefulSet'],
    ['batch/v1', 'CronJob'],
    ['v1', 'Service'],
  ];
  return kinds.flatMap(([apiVersion, kind]) =>
    objectNames(env, CLUSTER, apiVersion, kind, namespace).map((n) => `${kind}/${n}`),
  );
}

// biome-ignore lint/suspicious/noExplicitAny: reading plain objects of the fake API server
type Any = any;
const deployment = (name: string): Any =>
  env.server.get(CLUSTER, 'apps/v1', 'Deployment', NS, name);

const PRODUCTION_OBJECTS = [
  'Deployment/qontract-reconcile-openshift-namespaces-appint-ex-01',
  'Deployment/qontract-reconcile-openshift-namespaces-appint-ex-02',
  'Deployment/qontract-reconcile-openshift-namespaces-appint-ex-k8s',
  'StatefulSet/qontract-reconcile-openshift-resources-0',
  'StatefulSet/qontract-reconcile-openshift-resources-1',
  'CronJob/qontract-reconcile-openshift-limitranges',
  // The original's integration (not implemented here): one pod per AWS account.
  'StatefulSet/qontract-reconcile-terraform-resources-app-sre-example',
  'Service/qontract-reconcile',
];

describe('integrations-manager end to end', { timeout: 60_000 }, () => {
  it('dry-run plans the objects of its environment and writes nothing', async () => {
    env.server.resetLog();
    const dry = await manager('--dry-run', '--environment-name', 'example-production');
    expect(dry.code, dry.stderr).toBe(0);
    expect(planLines(dry)).toHaveLength(PRODUCTION_OBJECTS.length);
    expect(planLines(dry)).toContain(
      `['apply', 'privileged=False', '${CLUSTER}', '${NS}', 'StatefulSet', 'qontract-reconcile-openshift-resources-0']`,
    );
    expect(env.server.mutatingRequests()).toEqual([]);
  });

  it('creates exactly the objects of its environment, then has nothing to do', async () => {
    const wet = await manager(...production);
    expect(wet.code, wet.stderr).toBe(0);
    expect(owned(NS).sort()).toEqual([...PRODUCTION_OBJECTS].sort());
    // The stage namespace belongs to the other environment's manager.
    expect(owned(STAGE_NS)).toEqual([]);

    const shard = deployment('qontract-reconcile-openshift-namespaces-appint-ex-01');
    expect(shard.metadata.annotations).toMatchObject({
      'qontract.integration': 'integrations-manager',
      'qontract.caller_name': 'https://github.com/app-sre/qontract-reconcile',
    });
    expect(shard.spec.replicas).toBe(1);
    const env0 = Object.fromEntries(
      shard.spec.template.spec.containers[0].env.map((e: Any) => [e.name, e.value]),
    );
    expect(env0).toMatchObject({
      SHARD_KEY: 'appint-ex-01',
      INTEGRATION_NAME: 'openshift-namespaces',
      INTEGRATION_EXTRA_ARGS: ' --cluster-name appint-ex-01',
      DRY_RUN: '--dry-run',
    });
    // The disabled shard is scaled to zero.
    expect(deployment('qontract-reconcile-openshift-namespaces-appint-ex-k8s').spec.replicas).toBe(
      0,
    );
    const sts: Any = env.server.get(
      CLUSTER,
      'apps/v1',
      'StatefulSet',
      NS,
      'qontract-reconcile-openshift-resources-1',
    );
    expect(sts.spec.volumeClaimTemplates[0].spec.resources.requests.storage).toBe('2Gi');

    env.server.resetLog();
    const again = await manager(...production);
    expect(again.code, again.stderr).toBe(0);
    expect(planLines(again)).toEqual([]);
    expect(env.server.mutatingRequests()).toEqual([]);
  });

  it('the other environment deploys only its own namespace', async () => {
    const stage = await manager('--environment-name', 'example-stage');
    expect(stage.code, stage.stderr).toBe(0);
    expect(owned(STAGE_NS).sort()).toEqual([
      'Deployment/qontract-reconcile-openshift-resources',
      'Service/qontract-reconcile',
    ]);
    expect(owned(NS).sort()).toEqual([...PRODUCTION_OBJECTS].sort());
  });

  it("run-integration with the image's former environment renders the environment file's LOG_LEVEL and a dry-run pod", async () => {
    const own = await start({ namespaces: true });
    const runManager = (extra: Record<string, string>) =>
      runIntegrationLoop(
        {
          INTEGRATION_NAME: 'integrations-manager',
          INTEGRATION_EXTRA_ARGS: '--environment-name example-stage',
          CONFIG: own.configPath,
          MANAGER_DRY_RUN: '--no-dry-run',
          RUN_ONCE: '1',
          CLUSTER_REACHABILITY_TIMEOUT_SECS: '30',
          // What the image's ENV used to give every manager that did not set them.
          DRY_RUN: '',
          LOG_LEVEL: 'INFO',
          SLEEP_DURATION_SECS: '600',
          ...extra,
        },
        { io: { stdout: { write: () => true }, stderr: { write: () => true } } },
      );
    const podEnv = () => {
      const d: Any = own.server.get(
        CLUSTER,
        'apps/v1',
        'Deployment',
        STAGE_NS,
        'qontract-reconcile-openshift-resources',
      );
      return Object.fromEntries(
        d.spec.template.spec.containers[0].env.map((e: Any) => [e.name, e.value]),
      );
    };
    expect(await runManager({})).toBe(0);
    // The stage environment's parameters say LOG_LEVEL: debug; nothing says wet.
    expect(podEnv()).toMatchObject({
      DRY_RUN: '--dry-run',
      LOG_LEVEL: 'debug',
      SLEEP_DURATION_SECS: '300',
    });
    // An explicit DRY_RUN on the manager (the one it passes down) still wins, as upstream.
    expect(await runManager({ DRY_RUN: '--no-dry-run' })).toBe(0);
    expect(podEnv().DRY_RUN).toBe('--no-dry-run');
  });

  it('a bigger cache volume recreates the StatefulSet (its claim templates are immutable)', async () => {
    const file = join(env.appInterfaceDir, 'data/app-sre/integrations/openshift-resources.yml');
    await editFile(file, (t) => t.replace('storage: 2Gi', 'storage: 3Gi'));
    const run = await manager(...production);
    expect(run.code, run.stderr).toBe(0);
    for (const i of [0, 1]) {
      const sts: Any = env.server.get(
        CLUSTER,
        'apps/v1',
        'StatefulSet',
        NS,
        `qontract-reconcile-openshift-resources-${i}`,
      );
      expect(sts.spec.volumeClaimTemplates[0].spec.resources.requests.storage).toBe('3Gi');
    }
    env.server.resetLog();
    const again = await manager(...production);
    expect(planLines(again)).toEqual([]);
    expect(env.server.mutatingRequests()).toEqual([]);
  });

  it('a new cluster adds a per-openshift-cluster shard; disabling the integration there removes it', async () => {
    const cluster = (name: string, extra = '') =>
      [
        '---',
        '$schema: /openshift/cluster-1.yml',
        'labels: {}',
        `name: ${name}`,
        'description: a cluster added later',
        'serverUrl: https://127.0.0.1:1',
        'consoleUrl: https://console.example.com',
        'prometheusUrl: https://prometheus.example.com',
        'alertmanagerUrl: https://alertmanager.example.com',
        'elbFQDN: elb.example.com',
        'internal: false',
        'auth: []',
        extra,
      ].join('\n');
    const file = join(env.appInterfaceDir, 'data/openshift/appint-ex-03.yml');
    await writeFile(file, cluster('appint-ex-03'));
    const added = await manager(...production);
    expect(added.code, added.stderr).toBe(0);
    expect(planLines(added)).toEqual([
      `['apply', 'privileged=False', '${CLUSTER}', '${NS}', 'Deployment', 'qontract-reconcile-openshift-namespaces-appint-ex-03']`,
    ]);
    expect(deployment('qontract-reconcile-openshift-namespaces-appint-ex-03').spec.replicas).toBe(
      1,
    );

    await writeFile(
      file,
      cluster('appint-ex-03', 'disable:\n  integrations:\n    - openshift-namespaces\n'),
    );
    const removed = await manager(...production);
    expect(removed.code, removed.stderr).toBe(0);
    expect(planLines(removed)).toEqual([
      `['delete', 'privileged=False', '${CLUSTER}', '${NS}', 'Deployment', 'qontract-reconcile-openshift-namespaces-appint-ex-03']`,
    ]);
    expect(owned(NS).sort()).toEqual([...PRODUCTION_OBJECTS].sort());
  });

  it('managers of two upstreams share a namespace, each seeing only its own objects', async () => {
    const fork = 'https://example.com/fork/qontract-reconcile';
    await writeFile(
      join(env.appInterfaceDir, 'data/app-sre/integrations/fork-only.yml'),
      [
        '---',
        '$schema: /app-sre/integration-1.yml',
        'labels: {}',
        'name: fork-only',
        'description: an integration of another upstream (not in this CLI)',
        `upstream: ${fork}`,
        'schemas:',
        '  - /app-interface/app-interface-settings-1.yml',
        '  - /app-sre/integration-1.yml',
        '  - /openshift/namespace-1.yml',
        'managed:',
        '  - namespace:',
        '      $ref: /openshift/appint-ex-01/namespaces/app-sre-observability.yml',
        '    spec:',
        '      resources: { requests: { cpu: 10m, memory: 64Mi }, limits: { memory: 128Mi } }',
        '',
      ].join('\n'),
    );
    const forkRun = await manager(...production, '--upstream', fork);
    expect(forkRun.code, forkRun.stderr).toBe(0);
    // Its own objects only: nothing of the other upstream is deleted. The chart of each
    // upstream renders the Service; the other manager's holds the name, so the fork's leaves
    // it alone (the original's would apply over it, and the other one back, on every run).
    expect(planLines(forkRun)).toEqual([
      `['apply', 'privileged=False', '${CLUSTER}', '${NS}', 'Deployment', 'qontract-reconcile-fork-only']`,
    ]);
    expect(messages(forkRun)).toContain(
      `Service/qontract-reconcile in ${CLUSTER}/${NS} is held by another caller (https://github.com/app-sre/qontract-reconcile): left alone`,
    );
    expect(owned(NS)).toEqual(expect.arrayContaining(PRODUCTION_OBJECTS));
  });

  it("a mixed fleet: our manager and the original's each deploy their own integrations and never write the other's objects", async () => {
    // The original's integrations-manager cannot run here (Python, helm and oc): this
    // project's manager plays its role, run as the original's is for its integrations:
    // `--upstream` its repository, the original's image (the chart's default IMAGE).
    const own = await start({ namespaces: true });
    const ORIGINAL = 'https://github.com/app-sre/qontract-reconcile';
    const OURS = 'https://github.com/app-sre/qontract-reconcile-ts';
    const run = (upstream: string, ...extra: string[]) =>
      runQontractReconcile([
        '--config',
        own.configPath,
        'integrations-manager',
        ...production,
        '--upstream',
        upstream,
        ...extra,
      ]);
    const ours = () => run(OURS, '--image', 'quay.io/example/qontract-reconcile-ts');
    const original = () => run(ORIGINAL);
    const get = (kind: string, name: string): Any =>
      own.server.get(CLUSTER, kind === 'CronJob' ? 'batch/v1' : 'apps/v1', kind, NS, name);
    const mutated = () => own.server.mutatingRequests().map((r) => r.name);

    const first = await ours();
    expect(first.code, first.stderr).toBe(0);
    const OUR_OBJECTS = PRODUCTION_OBJECTS.filter((o) => !o.includes('terraform-resources'));
    expect(planLines(first)).toHaveLength(OUR_OBJECTS.length);
    expect(objectNames(own, CLUSTER, 'apps/v1', 'StatefulSet', NS)).not.toContain(
      'qontract-reconcile-terraform-resources-app-sre-example',
    );

    own.server.resetLog();
    const theirs = await original();
    expect(theirs.code, theirs.stderr).toBe(0);
    // Only its integration: per AWS account with the original's --account-name, on the
    // original's image. The namespace's Service is our manager's: left alone.
    expect(planLines(theirs)).toEqual([
      `['apply', 'privileged=False', '${CLUSTER}', '${NS}', 'StatefulSet', 'qontract-reconcile-terraform-resources-app-sre-example']`,
    ]);
    expect(mutated()).toEqual(['qontract-reconcile-terraform-resources-app-sre-example']);
    const tf = get('StatefulSet', 'qontract-reconcile-terraform-resources-app-sre-example');
    const int = tf.spec.template.spec.containers[0];
    expect(int.image).toBe('quay.io/app-sre/qontract-reconcile:latest');
    expect(Object.fromEntries(int.env.map((e: Any) => [e.name, e.value]))).toMatchObject({
      INTEGRATION_NAME: 'terraform-resources',
      INTEGRATION_EXTRA_ARGS: '--light --account-name app-sre-example',
      SHARD_KEY: 'app-sre-example',
    });
    expect(tf.metadata.annotations['qontract.caller_name']).toBe(ORIGINAL);
    const ourShard = get('Deployment', 'qontract-reconcile-openshift-namespaces-appint-ex-01');
    expect(ourShard.spec.template.spec.containers[0].image).toBe(
      'quay.io/example/qontract-reconcile-ts:latest',
    );
    expect(ourShard.metadata.annotations['qontract.caller_name']).toBe(OURS);

    // Each again: nothing to do for either, nothing written.
    own.server.resetLog();
    for (const again of [await ours(), await original()]) {
      expect(again.code, again.stderr).toBe(0);
      expect(planLines(again)).toEqual([]);
    }
    expect(own.server.mutatingRequests()).toEqual([]);

    // Switching a family back to the original: openshift-limitranges' file names the
    // original's upstream. The original's manager waits for ours to let the CronJob go.
    const file = join(own.appInterfaceDir, 'data/app-sre/integrations/openshift-limitranges.yml');
    await editFile(file, (t) => t.replace(`upstream: ${OURS}`, `upstream: ${ORIGINAL}`));
    const waiting = await original();
    expect(waiting.code, waiting.stderr).toBe(0);
    expect(planLines(waiting)).toEqual([]);
    expect(messages(waiting)).toContain(
      `CronJob/qontract-reconcile-openshift-limitranges in ${CLUSTER}/${NS} is held by another caller (${OURS}): left alone`,
    );
    const released = await ours();
    expect(planLines(released)).toEqual([
      `['delete', 'privileged=False', '${CLUSTER}', '${NS}', 'CronJob', 'qontract-reconcile-openshift-limitranges']`,
    ]);
    const taken = await original();
    expect(planLines(taken)).toEqual([
      `['apply', 'privileged=False', '${CLUSTER}', '${NS}', 'CronJob', 'qontract-reconcile-openshift-limitranges']`,
    ]);
    expect(
      get('CronJob', 'qontract-reconcile-openshift-limitranges').metadata.annotations[
        'qontract.caller_name'
      ],
    ).toBe(ORIGINAL);
  });

  it('bad managed data is an error naming the file, exit 1, nothing deleted', async () => {
    const file = join(env.appInterfaceDir, 'data/app-sre/integrations/openshift-limitranges.yml');
    // openshift-limitranges has no --cluster-name: it cannot be sharded per cluster.
    await editFile(file, (t) =>
      t
        .replace('      cron: "*/10 * * * *"\n', '')
        .concat('    sharding:\n      strategy: per-openshift-cluster\n'),
    );
    env.server.resetLog();
    const bad = await manager(...production);
    expect(bad.code).toBe(1);
    expect(messages(bad, 50).join('\n')).toMatch(
      /\/app-sre\/integrations\/openshift-limitranges\.yml: .*does not support the argument --cluster-name/,
    );
    expect(env.server.mutatingRequests()).toEqual([]);
    expect(owned(NS)).toContain('CronJob/qontract-reconcile-openshift-limitranges');

    // An unknown strategy is refused by the integration file's schema when app-interface loads.
    await editFile(file, (t) => t.replace('strategy: per-openshift-cluster', 'strategy: per-moon'));
    const unknown = await manager(...production);
    expect(unknown.code).toBe(1);
    expect(messages(unknown, 50).join('\n')).toMatch(
      /\/app-sre\/integrations\/openshift-limitranges\.yml: .*strategy/,
    );
    expect(env.server.mutatingRequests()).toEqual([]);
  });

  it('deletes the objects of an integration no longer managed', async () => {
    const file = join(env.appInterfaceDir, 'data/app-sre/integrations/openshift-limitranges.yml');
    await editFile(file, (t) => t.slice(0, t.indexOf('\n# Where integrations-manager')) + '\n');
    const run = await manager(...production);
    expect(run.code, run.stderr).toBe(0);
    expect(planLines(run)).toEqual([
      `['delete', 'privileged=False', '${CLUSTER}', '${NS}', 'CronJob', 'qontract-reconcile-openshift-limitranges']`,
    ]);
    expect(owned(NS)).not.toContain('CronJob/qontract-reconcile-openshift-limitranges');
  });

  it("--image-tag-from-ref: IMAGE_TAG is the ref's commit on GitHub; an unknown ref refuses the namespace", async () => {
    const own = await start({ namespaces: true });
    const github = await startFakeGitHub({ token: 'ghp_example_token_not_real' });
    onTestFinished(() => github.close());
    github.addCommit(
      'app-sre/qontract-reconcile',
      'main',
      '0123456789abcdef0123456789abcdef01234567',
    );
    const run = (ref: string) =>
      runQontractReconcile(
        [
          '--config',
          own.configPath,
          'integrations-manager',
          ...production,
          '--image-tag-from-ref',
          `example-production=${ref}`,
        ],
        { GITHUB_API: github.url },
      );
    const ok = await run('main');
    expect(ok.code, ok.stderr).toBe(0);
    const d: Any = own.server.get(
      CLUSTER,
      'apps/v1',
      'Deployment',
      NS,
      'qontract-reconcile-openshift-namespaces-appint-ex-01',
    );
    // hashLength of app-interface settings: 7.
    expect(d.spec.template.spec.containers[0].image).toBe(
      'quay.io/app-sre/qontract-reconcile:0123456',
    );
    expect(ok.stderr).not.toContain('ghp_example_token_not_real');

    own.server.resetLog();
    const unknown = await run('no-such-branch');
    expect(unknown.code).toBe(1);
    expect(messages(unknown, 50).join('\n')).toContain(
      `[/openshift/appint-ex-01/namespaces/${NS}.yml] cannot resolve app-sre/qontract-reconcile@no-such-branch (--image-tag-from-ref example-production=no-such-branch) to a commit: HTTP 422`,
    );
    expect(own.server.mutatingRequests()).toEqual([]);
  });
});
