import { QontractError } from '@qontract/core';
import {
  type FakeGitHub,
  primaryRateLimit,
  secondaryRateLimit,
  startFakeGitHub,
} from '@qontract/testing/fake-github';
import { afterEach, describe, expect, it } from 'vitest';
import { createOctokit, type OctokitSettings } from './octokit.ts';

let github: FakeGitHub | undefined;
afterEach(async () => {
  await github?.close();
  github = undefined;
});

const TOKEN = 'ghp_secret_token_value';

function client(fake: FakeGitHub, overrides: Partial<OctokitSettings> = {}) {
  const lines: string[] = [];
  const log = {
    debug: (m: string) => lines.push(`debug ${m}`),
    warn: (m: string) => lines.push(`warn ${m}`),
  };
  const api = createOctokit({
    token: TOKEN,
    baseUrl: fake.url,
    log,
    writeIntervalMs: 0,
    retryUnitMs: 1,
    ...overrides,
  });
  return { api, lines, warnings: () => lines.filter((l) => l.startsWith('warn ')) };
}

async function orgWithTeams(n: number, options: Parameters<typeof startFakeGitHub>[0] = {}) {
  github = await startFakeGitHub({ token: TOKEN, ...options });
  github.addOrg('org');
  for (let i = 0; i < n; i++) github.addTeam('org', `team-${String(i).padStart(2, '0')}`);
  return github;
}

const statuses = (fake: FakeGitHub) => fake.requestLog.map((r) => r.status);

