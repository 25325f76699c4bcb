import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  EXAMPLE_SCHEDULE,
  type GitlabEnvironment,
  useGitlabEnvironment,
} from './gitlab-environment.ts';
import { addUserFile, type CliRun, messages, planLines } from './harness.ts';

const start = useGitlabEnvironment();

const GUEST = 10;
const REPORTER = 20;
const DEVELOPER = 30;
const MAINTAINER = 40;

/**
 * GitLab as it is before the first run: the two managed groups with some
 * members (one at the wrong level, two nobody grants, a group bot), every
 * user the roles name, and PagerDuty with dave (an app-interface user) and
 * erin (none) on call in the example schedule.
 */
function seed({ gitlab, pagerduty }: GitlabEnvironment): void {
  gitlab.addGroup('app-sre-example', { name: 'App SRE Example' });
  gitlab.addGroup('example-tenants');
  gitlab.addGroup('unmanaged');
  for (const user of ['alice', 'bob', 'carol', 'dave', 'example-ci', 'mallory']) {
    gitlab.addUser(user);
  }
  gitlab.addGroupMember('app-sre-example', 'alice', DEVELOPER);
  gitlab.addGroupMember('app-sre-example', 'mallory', DEVELOPER);
  gitlab.addGroupMember('app-sre-example', 'group_1_bot_0a1b2c', MAINTAINER);
  gitlab.addGroupMember('example-tenants', 'bob', REPORTER);
  gitlab.addGroupMember('example-tenants', 'carol', GUEST);
  gitlab.addGroupMember('unmanaged', 'mallory', MAINTAINER);
  pagerduty.addUser({ id: 'PDAVE', email: 'dave@example.com' });
  pagerduty.addUser({ id: 'PERIN', email: 'erin+pd@example.com' });
  pagerduty.addSchedule({ id: EXAMPLE_SCHEDULE, onCall: ['PDAVE', 'PERIN'] });
}

/** The action lines of a run (the warnings about PagerDuty names also start with `[`). */
const actionLines = (run: CliRun) => planLines(run).filter((l) => l.startsWith("['"));

const members = ({ gitlab }: GitlabEnvironment, group: string) =>
  gitlab
    .groupMembers(group)
    .map((m) => [m.username, m.accessLevel] as const)
    .sort(([a], [b]) => a.localeCompare(b));

const CONVERGED = {
  'app-sre-example': [
    ['alice', MAINTAINER],
    ['bob', DEVELOPER],
    ['dave', MAINTAINER],
    ['example-ci', DEVELOPER],
    ['group_1_bot_0a1b2c', MAINTAINER],
  ],
  'example-tenants': [
    ['alice', REPORTER],
    ['bob', REPORTER],
    ['example-ci', REPORTER],
  ],
};

const PLAN = [
  "['bob', 'add_user_to_group', 'App SRE Example', 'developer']",
  "['dave', 'add_user_to_group', 'App SRE Example', 'maintainer']",
  "['example-ci', 'add_user_to_group', 'App SRE Example', 'developer']",
  "['alice', 'change_access', 'App SRE Example', 'maintainer']",
  "['mallory', 'remove_user_from_group', 'App SRE Example']",
  "['alice', 'add_user_to_group', 'example-tenants', 'reporter']",
  "['example-ci', 'add_user_to_group', 'example-tenants', 'reporter']",
  "['carol', 'remove_user_from_group', 'example-tenants']",
];

