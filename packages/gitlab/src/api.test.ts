import { QontractError } from '@qontract/core';
import { type FakeGitlab, startFakeGitlab } from '@qontract/testing/fake-gitlab';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type ClosableGitlabApi,
  createGitlabApi,
  type GitlabApiOptions,
  GitlabNotFoundError,
} from './api.ts';

let fake: FakeGitlab | undefined;
let api: ClosableGitlabApi | undefined;
afterEach(async () => {
  await api?.close();
  await fake?.close();
  api = undefined;
  fake = undefined;
});

const TOKEN = 'glpat-s3cr3t-t0ken';

async function setUp(
  options: Partial<GitlabApiOptions> = {},
  fakeOptions: Parameters<typeof startFakeGitlab>[0] = {},
) {
  const f = await startFakeGitlab({ token: TOKEN, ...fakeOptions });
  fake = f;
  const waits: number[] = [];
  const warnings: string[] = [];
  api = createGitlabApi({
    url: `${f.url}/`,
    token: TOKEN,
    sleep: async (ms) => {
      waits.push(ms);
    },
    log: { warn: (m: string) => warnings.push(m) },
    ...options,
  });
  return { fake: f, api, waits, warnings };
}

/** The failure of `p`, which must fail. */
async function failure(p: Promise<unknown>): Promise<Error> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(Error);
  return e as Error;
}

describe('createGitlabApi: groups and members', () => {
  it('reads a group by full path and its direct members over every page, without bots', async () => {
    const { fake, api } = await setUp();
    fake.addGroup('org/team', { name: 'Team' });
    for (let i = 0; i < 230; i++) fake.addGroupMember('org/team', `user${i}`, 30);
    fake.addGroupMember('org/team', 'group_7_bot_9f86d081884c7d65', 40);
    fake.addGroupMember('org/team', 'lead', 40);
    expect(api.url).toBe(fake.url);

    const group = await api.getGroup('org/team');
    expect(group).toEqual({ id: group.id, name: 'Team', fullPath: 'org/team' });
    const members = await api.listGroupMembers(group);
    expect(members).toHaveLength(231);
    expect(members.at(-1)).toMatchObject({ username: 'lead', accessLevel: 40 });
    expect(members.some((m) => m.username.startsWith('group_'))).toBe(false);
    expect(fake.requestLog.map((r) => `${r.path}${r.query}`)).toEqual([
      '/api/v4/groups/org%2Fteam?with_projects=false',
      `/api/v4/groups/${group.id}/members?per_page=100`,
      `/api/v4/groups/${group.id}/members?per_page=100&page=2`,
      `/api/v4/groups/${group.id}/members?per_page=100&page=3`,
    ]);
  });

  it('names a missing group', async () => {
    const { api } = await setUp();
    const e = await failure(api.getGroup('org/nope'));
    expect(e).toBeInstanceOf(GitlabNotFoundError);
    expect(e.message).toBe(`GitLab group 'org/nope': not found on GitLab ${fake?.url}`);
  });

  it('adds, changes and removes members; adding a member again changes the level', async () => {
    const { fake, api } = await setUp();
    const group = await api.getGroup(fake.addGroup('team').fullPath);
    fake.addUser('alice');
    fake.addGroupMember('team', 'bob', 30);
    await api.addGroupMember(group, 'alice', 40);
    await api.addGroupMember(group, 'bob', 50);
    expect(fake.groupMembers('team')).toEqual([
      { username: 'bob', accessLevel: 50 },
      { username: 'alice', accessLevel: 40 },
    ]);
    const [bob, alice] = await api.listGroupMembers(group);
    await api.changeGroupMemberAccess(group, alice?.id ?? 0, 20);
    await api.removeGroupMember(group, bob?.id ?? 0);
    expect(fake.groupMembers('team')).toEqual([{ username: 'alice', accessLevel: 20 }]);
    expect(fake.mutatingRequests().map((r) => `${r.method} ${r.status}`)).toEqual([
      'POST 201',
      'POST 409',
      'PUT 200',
      'PUT 200',
      'DELETE 204',
    ]);
  });

  it('refuses an unknown user, naming it, and writes nothing', async () => {
    const { fake, api } = await setUp();
    const group = await api.getGroup(fake.addGroup('team').fullPath);
    const e = await failure(api.addGroupMember(group, 'ghost', 30));
    expect(e).toBeInstanceOf(QontractError);
    expect(e.message).toBe(`GitLab user 'ghost' not found on GitLab ${fake.url}`);
    expect(fake.mutatingRequests()).toEqual([]);
  });

  it('tells whether a user exists, by username whatever its case', async () => {
    const { fake, api } = await setUp();
    fake.addUser('Alice');
    expect(await api.userExists('alice')).toBe(true);
    expect(await api.userExists('ghost')).toBe(false);
  });

  it("names the group and GitLab's reason when a write is refused", async () => {
    const { fake, api } = await setUp();
    const group = await api.getGroup(fake.addGroup('team').fullPath);
    fake.addUser('alice');
    const e = await failure(api.addGroupMember(group, 'alice', 33));
    expect(e.message).toBe(
      `adding user 'alice' to GitLab group 'team': GitLab ${fake.url} answered 400 {"access_level":["is not included in the list"]}`,
    );
  });
});