describe('createOctokit', () => {
  it("waits out the primary rate limit until the quota's reset, then goes on", async () => {
    // Two requests a 400 ms window; a unit of 200 ms makes every wait (at
    // least 2 units, as the reset is rounded up to the second) outlast it.
    const gh = await orgWithTeams(5, { rateLimit: { limit: 2, windowMs: 400 } });
    const { api, warnings } = client(gh, { retryUnitMs: 200 });
    const teams = await api.paginate(api.rest.teams.list, { org: 'org', per_page: 1 });
    expect(teams.map((t) => t.name)).toEqual([
      'team-00',
      'team-01',
      'team-02',
      'team-03',
      'team-04',
    ]);
    expect(statuses(gh)).toContain(403);
    expect(warnings()[0]).toMatch(
      new RegExp(
        `^warn GitHub primary rate limit on GET ${gh.url}/orgs/org/teams\\?per_page=1&page=3: waiting [\\d.]+ s before retry 1 of 3$`,
      ),
    );
  });

  it('waits out injected primary and secondary (403 and 429) rate limits', async () => {
    const gh = await orgWithTeams(1);
    gh.faults.add(primaryRateLimit({ times: 1 }));
    gh.faults.add(secondaryRateLimit({ retryAfterSeconds: 2, status: 403, times: 1 }));
    gh.faults.add(secondaryRateLimit({ retryAfterSeconds: 1, status: 429, times: 1 }));
    const { api, warnings } = client(gh, { retryUnitMs: 5 });
    const { data } = await api.rest.teams.list({ org: 'org' });
    expect(data).toHaveLength(1);
    expect(statuses(gh)).toEqual([403, 403, 429, 200]);
    expect(warnings()).toEqual([
      expect.stringMatching(
        /^warn GitHub primary rate limit on GET .*\/orgs\/org\/teams: waiting 0\.0\d+ s before retry 1 of 3$/,
      ),
      `warn GitHub secondary rate limit on GET ${gh.url}/orgs/org/teams: waiting 0.01 s before retry 2 of 3`,
      `warn GitHub secondary rate limit on GET ${gh.url}/orgs/org/teams: waiting 0.005 s before retry 3 of 3`,
    ]);
  });

  it('gives up after the set number of retries and reports the rate limit', async () => {
    const gh = await orgWithTeams(1);
    gh.faults.add(secondaryRateLimit({ times: 10 }));
    const { api, warnings } = client(gh, { retries: 2 });
    const error = await api.rest.teams.list({ org: 'org' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 403 });
    expect(String((error as Error).message)).toMatch(/secondary rate limit/);
    expect(statuses(gh)).toEqual([403, 403, 403]);
    expect(warnings().at(-1)).toBe(
      `warn GitHub secondary rate limit on GET ${gh.url}/orgs/org/teams: giving up after 2 retries (GitHub asks to wait 1 s)`,
    );
  });

  it('does not wait longer than allowed', async () => {
    const gh = await orgWithTeams(1);
    gh.faults.add(primaryRateLimit({ resetInSeconds: 3600, times: 1 }));
    const { api, warnings } = client(gh, { maxRateLimitWaitSeconds: 60 });
    await expect(api.rest.teams.list({ org: 'org' })).rejects.toMatchObject({ status: 403 });
    expect(warnings()).toEqual([
      expect.stringMatching(
        /^warn GitHub primary rate limit on GET .*\/orgs\/org\/teams: giving up, GitHub asks to wait 360\d s \(more than 60 s\)$/,
      ),
    ]);
  });

  it('retries server errors and dropped connections with backoff, but not for ever', async () => {
    const gh = await orgWithTeams(1);
    gh.faults.add({ status: 502, times: 1 });
    gh.faults.add({ drop: true, times: 1 });
    gh.faults.add({ status: 500, times: 1 });
    const { api } = client(gh);
    expect((await api.rest.teams.list({ org: 'org' })).data).toHaveLength(1);
    expect(statuses(gh)).toEqual([502, 0, 500, 200]);

    gh.faults.add({ status: 503 });
    const error = await api.rest.orgs.get({ org: 'org' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 503 });
    expect(statuses(gh).slice(4)).toEqual([503, 503, 503, 503]);
  });

  it('retries a failing write once, not as often as a read', async () => {
    const gh = await orgWithTeams(1);
    gh.faults.add({ method: 'PUT', status: 500 });
    const { api } = client(gh);
    const write = api.rest.orgs.setMembershipForUser({ org: 'org', username: 'u', role: 'member' });
    await expect(write).rejects.toMatchObject({ status: 500 });
    expect(gh.requestLog.map((r) => `${r.method} ${r.status}`)).toEqual(['PUT 500', 'PUT 500']);

    // The shared default options are not changed: reads keep their 3 retries.
    gh.faults.add({ method: 'GET', status: 500 });
    await expect(api.rest.orgs.get({ org: 'org' })).rejects.toMatchObject({ status: 500 });
    expect(statuses(gh).slice(2)).toEqual([500, 500, 500, 500]);

    const none = client(gh, { writeRetries: 0 }).api;
    gh.faults.add({ method: 'DELETE', status: 502 });
    await expect(
      none.rest.orgs.removeMembershipForUser({ org: 'org', username: 'u' }),
    ).rejects.toMatchObject({ status: 502 });
    expect(statuses(gh).slice(6)).toEqual([502]);
  });

  it('waits out a rate limit on a write, and does not retry what follows it (a 404)', async () => {
    const gh = await orgWithTeams(1);
    gh.faults.add(primaryRateLimit({ times: 1, method: 'PUT' }));
    const { api, warnings } = client(gh);
    const write = api.rest.teams.addOrUpdateMembershipForUserInOrg({
      org: 'org',
      team_slug: 'nope',
      username: 'u',
    });
    await expect(write).rejects.toMatchObject({ status: 404 });
    expect(statuses(gh)).toEqual([403, 404]);
    expect(warnings()).toEqual([
      expect.stringMatching(/primary rate limit on PUT .*retry 1 of 3$/),
    ]);
  });

  it('says that GitHub could not be reached when nothing answers, not that it answered 500', async () => {
    const closed = await startFakeGitHub({ token: TOKEN });
    await closed.close();
    const { api } = client(closed);
    const error = await api.rest.teams.list({ org: 'org' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(QontractError);
    const port = new URL(closed.url).port;
    expect((error as Error).message).toBe(
      `could not reach GitHub at ${closed.url}: connect ECONNREFUSED 127.0.0.1:${port}`,
    );
  });

  it('does not retry a refused token and never shows it, in the error or the log', async () => {
    github = await startFakeGitHub({ token: 'ghp_the_right_one' });
    github.addOrg('org');
    const { api, lines } = client(github);
    const error = await api.rest.orgs.get({ org: 'org' }).catch((e: unknown) => e);
    expect(error).toMatchObject({
      status: 401,
      message: expect.stringContaining('Bad credentials'),
    });
    expect(github.requestLog).toHaveLength(1);
    const shown = [
      String(error),
      JSON.stringify(error),
      (error as Error).stack ?? '',
      ...lines,
    ].join('\n');
    expect(shown).not.toContain(TOKEN);
  });

  it('pages through lists (octokit.paginate follows the Link header)', async () => {
    const gh = await orgWithTeams(1);
    for (let i = 0; i < 250; i++) gh.addTeamMember('org', 'team-00', `user${i}`);
    const { api } = client(gh);
    const members = await api.paginate(api.rest.teams.listMembersInOrg, {
      org: 'org',
      team_slug: 'team-00',
      per_page: 100,
    });
    expect(members).toHaveLength(250);
    expect(gh.requestLog.map((r) => r.query)).toEqual([
      '?per_page=100',
      '?per_page=100&page=2',
      '?per_page=100&page=3',
    ]);
  });

  it('talks to a GitHub Enterprise base URL (GITHUB_API with /api/v3)', async () => {
    github = await startFakeGitHub({ token: TOKEN, pathPrefix: '/api/v3' });
    github.addOrg('org');
    for (let i = 0; i < 3; i++) github.addOrgMember('org', `u${i}`);
    const { api } = client(github, { baseUrl: `${github.url}/` });
    const members = await api.paginate(api.rest.orgs.listMembers, { org: 'org', per_page: 2 });
    expect(members.map((m) => m.login)).toEqual(['u0', 'u1', 'u2']);
    expect(github.requestLog.map((r) => `${r.path} ${r.status}`)).toEqual([
      '/api/v3/orgs/org/members 200',
      '/api/v3/orgs/org/members 200',
    ]);
  });

  it("lets every read the caller starts through at once (the caller's pool is the bound)", async () => {
    const gh = await orgWithTeams(1);
    gh.latencyMs = 100;
    const { api } = client(gh);
    await Promise.all(Array.from({ length: 20 }, () => api.rest.teams.list({ org: 'org' })));
    expect(gh.inFlight.max).toBe(20);
  });

  it("spaces the starts of a client's writes, and never holds a read behind them", async () => {
    const gh = await orgWithTeams(1);
    for (const user of ['u1', 'u2', 'u3']) gh.addUser(user);
    const { api } = client(gh, { writeIntervalMs: 150 });
    const started = performance.now();
    const add = (username: string) =>
      api.rest.teams.addOrUpdateMembershipForUserInOrg({
        org: 'org',
        team_slug: 'team-00',
        username,
      });
    const writes = Promise.all([add('u1'), add('u2'), add('u3')]);
    await api.rest.teams.list({ org: 'org' });
    await writes;
    expect(performance.now() - started).toBeGreaterThanOrEqual(300);
    // The read went out with the first write, before the second.
    const methods = gh.requestLog.map((r) => r.method);
    expect(methods.slice(0, 2).sort()).toEqual(['GET', 'PUT']);
    expect(methods.slice(2)).toEqual(['PUT', 'PUT']);
  });

  it('parses JSON answers with JSON.parse, other answers as Octokit does', async () => {
    const gh = await orgWithTeams(1);
    gh.addTeamMember('org', 'team-00', 'bob');
    const json = { 'Content-Type': 'application/json; charset=utf-8' };
    // GitHub sends no integer above 2^53; this one shows which parser read the
    // body: Octokit's own (json-with-bigint) would give a BigInt.
    gh.faults.add({ path: '/big', status: 200, body: '{"id":9007199254740993}', headers: json });
    gh.faults.add({ path: '/broken', status: 200, body: '{"id":', headers: json });
    gh.faults.add({
      path: '/text',
      status: 200,
      body: 'plain',
      headers: { 'Content-Type': 'text/plain' },
    });
    gh.faults.add({ path: '/bytes', status: 200, body: new Uint8Array([1, 2, 3]) });
    const { api } = client(gh);

    expect((await api.request('GET /big')).data).toEqual({ id: 9007199254740992 });
    expect((await api.request('GET /broken')).data).toBe('{"id":');
    expect((await api.request('GET /text')).data).toBe('plain');
    const bytes = (await api.request('GET /bytes')).data as ArrayBuffer;
    expect([...new Uint8Array(bytes)]).toEqual([1, 2, 3]);
    const stream = await api.request('GET /text', { request: { parseSuccessResponseBody: false } });
    expect(await new Response(stream.data as ReadableStream).text()).toBe('plain');
    const teams = await api.paginate(api.rest.teams.list, { org: 'org', per_page: 100 });
    expect(teams.map((t) => t.slug)).toEqual(['team-00']);
    const removed = await api.rest.teams.removeMembershipForUserInOrg({
      org: 'org',
      team_slug: 'team-00',
      username: 'bob',
    });
    expect(removed).toMatchObject({ status: 204, data: '' });
  });

  it('stops when the run is aborted', async () => {
    const gh = await orgWithTeams(1);
    const controller = new AbortController();
    controller.abort();
    const { api } = client(gh, { signal: controller.signal });
    await expect(api.rest.teams.list({ org: 'org' })).rejects.toThrow();
    expect(gh.requestLog).toHaveLength(0);
  });
});
