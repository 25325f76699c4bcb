import { cp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadEmbeddedEngine, startBundleServer } from '@qontract/app-interface';
import { describe, expect, it, onTestFinished } from 'vitest';
import { editFile, messages, planLines, runQontractReconcile } from './harness.ts';
import { useSaasEnvironment } from './saas-environment.ts';

const start = useSaasEnvironment();

/**
 * The example app-interface as the comparison bundle (the MR's target branch)
 * and a copy with `change` applied (the MR), both served as qontract-server
 * serves them (`/graphqlsha/<sha>`); the config points at the server.
 */
async function mergeRequest(change: (text: string) => string) {
  const s = await start();
  const head = join(s.env.dir, 'head');
  await cp(s.env.appInterfaceDir, head, { recursive: true });
  await editFile(join(head, 'data/services/example-app/cicd/saas-example-app.yml'), change);
  const [base, mr] = await Promise.all([
    loadEmbeddedEngine(s.env.appInterfaceDir),
    loadEmbeddedEngine(head),
  ]);
  const server = await startBundleServer([base, mr]);
  onTestFinished(() => server.close());
  const config = join(s.env.dir, 'served.toml');
  await writeFile(
    config,
    (await readFile(s.env.configPath, 'utf8')).replace(
      /^server = "file:\/\/[^"]*"$/m,
      `server = "${server.url}/graphql"`,
    ),
  );
  const run = (...args: string[]) =>
    runQontractReconcile(
      ['--config', config, '--dry-run', 'openshift-saas-deploy-change-tester', ...args],
      { GITHUB_API: s.github.url, QONTRACT_SAAS_DEPLOY_ROLLOUT_POLL_MS: '50' },
    );
  return { s, baseSha: base.sha256, run };
}

describe('openshift-saas-deploy-change-tester', { timeout: 120_000 }, () => {
  it('dry-runs openshift-saas-deploy for exactly the changed (saas file, environment), writing nothing', async () => {
    const { s, baseSha, run } = await mergeRequest((t) => t.replace('REPLICAS: 1', 'REPLICAS: 2'));
    const before = s.writes();
    const r = await run('1234', '56', '--comparison-sha', baseSha);
    expect(r.code, r.stderr).toBe(0);
    expect(messages(r)).toContain(
      'openshift-saas-deploy --saas-file-name saas-example-app --env-name example-stage',
    );
    expect(messages(r).filter((m) => m.startsWith('openshift-saas-deploy --'))).toHaveLength(1);
    expect(planLines(r).some((l) => l.includes("'Deployment'"))).toBe(true);
    expect(s.writes()).toBe(before);
  });

  it('nothing changed: nothing runs; a missing --comparison-sha or argument is refused', async () => {
    const { baseSha, run } = await mergeRequest((t) => t);
    const same = await run('1234', '56', '--comparison-sha', baseSha);
    expect(same.code, same.stderr).toBe(0);
    expect(messages(same)).toContain(`no saas file target changed against bundle ${baseSha}`);
    expect(planLines(same)).toEqual([]);

    const noSha = await run('1234', '56');
    expect(noSha.code).toBe(1);
    expect(messages(noSha, 50).join('\n')).toContain('--comparison-sha is required');

    const noArgs = await run('--comparison-sha', baseSha);
    expect(noArgs.code).toBe(2);
    expect(noArgs.stderr).toContain(
      'Missing required arguments: GITLAB_PROJECT_ID, GITLAB_MERGE_REQUEST_ID',
    );
  });
});
