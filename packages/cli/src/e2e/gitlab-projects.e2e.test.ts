import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useGitlabEnvironment } from './gitlab-environment.ts';
import { editFile, messages, planLines } from './harness.ts';

const start = useGitlabEnvironment();

const PLAN = [
  "['create_project', 'service', 'example-app']",
  "['create_project', 'service', 'example-saas-bundle']",
  "['initiate_saas_bundle_repo', 'service', 'example-saas-bundle']",
];

describe('gitlab-projects end to end', () => {
  it('plans without writing, converges, then has nothing to do', async () => {
    const e = await start();
    e.gitlab.addGroup('service');
    e.gitlab.addProject('service', 'unrequested');
    const planOut = join(e.env.dir, 'plan.json');

    const dry = await e.run('gitlab-projects', { dryRun: true, planOut });
    expect(dry.code, dry.stderr).toBe(0);
    expect(planLines(dry)).toEqual(PLAN);
    const plan = JSON.parse(await readFile(planOut, 'utf8')) as { actions: unknown[] };
    expect(plan.actions).toEqual([
      {
        group: 'service',
        project: 'example-app',
        url: `${e.gitlab.url}/service/example-app`,
        bundle: false,
        outcome: 'dry-run',
      },
      {
        group: 'service',
        project: 'example-saas-bundle',
        url: `${e.gitlab.url}/service/example-saas-bundle`,
        bundle: true,
        outcome: 'dry-run',
      },
    ]);
    expect(e.gitlab.mutatingRequests()).toEqual([]);

    const wet = await e.run('gitlab-projects');
    expect(wet.code, wet.stderr).toBe(0);
    expect(planLines(wet)).toEqual(PLAN);
    expect(e.gitlab.projects('service').map((p) => p.name)).toEqual([
      'unrequested',
      'example-app',
      'example-saas-bundle',
    ]);
    // The bundle got its README on master and the two deployment branches; the other nothing.
    expect(e.gitlab.branches('service/example-saas-bundle')).toEqual([
      'master',
      'production',
      'staging',
    ]);
    expect(e.gitlab.file('service/example-saas-bundle', 'master', 'README.md')).toBeDefined();
    expect(e.gitlab.branches('service/example-app')).toEqual([]);

    const writes = e.gitlab.mutatingRequests().length;
    const again = await e.run('gitlab-projects');
    expect(again.code, again.stderr).toBe(0);
    expect(planLines(again)).toEqual([]);
    expect(e.gitlab.mutatingRequests()).toHaveLength(writes);
  });

  it('waits out GitLab rate limiting', async () => {
    const e = await start();
    e.gitlab.addGroup('service');
    e.gitlab.faults.add({
      method: 'POST',
      path: '/projects',
      status: 429,
      headers: { 'Retry-After': '1' },
      body: { message: '429 Too Many Requests' },
      times: 1,
    });
    const run = await e.run('gitlab-projects');
    expect(run.code, run.stderr).toBe(0);
    expect(e.gitlab.requestLog.filter((r) => r.status === 429)).toHaveLength(1);
    expect(
      e.gitlab
        .projects('service')
        .map((p) => p.name)
        .sort(),
    ).toEqual(['example-app', 'example-saas-bundle']);
  });

  it('a project that is no code component is an error naming it; the others are created', async () => {
    const e = await start();
    e.gitlab.addGroup('service');
    await editFile(join(e.env.appInterfaceDir, 'data/dependencies/gitlab/gitlab.yml'), (text) =>
      text.replace('      - example-app\n', '      - example-app\n      - stray\n'),
    );
    const run = await e.run('gitlab-projects');
    expect(run.code).toBe(1);
    expect(messages(run, 50)).toContain(
      `${e.gitlab.url}/service/stray missing from all codeComponents`,
    );
    expect(planLines(run)).toEqual(PLAN);
    expect(
      e.gitlab
        .projects('service')
        .map((p) => p.name)
        .sort(),
    ).toEqual(['example-app', 'example-saas-bundle']);
  });

  it('a group that cannot be read is an error naming it, and nothing is created', async () => {
    const e = await start();
    e.gitlab.addGroup('service');
    e.gitlab.faults.add({
      method: 'GET',
      path: '/projects',
      status: 500,
      // Retried as a transient failure; no wait, so the retries run out at once.
      headers: { 'Retry-After': '0' },
    });
    const run = await e.run('gitlab-projects');
    expect(run.code).toBe(1);
    expect(messages(run, 50).some((m) => m.includes('[service]'))).toBe(true);
    expect(e.gitlab.mutatingRequests()).toEqual([]);
  });

  it('a missing group is an error naming it', async () => {
    const e = await start();
    const run = await e.run('gitlab-projects');
    expect(run.code).toBe(1);
    expect(messages(run, 50).some((m) => m.includes('[service]'))).toBe(true);
    expect(e.gitlab.mutatingRequests()).toEqual([]);
  });
});