describe('gitlab-members end to end', () => {
  it('plans without writing, converges, then has nothing to do', async () => {
    const e = await start();
    seed(e);
    const planOut = join(e.env.dir, 'plan.json');

    const dry = await e.run('gitlab-members', { dryRun: true, planOut });
    expect(dry.code, dry.stderr).toBe(0);
    expect([...actionLines(dry)].sort()).toEqual([...PLAN].sort());
    // Every removal comes after every addition and change.
    const lines = actionLines(dry);
    const firstRemoval = lines.findIndex((l) => l.includes("'remove_user_from_group'"));
    expect(lines.slice(firstRemoval).every((l) => l.includes("'remove_user_from_group'"))).toBe(
      true,
    );
    expect(messages(dry, 40)).toContain(
      "[app-sre-example] PagerDuty username not found in app-interface: ['erin'] (hint: user files should contain pagerduty_username if it is different than org_username)",
    );
    const plan = JSON.parse(await readFile(planOut, 'utf8')) as { actions: unknown[] };
    expect(plan.actions).toContainEqual({
      action: 'remove_user_from_group',
      group: 'App SRE Example',
      groupPath: 'app-sre-example',
      user: 'mallory',
      userId: expect.any(Number),
      outcome: 'dry-run',
    });
    expect(e.gitlab.mutatingRequests()).toEqual([]);
    expect(e.pagerduty.mutatingRequests()).toEqual([]);
    for (const token of ['glpat-example-token-not-real', 'pd-example-token-not-real']) {
      expect(dry.stderr + dry.stdout).not.toContain(token);
    }

    const wet = await e.run('gitlab-members');
    expect(wet.code, wet.stderr).toBe(0);
    expect([...actionLines(wet)].sort()).toEqual([...PLAN].sort());
    expect(members(e, 'app-sre-example')).toEqual(CONVERGED['app-sre-example']);
    expect(members(e, 'example-tenants')).toEqual(CONVERGED['example-tenants']);
    expect(members(e, 'unmanaged')).toEqual([['mallory', MAINTAINER]]);

    const writes = e.gitlab.mutatingRequests().length;
    expect(writes).toBe(PLAN.length);
    const again = await e.run('gitlab-members');
    expect(again.code, again.stderr).toBe(0);
    expect(actionLines(again)).toEqual([]);
    expect(e.gitlab.mutatingRequests()).toHaveLength(writes);
  });

  it('waits out GitLab rate limiting', async () => {
    const e = await start();
    seed(e);
    e.gitlab.faults.add({
      method: 'GET',
      path: /\/groups\/[^/]+\/members/,
      status: 429,
      headers: { 'Retry-After': '1' },
      body: { message: '429 Too Many Requests' },
      times: 2,
    });
    const run = await e.run('gitlab-members');
    expect(run.code, run.stderr).toBe(0);
    expect(e.gitlab.requestLog.filter((r) => r.status === 429)).toHaveLength(2);
    expect(members(e, 'app-sre-example')).toEqual(CONVERGED['app-sre-example']);
    expect(members(e, 'example-tenants')).toEqual(CONVERGED['example-tenants']);
  });

  it("a group that cannot be read is an error naming it that holds back its own removals only; the other group's go on", async () => {
    const e = await start();
    seed(e);
    const tenants = e.gitlab.addGroup('example-tenants');
    e.gitlab.faults.add({
      method: 'GET',
      path: new RegExp(`/groups/(${tenants.id}|example-tenants)/members`),
      status: 500,
      // Retried as a transient failure; no wait, so the retries run out at once.
      headers: { 'Retry-After': '0' },
      body: { message: '500 Internal Server Error' },
    });
    const run = await e.run('gitlab-members');
    expect(run.code).toBe(1);
    const errors = messages(run, 50);
    expect(errors.some((m) => m.includes('[example-tenants]'))).toBe(true);
    expect(errors.filter((m) => m.includes('disabled due to previous errors'))).toEqual([]);
    // app-sre-example's state is known: it converges, mallory leaves.
    expect(members(e, 'app-sre-example')).toEqual(CONVERGED['app-sre-example']);
    // Nothing was planned for example-tenants: carol stays.
    expect(members(e, 'example-tenants')).toEqual([
      ['bob', REPORTER],
      ['carol', GUEST],
    ]);
    expect(
      e.gitlab.mutatingRequests().filter((r) => r.path.includes(`/groups/${tenants.id}/`)),
    ).toEqual([]);
  });

  it("holds a group's removals back once one of its writes has failed; the other group's go on", async () => {
    const e = await start();
    seed(e);
    const example = e.gitlab.addGroup('app-sre-example');
    e.gitlab.faults.add({
      method: 'PUT',
      path: new RegExp(`/groups/${example.id}/members/`),
      status: 403,
      body: { message: '403 Forbidden' },
    });
    const run = await e.run('gitlab-members');
    expect(run.code).toBe(1);
    const errors = messages(run, 50);
    expect(errors.some((m) => m.startsWith('[app-sre-example] change_access alice'))).toBe(true);
    expect(errors).toContain(
      "'remove_user_from_group' action is disabled due to previous errors (1 held back).",
    );
    expect(members(e, 'app-sre-example').map(([u]) => u)).toContain('mallory');
    expect(members(e, 'example-tenants')).toEqual(CONVERGED['example-tenants']);
  });

  it('a desired user without a GitLab account does not stall offboarding; dry-run fails on it', async () => {
    const e = await start();
    seed(e);
    await addUserFile(e.env, {
      orgUsername: 'newbie',
      githubUsername: 'newbie-gh',
      roles: ['/access/roles/gitlab-developers.yml'],
    });
    const missing = [
      "[app-sre-example] GitLab user 'newbie' does not exist (org_username in permission gitlab-app-sre-example-developers)",
      "[example-tenants] GitLab user 'newbie' does not exist (org_username in permission gitlab-example-tenants-reporters)",
    ];

    // The MR check: an error naming the user and its permissions, nothing written.
    const dry = await e.run('gitlab-members', { dryRun: true });
    expect(dry.code).toBe(1);
    expect([...messages(dry, 50)].sort()).toEqual(missing);
    expect(actionLines(dry)).toEqual(
      expect.arrayContaining([
        "['newbie', 'add_user_to_group', 'App SRE Example', 'developer']",
        "['mallory', 'remove_user_from_group', 'App SRE Example']",
      ]),
    );
    expect(e.gitlab.mutatingRequests()).toEqual([]);

    // The wet run: as upstream, the missing user is reported and the departed ones removed.
    const wet = await e.run('gitlab-members');
    expect(wet.code, wet.stderr).toBe(0);
    const warnings = messages(wet, 40).filter((m) => m.includes('newbie'));
    expect(warnings.sort()).toEqual(missing.map((m) => `${m}: not added`));
    expect(members(e, 'app-sre-example')).toEqual(CONVERGED['app-sre-example']);
    expect(members(e, 'example-tenants')).toEqual(CONVERGED['example-tenants']);
  });

  it('a missing group registers an error naming it', async () => {
    const e = await start();
    // Only the first managed group exists on this GitLab.
    e.gitlab.addGroup('app-sre-example');
    for (const user of ['alice', 'bob', 'dave', 'example-ci']) e.gitlab.addUser(user);
    e.pagerduty.addUser({ id: 'PDAVE', email: 'dave@example.com' });
    e.pagerduty.addSchedule({ id: EXAMPLE_SCHEDULE, onCall: ['PDAVE'] });
    const run = await e.run('gitlab-members');
    expect(run.code).toBe(1);
    expect(messages(run, 50).some((m) => m.includes('[example-tenants]'))).toBe(true);
    expect(members(e, 'app-sre-example')).toEqual([
      ['alice', MAINTAINER],
      ['bob', DEVELOPER],
      ['dave', MAINTAINER],
      ['example-ci', DEVELOPER],
    ]);
  });

  it('PagerDuty on-call users become members and leave with their shift', async () => {
    const e = await start();
    seed(e);
    await e.run('gitlab-members');
    expect(members(e, 'app-sre-example')).toContainEqual(['dave', MAINTAINER]);

    // Dave's shift is over and nobody is on call: dave is removed.
    e.pagerduty.addSchedule({ id: EXAMPLE_SCHEDULE, onCall: [] });
    const after = await e.run('gitlab-members');
    expect(after.code, after.stderr).toBe(0);
    expect(actionLines(after)).toEqual(["['dave', 'remove_user_from_group', 'App SRE Example']"]);
    expect(members(e, 'app-sre-example').map(([u]) => u)).not.toContain('dave');
  });

  it('a PagerDuty failure fails its group only', async () => {
    const e = await start();
    seed(e);
    e.pagerduty.faults.add({ path: `/schedules/${EXAMPLE_SCHEDULE}`, status: 404 });
    const run = await e.run('gitlab-members');
    expect(run.code).toBe(1);
    expect(messages(run, 50).some((m) => m.includes('[app-sre-example]'))).toBe(true);
    expect(members(e, 'app-sre-example')).toEqual([
      ['alice', DEVELOPER],
      ['group_1_bot_0a1b2c', MAINTAINER],
      ['mallory', DEVELOPER],
    ]);
    // The error is app-sre-example's: example-tenants converges, carol leaves.
    expect(members(e, 'example-tenants')).toEqual(CONVERGED['example-tenants']);
  });
});
