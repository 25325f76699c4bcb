import { get } from 'node:https';
import { Readable } from 'node:stream';
import { gunzipSync } from 'node:zlib';
import { GitbeakerRequestError, Gitlab } from '@gitbeaker/rest';
import { extract } from 'tar-stream';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type FakeGitlab, startFakeGitlab } from './fake-gitlab.ts';
import { crawl } from './url-crawl.ts';

// Response shapes as GitLab's REST API docs (and gitbeaker's *Schema types) describe them.
// Not strict: GitLab answers carry more fields than a client reads.
const isoDate = z.iso.datetime({ offset: true });
const UserSchema = z.object({
  id: z.number().int(),
  username: z.string(),
  name: z.string(),
  state: z.enum(['active', 'blocked', 'deactivated']),
  locked: z.boolean(),
  avatar_url: z.string().nullable(),
  web_url: z.url(),
});
const MemberSchema = UserSchema.extend({
  access_level: z.union([5, 10, 15, 20, 30, 40, 50].map((n) => z.literal(n))),
  created_at: isoDate,
  created_by: UserSchema.pick({ id: true, username: true, name: true }).nullable(),
  expires_at: z.string().nullable(),
  group_saml_identity: z.object({ extern_uid: z.string(), provider: z.string() }).nullable(),
  membership_state: z.string(),
});
const NamespaceSchema = z.object({
  id: z.number().int(),
  name: z.string(),
  path: z.string(),
  kind: z.enum(['group', 'user']),
  full_path: z.string(),
  parent_id: z.number().int().nullable(),
  avatar_url: z.string().nullable(),
  web_url: z.url(),
});
const ProjectSchema = z.object({
  id: z.number().int(),
  description: z.string().nullable(),
  name: z.string(),
  name_with_namespace: z.string(),
  path: z.string(),
  path_with_namespace: z.string(),
  created_at: isoDate,
  default_branch: z.string().nullable(),
  topics: z.array(z.string()),
  ssh_url_to_repo: z.string(),
  http_url_to_repo: z.url(),
  web_url: z.url(),
  readme_url: z.url().nullable(),
  forks_count: z.number().int(),
  avatar_url: z.string().nullable(),
  star_count: z.number().int(),
  last_activity_at: isoDate,
  namespace: NamespaceSchema,
  visibility: z.enum(['private', 'internal', 'public']),
  empty_repo: z.boolean(),
  archived: z.boolean(),
  _links: z.object({
    self: z.url(),
    issues: z.url(),
    merge_requests: z.url(),
    repo_branches: z.url(),
    labels: z.url(),
    events: z.url(),
    members: z.url(),
  }),
});
const GroupSchema = z.object({
  id: z.number().int(),
  web_url: z.url(),
  name: z.string(),
  path: z.string(),
  description: z.string(),
  visibility: z.enum(['private', 'internal', 'public']),
  share_with_group_lock: z.boolean(),
  require_two_factor_authentication: z.boolean(),
  two_factor_grace_period: z.number().int(),
  project_creation_level: z.string(),
  auto_devops_enabled: z.boolean().nullable(),
  subgroup_creation_level: z.string(),
  mentions_disabled: z.boolean().nullable(),
  lfs_enabled: z.boolean(),
  default_branch_protection: z.number().int(),
  avatar_url: z.string().nullable(),
  request_access_enabled: z.boolean(),
  full_name: z.string(),
  full_path: z.string(),
  created_at: isoDate,
  parent_id: z.number().int().nullable(),
  shared_with_groups: z.array(z.unknown()),
  projects: z.array(ProjectSchema).optional(),
});
const CommitSchema = z.object({
  id: z.string().regex(/^[0-9a-f]{40}$/),
  short_id: z.string(),
  title: z.string(),
  message: z.string(),
  author_name: z.string(),
  author_email: z.string(),
  authored_date: isoDate,
  committer_name: z.string(),
  committer_email: z.string(),
  committed_date: isoDate,
  created_at: isoDate,
  parent_ids: z.array(z.string()),
  web_url: z.url(),
});
const SingleCommitSchema = CommitSchema.extend({
  stats: z.object({ additions: z.number(), deletions: z.number(), total: z.number() }),
  status: z.string().nullable(),
  last_pipeline: z.unknown().nullable(),
  project_id: z.number().int(),
});
const BranchSchema = z.object({
  name: z.string(),
  merged: z.boolean(),
  protected: z.boolean(),
  default: z.boolean(),
  developers_can_push: z.boolean(),
  developers_can_merge: z.boolean(),
  can_push: z.boolean(),
  web_url: z.url(),
  commit: CommitSchema.omit({ web_url: true }),
});
const RepositoryFileSchema = z.object({ file_path: z.string(), branch: z.string() });
// GitLab docs, "Merge requests API" (list, single, create, update) and "Notes API".
const BasicUserSchema = UserSchema.pick({
  id: true,
  username: true,
  name: true,
  state: true,
  avatar_url: true,
  web_url: true,
});
const MergeRequestSchema = z.object({
  id: z.number().int(),
  iid: z.number().int(),
  project_id: z.number().int(),
  title: z.string(),
  description: z.string().nullable(),
  state: z.enum(['opened', 'closed', 'locked', 'merged']),
  created_at: isoDate,
  updated_at: isoDate,
  merged_by: BasicUserSchema.nullable(),
  merged_at: isoDate.nullable(),
  closed_by: BasicUserSchema.nullable(),
  closed_at: isoDate.nullable(),
  target_branch: z.string(),
  source_branch: z.string(),
  user_notes_count: z.number().int(),
  upvotes: z.number().int(),
  downvotes: z.number().int(),
  author: BasicUserSchema,
  assignees: z.array(BasicUserSchema),
  assignee: BasicUserSchema.nullable(),
  reviewers: z.array(BasicUserSchema),
  source_project_id: z.number().int(),
  target_project_id: z.number().int(),
  labels: z.array(z.string()),
  draft: z.boolean(),
  milestone: z.unknown().nullable(),
  merge_when_pipeline_succeeds: z.boolean(),
  merge_status: z.enum([
    'unchecked',
    'checking',
    'can_be_merged',
    'cannot_be_merged',
    'cannot_be_merged_recheck',
  ]),
  detailed_merge_status: z.string(),
  sha: z.string().nullable(),
  merge_commit_sha: z.string().nullable(),
  squash_commit_sha: z.string().nullable(),
  discussion_locked: z.boolean().nullable(),
  should_remove_source_branch: z.boolean().nullable(),
  force_remove_source_branch: z.boolean().nullable(),
  reference: z.string(),
  references: z.object({ short: z.string(), relative: z.string(), full: z.string() }),
  web_url: z.url(),
  time_stats: z.object({
    time_estimate: z.number(),
    total_time_spent: z.number(),
    human_time_estimate: z.string().nullable(),
    human_total_time_spent: z.string().nullable(),
  }),
  squash: z.boolean(),
  task_completion_status: z.object({ count: z.number(), completed_count: z.number() }),
  has_conflicts: z.boolean(),
  blocking_discussions_resolved: z.boolean(),
});
const SingleMergeRequestSchema = MergeRequestSchema.extend({
  subscribed: z.boolean(),
  changes_count: z.string(),
  pipeline: z.unknown().nullable(),
  diff_refs: z.object({
    base_sha: z.string(),
    head_sha: z.string().nullable(),
    start_sha: z.string(),
  }),
  user: z.object({ can_merge: z.boolean() }),
});
const NoteSchema = z.object({
  id: z.number().int(),
  body: z.string(),
  attachment: z.unknown().nullable(),
  author: BasicUserSchema,
  created_at: isoDate,
  updated_at: isoDate,
  system: z.boolean(),
  noteable_id: z.number().int(),
  noteable_type: z.literal('MergeRequest'),
  noteable_iid: z.number().int(),
  resolvable: z.boolean(),
  confidential: z.boolean(),
  internal: z.boolean(),
});
const PipelineSchema = z.object({
  id: z.number().int(),
  iid: z.number().int(),
  project_id: z.number().int(),
  sha: z.string(),
  ref: z.string(),
  status: z.enum([
    'created',
    'waiting_for_resource',
    'preparing',
    'pending',
    'running',
    'success',
    'failed',
    'canceled',
    'skipped',
    'manual',
    'scheduled',
  ]),
  source: z.string(),
  created_at: isoDate,
  updated_at: isoDate,
  web_url: z.url(),
});
const CompareSchema = z.object({
  commit: CommitSchema.nullable(),
  commits: z.array(CommitSchema),
  diffs: z.array(
    z.object({
      old_path: z.string(),
      new_path: z.string(),
      a_mode: z.string(),
      b_mode: z.string(),
      diff: z.string(),
      new_file: z.boolean(),
      renamed_file: z.boolean(),
      deleted_file: z.boolean(),
    }),
  ),
  compare_timeout: z.boolean(),
  compare_same_ref: z.boolean(),
  web_url: z.url(),
});
const MessageSchema = z.strictObject({
  message: z.union([z.string(), z.record(z.string(), z.array(z.string()))]),
});
const PaginationHeaders = z.object({
  'x-page': z.string().regex(/^\d+$/),
  'x-per-page': z.string().regex(/^\d+$/),
  'x-next-page': z.string().regex(/^\d*$/),
  'x-prev-page': z.string().regex(/^\d*$/),
  'x-total': z.string().regex(/^\d+$/),
  'x-total-pages': z.string().regex(/^\d+$/),
  link: z.string(),
});

