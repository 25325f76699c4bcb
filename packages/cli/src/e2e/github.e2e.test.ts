import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { primaryRateLimit, secondaryRateLimit, startFakeGitHub } from '@qontract/testing';
import { describe, expect, it } from 'vitest';
import {
  addSecondOrg,
  DESIRED,
  EXAMPLE_TOKEN,
  githubEnv,
  ORG,
  startExampleGitHub,
  teamState,
} from './github-fixture.ts';
import {
  addUserFile,
  messages,
  planLines,
  runQontractReconcile,
  useExampleEnvironment,
} from './harness.ts';

const start = useExampleEnvironment();

/** The plan of the example against the fake's starting state, in the executor's order. */
const FIRST_PLAN = [
  "['create_team', 'app-sre-example', 'sre']",
  "['add_to_team', 'alice-gh', 'app-sre-example', 'sre']",
  "['add_to_team', 'carol-gh', 'app-sre-example', 'sre']",
  "['add_to_team', 'example-ci-bot', 'app-sre-example', 'sre']",
  "['add_to_org', 'alice-gh', 'app-sre-example']",
  "['add_to_org', 'carol-gh', 'app-sre-example']",
  "['add_to_org', 'example-ci-bot', 'app-sre-example']",
  "['add_to_team', 'alice-gh', 'app-sre-example', 'developers']",
  "['del_from_org', 'mallory-gh', 'app-sre-example']",
  "['del_from_team', 'mallory-gh', 'app-sre-example', 'developers']",
];

