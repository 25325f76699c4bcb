import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFile, readdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import {
  type ExampleEnvironment,
  type FakeGitHub,
  type FakeRegistry,
  rewriteAppInterface,
  startExampleEnvironment,
  startFakeGitHub,
  startFakeRegistry,
} from '@qontract/testing';
import { seedExampleSaasRepos } from '@qontract/testing/example-saas';
import { type FakeGitlab, startFakeGitlab } from '@qontract/testing/fake-gitlab';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { QONTRACT_RECONCILE_BIN } from './child-run.ts';
import { main } from './main.ts';
import type { IntegrationReport, MrCheckReport } from './report.ts';

// Real child processes against simulated clusters: seconds on a loaded 2-core machine.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

const run = promisify(execFile);
const MAKE_HEAD = resolve(import.meta.dirname, '../../../examples/mr/make-head.mjs');
/**
 * What the example app-interface and config name, pointed at this test's
 * fakes: the example GitHub org's and GitLab's tokens of examples/config.toml,
 * the GitLab instance and the registry of the saas files.
 */
const EXAMPLE_GITHUB_TOKEN = 'ghp_example_token_not_real';
const EXAMPLE_GITLAB_TOKEN = 'glpat-example-token-not-real';
const EXAMPLE_GITLAB_URL = 'https://127.0.0.1:16460';
const EXAMPLE_REGISTRY = '127.0.0.1:16463';

let env: ExampleEnvironment;
let fakes: { github: FakeGitHub; gitlab: FakeGitlab; registry: FakeRegistry };
/** The check's environment: a loaded machine must not make a cluster look unreachable; GitHub is the fake. */
let ENV: Record<string, string | undefined>;

/** Mutating requests at every fake: clusters, GitHub, GitLab, registry. */
const writes = () => [
  ...env.server.mutatingRequests(),
  ...fakes.github.mutatingRequests(),
  ...fakes.gitlab.mutatingRequests(),
  ...fakes.registry.mutatingRequests(),
];

beforeAll(async () => {
  const [e, github, gitlab, registry] = await Promise.all([
    startExampleEnvironment(),
    startFakeGitHub({ token: EXAMPLE_GITHUB_TOKEN }),
    startFakeGitlab({ token: EXAMPLE_GITLAB_TOKEN, tls: true }),
    startFakeRegistry(),
  ]);
  env = e;
  fakes = { github, gitlab, registry };
  ENV = {
    ...process.env,
    CLUSTER_REACHABILITY_TIMEOUT_SECS: '30',
    GITHUB_API: github.url,
    QONTRACT_SAAS_DEPLOY_ROLLOUT_POLL_MS: '50',
  };
  // Both bundles of every MR (the head is a copy of this one) read the saas repositories from the fakes.
  await rewriteAppInterface(env.appInterfaceDir, {
    [EXAMPLE_GITLAB_URL]: gitlab.url,
    [EXAMPLE_REGISTRY]: registry.host,
  });
  await seedExampleSaasRepos(fakes);
  // The clusters as the target branch left them: namespaces, resources and secrets applied.
  for (const integration of [
    'openshift-namespaces',
    'openshift-resources',
    'openshift-vault-secrets',
  ]) {
    await reconcile(integration);
  }
  env.server.resetLog();
});
afterAll(async () => {
  // Nothing the check did wrote anywhere.
  if (env) expect(writes()).toEqual([]);
  await Promise.all([env?.close(), ...Object.values(fakes ?? {}).map((f) => f.close())]);
});

/** A wet run of `qontract-reconcile ARGS` against the environment (setting up the base). */
async function reconcile(...args: string[]): Promise<void> {
  await run(process.execPath, [QONTRACT_RECONCILE_BIN, '--config', env.configPath, ...args], {
    env: ENV,
  });
}

/** Every file of the local state store (promotions, early-exit caches...), with its content. */
async function stateFiles(): Promise<Record<string, string>> {
  const dir = join(env.dir, '.state');
  const out: Record<string, string> = {};
  const entries = await readdir(dir, { withFileTypes: true, recursive: true }).catch(() => []);
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    const file = join(entry.parentPath, entry.name);
    out[file.slice(dir.length + 1)] = await readFile(file, 'utf8');
  }
  return out;
}

interface Check {
  code: number;
  report: MrCheckReport;
  markdown: string;
  stderr: string;
}

