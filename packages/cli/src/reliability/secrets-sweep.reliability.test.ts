import { randomBytes } from 'node:crypto';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createMetrics, serveMetrics } from '@qontract/core';
import { rewriteAppInterface } from '@qontract/testing';
import { seedExampleSaasRepos } from '@qontract/testing/example-saas';
import { startFakeRegistry } from '@qontract/testing/fake-registry';
import { describe, expect, it, onTestFinished } from 'vitest';
import { integrations } from '../all-integrations.ts';
import { githubEnv, startExampleGitHub } from '../e2e/github-fixture.ts';
import { useGitlabEnvironment } from '../e2e/gitlab-environment.ts';
import { editFile } from '../e2e/harness.ts';
import { runCli } from '../main.ts';
import { moveSecretsToVault } from './services.ts';

// The secrets sweep: every registered integration, dry-run and wet, at DEBUG
// with --diff and --plan-out, with every secret served by Vault and canary
// values placed wherever a secret can flow into what the run handles (a
// template's vault() call rendering a ConfigMap, in jinja2 and
// extracurlyjinja2, a vault-secret resource, a vault() value in a template
// that fails to parse, a saas secretParameter in a Deployment's env, registry
// credentials); cluster, GitHub, GitLab and PagerDuty tokens and the Vault
// token are secrets too. No secret may show up in any log line, plan file,
// diff, error message, state file or metric, plain, base64-, base64url- or
// URL-encoded. (The MR check's report is swept in tools/mr-check.)

const start = useGitlabEnvironment();

/** The forms a secret could leak in. */
function encodings(secret: string): string[] {
  return [
    secret,
    Buffer.from(secret).toString('base64'),
    Buffer.from(secret).toString('base64url'),
    encodeURIComponent(secret),
  ];
}

/** A value no output has any other reason to hold. */
const canary = (where: string) => `canary-${where}-${randomBytes(9).toString('hex')}`;

interface Output {
  readonly where: string;
  readonly text: string;
}

const CANARY_PATH = 'app-interface/canary/values';
const STAGE = 'data/services/example-app/namespaces/example-app-stage.yml';
const SAAS_APP = 'data/services/example-app/cicd/saas-example-app.yml';
const REGISTRY_USER = 'example+deployer';

/** Files of a tree, with their content (the local state store). */
async function filesUnder(dir: string): Promise<Output[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true }).catch(() => []);
  const out: Output[] = [];
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    const file = join(entry.parentPath, entry.name);
    out.push({
      where: `state file ${file.slice(dir.length + 1)}`,
      text: await readFile(file, 'utf8'),
    });
  }
  return out;
}

