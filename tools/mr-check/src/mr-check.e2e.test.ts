import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { type ExampleEnvironment, startExampleEnvironment } from '@qontract/testing';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { QONTRACT_RECONCILE_BIN } from './child-run.ts';
import { main } from './main.ts';
import type { IntegrationReport, MrCheckReport } from './report.ts';

// Real child processes against simulated clusters: seconds on a loaded 2-core machine.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

const run = promisify(execFile);
const MAKE_HEAD = resolve(import.meta.dirname, '../../../examples/mr/make-head.mjs');
/** A loaded test machine must not make a simulated cluster look unreachable. */
const ENV = { ...process.env, CLUSTER_REACHABILITY_TIMEOUT_SECS: '30' };

let env: ExampleEnvironment;

beforeAll(async () => {
  env = await startExampleEnvironment();
  // The clusters as the target branch left them: namespaces, resources and secrets applied.
  for (const integration of [
    'openshift-namespaces',
    'openshift-resources',
    'openshift-vault-secrets',
  ]) {
    await run(process.execPath, [QONTRACT_RECONCILE_BIN, '--config', env.configPath, integration], {
      env: ENV,
    });
  }
  env.server.resetLog();
});
afterAll(async () => {
  // Nothing the check did wrote to a cluster.
  expect(env?.server.mutatingRequests()).toEqual([]);
  await env?.close();
});

interface Check {
  code: number;
  report: MrCheckReport;
  markdown: string;
  stderr: string;
}

async function check(scenario: string): Promise<Check> {
  const head = join(env.dir, `head-${scenario}`);
  await run(process.execPath, [MAKE_HEAD, env.appInterfaceDir, head, scenario]);
  const md = join(env.dir, `${scenario}.md`);
  const json = join(env.dir, `${scenario}.json`);
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
  // Never a write: reads only, at every cluster.
  expect(env.server.mutatingRequests()).toEqual([]);
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
      'openshift-vault-secrets',
    ]);
    expect(of(c, 'openshift-namespaces')).toMatchObject({
      status: 'no-changes',
      reason: expect.stringContaining('reads /openshift/namespace-1.yml'),
    });
    // The siblings' desired state did not change: they stop before reading a cluster.
    for (const name of [
      'openshift-vault-secrets',
      'openshift-routes',
      'openshift-prometheus-rules',
    ]) {
      expect(of(c, name)).toMatchObject({ status: 'no-changes', earlyExit: true });
    }
    const resources = of(c, 'openshift-resources');
    expect(resources).toMatchObject({
      status: 'changes',
      shards: ['appint-ex-01'],
      earlyExit: false,
    });
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
    expect(values).toHaveLength(4);
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    const texts = [c.markdown, JSON.stringify(c.report), c.stderr];
    for (const value of values) {
      for (const text of texts) {
        expect(text).not.toContain(value);
        expect(text).not.toContain(b64(value));
      }
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
});