describe('github end to end', () => {
  it('dry-run prints the plan and writes nothing; wet run converges; the next run writes nothing', async () => {
    const env = await start();
    const fake = await startExampleGitHub();
    const planOut = join(env.dir, 'plan.json');

    const dry = await runQontractReconcile(
      ['--config', env.configPath, '--dry-run', '--plan-out', planOut, 'github'],
      githubEnv(fake),
    );
    expect(dry.code, dry.stderr).toBe(0);
    expect(planLines(dry)).toEqual(FIRST_PLAN);
    expect(fake.mutatingRequests()).toEqual([]);
    const plan = JSON.parse(await readFile(planOut, 'utf8')) as { actions: unknown[] };
    // Each action with what the executor did with it (a dry-run logs, writes nothing).
    expect(plan.actions[0]).toEqual({
      action: 'create_team',
      org: ORG,
      team: 'sre',
      outcome: 'dry-run',
    });
    expect(plan.actions).toHaveLength(FIRST_PLAN.length);

    const wet = await runQontractReconcile(['--config', env.configPath, 'github'], githubEnv(fake));
    expect(wet.code, wet.stderr).toBe(0);
    expect(planLines(wet)).toEqual(FIRST_PLAN);
    expect(teamState(fake, ORG, 'sre')).toEqual(DESIRED.sre);
    expect(teamState(fake, ORG, 'developers')).toEqual(DESIRED.developers);
    expect(fake.teams(ORG).find((t) => t.name === 'sre')?.privacy).toBe('secret');
    // Members of no managed team are invisible to the integration.
    expect(fake.teamMembers(ORG, 'outsiders')).toEqual(['oscar-gh']);
    expect(fake.orgMembers(ORG)).toContain('oscar-gh');
    expect(fake.orgMembers(ORG)).not.toContain('mallory-gh');
    expect(fake.mutatingRequests().map((r) => `${r.method} ${r.path}`)).toEqual(
      expect.arrayContaining([
        `POST /orgs/${ORG}/teams`,
        `DELETE /orgs/${ORG}/memberships/mallory-gh`,
        `DELETE /orgs/${ORG}/teams/developers/memberships/mallory-gh`,
      ]),
    );
    expect(fake.mutatingRequests()).toHaveLength(FIRST_PLAN.length);

    const writes = fake.mutatingRequests().length;
    const again = await runQontractReconcile(
      ['--config', env.configPath, 'github'],
      githubEnv(fake),
    );
    expect(again.code, again.stderr).toBe(0);
    expect(planLines(again)).toEqual([]);
    expect(fake.mutatingRequests()).toHaveLength(writes);
  });

  it('waits out primary and secondary rate limits', async () => {
    const env = await start();
    const fake = await startExampleGitHub();
    fake.faults.add(secondaryRateLimit({ retryAfterSeconds: 1, times: 1, path: '/teams' }));
    fake.faults.add(primaryRateLimit({ resetInSeconds: 1, times: 1, method: 'PUT' }));

    const run = await runQontractReconcile(['--config', env.configPath, 'github'], githubEnv(fake));
    expect(run.code, run.stderr).toBe(0);
    expect(teamState(fake, ORG, 'sre')).toEqual(DESIRED.sre);
    expect(teamState(fake, ORG, 'developers')).toEqual(DESIRED.developers);
    const limited = fake.requestLog.filter((r) => r.status === 403);
    expect(limited).toHaveLength(2);
    expect(messages(run, 40).some((m) => m.includes('secondary rate limit'))).toBe(true);
    expect(messages(run, 40).some((m) => m.includes('primary rate limit'))).toBe(true);
  });

  it.each([
    ['its token is refused', 'ghp_wrong_token', () => {}],
    [
      'its teams cannot be listed',
      'ghp_second_org_token',
      (f: Awaited<ReturnType<typeof startExampleGitHub>>) =>
        f.faults.add({ method: 'GET', path: '/orgs/second-org/teams', status: 500 }),
    ],
  ])(
    'a failing org (%s) is an error naming it that holds back its own removals only; the other org is reconciled',
    async (_title, token, fault) => {
      const env = await start();
      const fake = await startExampleGitHub();
      fake.addOrg('second-org');
      fake.addToken('ghp_second_org_token', { orgs: ['second-org'] });
      fake.addTeam('second-org', 'ops');
      fake.addTeamMember('second-org', 'ops', 'mallory-gh');
      fault(fake);
      await addSecondOrg(env, token);

      const run = await runQontractReconcile(
        ['--config', env.configPath, 'github'],
        githubEnv(fake, { QONTRACT_GITHUB_RETRIES: '1' }),
      );
      expect(run.code).toBe(1);
      const errors = messages(run, 50);
      expect(
        errors.some((m) => m.includes('[second-org] could not read the GitHub organisation')),
      ).toBe(true);
      // app-sre-example's state is known: its additions and its removal (mallory) go on.
      expect(teamState(fake, ORG, 'sre')).toEqual(DESIRED.sre);
      expect(teamState(fake, ORG, 'developers')).toEqual(DESIRED.developers);
      expect(fake.orgMembers(ORG)).not.toContain('mallory-gh');
      expect(errors.filter((m) => m.includes('disabled due to previous errors'))).toEqual([]);
      // second-org's state is unknown: nothing of it is touched.
      expect(fake.teamMembers('second-org', 'ops')).toEqual(['mallory-gh']);
      expect(fake.mutatingRequests().filter((r) => r.path.includes('second-org'))).toEqual([]);
      expect(run.stderr).not.toContain(token === 'ghp_wrong_token' ? token : EXAMPLE_TOKEN);
    },
  );

  it('names a GitHub it cannot reach as such, not as an answer 500', async () => {
    const env = await start();
    const closed = await startFakeGitHub({ token: EXAMPLE_TOKEN });
    await closed.close();

    const run = await runQontractReconcile(
      ['--config', env.configPath, 'github'],
      githubEnv(closed, { QONTRACT_GITHUB_RETRIES: '1' }),
    );
    expect(run.code).toBe(1);
    expect(messages(run, 50)).toContain(
      `[${ORG}] could not read the GitHub organisation: could not reach GitHub at ${closed.url}: connect ECONNREFUSED 127.0.0.1:${new URL(closed.url).port}`,
    );
  });

  it('names the team whose members cannot be read', async () => {
    const env = await start();
    const fake = await startExampleGitHub();
    fake.faults.add({ method: 'GET', path: `/orgs/${ORG}/teams/developers/members`, status: 500 });

    const run = await runQontractReconcile(
      ['--config', env.configPath, 'github'],
      githubEnv(fake, { QONTRACT_GITHUB_RETRIES: '1' }),
    );
    expect(run.code).toBe(1);
    expect(messages(run, 50)).toContain(
      `[${ORG}] could not read the GitHub organisation: could not read the members of team 'developers': GitHub answered 500 injected fault`,
    );
    expect(fake.mutatingRequests()).toEqual([]);
  });

  it('retries a write GitHub answers 500 to once, not three times', async () => {
    const env = await start();
    const fake = await startExampleGitHub();
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE'])
      fake.faults.add({ method, status: 500 });

    // The default write retries (QONTRACT_GITHUB_WRITE_RETRIES unset).
    const run = await runQontractReconcile(['--config', env.configPath, 'github'], githubEnv(fake));
    expect(run.code).toBe(1);
    const attempts = new Map<string, number>();
    for (const r of fake.mutatingRequests()) {
      const key = `${r.method} ${r.path}`;
      attempts.set(key, (attempts.get(key) ?? 0) + 1);
    }
    expect(attempts.get(`POST /orgs/${ORG}/teams`)).toBe(2);
    expect(attempts.get(`PUT /orgs/${ORG}/memberships/alice-gh`)).toBe(2);
    expect(new Set(attempts.values())).toEqual(new Set([2]));
    expect(
      messages(run, 50).some((m) =>
        m.startsWith(`[${ORG}] add_to_org alice-gh: GitHub answered 500`),
      ),
    ).toBe(true);
  });

  it("holds an org's removals back once one of its writes has failed; another org's go on", async () => {
    const env = await start();
    const fake = await startExampleGitHub();
    fake.faults.add({ method: 'POST', path: `/orgs/${ORG}/teams`, status: 422 });
    fake.addOrg('second-org');
    fake.addToken('ghp_second_org_token', { orgs: ['second-org'] });
    fake.addTeam('second-org', 'ops');
    fake.addTeamMember('second-org', 'ops', 'mallory-gh');
    await addSecondOrg(env, 'ghp_second_org_token');

    const run = await runQontractReconcile(
      ['--config', env.configPath, 'github'],
      githubEnv(fake, { QONTRACT_GITHUB_RETRIES: '0' }),
    );
    expect(run.code).toBe(1);
    const errors = messages(run, 50);
    expect(errors.some((m) => m.startsWith(`[${ORG}/sre] create_team`))).toBe(true);
    expect(errors).toContain(
      "'del_from_org' action is disabled due to previous errors (1 held back).",
    );
    expect(
      fake.mutatingRequests().filter((r) => r.method === 'DELETE' && r.path.includes(ORG)),
    ).toEqual([]);
    // The other additions went through.
    expect(teamState(fake, ORG, 'developers')).toEqual(
      [...DESIRED.developers, 'mallory-gh'].sort(),
    );
    // second-org had no error: mallory leaves it.
    expect(teamState(fake, 'second-org', 'ops')).toEqual(['alice-gh']);
  });

  it('a desired user without a GitHub account does not stall offboarding; dry-run fails on it', async () => {
    const env = await start();
    const fake = await startExampleGitHub();
    await addUserFile(env, {
      orgUsername: 'newbie',
      githubUsername: 'newbie-gh',
      roles: ['/access/roles/github-developers.yml'],
    });
    const missing = `[${ORG}] GitHub user 'newbie-gh' does not exist (github_username of role github-developers)`;

    // The MR check: an error naming the user and its role, the plan unchanged, nothing written.
    const dry = await runQontractReconcile(
      ['--config', env.configPath, '--dry-run', 'github'],
      githubEnv(fake),
    );
    expect(dry.code).toBe(1);
    expect(messages(dry, 50)).toEqual([missing]);
    expect(planLines(dry)).toContain(`['add_to_org', 'newbie-gh', '${ORG}']`);
    expect(planLines(dry)).toContain(`['del_from_org', 'mallory-gh', '${ORG}']`);
    expect(fake.mutatingRequests()).toEqual([]);

    // The wet run: as upstream, the missing user is reported and the departed one removed.
    const wet = await runQontractReconcile(['--config', env.configPath, 'github'], githubEnv(fake));
    expect(wet.code, wet.stderr).toBe(0);
    expect(messages(wet, 40)).toEqual([`${missing}: not added`]);
    expect(teamState(fake, ORG, 'developers')).toEqual(DESIRED.developers);
    expect(fake.orgMembers(ORG)).not.toContain('mallory-gh');
    // Its additions were tried, as upstream does, and refused.
    const tried = fake.mutatingRequests().filter((r) => r.path.includes('newbie-gh'));
    expect(tried.map((r) => `${r.method} ${r.status}`)).toEqual(['PUT 404', 'PUT 404']);
  });
});