describe('createGitlabApi: projects and repositories', () => {
  it('lists projects, creates one and initiates it as a saas bundle repository', async () => {
    const { fake, api } = await setUp();
    fake.addGroup('bundles');
    for (let i = 0; i < 120; i++) fake.addProject('bundles', `p${i}`);
    const group = await api.getGroup('bundles');
    expect((await api.listGroupProjects(group)).map((p) => p.name)).toHaveLength(120);

    const project = await api.createProject(group, 'new-bundle');
    expect(project).toEqual({
      id: project.id,
      name: 'new-bundle',
      path: 'new-bundle',
      webUrl: `${fake.url}/bundles/new-bundle`,
    });
    await api.initiateSaasBundleRepo(project);
    expect(fake.branches('bundles/new-bundle')).toEqual(['master', 'production', 'staging']);
    expect(fake.file('bundles/new-bundle', 'production', 'README.md')).toBe(
      'Use the staging or the production branches.',
    );
    expect(api.projectUrl('bundles', 'new-bundle')).toBe(`${fake.url}/bundles/new-bundle`);

    const taken = await failure(api.createProject(group, 'p1'));
    expect(taken.message).toBe(
      `creating project 'p1' in GitLab group 'bundles': GitLab ${fake.url} answered 400 {"name":["has already been taken"],"path":["has already been taken"]}`,
    );
  });

  it('reads files and resolves refs, naming what is missing', async () => {
    const { fake, api } = await setUp();
    fake.addGroup('app');
    fake.addProject('app', 'saas');
    const sha = fake.addFile('app/saas', 'main', 'deploy/saas.yaml', 'name: x\n');
    expect(await api.getFile('app/saas', '/deploy/saas.yaml', 'main')).toBe('name: x\n');
    expect(await api.getFile('app/saas', 'deploy/saas.yaml', sha)).toBe('name: x\n');
    expect(await api.resolveRef('app/saas', 'main')).toBe(sha);
    const noFile = await failure(api.getFile('app/saas', 'nope.yaml', 'main'));
    expect(noFile).toBeInstanceOf(GitlabNotFoundError);
    expect(noFile.message).toBe(
      `file 'nope.yaml' at 'main' of GitLab project 'app/saas': not found on GitLab ${fake.url}`,
    );
    const noRef = await failure(api.resolveRef('app/other', 'main'));
    expect(noRef).toBeInstanceOf(GitlabNotFoundError);
    expect(noRef.message).toContain("ref 'main' of GitLab project 'app/other'");
  });

  it('resolves refs through the commit list (ref_name, one per page), as the original', async () => {
    const { fake, api } = await setUp();
    fake.addGroup('app');
    fake.addProject('app', 'saas');
    const first = fake.pushCommit('app/saas', 'main', { 'a.yaml': 'a' });
    fake.tag('app/saas', 'v1', first);
    const second = fake.pushCommit('app/saas', 'main', { 'a.yaml': 'b' });
    expect(await api.resolveRef('app/saas', 'main')).toBe(second);
    expect(await api.resolveRef('app/saas', 'v1')).toBe(first);
    expect(await api.resolveRef('app/saas', first.slice(0, 10))).toBe(first);
    const lists = fake.requestLog.filter((r) => r.path.endsWith('/repository/commits'));
    expect(lists.map((r) => new URLSearchParams(r.query).get('per_page'))).toEqual(['1', '1', '1']);
    const unknown = await failure(api.resolveRef('app/saas', 'nope'));
    expect(unknown).toBeInstanceOf(GitlabNotFoundError);
    expect(unknown.message).toBe(
      `ref 'nope' of GitLab project 'app/saas': not found on GitLab ${fake.url}`,
    );
  });

  it('lists the files of a directory at a sha from the repository archive', async () => {
    const { fake, api } = await setUp();
    fake.addGroup('app');
    fake.addProject('app', 'saas');
    const sha = fake.pushCommit('app/saas', 'main', {
      'deploy/b.yaml': 'kind: B\n',
      'deploy/a.yaml': 'kind: A\n',
      'deploy/sub/c.yaml': 'kind: C\n',
      'deployments/x.yaml': 'not in deploy',
      'other.yaml': 'kind: O\n',
    });
    fake.pushCommit('app/saas', 'main', { 'deploy/a.yaml': null });
    expect(await api.listFiles('app/saas', '/deploy/', sha)).toEqual([
      { name: 'a.yaml', content: 'kind: A\n' },
      { name: 'b.yaml', content: 'kind: B\n' },
      { name: 'sub/c.yaml', content: 'kind: C\n' },
    ]);
    const archives = fake.requestLog.filter((r) => r.path.endsWith('/repository/archive.tar.gz'));
    expect(archives).toHaveLength(1);
    expect(Object.fromEntries(new URLSearchParams(archives[0]!.query))).toEqual({
      sha,
      path: 'deploy',
    });
    const missing = await failure(api.listFiles('app/saas', 'nope', sha));
    expect(missing).toBeInstanceOf(GitlabNotFoundError);
    expect(missing.message).toBe(
      `directory 'nope' at '${sha}' of GitLab project 'app/saas': not found on GitLab ${fake.url}`,
    );
  });
});

