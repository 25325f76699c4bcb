import { Readable } from 'node:stream';
import { gunzipSync, inflateRawSync } from 'node:zlib';
import { Octokit } from '@octokit/rest';
import { extract } from 'tar-stream';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type FakeGitHub,
  type FakeGitHubOptions,
  primaryRateLimit,
  secondaryRateLimit,
  startFakeGitHub,
} from './fake-github.ts';

let github: FakeGitHub | undefined;
afterEach(async () => {
  await github?.close();
  github = undefined;
});

const start = async (options: FakeGitHubOptions = {}) => {
  github = await startFakeGitHub({ token: 'ghp_admin', ...options });
  return github;
};
const quiet = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
const octokit = (fake: FakeGitHub, token = fake.token) =>
  new Octokit({ auth: token, baseUrl: fake.url, log: quiet });
const get = (fake: FakeGitHub, path: string, token = fake.token) =>
  fetch(`${fake.url}${path}`, { headers: { authorization: `token ${token}` } });

describe('fake GitHub: organisations, teams and invitations', () => {
  it('adds a non-member to a team as a pending invitation, as GitHub does', async () => {
    const gh = await start();
    gh.addOrg('org');
    gh.addTeam('org', 'Team A');
    gh.addUser('Alice');
    const api = octokit(gh);

    const res = await api.rest.teams.addOrUpdateMembershipForUserInOrg({
      org: 'org',
      team_slug: 'team-a',
      username: 'alice',
    });
    expect(res.data.state).toBe('pending');
    expect(gh.teamMembers('org', 'Team A')).toEqual([]);
    expect(gh.orgMembers('org')).toEqual([]);
    expect(gh.invitations('org')).toEqual([
      { id: expect.any(Number), login: 'Alice', role: 'direct_member', teams: ['team-a'] },
    ]);
    const teamInvitations = await api.paginate(api.rest.teams.listPendingInvitationsInOrg, {
      org: 'org',
      team_slug: 'team-a',
    });
    expect(teamInvitations.map((i) => i.login)).toEqual(['Alice']);

    gh.acceptInvitation('org', 'alice');
    expect(gh.orgMembers('org')).toEqual(['Alice']);
    expect(gh.teamMembers('org', 'team-a')).toEqual(['Alice']);
    expect(gh.invitations('org')).toEqual([]);
    const again = await api.rest.teams.addOrUpdateMembershipForUserInOrg({
      org: 'org',
      team_slug: 'team-a',
      username: 'alice',
    });
    expect(again.data.state).toBe('active');
  });

  it('invites non-members to the organisation and removes members from it and its teams', async () => {
    const gh = await start();
    gh.addOrg('org');
    gh.addTeam('org', 't1');
    gh.addTeam('org', 't2');
    gh.addTeamMember('org', 't1', 'bob');
    gh.addTeamMember('org', 't2', 'bob');
    gh.addTeamMember('org', 't2', 'carol');
    gh.addUser('dave');
    const api = octokit(gh);

    const invite = await api.rest.orgs.setMembershipForUser({ org: 'org', username: 'dave' });
    expect(invite.data).toMatchObject({ state: 'pending', role: 'member' });
    const member = await api.rest.orgs.setMembershipForUser({ org: 'org', username: 'carol' });
    expect(member.data).toMatchObject({ state: 'active', role: 'member' });
    expect(gh.invitations('org').map((i) => i.login)).toEqual(['dave']);

    await api.rest.orgs.removeMembershipForUser({ org: 'org', username: 'bob' });
    expect(gh.orgMembers('org')).toEqual(['carol']);
    expect(gh.teamMembers('org', 't1')).toEqual([]);
    expect(gh.teamMembers('org', 't2')).toEqual(['carol']);
    await api.rest.orgs.removeMembershipForUser({ org: 'org', username: 'dave' });
    expect(gh.invitations('org')).toEqual([]);
    await api.rest.orgs.removeMember({ org: 'org', username: 'carol' });
    expect(gh.orgMembers('org')).toEqual([]);
    expect(gh.teamMembers('org', 't2')).toEqual([]);

    const unknown = await api.rest.users.getByUsername({ username: 'nobody' }).catch((e) => e);
    expect(unknown.status).toBe(404);
    expect(unknown.response.data).toMatchObject({ message: 'Not Found' });
  });

  it("creates secret teams with GitHub's slug, the creating account as maintainer, 422 on a taken name", async () => {
    const gh = await start();
    gh.addOrg('org');
    gh.addToken('ghp_bot', { user: 'the-bot' });
    gh.addOrgMember('org', 'the-bot', 'admin');
    const api = octokit(gh, 'ghp_bot');

    const created = await api.rest.teams.create({ org: 'org', name: 'App SRE: Admins' });
    expect(created.data).toMatchObject({
      name: 'App SRE: Admins',
      slug: 'app-sre-admins',
      privacy: 'secret',
      members_count: 1,
    });
    expect(gh.teamMembers('org', 'app-sre-admins')).toEqual(['the-bot']);
    const taken = await api.rest.teams
      .create({ org: 'org', name: 'app sre: admins' })
      .catch((e) => e);
    expect(taken.status).toBe(422);
    expect(taken.response.data).toMatchObject({
      message: 'Validation Failed',
      errors: [{ resource: 'Team', code: 'already_exists', field: 'name' }],
    });
    expect(gh.teams('org').map((t) => t.slug)).toEqual(['app-sre-admins']);
    expect(gh.mutatingRequests().map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual([
      'POST /orgs/org/teams 201',
      'POST /orgs/org/teams 422',
    ]);
  });

  it('refuses unknown tokens (401 Bad credentials) and tokens of other organisations (403)', async () => {
    const gh = await start();
    gh.addOrg('a');
    gh.addOrg('b');
    gh.addToken('ghp_a', { orgs: ['a'] });
    const bad = await get(gh, '/orgs/a/teams', 'ghp_wrong');
    expect(bad.status).toBe(401);
    expect(await bad.json()).toMatchObject({ message: 'Bad credentials' });
    expect((await get(gh, '/orgs/a/teams', 'ghp_a')).status).toBe(200);
    expect((await get(gh, '/orgs/b', 'ghp_a')).status).toBe(200);
    expect((await get(gh, '/orgs/b/teams', 'ghp_a')).status).toBe(403);
    expect((await get(gh, '/orgs/b/teams')).status).toBe(200);
  });
});

describe('fake GitHub: the URLs it hands out by id', () => {
  it('serves under a team URL (`/organizations/{org_id}/team/{team_id}`) what it serves under the slug', async () => {
    const gh = await start();
    gh.addToken('ghp_other', { orgs: ['elsewhere'] });
    gh.addOrg('org');
    const team = gh.addTeam('org', 'Team A');
    gh.addTeamMember('org', 'team-a', 'alice', 'maintainer');
    gh.addTeamMember('org', 'team-a', 'bob');
    gh.addInvitation('org', 'carol', { teams: ['team-a'] });
    const api = octokit(gh);
    const listed = await api.rest.teams.list({ org: 'org' });
    const url = listed.data[0]!.url;
    const orgId = (await api.rest.orgs.get({ org: 'org' })).data.id;
    expect(url).toBe(`${gh.url}/organizations/${orgId}/team/${team.id}`);

    // What another client does with the URL: request it and what lies under it.
    const byId = await api.request(`GET ${url}`);
    expect(byId.data).toMatchObject({ id: team.id, slug: 'team-a', members_count: 2 });
    const members = await api.request(`GET ${url}/members`);
    expect((members.data as Array<{ login: string }>).map((m) => m.login)).toEqual([
      'alice',
      'bob',
    ]);
    const maintainers = await api.request(`GET ${url}/members?role=maintainer`);
    expect((maintainers.data as Array<{ login: string }>).map((m) => m.login)).toEqual(['alice']);
    expect((await api.request(`GET ${url}/memberships/alice`)).data).toMatchObject({
      role: 'maintainer',
      state: 'active',
    });
    expect((await api.request(`GET ${url}/memberships/carol`)).data).toMatchObject({
      role: 'member',
      state: 'pending',
    });
    expect((await api.request(`GET ${url}/repos`)).data).toEqual([]);
    await api.request(`PUT ${url}/memberships/carol`, { role: 'member' });
    await api.request(`DELETE ${url}/memberships/bob`);
    expect(gh.teamMembers('org', 'team-a')).toEqual(['alice']);

    expect((await get(gh, `/organizations/${orgId}/team/999/members`)).status).toBe(404);
    expect((await get(gh, `/organizations/999/team/${team.id}/members`)).status).toBe(404);
    expect(
      (await get(gh, `/organizations/${orgId}/team/${team.id}/members`, 'ghp_other')).status,
    ).toBe(403);
    const invitation = gh.invitations('org')[0]!;
    const teams = await get(gh, `/organizations/${orgId}/invitations/${invitation.id}/teams`);
    expect(((await teams.json()) as Array<{ slug: string }>).map((t) => t.slug)).toEqual([
      'team-a',
    ]);
    expect(
      (await api.rest.orgs.getMembershipForUser({ org: 'org', username: 'carol' })).data,
    ).toMatchObject({ state: 'pending', role: 'member' });
    expect((await get(gh, `/orgs/org/memberships/nobody`)).status).toBe(404);
  });
});

describe('fake GitHub: pagination', () => {
  it("pages with per_page (default 30, at most 100) and GitHub's Link header", async () => {
    const gh = await start();
    gh.addOrg('org');
    for (let i = 0; i < 250; i++) gh.addOrgMember('org', `user${String(i).padStart(3, '0')}`);

    const first = await get(gh, '/orgs/org/members');
    expect(await first.json()).toHaveLength(30);
    expect(first.headers.get('link')).toBe(
      `<${gh.url}/orgs/org/members?per_page=30&page=2>; rel="next", <${gh.url}/orgs/org/members?per_page=30&page=9>; rel="last"`,
    );
    const middle = await get(gh, '/orgs/org/members?per_page=100&page=2');
    expect(middle.headers.get('link')).toBe(
      [
        `<${gh.url}/orgs/org/members?per_page=100&page=1>; rel="prev"`,
        `<${gh.url}/orgs/org/members?per_page=100&page=3>; rel="next"`,
        `<${gh.url}/orgs/org/members?per_page=100&page=3>; rel="last"`,
        `<${gh.url}/orgs/org/members?per_page=100&page=1>; rel="first"`,
      ].join(', '),
    );
    const last = await get(gh, '/orgs/org/members?per_page=500&page=3');
    expect(await last.json()).toHaveLength(50);
    expect(last.headers.get('link')).toBe(
      `<${gh.url}/orgs/org/members?per_page=100&page=2>; rel="prev", <${gh.url}/orgs/org/members?per_page=100&page=1>; rel="first"`,
    );

    const api = octokit(gh);
    const all = await api.paginate(api.rest.orgs.listMembers, { org: 'org', per_page: 100 });
    expect(all.map((u) => u.login)).toEqual(gh.orgMembers('org'));
  });

  it('stays quick at benchmark scale: 50 orgs × 20 teams × 100 members', async () => {
    const gh = await start();
    for (let o = 0; o < 50; o++) {
      gh.addOrg(`org${o}`);
      for (let t = 0; t < 20; t++) {
        gh.addTeam(`org${o}`, `team${t}`);
        for (let m = 0; m < 100; m++) gh.addTeamMember(`org${o}`, `team${t}`, `u${o}-${t}-${m}`);
      }
    }
    const api = octokit(gh);
    const members = await Promise.all(
      gh.teams('org49').map((t) =>
        api.paginate(api.rest.teams.listMembersInOrg, {
          org: 'org49',
          team_slug: t.slug,
          per_page: 100,
        }),
      ),
    );
    expect(members.map((m) => m.length)).toEqual(Array(20).fill(100));
    const orgMembers = await api.paginate(api.rest.orgs.listMembers, {
      org: 'org0',
      per_page: 100,
    });
    expect(orgMembers).toHaveLength(2000);
    expect(gh.requestLog).toHaveLength(20 + 20);
  });
});

describe('fake GitHub: rate limits', () => {
  it('sends x-ratelimit headers, answers 403 when the quota is used up, and resets after the window', async () => {
    let now = Date.UTC(2024, 0, 1, 12, 0, 0);
    const gh = await start({ rateLimit: { limit: 2, windowMs: 60_000 }, now: () => now });
    gh.addOrg('org');
    const one = await get(gh, '/orgs/org');
    expect(
      Object.fromEntries([...one.headers].filter(([h]) => h.startsWith('x-ratelimit'))),
    ).toEqual({
      'x-ratelimit-limit': '2',
      'x-ratelimit-remaining': '1',
      'x-ratelimit-used': '1',
      'x-ratelimit-reset': String(now / 1000 + 60),
      'x-ratelimit-resource': 'core',
    });
    expect((await get(gh, '/orgs/org')).status).toBe(200);
    const over = await get(gh, '/orgs/org');
    expect(over.status).toBe(403);
    expect(over.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(((await over.json()) as { message: string }).message).toMatch(
      /^API rate limit exceeded/,
    );
    expect(gh.quota('ghp_admin')).toMatchObject({ remaining: 0, used: 2 });

    now += 60_000;
    expect((await get(gh, '/orgs/org')).status).toBe(200);
    expect(gh.quota('ghp_admin')).toMatchObject({ remaining: 1, used: 1 });

    gh.addToken('ghp_small', { rateLimit: { limit: 1 } });
    expect((await get(gh, '/orgs/org', 'ghp_small')).status).toBe(200);
    expect((await get(gh, '/orgs/org', 'ghp_small')).status).toBe(403);
    gh.resetRateLimits();
    expect((await get(gh, '/orgs/org', 'ghp_small')).status).toBe(200);
  });

  it('injects secondary and primary rate limits as GitHub answers them', async () => {
    const gh = await start();
    gh.addOrg('org');
    gh.faults.add(secondaryRateLimit({ retryAfterSeconds: 3, status: 429, path: '/orgs/org' }));
    const secondary = await get(gh, '/orgs/org');
    expect(secondary.status).toBe(429);
    expect(secondary.headers.get('retry-after')).toBe('3');
    expect(((await secondary.json()) as { message: string }).message).toMatch(
      /secondary rate limit/,
    );

    gh.faults.add(primaryRateLimit({ resetInSeconds: 5 }));
    const primary = await get(gh, '/orgs/org');
    expect(primary.status).toBe(403);
    expect(primary.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(Number(primary.headers.get('x-ratelimit-reset'))).toBeGreaterThan(Date.now() / 1000);
    expect((await get(gh, '/orgs/org')).status).toBe(200);
  });
});

describe('fake GitHub: repository files', () => {
  it('serves contents, blobs and commits under a GitHub Enterprise prefix', async () => {
    const gh = await start({
      pathPrefix: '/api/v3',
      files: [{ repo: 'o/r', ref: 'main', path: 'a/b.txt', content: 'x' }],
    });
    gh.addCommit('o/r', 'main', 'c'.repeat(40));
    expect(gh.url).toMatch(/\/api\/v3$/);
    const api = octokit(gh);
    const file = await api.rest.repos.getContent({
      owner: 'o',
      repo: 'r',
      path: 'a/b.txt',
      ref: 'main',
    });
    expect(file.data).toMatchObject({ type: 'file', path: 'a/b.txt', encoding: 'base64' });
    const commit = await api.rest.repos.getCommit({ owner: 'o', repo: 'r', ref: 'main' });
    expect(commit.data.sha).toBe('c'.repeat(40));
    expect((await fetch(`${new URL(gh.url).origin}/repos/o/r/commits/main`)).status).toBe(401);
    expect(
      (
        await fetch(`${new URL(gh.url).origin}/repos/o/r/commits/main`, {
          headers: { authorization: `token ${gh.token}` },
        })
      ).status,
    ).toBe(404);
  });
});

describe('fake GitHub: git data, branches, tags and archives', () => {
  it('serves what a repository answer links to: trees, commits, branches, tags, tarball and zipball', async () => {
    const gh = await start({ pathPrefix: '/api/v3' });
    gh.addRepo('o', 'r');
    const first = gh.pushCommit('o/r', 'main', { 'README.md': 'hi\n', 'deploy/a.yaml': 'a: 1\n' });
    gh.tag('o/r', 'v1', first);
    const second = gh.pushCommit('o/r', 'main', { 'deploy/sub/b.yaml': 'b: 2\n' });
    gh.pushCommit('o/r', 'feature', { 'x.txt': 'x' });
    const api = octokit(gh);
    const owner = 'o';
    const repo = 'r';

    const commit = await api.rest.git.getCommit({ owner, repo, commit_sha: second });
    expect(commit.data.parents.map((p) => p.sha)).toEqual([first]);
    const root = await api.rest.git.getTree({ owner, repo, tree_sha: commit.data.tree.sha });
    expect(root.data.tree.map((e) => [e.path, e.type])).toEqual([
      ['README.md', 'blob'],
      ['deploy', 'tree'],
    ]);
    const deploy = root.data.tree[1]!;
    const sub = await api.rest.git.getTree({ owner, repo, tree_sha: deploy.sha! });
    expect(sub.data.tree.map((e) => e.path)).toEqual(['a.yaml', 'sub']);
    const recursive = await api.rest.git.getTree({ owner, repo, tree_sha: 'main', recursive: '1' });
    expect(recursive.data.tree.map((e) => e.path)).toEqual([
      'README.md',
      'deploy',
      'deploy/a.yaml',
      'deploy/sub',
      'deploy/sub/b.yaml',
    ]);

    const branches = await api.rest.repos.listBranches({ owner, repo });
    expect(branches.data.map((b) => b.name)).toEqual(['feature', 'main']);
    const commits = await api.rest.repos.listCommits({ owner, repo });
    expect(commits.data.map((c) => c.sha)).toEqual([second, first]);
    const tags = await api.rest.repos.listTags({ owner, repo });
    expect(tags.data).toMatchObject([
      {
        name: 'v1',
        commit: { sha: first },
        tarball_url: `${gh.url}/repos/o/r/tarball/refs/tags/v1`,
      },
    ]);

    // The archive links redirect to the host's codeload, as on GitHub Enterprise.
    const redirect = await fetch(tags.data[0]!.tarball_url, {
      headers: { authorization: `token ${gh.token}` },
      redirect: 'manual',
    });
    expect(redirect.status).toBe(302);
    const codeload = `${new URL(gh.url).origin}/_codeload/o/r/legacy.tar.gz/${first}`;
    expect(redirect.headers.get('location')).toBe(codeload);
    const tarball = await api.rest.repos.downloadTarballArchive({ owner, repo, ref: 'v1' });
    const names: string[] = [];
    const tar = extract();
    tar.on('entry', (header, stream, next) => {
      names.push(header.name);
      stream.resume();
      stream.on('end', next);
    });
    Readable.from(gunzipSync(Buffer.from(tarball.data as ArrayBuffer))).pipe(tar);
    await new Promise<void>((resolve) => tar.on('finish', () => resolve()));
    const top = `o-r-${first.slice(0, 7)}`;
    expect(names).toEqual([
      `${top}/`,
      `${top}/README.md`,
      `${top}/deploy/`,
      `${top}/deploy/a.yaml`,
    ]);
    const zipball = await api.rest.repos.downloadZipballArchive({ owner, repo, ref: 'main' });
    const files = unzip(Buffer.from(zipball.data as ArrayBuffer));
    const zipTop = `o-r-${second.slice(0, 7)}`;
    expect([...files.keys()]).toContain(`${zipTop}/deploy/`);
    expect(files.get(`${zipTop}/deploy/sub/b.yaml`)).toBe('b: 2\n');
  });
});

/** The files of a zip, read as unzip does: from the central directory to each local header. */
function unzip(zip: Buffer): Map<string, string> {
  const end = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  const count = zip.readUInt16LE(end + 10);
  let at = zip.readUInt32LE(end + 16);
  const out = new Map<string, string>();
  for (let i = 0; i < count; i++) {
    const method = zip.readUInt16LE(at + 10);
    const size = zip.readUInt32LE(at + 20);
    const nameLength = zip.readUInt16LE(at + 28);
    const local = zip.readUInt32LE(at + 42);
    const name = zip.subarray(at + 46, at + 46 + nameLength).toString();
    const start = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
    const data = zip.subarray(start, start + size);
    out.set(name, (method === 8 ? inflateRawSync(data) : data).toString());
    at += 46 + nameLength + zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
  }
  return out;
}
