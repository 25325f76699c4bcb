import { createOctokit } from '@qontract/github';
import { type FakeGitHub, startFakeGitHub } from '@qontract/testing/fake-github';
import pLimit from 'p-limit';
import { afterEach, describe, expect, it } from 'vitest';
import { readOrgState } from './current.ts';

const TOKEN = 'ghp_current_state_test';
const quiet = { debug: () => {}, warn: () => {} };

let github: FakeGitHub | undefined;
afterEach(async () => {
  await github?.close();
  github = undefined;
});

async function read(fake: FakeGitHub, managed: readonly string[]) {
  const octokit = createOctokit({ token: TOKEN, baseUrl: fake.url, log: quiet });
  return readOrgState(octokit, 'org', managed, pLimit(4));
}

const reads = (fake: FakeGitHub) =>
  fake.requestLog.map((r) => `${r.method} ${r.path.replace(/\/\d+\//, '/{id}/')}`).sort();

describe('readOrgState', () => {
  it("counts a pending invitation as a member of each managed team it names, as a team's invitation list would", async () => {
    github = await startFakeGitHub({ token: TOKEN });
    github.addOrg('org');
    for (const team of ['sre', 'developers', 'outsiders']) github.addTeam('org', team);
    github.addTeamMember('org', 'developers', 'bob');
    github.addTeamMember('org', 'developers', 'Mallory');
    github.addTeamMember('org', 'outsiders', 'oscar');
    github.addInvitation('org', 'Dave', { teams: ['developers'] });
    github.addInvitation('org', 'erin', { teams: ['sre', 'developers'] });
    github.addInvitation('org', 'frank', { teams: ['outsiders'] });
    github.addInvitation('org', 'grace');

    const state = await read(github, ['sre', 'developers']);

    expect(state.items).toEqual([
      {
        params: { service: 'github-org-team', org: 'org', team: 'developers' },
        items: ['bob', 'mallory', 'dave', 'erin'],
      },
      { params: { service: 'github-org-team', org: 'org', team: 'sre' }, items: ['erin'] },
      { params: { service: 'github-org', org: 'org' }, items: ['bob', 'mallory', 'dave', 'erin'] },
    ]);
    expect(state.slugs.get('outsiders')).toBe('outsiders');
    // The teams of an invitation are read only for invitations with teams.
    expect(reads(github).filter((r) => r.includes('/invitations'))).toEqual([
      'GET /orgs/org/invitations',
      'GET /orgs/org/invitations/{id}/teams',
      'GET /orgs/org/invitations/{id}/teams',
      'GET /orgs/org/invitations/{id}/teams',
    ]);
  });

  it('reads the pending invitations once per organisation, not once per team', async () => {
    github = await startFakeGitHub({ token: TOKEN });
    github.addOrg('org');
    for (const team of ['a', 'b', 'c']) {
      github.addTeam('org', team);
      github.addTeamMember('org', team, `member-of-${team}`);
    }

    const state = await read(github, ['a', 'b', 'c']);

    expect(state.items.at(-1)?.items).toEqual(['member-of-a', 'member-of-b', 'member-of-c']);
    expect(reads(github)).toEqual([
      'GET /orgs/org/invitations',
      'GET /orgs/org/teams',
      'GET /orgs/org/teams/a/members',
      'GET /orgs/org/teams/b/members',
      'GET /orgs/org/teams/c/members',
    ]);
  });

  it('names the pending invitations when they cannot be read', async () => {
    github = await startFakeGitHub({ token: TOKEN });
    github.addOrg('org');
    github.addTeam('org', 'a');
    github.faults.add({ method: 'GET', path: '/orgs/org/invitations', status: 404 });

    await expect(read(github, ['a'])).rejects.toThrow(
      'could not read the pending invitations: GitHub answered 404',
    );
  });
});