describe('createGitlabApi: merge requests', () => {
  it('opens a merge request from a new branch with a commit, lists, comments and closes it', async () => {
    const { fake, api } = await setUp();
    fake.addGroup('service');
    fake.addProject('service', 'app-interface');
    fake.addFile('service/app-interface', 'master', 'data/s.yml', 'ref: a\n');
    const project = 'service/app-interface';
    expect(await api.defaultBranch(project)).toBe('master');
    await api.createBranch(project, 'SAPM-1', 'master');
    expect(await api.hasChanges(project, 'master', 'SAPM-1')).toBe(false);
    await api.commitFiles(project, 'SAPM-1', 'auto-promote subscriber', [
      { action: 'update', filePath: 'data/s.yml', content: 'ref: b\n' },
    ]);
    expect(await api.hasChanges(project, 'master', 'SAPM-1')).toBe(true);
    const mr = await api.createMergeRequest(project, {
      sourceBranch: 'SAPM-1',
      targetBranch: 'master',
      title: 'T',
      description: 'D',
      labels: ['SAPM', 'bot/approved: progressive-delivery'],
      removeSourceBranch: true,
    });
    expect(mr).toMatchObject({ iid: 1, labels: ['SAPM', 'bot/approved: progressive-delivery'] });
    fake.addMergeRequestPipeline(project, 1, 'success');
    fake.addMergeRequestPipeline(project, 1, 'failed');
    expect(await api.mergeRequestPipelineStatuses(project, 1)).toEqual(['failed', 'success']);
    expect(await api.listOpenMergeRequests(project)).toEqual([
      {
        iid: 1,
        title: 'T',
        description: 'D',
        labels: ['SAPM', 'bot/approved: progressive-delivery'],
        sourceBranch: 'SAPM-1',
        webUrl: `${fake.url}/service/app-interface/-/merge_requests/1`,
        hasConflicts: false,
      },
    ]);
    await api.addMergeRequestNote(project, 1, 'why');
    await api.closeMergeRequest(project, 1);
    await api.deleteBranch(project, 'SAPM-1');
    expect(await api.listOpenMergeRequests(project)).toEqual([]);
    expect(fake.mergeRequests(project)[0]).toMatchObject({ state: 'closed', notes: ['why'] });
    expect(fake.branches(project)).toEqual(['master']);
  });

  it('names the merge request or branch when GitLab refuses', async () => {
    const { fake, api } = await setUp();
    fake.addGroup('service');
    fake.addProject('service', 'app-interface');
    fake.addFile('service/app-interface', 'master', 'data/s.yml', 'ref: a\n');
    const closing = await failure(api.closeMergeRequest('service/app-interface', 7));
    expect(closing.message).toBe(
      `closing merge request !7 of GitLab project 'service/app-interface': not found on GitLab ${fake.url}`,
    );
    const deleting = await failure(api.deleteBranch('service/app-interface', 'gone'));
    expect(deleting.message).toContain("deleting branch 'gone' of GitLab project");
    expect(deleting.message).not.toContain(TOKEN);
  });
});