async function check(
  scenario: string,
  edit?: (head: string) => Promise<void>,
  name = scenario,
): Promise<Check> {
  const head = join(env.dir, `head-${name}`);
  await run(process.execPath, [MAKE_HEAD, env.appInterfaceDir, head, scenario]);
  await edit?.(head);
  const md = join(env.dir, `${name}.md`);
  const json = join(env.dir, `${name}.json`);
  const state = await stateFiles();
  let stderr = '';
  const code = await main(
    [
      '--base',
      env.appInterfaceDir,
      '--head',
      head,
      '--config',
      env.configPath,
      '--jobs',
      '2',
      '--report-md',
      md,
      '--report-json',
      json,
    ],
    { env: ENV, stderr: { write: (s: string) => (stderr += s) }, stdout: { write: () => true } },
  );
  // Never a write: reads only, at every cluster and fake, and no state written.
  expect(writes()).toEqual([]);
  expect(await stateFiles()).toEqual(state);
  return {
    code,
    report: JSON.parse(await readFile(json, 'utf8')) as MrCheckReport,
    markdown: await readFile(md, 'utf8'),
    stderr,
  };
}

const of = (c: Check, name: string): IntegrationReport => {
  const r = c.report.integrations.find((i) => i.name === name);
  if (!r) throw new Error(`${name} is not in the report`);
  return r;
};

/**
 * The changed lines of a diff, without the `qontract.update` time and the
 * `qontract.sha256sum` of the body, which every changed object has.
 */
const changedLines = (diff: string | undefined) =>
  (diff ?? '')
    .split('\n')
    .filter((l) => /^[-+][^-+]/.test(l) && !/qontract\.(update|sha256sum):/.test(l));

