import { existsSync } from 'node:fs';
import { appendFile, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { type FakeSlack, startFakeSlack } from '@qontract/testing/fake-slack';
import { afterEach, describe, expect, it } from 'vitest';
import { editFile, messages, planLines } from './harness.ts';
import { type SaasEnvironment, stateFiles, useSaasEnvironment } from './saas-environment.ts';

// What a deploy does besides applying: `compare: false`, the Slack notifications and
// the `--io-dir` files of a deploy triggered by an upstream job or an image.

const start = useSaasEnvironment();

const APP = ['--saas-file-name', 'saas-example-app'];
const STAGE = ['--env-name', 'example-stage'];
const SAAS_FILE = 'data/services/example-app/cicd/saas-example-app.yml';

describe('openshift-saas-deploy: compare: false', () => {
  it('re-applies every unchanged object in a wet run; a dry-run still compares', async () => {
    const e = await start();
    expect((await e.run([...APP, ...STAGE])).code).toBe(0);
    await editFile(join(e.env.appInterfaceDir, SAAS_FILE), (t) =>
      t.replace('managedResourceTypes:', 'compare: false\nmanagedResourceTypes:'),
    );
    const applies = () =>
      e.env.server.mutatingRequests({ cluster: 'appint-ex-01', verb: 'apply' }).length;

    const before = applies();
    const dry = await e.run([...APP, ...STAGE], { dryRun: true });
    expect(dry.code, dry.stderr).toBe(0);
    expect(planLines(dry).filter((l) => l.startsWith("['apply'"))).toEqual([]);
    expect(applies()).toBe(before);

    const wet = await e.run([...APP, ...STAGE]);
    expect(wet.code, wet.stderr).toBe(0);
    // The Deployment and the Service, both unchanged, are applied again.
    expect(planLines(wet).filter((l) => l.startsWith("['apply'"))).toEqual([
      "['apply', 'privileged=False', 'appint-ex-01', 'example-app-stage', 'Deployment', 'example-app']",
      "['apply', 'privileged=False', 'appint-ex-01', 'example-app-stage', 'Service', 'example-app-metrics']",
    ]);
    expect(applies() - before).toBe(2);
  });
});

const WORKSPACE = 'data/dependencies/slack/example.yml';
const CONSOLE =
  'https://console.appint-ex-01.example.com/k8s/ns/app-sre-pipelines/tekton.dev~v1~Pipeline/o-openshift-saas-deploy-saas-example-app/Runs?name=';
const GRAFANA =
  'https://grafana.example.com/d/saas?var-cluster=appint-ex-01&var-namespace=app-sre-pipelines&var-pipeline=o-openshift-saas-deploy-saas-example-app&var-pipelinerun=';

/**
 * The saas file notifies the example workspace (`extra` lines added to its `slack`),
 * whose `openshift-saas-deploy` entry holds the token the fake Slack accepts.
 */
async function withSlack(
  e: SaasEnvironment,
  o: { extra?: string; skipSuccess?: boolean; channel?: boolean } = {},
): Promise<FakeSlack> {
  const slack = await startFakeSlack({
    channels: o.channel === false ? [] : [{ id: 'C0DEPLOYS', name: 'example-deploys' }],
  });
  slacks.push(slack);
  await appendFile(e.env.configPath, `\n[slack.example]\ndeploy-token = "${slack.token}"\n`);
  await editFile(join(e.env.appInterfaceDir, WORKSPACE), (t) =>
    t.replace(
      'managedUsergroups:',
      [
        'integrations:',
        '  - name: openshift-saas-deploy',
        '    token: { path: slack/example, field: deploy-token }',
        "    channel: '#sd-app-sre-info'",
        "    icon_emoji: ':rocket:'",
        '    username: saas-deploy',
        'managedUsergroups:',
      ].join('\n'),
    ),
  );
  await editFile(join(e.env.appInterfaceDir, SAAS_FILE), (t) =>
    t.replace(
      'managedResourceTypes:',
      [
        ...(o.skipSuccess ? ['skipSuccessfulDeployNotifications: true'] : []),
        'slack:',
        '  workspace: { $ref: /dependencies/slack/example.yml }',
        "  channel: '#example-deploys'",
        ...(o.extra ? [o.extra] : []),
        'managedResourceTypes:',
      ].join('\n'),
    ),
  );
  return slack;
}

/** The `promotions_v2` records the deploy published, parsed. */
async function promotionRecords(e: SaasEnvironment): Promise<unknown[]> {
  const files = await stateFiles(e, 'openshift-saas-deploy');
  return Object.entries(files)
    .filter(([key]) => key.startsWith('promotions_v2/'))
    .map(([, content]) => JSON.parse(content) as unknown);
}

const slacks: FakeSlack[] = [];
afterEach(async () => {
  await Promise.all(slacks.splice(0).map((s) => s.close()));
});

const TRIGGER = [
  '--trigger-integration',
  'openshift-saas-deploy-trigger-configs',
  '--trigger-reason',
  'https://github.com/example/example-app/commit/0123abc',
  '--pipelinerun-name',
  'saas-example-app-example-stage-x7k2p',
  '--grafana-saas-deploy-url',
  'https://grafana.example.com/d/saas/',
];

describe('openshift-saas-deploy: Slack notifications', () => {
  it('posts the start, the events and the result of a wet run; a dry-run posts nothing', async () => {
    const e = await start();
    const slack = await withSlack(e, {
      extra: '  output: events\n  notifications: { start: true }',
    });
    const env = { SLACK_API_URL: slack.apiUrl };

    const dry = await e.run([...APP, ...STAGE, ...TRIGGER], { dryRun: true, env });
    expect(dry.code, dry.stderr).toBe(0);
    expect(slack.writeCount()).toBe(0);

    const wet = await e.run([...APP, ...STAGE, ...TRIGGER], { env });
    expect(wet.code, wet.stderr).toBe(0);
    const head = [
      '*SaaS File:* `saas-example-app`',
      '*Deployment to environment:* `example-stage`',
      '*Triggered by:* openshift-saas-deploy-trigger-configs',
      '*Reason:* https://github.com/example/example-app/commit/0123abc',
      `<${CONSOLE}saas-example-app-example-stage|PipelineRun> | <${GRAFANA}saas-example-app-example-stage-x7k2p|Logs>`,
    ];
    expect(slack.messages.map((m) => m.text)).toEqual([
      [':yellow_jenkins_circle: *SaaS deploy: In Progress*', ...head].join('\n'),
      '[appint-ex-01] Deployment example-app applied',
      '[appint-ex-01] Service example-app-metrics applied',
      [':green_jenkins_circle: *SaaS deploy: Success*', ...head].join('\n'),
    ]);
    expect(slack.messages[0]).toMatchObject({
      channel: 'C0DEPLOYS',
      fields: { channel: '#example-deploys', icon_emoji: ':rocket:', username: 'saas-deploy' },
    });
    for (const run of [dry, wet]) {
      expect(run.stdout + run.stderr).not.toContain(slack.token);
    }
  });

  it('a refused deploy posts its failure; skipSuccessfulDeployNotifications says so at the start', async () => {
    const e = await start();
    const slack = await withSlack(e, {
      skipSuccess: true,
      extra: '  notifications: { start: true }',
    });
    const env = { SLACK_API_URL: slack.apiUrl };
    // Production before stage deployed: the promotion gate refuses.
    const refused = await e.run([...APP, '--env-name', 'example-production'], { env });
    expect(refused.code).toBe(1);
    const link = `<${CONSOLE}saas-example-app-example-production|PipelineRun>`;
    const head = [
      '*SaaS File:* `saas-example-app`',
      '*Deployment to environment:* `example-production`',
      link,
    ];
    expect(slack.messages.map((m) => m.text)).toEqual([
      [
        ':yellow_jenkins_circle: *SaaS deploy: In Progress*',
        ...head,
        'There will not be a notice for success.',
      ].join('\n'),
      [':red_jenkins_circle: *SaaS deploy: Failure*', ...head].join('\n'),
    ]);

    // A successful deploy then says nothing at its end.
    const before = slack.messages.length;
    const ok = await e.run([...APP, ...STAGE], { env });
    expect(ok.code, ok.stderr).toBe(0);
    expect(slack.messages.slice(before).map((m) => m.text.split('\n')[0])).toEqual([
      ':yellow_jenkins_circle: *SaaS deploy: In Progress*',
    ]);
    expect(messages(ok)).toContain(
      'Skipping Slack notification for saas-example-app to example-stage because deploy was successful.',
    );
  });

  it('a Slack failure fails the run without hiding the deploy: applied and published with success', async () => {
    const e = await start();
    const slack = await withSlack(e, { channel: false, extra: '  notifications: { start: true }' });
    const run = await e.run([...APP, ...STAGE], { env: { SLACK_API_URL: slack.apiUrl } });
    expect(run.code).toBe(1);
    expect(messages(run, 50)).toEqual([
      '[slack #example-deploys] posting the start notification failed: An API error occurred: channel_not_found',
      '[slack #example-deploys] posting the result notification failed: An API error occurred: channel_not_found',
    ]);
    expect(
      e.env.server.mutatingRequests({ cluster: 'appint-ex-01', kind: 'Deployment' }).length,
    ).toBeGreaterThan(0);
    expect(await promotionRecords(e)).toEqual([expect.objectContaining({ success: true })]);
    expect(run.stdout + run.stderr).not.toContain(slack.token);
  });
});

describe('openshift-saas-deploy: --io-dir outputs of a deploy a new build triggered', () => {
  it('writes sast, clamav and dockerconfigjson (0600) as the original; not in dry-run nor for other triggers', async () => {
    const e = await start();
    await appendFile(
      e.env.configPath,
      '\n[app-sre.example-app.registry]\nuser = "robot"\ntoken = "registry-token-not-real"\nurl = "quay.example.com"\n',
    );
    await editFile(join(e.env.appInterfaceDir, SAAS_FILE), (t) =>
      t.replace(
        'managedResourceTypes:',
        'authentication:\n  image: { path: app-sre/example-app/registry, field: all }\nmanagedResourceTypes:',
      ),
    );
    const sha = e.seed.appSha;
    const image = `${e.registry.host}/example/example-app:${sha.slice(0, 7)}`;
    const triggered = (ioDir: string, integration = 'openshift-saas-deploy-trigger-images') => [
      ...APP,
      ...STAGE,
      '--io-dir',
      ioDir,
      '--trigger-integration',
      integration,
      '--trigger-reason',
      `https://github.com/example/example-app/commit/${sha} build ${image}`,
    ];
    const dryDir = join(e.env.dir, 'dry-io');
    const dry = await e.run(triggered(dryDir), { dryRun: true });
    expect(dry.code, dry.stderr).toBe(0);
    expect(existsSync(dryDir)).toBe(false);

    const configsDir = join(e.env.dir, 'configs-io');
    const configs = await e.run(triggered(configsDir, 'openshift-saas-deploy-trigger-configs'));
    expect(configs.code, configs.stderr).toBe(0);
    expect(existsSync(configsDir)).toBe(false);

    const ioDir = join(e.env.dir, 'io');
    const run = await e.run(triggered(ioDir));
    expect(run.code, run.stderr).toBe(0);
    expect(await readFile(join(ioDir, 'sast'), 'utf8')).toBe(
      [
        `example-example-app-${sha}.tar.gz`,
        `${new URL(e.github.url).origin}/_codeload/example/example-app/legacy.tar.gz/${sha}`,
        'alice@example.com',
        '',
      ].join('\n'),
    );
    expect(await readFile(join(ioDir, 'clamav'), 'utf8')).toBe(`${image}\nexample-app\n`);
    const auth = Buffer.from('robot:registry-token-not-real').toString('base64');
    expect(await readFile(join(ioDir, 'dockerconfigjson'), 'utf8')).toBe(
      `{\n  "auths": {\n    "quay.example.com": {\n      "auth": "${auth}"\n    }\n  }\n}`,
    );
    expect((await stat(join(ioDir, 'dockerconfigjson'))).mode & 0o777).toBe(0o600);
    expect(run.stdout + run.stderr).not.toContain(auth);
    expect(run.stdout + run.stderr).not.toContain('registry-token-not-real');
  });
});

const JOB_TEMPLATE = `apiVersion: template.openshift.io/v1
kind: Template
metadata:
  name: example-app-migrate
parameters:
  - name: IMAGE
    required: true
  - name: IMAGE_TAG
    required: true
objects:
  - apiVersion: batch/v1
    kind: Job
    metadata:
      name: example-app-migrate
    spec:
      backoffLimit: 0
      template:
        spec:
          restartPolicy: Never
          containers:
            - name: migrate
              image: \${IMAGE}:\${IMAGE_TAG}
            - name: report
              image: \${IMAGE}:\${IMAGE_TAG}
`;

describe('openshift-saas-deploy: publishJobLogs', () => {
  const JOB = 'example-app-migrate';
  const POD = `${JOB}-x7k2p`;
  const NS = 'example-app-stage';

  /**
   * The saas file gets a resource template deploying a Job (two containers) to
   * stage, from a repository of its own; `publishJobLogs` as given. Nothing runs
   * pods in the fake: the job's pod is seeded, running, with the Job's labels.
   */
  async function withJob(
    e: SaasEnvironment,
    publishJobLogs: boolean | undefined,
    phase = 'Running',
    o: { template?: string; kind?: string } = {},
  ) {
    e.github.addRepo('example', 'example-migrations');
    e.github.pushCommit('example/example-migrations', 'main', {
      'openshift/migrate.yaml': o.template ?? JOB_TEMPLATE,
    });
    await editFile(join(e.env.appInterfaceDir, SAAS_FILE), (t) =>
      t
        .replace(
          'managedResourceTypes:\n  - Deployment',
          `${publishJobLogs === undefined ? '' : `publishJobLogs: ${publishJobLogs}\n`}managedResourceTypes:\n  - ${o.kind ?? 'Job'}\n  - Deployment`,
        )
        .replace(
          'resourceTemplates:\n',
          [
            'resourceTemplates:',
            '  - name: example-app-migrate',
            '    url: https://github.com/example/example-migrations',
            '    path: /openshift/migrate.yaml',
            '    parameters:',
            `      IMAGE_TAG: ${e.seed.appSha.slice(0, 7)}`,
            '    targets:',
            '      - namespace:',
            '          $ref: /services/example-app/namespaces/example-app-stage.yml',
            '        ref: main',
            '',
          ].join('\n'),
        ),
    );
    const labels = { 'job-name': JOB, 'batch.kubernetes.io/job-name': JOB };
    e.env.server.seed('appint-ex-01', [
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: POD, namespace: NS, labels },
        spec: {
          restartPolicy: 'Never',
          containers: [
            { name: 'migrate', image: 'x' },
            { name: 'report', image: 'x' },
          ],
        },
        status: { phase },
      },
    ]);
    e.env.server.appendPodLog('appint-ex-01', NS, POD, 'migrate', 'migrating: 3 steps');
    e.env.server.appendPodLog('appint-ex-01', NS, POD, 'report', 'report: waiting');
  }

  const follows = (e: SaasEnvironment) =>
    e.env.server
      .requests({ cluster: 'appint-ex-01', name: POD })
      .filter((r) => r.subresource === 'log' && r.path.includes('follow=true')).length;

  it('writes <io-dir>/<job> with both containers lines, followed until they end; dry-run writes nothing', async () => {
    const e = await start();
    await withJob(e, true);
    const ioDir = join(e.env.dir, 'io');

    const dry = await e.run([...APP, ...STAGE, '--io-dir', ioDir], { dryRun: true });
    expect(dry.code, dry.stderr).toBe(0);
    expect(existsSync(ioDir)).toBe(false);
    expect(follows(e)).toBe(0);

    const running = e.run([...APP, ...STAGE, '--io-dir', ioDir]);
    // The deploy follows both containers of the running pod; they go on writing, then end.
    for (let i = 0; i < 600 && follows(e) < 2; i++) await new Promise((r) => setTimeout(r, 20));
    expect(follows(e)).toBe(2);
    const server = e.env.server;
    server.appendPodLog('appint-ex-01', NS, POD, 'migrate', ['step 1', 'step 2', 'step 3']);
    server.endContainer('appint-ex-01', NS, POD, 'migrate');
    server.appendPodLog('appint-ex-01', NS, POD, 'report', 'report: 3 steps done');
    server.endContainer('appint-ex-01', NS, POD, 'report');
    const wet = await running;
    expect(wet.code, wet.stderr).toBe(0);
    expect(messages(wet)).toEqual(
      expect.arrayContaining([
        `['collecting', 'appint-ex-01', '${NS}', 'Job', '${JOB}']`,
        `waiting for job to run: ${JOB}`,
      ]),
    );
    const lines = (await readFile(join(ioDir, JOB), 'utf8')).split('\n');
    expect(lines.pop()).toBe('');
    expect([...lines].sort()).toEqual([
      'migrating: 3 steps',
      'report: 3 steps done',
      'report: waiting',
      'step 1',
      'step 2',
      'step 3',
    ]);
    expect(lines.filter((l) => l.startsWith('step') || l.startsWith('migrating'))).toEqual([
      'migrating: 3 steps',
      'step 1',
      'step 2',
      'step 3',
    ]);
    // The job's output goes to the file only.
    expect(wet.stdout + wet.stderr).not.toContain('step 2');
  });

  it('without publishJobLogs no log is read nor written', async () => {
    const e = await start();
    await withJob(e, undefined);
    const ioDir = join(e.env.dir, 'io');
    const wet = await e.run([...APP, ...STAGE, '--io-dir', ioDir]);
    expect(wet.code, wet.stderr).toBe(0);
    expect(e.env.server.mutatingRequests({ kind: 'Job' })).toHaveLength(1);
    expect(existsSync(join(ioDir, JOB))).toBe(false);
    expect(follows(e)).toBe(0);
  });

  it('a job whose pod never runs is an error (exit 1) that leaves the deploy applied', async () => {
    const e = await start();
    await withJob(e, true, 'Pending');
    const ioDir = join(e.env.dir, 'io');
    const wet = await e.run([...APP, ...STAGE, '--io-dir', ioDir], {
      env: { QONTRACT_SAAS_DEPLOY_JOB_RUNNING_TRIES: '2' },
    });
    expect(wet.code).toBe(1);
    expect(messages(wet, 50)).toContain(
      `[appint-ex-01/${NS}] collecting the logs of job ${JOB} failed: [appint-ex-01/${NS}] job ${JOB}: no pod running after 2 tries`,
    );
    expect(e.env.server.mutatingRequests({ kind: 'Job' })).toHaveLength(1);
    expect(e.env.server.mutatingRequests({ kind: 'Deployment' }).length).toBeGreaterThan(0);
    // As the original: the error is the run's before it publishes, so the commit is not promoted.
    expect(await promotionRecords(e)).toEqual([expect.objectContaining({ success: false })]);
  });

  it('a ClowdJobInvocation: the jobs of its status.jobMap, each in its own file', async () => {
    const e = await start();
    const cji = 'example-app-smoke';
    const server = e.env.server;
    server.seed('appint-ex-01', [
      {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: 'clowdjobinvocations.cloud.redhat.com' },
        spec: {
          group: 'cloud.redhat.com',
          scope: 'Namespaced',
          names: {
            plural: 'clowdjobinvocations',
            singular: 'clowdjobinvocation',
            kind: 'ClowdJobInvocation',
          },
          versions: [
            { name: 'v1alpha1', served: true, storage: true, subresources: { status: {} } },
          ],
        },
      },
    ]);
    // Invoked before (Clowder filled its status); the deploy applies a changed spec over it.
    server.seed('appint-ex-01', [
      {
        apiVersion: 'cloud.redhat.com/v1alpha1',
        kind: 'ClowdJobInvocation',
        metadata: { name: cji, namespace: NS },
        spec: { appName: 'example-app', jobs: ['old'] },
        status: { completed: true, jobMap: { [JOB]: 'Complete' } },
      },
    ]);
    const template = [
      'apiVersion: template.openshift.io/v1',
      'kind: Template',
      'metadata: { name: smoke }',
      'parameters: [{ name: IMAGE }, { name: IMAGE_TAG }]',
      'objects:',
      '  - apiVersion: cloud.redhat.com/v1alpha1',
      '    kind: ClowdJobInvocation',
      `    metadata: { name: ${cji} }`,
      '    spec: { appName: example-app, jobs: [smoke] }',
      '',
    ].join('\n');
    await withJob(e, true, 'Succeeded', { template, kind: 'ClowdJobInvocation' });
    const ioDir = join(e.env.dir, 'io');
    const wet = await e.run([...APP, ...STAGE, '--io-dir', ioDir]);
    expect(wet.code, wet.stderr).toBe(0);
    expect(messages(wet)).toEqual(
      expect.arrayContaining([
        `['collecting', 'appint-ex-01', '${NS}', 'ClowdJobInvocation', '${cji}']`,
        `['collecting', 'appint-ex-01', '${NS}', 'ClowdJobInvocation', '${JOB}']`,
      ]),
    );
    expect((await readFile(join(ioDir, JOB), 'utf8')).split('\n').sort()).toEqual([
      '',
      'migrating: 3 steps',
      'report: waiting',
    ]);
  });
});