let fake: FakeGitlab | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

const client = (f: FakeGitlab, token = f.token) => new Gitlab({ host: f.url, token });

async function raw(f: FakeGitlab, path: string, init: RequestInit = {}) {
  const response = await fetch(`${f.apiUrl}${path}`, {
    ...init,
    headers: { 'PRIVATE-TOKEN': f.token, ...init.headers },
  });
  const text = await response.text();
  const type = response.headers.get('content-type') ?? '';
  return {
    status: response.status,
    headers: Object.fromEntries(response.headers.entries()),
    body: type.includes('json') && text ? (JSON.parse(text) as unknown) : text,
  };
}

function requestError(e: unknown): { status: number; description: string } {
  expect(e).toBeInstanceOf(GitbeakerRequestError);
  const cause = (e as GitbeakerRequestError).cause as { response: Response; description: string };
  return { status: cause.response.status, description: cause.description };
}

describe('fake GitLab, through @gitbeaker/rest', () => {
  it('authenticates by PRIVATE-TOKEN or Bearer and answers 401 otherwise', async () => {
    fake = await startFakeGitlab({ token: 'glpat-right' });
    fake.addGroup('team');
    const denied = await client(fake, 'glpat-wrong')
      .Groups.show('team')
      .catch((e: unknown) => e);
    expect(requestError(denied)).toEqual({ status: 401, description: '401 Unauthorized' });
    const none = await fetch(`${fake.apiUrl}/groups/team`);
    expect(none.status).toBe(401);
    expect(MessageSchema.parse(await none.json())).toEqual({ message: '401 Unauthorized' });
    const bearer = new Gitlab({ host: fake.url, oauthToken: 'glpat-right' });
    expect((await bearer.Groups.show('team')).full_path).toBe('team');
  });

  it('finds groups by id and by URL-encoded full path, with 404 for unknown ones', async () => {
    fake = await startFakeGitlab();
    const sub = fake.addGroup('org/team', { name: 'The Team' });
    fake.addProject('org/team', 'svc');
    const api = client(fake);
    const byPath = GroupSchema.parse(await api.Groups.show('org/team'));
    expect(byPath).toMatchObject({
      id: sub.id,
      name: 'The Team',
      path: 'team',
      full_path: 'org/team',
      full_name: 'org / The Team',
      parent_id: fake.addGroup('org').id,
    });
    expect(byPath.projects?.map((p) => p.name)).toEqual(['svc']);
    const byId = GroupSchema.parse(await api.Groups.show(sub.id, { withProjects: false }));
    expect(byId.full_path).toBe('org/team');
    expect(byId.projects).toBeUndefined();
    const missing = await api.Groups.show('org/nope').catch((e: unknown) => e);
    expect(requestError(missing)).toEqual({ status: 404, description: '404 Group Not Found' });
    expect((await raw(fake, '/groups/org%2Fnope')).body).toEqual({
      message: '404 Group Not Found',
    });
  });

  it('lists direct members over every page with GitLab pagination headers', async () => {
    fake = await startFakeGitlab();
    const group = fake.addGroup('team');
    for (let i = 0; i < 45; i++) fake.addGroupMember('team', `user${i}`, 30);
    fake.addGroupMember('team', 'group_1_bot_0123abcd', 40);
    const api = client(fake);
    const all = await api.GroupMembers.all(group.id, { perPage: 20 });
    expect(all).toHaveLength(46);
    for (const m of all) MemberSchema.parse(m);
    expect(fake.requestLog.map((r) => r.query)).toEqual([
      '?per_page=20',
      '?per_page=20&page=2',
      '?per_page=20&page=3',
    ]);

    const page2 = await raw(fake, `/groups/${group.id}/members?page=2&per_page=20`);
    const headers = PaginationHeaders.parse(page2.headers);
    expect(headers).toMatchObject({
      'x-page': '2',
      'x-per-page': '20',
      'x-next-page': '3',
      'x-prev-page': '1',
      'x-total': '46',
      'x-total-pages': '3',
    });
    const base = `${fake.apiUrl}/groups/${group.id}/members`;
    expect(headers.link).toBe(
      [
        `<${base}?page=1&per_page=20>; rel="prev"`,
        `<${base}?page=3&per_page=20>; rel="next"`,
        `<${base}?page=1&per_page=20>; rel="first"`,
        `<${base}?page=3&per_page=20>; rel="last"`,
      ].join(', '),
    );
    // Defaults and bounds: 20 per page, at most 100; past the end an empty page.
    expect((await raw(fake, `/groups/${group.id}/members`)).headers['x-per-page']).toBe('20');
    expect(
      (await raw(fake, `/groups/${group.id}/members?per_page=500`)).headers['x-per-page'],
    ).toBe('100');
    const past = await raw(fake, `/groups/${group.id}/members?page=9`);
    expect(past.body).toEqual([]);
    expect(past.headers['x-next-page']).toBe('');
  });

  it('adds, changes and removes members with GitLab answers and errors', async () => {
    fake = await startFakeGitlab();
    const group = fake.addGroup('team');
    const alice = fake.addUser('alice');
    const api = client(fake);
    const added = MemberSchema.parse(
      await api.GroupMembers.add(group.id, 30, { userId: alice.id }),
    );
    expect(added).toMatchObject({ id: alice.id, username: 'alice', access_level: 30 });
    const again = await api.GroupMembers.add(group.id, 40, { userId: alice.id }).catch((e) => e);
    expect(requestError(again)).toEqual({ status: 409, description: 'Member already exists' });
    const edited = MemberSchema.parse(await api.GroupMembers.edit(group.id, alice.id, 40));
    expect(edited.access_level).toBe(40);
    expect(fake.groupMembers('team')).toEqual([{ username: 'alice', accessLevel: 40 }]);
    const bad = await raw(fake, `/groups/${group.id}/members/${alice.id}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ access_level: 33 }),
    });
    expect(bad.status).toBe(400);
    expect(MessageSchema.parse(bad.body)).toEqual({
      message: { access_level: ['is not included in the list'] },
    });
    const removed = await raw(fake, `/groups/${group.id}/members/${alice.id}`, {
      method: 'DELETE',
    });
    expect(removed).toMatchObject({ status: 204, body: '' });
    expect(fake.groupMembers('team')).toEqual([]);
    const gone = await api.GroupMembers.remove(group.id, alice.id).catch((e) => e);
    expect(requestError(gone).status).toBe(404);
    expect(fake.mutatingRequests().map((r) => `${r.method} ${r.status}`)).toEqual([
      'POST 201',
      'POST 409',
      'PUT 200',
      'PUT 400',
      'DELETE 204',
      'DELETE 404',
    ]);
  });

  it('looks users up by exact username', async () => {
    fake = await startFakeGitlab();
    fake.addUser('alice');
    fake.addUser('alice2');
    const found = await client(fake).Users.all({ username: 'Alice' });
    expect(found.map((u) => UserSchema.parse(u).username)).toEqual(['alice']);
    expect(await client(fake).Users.all({ username: 'bob' })).toEqual([]);
  });

  it('creates projects in a namespace, refusing a taken name, and lists them', async () => {
    fake = await startFakeGitlab();
    const group = fake.addGroup('bundles');
    fake.addProject('bundles', 'old');
    const api = client(fake);
    const created = ProjectSchema.parse(
      await api.Projects.create({ name: 'new-bundle', namespaceId: group.id }),
    );
    expect(created).toMatchObject({
      name: 'new-bundle',
      path: 'new-bundle',
      path_with_namespace: 'bundles/new-bundle',
      web_url: `${fake.url}/bundles/new-bundle`,
      default_branch: null,
      empty_repo: true,
      namespace: { id: group.id, kind: 'group', full_path: 'bundles' },
    });
    const taken = await api.Projects.create({ name: 'old', namespaceId: group.id }).catch((e) => e);
    expect(requestError(taken).status).toBe(400);
    const takenBody = await raw(fake, '/projects', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'old', namespace_id: group.id }),
    });
    expect(MessageSchema.parse(takenBody.body)).toEqual({
      message: { name: ['has already been taken'], path: ['has already been taken'] },
    });
    const listed = await api.Groups.allProjects(group.id);
    expect(listed.map((p) => ProjectSchema.parse(p).name)).toEqual(['new-bundle', 'old']);
    expect(ProjectSchema.parse(await api.Projects.show('bundles/old')).name).toBe('old');
    expect(ProjectSchema.parse(await api.Projects.show(created.id)).name).toBe('new-bundle');
    const missing = await api.Projects.show('bundles/nope').catch((e) => e);
    expect(requestError(missing)).toEqual({ status: 404, description: '404 Project Not Found' });
    expect(fake.projects('bundles').map((p) => p.pathWithNamespace)).toEqual([
      'bundles/old',
      'bundles/new-bundle',
    ]);
  });

  it('commits files, creates branches, resolves refs and serves raw files', async () => {
    fake = await startFakeGitlab();
    const project = fake.addProject(fake.addGroup('bundles').fullPath, 'repo');
    const api = client(fake);
    const file = await api.RepositoryFiles.create(
      project.id,
      'README.md',
      'master',
      'hello',
      'Initial commit',
    );
    expect(RepositoryFileSchema.parse(file)).toEqual({ file_path: 'README.md', branch: 'master' });
    const branch = BranchSchema.parse(await api.Branches.create(project.id, 'staging', 'master'));
    expect(branch).toMatchObject({ name: 'staging', default: false });
    expect(branch.commit.title).toBe('Initial commit');
    const exists = await api.Branches.create(project.id, 'staging', 'master').catch((e) => e);
    expect(requestError(exists)).toEqual({ status: 400, description: 'Branch already exists' });
    const badRef = await api.Branches.create(project.id, 'x', 'nope').catch((e) => e);
    expect(requestError(badRef)).toEqual({
      status: 400,
      description: 'Invalid reference name: nope',
    });
    expect(fake.branches('bundles/repo')).toEqual(['master', 'staging']);

    const sha = fake.addFile('bundles/repo', 'master', 'deploy/saas.yaml', 'kind: saas\n');
    const commit = SingleCommitSchema.parse(await api.Commits.show('bundles/repo', 'master'));
    expect(commit.id).toBe(sha);
    expect(commit.parent_ids).toEqual([branch.commit.id]);
    expect((await api.Commits.show(project.id, sha)).id).toBe(sha);
    const noCommit = await api.Commits.show(project.id, 'nope').catch((e) => e);
    expect(requestError(noCommit)).toEqual({ status: 404, description: '404 Commit Not Found' });

    expect(await api.RepositoryFiles.showRaw('bundles/repo', 'deploy/saas.yaml', 'master')).toBe(
      'kind: saas\n',
    );
    expect(await api.RepositoryFiles.showRaw(project.id, 'README.md', 'staging')).toBe('hello');
    const noFile = await api.RepositoryFiles.showRaw(
      project.id,
      'deploy/saas.yaml',
      'staging',
    ).catch((e) => e);
    expect(requestError(noFile)).toEqual({ status: 404, description: '404 File Not Found' });
    const dup = await api.RepositoryFiles.create(
      project.id,
      'README.md',
      'master',
      'x',
      'again',
    ).catch((e) => e);
    expect(requestError(dup)).toEqual({
      status: 400,
      description: 'A file with this name already exists',
    });
    expect(ProjectSchema.parse(await api.Projects.show(project.id))).toMatchObject({
      default_branch: 'master',
      empty_repo: false,
    });
  });
});

describe('fake GitLab, as other clients than ours use it', () => {
  it("answers GET /user with the token's account, as python-gitlab's auth() asks first", async () => {
    fake = await startFakeGitlab();
    fake.addUser('alice');
    const me = await client(fake).Users.showCurrentUser();
    expect(
      UserSchema.extend({ email: z.email(), is_admin: z.boolean(), created_at: isoDate }).parse(me),
    ).toMatchObject({ id: 1, username: 'root', name: 'Administrator', is_admin: true });
    const bot = await startFakeGitlab({ token: 'glpat-bot', user: 'app-sre-bot' });
    try {
      expect(await client(bot).Users.showCurrentUser()).toMatchObject({
        username: 'app-sre-bot',
        is_admin: false,
      });
      expect(await client(bot).Users.all({ username: 'app-sre-bot' })).toHaveLength(1);
    } finally {
      await bot.close();
    }
  });

  it('answers JSON as `application/json`, without a charset, as GitLab does', async () => {
    fake = await startFakeGitlab();
    fake.addGroup('team');
    for (const path of ['/groups/team', '/groups/team/members', '/groups/nope', '/user']) {
      expect((await raw(fake, path)).headers['content-type']).toBe('application/json');
    }
    const denied = await fetch(`${fake.apiUrl}/user`);
    expect(denied.headers.get('content-type')).toBe('application/json');
  });

  it('answers every URL it hands out (`_links`, `Link` headers) with 200 and JSON', async () => {
    fake = await startFakeGitlab();
    fake.addGroup('org/team');
    fake.addGroupMember('org/team', 'alice', 30);
    fake.addGroupMember('org/team', 'bob', 40);
    const project = fake.addProject('org/team', 'app');
    fake.pushCommit('org/team/app', 'main', { 'deploy/a.yaml': 'a: 1\n' });
    fake.pushCommit('org/team/app', 'main', { 'deploy/b.yaml': 'b: 1\n' });
    fake.pushCommit('org/team/app', 'feature', { 'x.txt': 'x' });
    const api = fake.apiUrl;
    const results = await crawl({
      start: [
        '/user',
        '/users?per_page=1',
        '/groups/org%2Fteam',
        '/groups/org%2Fteam/members?per_page=1',
        '/groups/org%2Fteam/projects',
        `/projects/${project.id}/repository/branches?per_page=1`,
        `/projects/${project.id}/repository/commits?per_page=1`,
        `/projects/${project.id}/repository/tree?recursive=true&per_page=1`,
      ].map((p) => `${api}${p}`),
      within: api,
      headers: { 'PRIVATE-TOKEN': fake.token },
      // Pages for a browser and the git remote, not the API.
      ignoreKeys: ['web_url', 'readme_url', 'http_url_to_repo'],
    });
    const wrong = results
      .filter((r) => r.status !== 200 || r.contentType !== 'application/json')
      .map((r) => `${r.url} (${r.key} of ${r.from}): ${r.status} ${r.contentType}`);
    expect(wrong).toEqual([]);
    const followed = new Set(results.map((r) => r.key));
    expect([...followed].sort()).toEqual([
      '',
      'Link',
      'cluster_agents',
      'events',
      'issues',
      'labels',
      'members',
      'merge_requests',
      'repo_branches',
      'self',
    ]);
  });
});

describe('fake GitLab, repository reads of openshift-saas-deploy', () => {
  const TreeItemSchema = z.strictObject({
    id: z.string().regex(/^[0-9a-f]{40}$/),
    name: z.string(),
    type: z.enum(['tree', 'blob']),
    path: z.string(),
    mode: z.string(),
  });

  it('lists commits by ref_name, resolves tags and short shas, and lists trees', async () => {
    fake = await startFakeGitlab();
    fake.addProject(fake.addGroup('app').fullPath, 'saas');
    const first = fake.pushCommit('app/saas', 'main', {
      'deploy/a.yaml': 'kind: A\n',
      'deploy/sub/b.yaml': 'kind: B\n',
    });
    fake.tag('app/saas', 'v1', first);
    const second = fake.pushCommit('app/saas', 'main', { 'deploy/a.yaml': null, 'x.txt': 'x' });
    const api = client(fake);

    const page = await api.Commits.all('app/saas', { refName: 'main', perPage: 1, page: 1 });
    expect(
      z
        .array(CommitSchema)
        .parse(page)
        .map((c) => c.id),
    ).toEqual([second]);
    const all = await api.Commits.all('app/saas', { refName: 'main' });
    expect(all.map((c) => c.id)).toEqual([second, first]);
    expect((await api.Commits.all('app/saas', { refName: 'v1' })).map((c) => c.id)).toEqual([
      first,
    ]);
    expect(
      (await api.Commits.all('app/saas', { refName: first.slice(0, 8) })).map((c) => c.id),
    ).toEqual([first]);
    // GitLab answers an unknown ref with an empty list, not 404.
    expect(await api.Commits.all('app/saas', { refName: 'nope', perPage: 1 })).toEqual([]);

    const tree = z
      .array(TreeItemSchema)
      .parse(await api.Repositories.allRepositoryTrees('app/saas', { path: 'deploy', ref: first }));
    expect(tree.map((e) => [e.path, e.type, e.mode])).toEqual([
      ['deploy/a.yaml', 'blob', '100644'],
      ['deploy/sub', 'tree', '040000'],
    ]);
    const recursive = await api.Repositories.allRepositoryTrees('app/saas', {
      ref: first,
      recursive: true,
    });
    expect(recursive.map((e) => e.path)).toEqual([
      'deploy',
      'deploy/a.yaml',
      'deploy/sub',
      'deploy/sub/b.yaml',
    ]);
    const noTree = await api.Repositories.allRepositoryTrees('app/saas', {
      path: 'deploy/a.yaml',
      ref: first,
    }).catch((e) => e);
    expect(requestError(noTree)).toEqual({ status: 404, description: '404 Tree Not Found' });
  });

  it('serves the repository archive of a path at a sha as a real tar.gz', async () => {
    fake = await startFakeGitlab();
    fake.addProject(fake.addGroup('app').fullPath, 'saas');
    const sha = fake.pushCommit('app/saas', 'main', {
      'deploy/a.yaml': 'kind: A\n',
      'deploy/sub/b.yaml': 'kind: B\n',
      'other.yaml': 'kind: O\n',
    });
    const archive = await client(fake).Repositories.showArchive('app/saas', {
      fileType: 'tar.gz',
      sha,
      path: 'deploy',
    });
    const entries = await untar(Buffer.from(await archive.arrayBuffer()));
    const top = `saas-${sha}-deploy`;
    expect(entries).toEqual([
      [`${top}/`, 'directory', ''],
      [`${top}/deploy/`, 'directory', ''],
      [`${top}/deploy/a.yaml`, 'file', 'kind: A\n'],
      [`${top}/deploy/sub/`, 'directory', ''],
      [`${top}/deploy/sub/b.yaml`, 'file', 'kind: B\n'],
    ]);
    const missing = await client(fake)
      .Repositories.showArchive('app/saas', { sha, path: 'nope' })
      .catch((e) => e);
    expect(requestError(missing)).toMatchObject({ status: 404 });
  });
});

/** Name, type and text of every entry of a tar.gz. */
async function untar(bytes: Buffer): Promise<Array<[string, string, string]>> {
  const out: Array<[string, string, string]> = [];
  const reader = extract();
  const done = (async () => {
    for await (const entry of reader) {
      const chunks: Buffer[] = [];
      for await (const chunk of entry) chunks.push(chunk as Buffer);
      out.push([entry.header.name, entry.header.type ?? '', Buffer.concat(chunks).toString()]);
    }
  })();
  Readable.from([gunzipSync(bytes)]).pipe(reader);
  await done;
  return out;
}

describe('fake GitLab, merge requests (saas-auto-promotions-manager)', () => {
  const setup = async () => {
    fake = await startFakeGitlab();
    fake.addGroup('service');
    const project = fake.addProject('service', 'app-interface');
    fake.addFile('service/app-interface', 'master', 'data/a.yml', 'a: 1\n');
    fake.addFile('service/app-interface', 'master', 'data/b.yml', 'b: 1\n');
    return { f: fake, api: client(fake), id: project.id };
  };

  it('commits several actions on a new branch, compares it, opens, lists, notes and closes a merge request', async () => {
    const { f, api, id } = await setup();
    await api.Branches.create(id, 'SAPM-abc123', 'master');
    const commit = SingleCommitSchema.parse(
      await api.Commits.create(id, 'SAPM-abc123', 'auto-promote subscriber', [
        { action: 'update', filePath: 'data/a.yml', content: 'a: 2\n' },
        { action: 'create', filePath: 'data/c.yml', content: 'c: 1\n' },
      ]),
    );
    expect(commit.title).toBe('auto-promote subscriber');
    const compare = CompareSchema.parse(
      await api.Repositories.compare(id, 'master', 'SAPM-abc123'),
    );
    expect(compare.diffs.map((d) => [d.new_path, d.new_file])).toEqual([
      ['data/a.yml', false],
      ['data/c.yml', true],
    ]);
    expect(compare.diffs[0]?.diff).toBe('@@ -1,1 +1,1 @@\n-a: 1\n+a: 2\n');
    expect(compare.commits.map((c) => c.id)).toEqual([commit.id]);

    const created = SingleMergeRequestSchema.parse(
      await api.MergeRequests.create(id, 'SAPM-abc123', 'master', '[SAPM] auto-promotion', {
        description: 'desc',
        labels: 'SAPM,bot/approved: progressive-delivery',
        removeSourceBranch: true,
      }),
    );
    expect(created).toMatchObject({
      iid: 1,
      state: 'opened',
      labels: ['SAPM', 'bot/approved: progressive-delivery'],
      has_conflicts: false,
      changes_count: '2',
      force_remove_source_branch: true,
    });
    // Another open MR of the same branches: 409, as GitLab.
    const duplicate = await api.MergeRequests.create(id, 'SAPM-abc123', 'master', 'again').catch(
      (e: unknown) => e,
    );
    expect(requestError(duplicate).status).toBe(409);

    const listed = await api.MergeRequests.all({ projectId: id, state: 'opened', labels: 'SAPM' });
    expect(
      z
        .array(MergeRequestSchema)
        .parse(listed)
        .map((m) => m.iid),
    ).toEqual([1]);
    expect(await api.MergeRequests.all({ projectId: id, labels: 'other' })).toEqual([]);

    const note = NoteSchema.parse(await api.MergeRequestNotes.create(id, 1, 'Closing this MR.'));
    expect(note).toMatchObject({ body: 'Closing this MR.', noteable_iid: 1 });
    const closed = SingleMergeRequestSchema.parse(
      await api.MergeRequests.edit(id, 1, { stateEvent: 'close' }),
    );
    expect(closed.state).toBe('closed');
    expect(closed.closed_at).not.toBeNull();
    await api.Branches.remove(id, 'SAPM-abc123');
    expect(f.branches('service/app-interface')).toEqual(['master']);
    expect(await api.MergeRequests.all({ projectId: id, state: 'opened' })).toEqual([]);
    expect(f.mergeRequests('service/app-interface')).toEqual([
      expect.objectContaining({ iid: 1, state: 'closed', notes: ['Closing this MR.'] }),
    ]);
  });

  it("answers GitLab's errors for bad commits, unknown branches and merge requests", async () => {
    const { api, id } = await setup();
    const update = await api.Commits.create(
      id,
      'x',
      'm',
      [{ action: 'update', filePath: 'data/missing.yml', content: '' }],
      { startBranch: 'master' },
    ).catch((e: unknown) => e);
    expect(requestError(update)).toEqual({
      status: 400,
      description: "A file with this name doesn't exist",
    });
    const noBranch = await api.Commits.create(id, 'x', 'm', [
      { action: 'create', filePath: 'data/n.yml', content: '' },
    ]).catch((e: unknown) => e);
    expect(requestError(noBranch).status).toBe(400);
    const mr = await api.MergeRequests.create(id, 'nope', 'master', 't').catch((e: unknown) => e);
    expect(requestError(mr).status).toBe(422);
    expect(requestError(await api.MergeRequests.show(id, 9).catch((e: unknown) => e)).status).toBe(
      404,
    );
    expect(
      requestError(await api.Branches.remove(id, 'nope').catch((e: unknown) => e)).status,
    ).toBe(404);
  });

  it('reports conflicts, pipelines, the changes and merges as GitLab does', async () => {
    const { f, api, id } = await setup();
    await api.Commits.create(
      id,
      'one',
      'm',
      [{ action: 'update', filePath: 'data/a.yml', content: 'a: 2\n' }],
      { startBranch: 'master' },
    );
    await api.MergeRequests.create(id, 'one', 'master', 'one');
    expect(f.mergeRequestChanges('service/app-interface', 1)).toEqual({ 'data/a.yml': 'a: 2\n' });
    f.addMergeRequestPipeline('service/app-interface', 1, 'running');
    f.addMergeRequestPipeline('service/app-interface', 1, 'failed');
    const pipelines = z.array(PipelineSchema).parse(await api.MergeRequests.allPipelines(id, 1));
    expect(pipelines.map((p) => p.status)).toEqual(['failed', 'running']);

    // master changes the same file differently: the MR now conflicts.
    f.pushCommit('service/app-interface', 'master', { 'data/a.yml': 'a: 3\n' });
    const [conflicting] = z
      .array(MergeRequestSchema)
      .parse(await api.MergeRequests.all({ projectId: id, state: 'opened' }));
    expect(conflicting).toMatchObject({ has_conflicts: true, merge_status: 'cannot_be_merged' });

    await api.Commits.create(
      id,
      'two',
      'm',
      [{ action: 'update', filePath: 'data/b.yml', content: 'b: 2\n' }],
      { startBranch: 'master' },
    );
    await api.MergeRequests.create(id, 'two', 'master', 'two');
    f.mergeMergeRequest('service/app-interface', 2);
    expect(f.file('service/app-interface', 'master', 'data/b.yml')).toBe('b: 2\n');
    expect(SingleMergeRequestSchema.parse(await api.MergeRequests.show(id, 2)).state).toBe(
      'merged',
    );
  });
});

describe('fake GitLab, rate limits and faults', () => {
  it('answers 429 with Retry-After and RateLimit headers once the quota is spent', async () => {
    fake = await startFakeGitlab({ quota: { limit: 2, windowSeconds: 30 } });
    fake.addGroup('team');
    const first = await raw(fake, '/groups/team');
    expect(first.headers).toMatchObject({
      'ratelimit-limit': '2',
      'ratelimit-observed': '1',
      'ratelimit-remaining': '1',
    });
    expect(Number(first.headers['ratelimit-reset'])).toBeGreaterThan(Date.now() / 1000);
    expect(Date.parse(first.headers['ratelimit-resettime'] ?? '')).not.toBeNaN();
    await raw(fake, '/groups/team');
    const limited = await raw(fake, '/groups/team');
    expect(limited.status).toBe(429);
    expect(limited.body).toBe('Retry later\n');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(30);
    expect(limited.headers['ratelimit-remaining']).toBe('0');
    fake.setQuota(undefined);
    expect((await raw(fake, '/groups/team')).status).toBe(200);
  });

  it('injects faults and logs every request', async () => {
    fake = await startFakeGitlab();
    fake.addGroup('team');
    fake.faults.add({ method: 'GET', path: '/groups/', status: 502, times: 1 });
    expect((await raw(fake, '/groups/team')).status).toBe(502);
    expect((await raw(fake, '/groups/team')).status).toBe(200);
    expect(fake.requestLog.map((r) => r.status)).toEqual([502, 200]);
    expect(fake.mutatingRequests()).toEqual([]);
  });

  it('serves HTTPS with a self-signed certificate', async () => {
    fake = await startFakeGitlab({ tls: true });
    fake.addGroup('team');
    expect(fake.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const f = fake;
    const body = await new Promise<string>((resolve, reject) => {
      get(
        `${f.apiUrl}/groups/team`,
        { ca: f.certificate, headers: { 'PRIVATE-TOKEN': f.token } },
        (res) => {
          let text = '';
          res.on('data', (c: Buffer) => {
            text += c.toString();
          });
          res.on('end', () => resolve(text));
        },
      ).on('error', reject);
    });
    expect(GroupSchema.parse(JSON.parse(body)).full_path).toBe('team');
    await expect(fetch(`${fake.apiUrl}/groups/team`)).rejects.toThrow();
  });

  it('keeps up at benchmark scale: 100 groups × 100 members', async () => {
    fake = await startFakeGitlab();
    for (let g = 0; g < 100; g++) {
      fake.addGroup(`group-${g}`);
      for (let m = 0; m < 100; m++) fake.addGroupMember(`group-${g}`, `user-${m}`, 30);
    }
    const api = client(fake);
    let total = 0;
    for (let g = 0; g < 100; g++) {
      total += (await api.GroupMembers.all(`group-${g}`, { perPage: 100 })).length;
    }
    expect(total).toBe(10_000);
    expect(fake.requestLog).toHaveLength(100);
  });
});