describe('createGitlabApi: the request policy', () => {
  it('waits out 429 answers for the time Retry-After names', async () => {
    const { fake, api, waits, warnings } = await setUp();
    fake.addGroup('team');
    fake.faults.add({
      path: '/groups/',
      status: 429,
      body: 'Retry later\n',
      headers: { 'Retry-After': '7', 'content-type': 'text/plain' },
      times: 2,
    });
    expect((await api.getGroup('team')).fullPath).toBe('team');
    expect(waits).toEqual([7000, 7000]);
    expect(fake.requestLog.map((r) => r.status)).toEqual([429, 429, 200]);
    expect(warnings[0]).toBe(`GitLab ${fake.url}: GET groups/team got 429; retry 1 in 7.0 s`);
  });

  it('retries a POST refused with 429 too', async () => {
    const { fake, api, waits } = await setUp();
    const group = await api.getGroup(fake.addGroup('team').fullPath);
    fake.faults.add({ method: 'POST', status: 429, headers: { 'Retry-After': '2' }, times: 1 });
    await api.createProject(group, 'x');
    expect(waits).toEqual([2000]);
    expect(fake.projects('team').map((p) => p.name)).toEqual(['x']);
  });

  it("waits out the fake's quota in real time", async () => {
    const f = await startFakeGitlab({ token: TOKEN, quota: { limit: 3, windowSeconds: 1 } });
    fake = f;
    api = createGitlabApi({ url: f.url, token: TOKEN, log: { warn: () => {} } });
    f.addGroup('team');
    for (let i = 0; i < 15; i++) f.addGroupMember('team', `u${i}`, 30);
    const group = await api.getGroup('team');
    await api.addGroupMember(group, 'u0', 40);
    expect(f.groupMembers('team')[0]).toEqual({ username: 'u0', accessLevel: 40 });
    expect(f.requestLog.filter((r) => r.status === 429).length).toBeGreaterThan(0);
  });

  it('retries 5xx answers to reads with an exponential backoff, but not to creations', async () => {
    const { fake, api, waits } = await setUp({ backoffMs: 100, maxBackoffMs: 300 });
    fake.addGroup('team');
    fake.faults.add({ method: 'GET', status: 503, times: 4 });
    await api.getGroup('team');
    expect(waits).toEqual([100, 200, 300, 300]);
    fake.faults.add({ method: 'POST', status: 502, times: 1 });
    const group = await api.getGroup('team');
    const e = await failure(api.createProject(group, 'x'));
    expect(e.message).toBe(
      `creating project 'x' in GitLab group 'team': GitLab ${fake.url} answered 502 injected fault`,
    );
  });

  it('gives up after the configured retries', async () => {
    const { fake, api, waits } = await setUp({ retries: 2 });
    fake.faults.add({ status: 429, headers: { 'Retry-After': '1' } });
    const e = await failure(api.getGroup('team'));
    expect(e.message).toBe(`GitLab group 'team': GitLab ${fake.url} answered 429 injected fault`);
    expect(waits).toEqual([1000, 1000]);
    expect(fake.requestLog).toHaveLength(3);
  });

  it('gives a refused connection up at once (nothing listens there): no retry', async () => {
    const { fake, api, waits } = await setUp();
    await fake.close();
    const e = await failure(api.getGroup('team'));
    expect(e.message).toContain('ECONNREFUSED');
    expect(waits).toEqual([]);
  });

  it('keeps the token out of errors (401 included)', async () => {
    const { fake } = await setUp();
    fake.addGroup('team');
    const wrong = createGitlabApi({ url: fake.url, token: 'glpat-wrong-token' });
    const e = await failure(wrong.getGroup('team'));
    await wrong.close();
    expect(e).toBeInstanceOf(QontractError);
    expect(e.message).toBe(`GitLab group 'team': GitLab ${fake.url} answered 401 Unauthorized`);
    expect(JSON.stringify(e, Object.getOwnPropertyNames(e))).not.toContain('glpat-wrong-token');
    expect(e.cause).toBeUndefined();
  });

  it('abandons an attempt after the time-out and stops with the run', async () => {
    const { fake, api } = await setUp({ timeoutMs: 150, retries: 0 });
    fake.addGroup('team');
    fake.faults.add({ hang: true, times: 1 });
    const slow = await failure(api.getGroup('team'));
    expect(slow.message).toBe(
      `GitLab group 'team': GitLab ${fake.url}: GET groups/team: no answer within 0.15 s`,
    );

    const stop = new AbortController();
    const stopping = createGitlabApi({ url: fake.url, token: TOKEN, signal: stop.signal });
    fake.faults.add({ hang: true, times: 1 });
    const pending = failure(stopping.getGroup('team'));
    setTimeout(() => stop.abort(), 50);
    expect((await pending).message).toContain('aborted: the run is stopping');
    await stopping.close();
  });
});

describe('createGitlabApi: TLS', () => {
  it('talks to a self-signed HTTPS GitLab when sslVerify is false, and refuses it otherwise', async () => {
    const { fake, api } = await setUp({ sslVerify: false }, { tls: true });
    expect(fake.url.startsWith('https://')).toBe(true);
    fake.addGroup('team');
    expect((await api.getGroup('team')).fullPath).toBe('team');

    const verifying = createGitlabApi({ url: fake.url, token: TOKEN, retries: 0 });
    const e = await failure(verifying.getGroup('team'));
    await verifying.close();
    expect(e.message).toMatch(
      /^GitLab group 'team': GitLab https:\/\/127\.0\.0\.1:\d+: GET groups\/team: self.signed certificate/,
    );
  });
});