describe('qontract-mr-check', () => {
  it('skips every integration when the MR changes nothing it reads', async () => {
    const c = await check('unrelated');
    expect(c.code).toBe(0);
    expect(c.report.passed).toBe(true);
    expect(c.report.changes.datafiles).toEqual([
      { path: 'data/access/users/dave.yml', change: 'changed', schema: '/access/user-1.yml' },
    ]);
    expect(of(c, 'openshift-namespaces')).toMatchObject({
      status: 'skipped',
      reason: 'nothing it reads changed',
    });
    expect(of(c, 'openshift-resources').status).toBe('skipped');
    expect(of(c, 'openshift-groups')).toMatchObject({
      status: 'skipped',
      reason: 'no `pr_check` in its integration file',
    });
    expect(c.markdown).toContain(
      '| openshift-namespaces | ⚪ skipped | nothing it reads changed |',
    );
    expect(env.server.requestLog).toEqual([]);
  });

  it('one namespace file changed: openshift-namespaces and the shard of its cluster run, with a readable diff', async () => {
    env.server.resetLog();
    const c = await check('namespace');
    expect(c.code).toBe(0);
    expect(c.report.passed).toBe(true);
    const ran = c.report.integrations.filter((i) => i.status !== 'skipped').map((i) => i.name);
    expect(ran.sort()).toEqual([
      'openshift-namespaces',
      'openshift-prometheus-rules',
      'openshift-resources',
      'openshift-routes',
      'openshift-saas-deploy',
      'openshift-vault-secrets',
    ]);
    // It reads namespaces, but no saas target changed: the change tester runs no dry-run.
    expect(of(c, 'openshift-saas-deploy')).toMatchObject({
      status: 'no-changes',
      reason: expect.stringContaining('no saas target changed'),
    });
    expect(of(c, 'openshift-saas-deploy').command).toBeUndefined();
    expect(of(c, 'openshift-namespaces')).toMatchObject({
      status: 'no-changes',
      reason: expect.stringContaining('reads /openshift/namespace-1.yml'),
    });
    // The siblings' desired state did not change: the check decides it from
    // the bundles it holds, without a process, before reading a cluster.
    for (const name of [
      'openshift-vault-secrets',
      'openshift-routes',
      'openshift-prometheus-rules',
    ]) {
      expect(of(c, name)).toMatchObject({ status: 'no-changes', earlyExit: true, inProcess: true });
      expect(of(c, name).command).toContain('--early-exit-compare-sha');
    }
    const resources = of(c, 'openshift-resources');
    expect(resources).toMatchObject({
      status: 'changes',
      shards: ['appint-ex-01'],
      earlyExit: false,
    });
    expect(resources.inProcess).toBeUndefined();
    // Its process runs the shard the check's decision found, without comparing again.
    expect(resources.command).toEqual(
      expect.arrayContaining(['--early-exit-affected-shards', 'appint-ex-01']),
    );
    expect(
      resources.actions?.map((a) => [a.action, a.cluster, a.namespace, a.kind, a.name]),
    ).toEqual([
      ['apply', 'appint-ex-01', 'example-app-stage', 'ConfigMap', 'example-app-settings'],
    ]);
    // The changed ConfigMap value is exactly the changed line.
    expect(changedLines(resources.actions?.[0]?.unifiedDiff)).toEqual([
      '-  GREETING: hello from stage',
      '+  GREETING: hello from the merge request',
    ]);
    expect(c.markdown).toContain(
      '<details><summary><code>apply appint-ex-01/example-app-stage ConfigMap example-app-settings</code></summary>',
    );
    expect(c.markdown).toContain('+  GREETING: hello from the merge request');
    // openshift-resources read only its shard's cluster; openshift-namespaces reads them all.
    expect(c.stderr).toMatch(/openshift-resources: changes \(1 change in shard appint-ex-01\)/);
  });

  it('a changed resource file runs the resource readers, each changed cluster as its shard', async () => {
    const c = await check('resource');
    expect(c.code).toBe(0);
    expect(c.report.changes.resources).toEqual([
      { path: 'resources/example-app/settings-configmap.yml.j2', change: 'changed', schema: null },
    ]);
    expect(of(c, 'openshift-namespaces').status).toBe('skipped');
    expect(of(c, 'openshift-routes')).toMatchObject({
      status: 'no-changes',
      earlyExit: true,
      reason: 'reads resource files (resources/example-app/settings-configmap.yml.j2)',
    });
    const resources = of(c, 'openshift-resources');
    expect(resources).toMatchObject({
      status: 'changes',
      shards: ['appint-ex-01', 'appint-ex-02'],
    });
    // Both shards' actions, each with its diff: exactly the changed value.
    const byCluster = Object.fromEntries(
      (resources.actions ?? []).map((a) => [a.cluster, changedLines(a.unifiedDiff)]),
    );
    expect(byCluster).toEqual({
      'appint-ex-01': ['-  GREETING: hello from stage', '+  GREETING: hello from stage!'],
      'appint-ex-02': ['-  GREETING: hello from production', '+  GREETING: hello from production!'],
    });
  });

  it('a changed Secret shows that it changed, never a value', async () => {
    const c = await check('secret');
    expect(c.code).toBe(0);
    // vault-secret resources are openshift-vault-secrets' (openshift-resources leaves them out).
    expect(of(c, 'openshift-resources')).toMatchObject({ status: 'no-changes', earlyExit: true });
    const secrets = of(c, 'openshift-vault-secrets');
    expect(secrets).toMatchObject({ status: 'changes', shards: ['appint-ex-01'] });
    const secret = secrets.actions?.find((a) => a.kind === 'Secret');
    expect(secret?.name).toBe('example-app-db');
    expect(changedLines(secret?.unifiedDiff)).toEqual(
      expect.arrayContaining(['-  password: "*** (old value)"', '+  password: "*** (changed)"']),
    );
    const config = await readFile(env.configPath, 'utf8');
    const values = [...config.matchAll(/^(?:password|host) = "(.+)"$/gm)].map((m) => m[1]!);
    // The databases' passwords and hosts at least (the config holds other services' secrets too).
    expect(values).toEqual(
      expect.arrayContaining([
        'stage-password-not-real',
        'db.stage.example.com',
        'production-password-not-real',
        'db.production.example.com',
      ]),
    );
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    const texts = [c.markdown, JSON.stringify(c.report), c.stderr];
    for (const value of values) {
      for (const text of texts) {
        expect(text).not.toContain(value);
        expect(text).not.toContain(b64(value));
      }
    }
  });

  it("a secret read by a template's vault() into a ConfigMap reaches no part of the report", async () => {
    const value = `canary-mr-${randomBytes(9).toString('hex')}`;
    await appendFile(env.configPath, `\n[app-interface.canary]\ntoken = "${value}"\n`);
    const c = await check(
      'unrelated',
      async (head) => {
        await writeFile(
          join(head, 'resources/canary.yml.j2'),
          "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: canary\ndata:\n  token: \"{{ vault('app-interface/canary', 'token') }}\"\n",
        );
        const stage = join(head, 'data/services/example-app/namespaces/example-app-stage.yml');
        const text = await readFile(stage, 'utf8');
        await writeFile(
          stage,
          text.replace(
            'openshiftResources:\n',
            'openshiftResources:\n  - provider: resource-template\n    path: /canary.yml.j2\n',
          ),
        );
      },
      'canary',
    );
    expect(c.code, c.stderr).toBe(0);
    const action = of(c, 'openshift-resources').actions?.find((a) => a.name === 'canary');
    expect(action?.unifiedDiff).toContain('+  token: ***');
    const b64 = Buffer.from(value).toString('base64');
    for (const text of [c.markdown, JSON.stringify(c.report), c.stderr]) {
      expect(text).not.toContain(value);
      expect(text).not.toContain(b64);
    }
  });

  it('an invalid head fails the check naming the file, and runs nothing', async () => {
    env.server.resetLog();
    const c = await check('invalid');
    expect(c.code).toBe(1);
    expect(c.report.passed).toBe(false);
    expect(c.report.bundle.valid).toBe(false);
    expect(c.report.bundle.problems).toContainEqual(
      expect.objectContaining({
        file: '/services/example-app/namespaces/example-app-stage.yml',
        reason: expect.stringContaining('/openshift/appint-ex-09/cluster.yml'),
        line: expect.any(Number),
      }),
    );
    expect(c.report.integrations).toEqual([]);
    expect(c.markdown).toContain('the head bundle has');
    expect(c.markdown).toMatch(
      /- `\/services\/example-app\/namespaces\/example-app-stage\.yml:\d+` \(REF\): cluster: \$ref \/openshift\/appint-ex-09\/cluster\.yml does not exist/,
    );
    expect(c.stderr).toContain('qontract-mr-check: failed (the head bundle has');
    expect(env.server.requestLog).toEqual([]);
  });

  it("a broken template fails the check with the template's error", async () => {
    const c = await check('template');
    expect(c.code).toBe(1);
    const resources = of(c, 'openshift-resources');
    expect(resources.status).toBe('failed');
    expect(resources.errors?.join('\n')).toMatch(/shout/);
    expect(c.markdown).toContain('🔴 openshift-resources: failed');
    expect(c.stderr).toContain('failed: openshift-resources');
  });

  it('a changed saas target parameter dry-runs exactly that (saas file, environment), writing nothing', async () => {
    // The base deployed to stage.
    await reconcile(
      'openshift-saas-deploy',
      '--saas-file-name',
      'saas-example-app',
      '--env-name',
      'example-stage',
    );
    env.server.resetLog();
    const c = await check('saas');
    expect(c.code).toBe(0);
    expect(c.report.passed).toBe(true);
    expect(c.report.changes.datafiles).toEqual([
      {
        path: 'data/services/example-app/cicd/saas-example-app.yml',
        change: 'changed',
        schema: '/app-sre/saas-file-2.yml',
      },
    ]);
    const ran = c.report.integrations.filter((i) => i.status !== 'skipped');
    // Only saas files changed: only the change tester runs, one dry-run, no full openshift-saas-deploy.
    expect(ran.map((i) => i.name)).toEqual([
      'openshift-saas-deploy (saas-example-app / example-stage)',
    ]);
    const saas = of(c, 'openshift-saas-deploy (saas-example-app / example-stage)');
    expect(saas).toMatchObject({
      status: 'changes',
      file: 'data/app-sre/integrations/openshift-saas-deploy.yml',
      reason: '1 target changed (openshift-saas-deploy-change-tester)',
      command: [
        '--log-format',
        'json',
        '--dry-run',
        '--diff',
        'openshift-saas-deploy',
        '--saas-file-name',
        'saas-example-app',
        '--env-name',
        'example-stage',
      ],
      saas: {
        saasFile: 'saas-example-app',
        environment: 'example-stage',
        inHead: true,
        compareUrls: [],
        targets: [
          {
            change: 'changed',
            resourceTemplate: 'example-app',
            target: null,
            cluster: 'appint-ex-01',
            namespace: 'example-app-stage',
            fields: ['parameters'],
            ref: { base: 'main', head: 'main' },
            compareUrl: null,
          },
        ],
      },
    });
    // The plan of the dry-run: the stage Deployment alone, with exactly the changed replicas.
    const actions = saas.actions ?? [];
    expect(actions.map((a) => [a.action, a.cluster, a.namespace, a.kind, a.name])).toEqual([
      ['apply', 'appint-ex-01', 'example-app-stage', 'Deployment', 'example-app'],
    ]);
    const deployment = actions.filter((a) => a.kind === 'Deployment');
    // What the engine compares changed is the replicas alone; the diff shows it (beside
    // the fields the cluster defaulted, which the desired object leaves out).
    expect(deployment[0]?.diff).toEqual(['replace /spec/replicas']);
    expect(changedLines(deployment[0]?.unifiedDiff)).toEqual(
      expect.arrayContaining(['-  replicas: 1', '+  replicas: 2']),
    );
    expect(c.markdown).toContain(
      '### 🟡 openshift-saas-deploy (saas-example-app / example-stage): ',
    );
    expect(c.markdown).toContain(
      '| default | example-app | appint-ex-01/example-app-stage | changed: parameters | `main` |',
    );
    expect(c.markdown).toContain('+  replicas: 2');
  });
});