describe('secrets sweep', () => {
  it('no integration leaks a secret into logs, plans, diffs, errors, state or /metrics', {
    timeout: 300_000,
  }, async () => {
    const e = await start();
    const github = await startExampleGitHub();
    const registry = await startFakeRegistry();
    onTestFinished(() => registry.close());
    const { env: kube } = e;
    const dir = kube.appInterfaceDir;
    await rewriteAppInterface(dir, { '127.0.0.1:16463': registry.host });
    const seed = await seedExampleSaasRepos({ github, gitlab: e.gitlab, registry });
    const { vault, secrets } = await moveSecretsToVault(dir, kube.configPath);

    // The canaries, all read from Vault.
    const canaries = {
      template: canary('jinja2-vault'),
      curly: canary('extracurly-vault'),
      vaultSecret: canary('vault-secret'),
      broken: canary('broken-template'),
      secretParameter: canary('secret-parameter'),
      registry: canary('registry-token'),
    };
    vault.put(CANARY_PATH, {
      template: canaries.template,
      curly: canaries.curly,
      password: canaries.vaultSecret,
      broken: canaries.broken,
      api_key: canaries.secretParameter,
    });
    vault.put('app-interface/canary/registry', {
      user: REGISTRY_USER,
      token: canaries.registry,
    });
    registry.addUser(REGISTRY_USER, canaries.registry);

    // openshift-resources: ConfigMaps rendered with vault() (their diffs show
    // values), a vault-secret Secret, and a template whose vault() value
    // breaks its YAML (the error quotes the text).
    await writeFile(
      join(dir, 'resources/canary-configmap.yml.j2'),
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: canary-jinja2\ndata:\n  token: "{{ vault('${CANARY_PATH}', 'template') }}"\n`,
    );
    await writeFile(
      join(dir, 'resources/canary-curly.yml.j2'),
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: canary-curly\ndata:\n  token: "{{{ vault('${CANARY_PATH}', 'curly') }}}"\n`,
    );
    await writeFile(
      join(dir, 'resources/canary-broken.yml.j2'),
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: canary-broken\ndata:\n  token: [{{ vault('${CANARY_PATH}', 'broken') }}\n`,
    );
    await editFile(join(dir, STAGE), (t) =>
      t.replace(
        'openshiftResources:\n',
        [
          'openshiftResources:',
          '  - provider: resource-template',
          '    path: /canary-configmap.yml.j2',
          '  - provider: resource-template',
          '    type: extracurlyjinja2',
          '    path: /canary-curly.yml.j2',
          '  - provider: resource-template',
          '    path: /canary-broken.yml.j2',
          '  - provider: vault-secret',
          `    path: ${CANARY_PATH}`,
          '    version: 1',
          '    name: canary-secret',
          '',
        ].join('\n'),
      ),
    );

    // openshift-saas-deploy: a commit whose template takes a secret parameter
    // into a Deployment's env, its image private on the registry.
    const template = await readFile(
      join(
        import.meta.dirname,
        '../../../../examples/repos/github/example/example-app/openshift/example-app.yaml',
      ),
      'utf8',
    );
    // An OpenShift template parameter reference (not a JavaScript placeholder).
    const apiKeyRef = ['$', '{API_KEY}'].join('');
    const withKey = template
      .replace(
        '  - name: MEMORY_LIMIT\n',
        '  - name: API_KEY\n    required: true\n  - name: MEMORY_LIMIT\n',
      )
      .replace(
        '              ports:\n',
        `              env:\n                - name: API_KEY\n                  value: ${apiKeyRef}\n              ports:\n`,
      );
    expect(withKey).toContain(apiKeyRef);
    const next = github.pushCommit('example/example-app', 'main', {
      'openshift/example-app.yaml': withKey,
    });
    registry.pushImage('example/example-app', next.slice(0, 7), { private: true });
    await editFile(join(dir, SAAS_APP), (t) =>
      t
        .replace(
          'managedResourceTypes:\n',
          `authentication:\n  image:\n    path: app-interface/canary/registry\n    field: all\nmanagedResourceTypes:\n`,
        )
        .replace(
          '        parameters:\n          REPLICAS: 1\n',
          `        parameters:\n          REPLICAS: 1\n        secretParameters:\n          - name: API_KEY\n            secret:\n              path: ${CANARY_PATH}\n              field: api_key\n`,
        ),
    );

    const metrics = createMetrics();
    const server = await serveMetrics(metrics.registry, 0, '127.0.0.1');
    onTestFinished(() => new Promise<void>((r) => server.close(() => r())));

    const processEnv = {
      CLUSTER_REACHABILITY_TIMEOUT_SECS: '30',
      QONTRACT_CLUSTER_RETRY_UNIT_MS: '20',
      ...githubEnv(github),
      QONTRACT_GITLAB_RETRY_UNIT_MS: '20',
      QONTRACT_SAAS_DEPLOY_ROLLOUT_POLL_MS: '50',
      PAGERDUTY_API_URL: e.pagerduty.url,
    };
    const outputs: Output[] = [];
    const codes: Record<string, number> = {};
    const run = async (name: string, dryRun: boolean, args: readonly string[] = []) => {
      const label = [name, ...args, ...(dryRun ? ['--dry-run'] : [])].join(' ');
      const planOut = join(kube.dir, `${label.replaceAll(/[^a-z0-9-]+/gi, '_')}.plan.json`);
      let text = '';
      const sink = { write: (s: string) => (text += s) };
      const argv = [
        '--config',
        kube.configPath,
        '--log-level',
        'DEBUG',
        '--log-format',
        'json',
        '--diff',
        ...(dryRun ? ['--dry-run'] : []),
        '--plan-out',
        planOut,
        name,
        ...args,
      ];
      let code: number;
      try {
        code = await runCli(argv, {
          env: processEnv,
          io: { stdout: sink, stderr: sink },
          metrics,
        });
      } catch (err) {
        // A crash's message and stack are output too.
        text += `\n${err instanceof Error ? `${err.message}\n${err.stack}` : String(err)}`;
        code = -1;
      }
      codes[label] = code;
      outputs.push({ where: `${label} output`, text });
      const plan = await readFile(planOut, 'utf8').catch(() => undefined);
      if (plan !== undefined) outputs.push({ where: `${label} --plan-out`, text: plan });
      return text;
    };

    // Namespaces first, as production does; then everything, dry and wet.
    await run('openshift-namespaces', false);
    // The arguments an integration cannot run without (the change tester's merge request).
    const required: Record<string, readonly string[]> = {
      'openshift-saas-deploy-change-tester': ['1', '1', '--comparison-sha', 'f'.repeat(40)],
    };
    for (const integration of integrations) {
      await run(integration.name, true, required[integration.name]);
      await run(integration.name, false, required[integration.name]);
    }
    // The deploy job of one saas file and environment (it publishes promotions to the state).
    const saas = ['--saas-file-name', 'saas-example-app', '--env-name', 'example-stage'];
    const saasDry = await run('openshift-saas-deploy', true, saas);
    await run('openshift-saas-deploy', false, saas);
    const { port } = server.address() as AddressInfo;
    const scrape = await fetch(`http://127.0.0.1:${port}/metrics`);
    outputs.push({ where: '/metrics', text: await scrape.text() });
    outputs.push(...(await filesUnder(join(kube.dir, '.state'))));

    // The canaries went where they were put: the sweep has something to find.
    const cm = (name: string) =>
      kube.server.get('appint-ex-01', 'v1', 'ConfigMap', 'example-app-stage', name) as
        | { data?: Record<string, string> }
        | undefined;
    expect(cm('canary-jinja2')?.data?.token).toBe(canaries.template);
    expect(cm('canary-curly')?.data?.token).toBe(canaries.curly);
    const secret = kube.server.get(
      'appint-ex-01',
      'v1',
      'Secret',
      'example-app-stage',
      'canary-secret',
    ) as { data?: Record<string, string> } | undefined;
    expect(secret?.data?.password).toBe(Buffer.from(canaries.vaultSecret).toString('base64'));
    const deployment = kube.server.get(
      'appint-ex-01',
      'apps/v1',
      'Deployment',
      'example-app-stage',
      'example-app',
    ) as
      | { spec: { template: { spec: { containers: Array<{ env?: Array<{ value: string }> }> } } } }
      | undefined;
    expect(deployment?.spec.template.spec.containers[0]?.env).toEqual([
      { name: 'API_KEY', value: canaries.secretParameter },
    ]);
    expect(codes[`openshift-saas-deploy ${saas.join(' ')}`]).toBe(0);
    expect(saasDry).toContain("'Deployment', 'example-app'");
    expect(seed.appSha).not.toBe(next);

    // Service-account tokens the cluster minted during the runs are secrets too.
    const minted = ['appint-ex-01', 'appint-ex-02', 'appint-ex-k8s'].flatMap((cluster) =>
      kube.server
        .list(cluster, 'v1', 'Secret')
        .flatMap((s) => {
          const data = (s as { data?: Record<string, string> }).data ?? {};
          return [data.token, data.password].filter((v) => v !== undefined);
        })
        .map((b64) => Buffer.from(b64, 'base64').toString()),
    );

    const leaks: string[] = [];
    for (const secret of [...secrets, ...Object.values(canaries), ...minted]) {
      for (const form of encodings(secret)) {
        for (const { where, text } of outputs) {
          if (text.includes(form)) leaks.push(`${where}: ${form}`);
        }
      }
    }
    // Every integration ran to an end: no crash (-1), no usage error (2). An
    // integration the example app-interface does not declare ends with 4.
    expect(
      Object.values(codes).filter((c) => c < 0 || c === 2),
      JSON.stringify(codes),
    ).toEqual([]);
    expect(Object.values(codes).filter((c) => c === 0).length).toBeGreaterThan(20);
    expect(secrets.length).toBeGreaterThan(5);
    // DEBUG records were written (the level the sweep is about) and Vault was read.
    expect(outputs.some((o) => o.text.includes('"level":20'))).toBe(true);
    expect(vault.requestLog.length).toBeGreaterThan(0);
    expect(leaks).toEqual([]);
  });
});
