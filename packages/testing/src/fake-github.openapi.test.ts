import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Octokit } from '@octokit/rest';
import { Ajv, type ValidateFunction } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeGitHub, startFakeGitHub } from './fake-github.ts';
import { crawl, urlsInJson } from './url-crawl.ts';

/**
 * Every answer of the fake GitHub, driven by a real Octokit, is checked
 * against GitHub's own OpenAPI description: the status must be one the
 * operation declares, and the body must match that status's schema.
 */

interface OpenApiResponse {
  readonly content?: Record<string, { readonly schema?: object }>;
}
interface OpenApi {
  readonly paths: Record<
    string,
    Record<string, { readonly responses: Record<string, OpenApiResponse> }>
  >;
}

// The description is 70 MB: read it once for the whole file.
const require = createRequire(import.meta.url);
const specFile = join(
  dirname(require.resolve('@octokit/openapi/package.json')),
  'generated/api.github.com.deref.json',
);
const spec = JSON.parse(readFileSync(specFile, 'utf8')) as OpenApi;
const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
const validators = new Map<string, ValidateFunction>();

/** The operations the fake serves, by the path GitHub's description files them under. */
const OPERATIONS = [
  '/orgs/{org}',
  '/orgs/{org}/teams',
  '/orgs/{org}/teams/{team_slug}',
  '/orgs/{org}/teams/{team_slug}/members',
  '/orgs/{org}/teams/{team_slug}/invitations',
  '/orgs/{org}/teams/{team_slug}/memberships/{username}',
  '/orgs/{org}/members',
  '/orgs/{org}/members/{username}',
  '/orgs/{org}/invitations',
  '/orgs/{org}/invitations/{invitation_id}/teams',
  '/orgs/{org}/memberships/{username}',
  '/users/{username}',
  '/repos/{owner}/{repo}',
  '/repos/{owner}/{repo}/contents/{path}',
  '/repos/{owner}/{repo}/commits/{ref}',
  '/repos/{owner}/{repo}/git/blobs/{file_sha}',
];
/**
 * The team URL GitHub hands out (by ids) is not in the description; under it
 * GitHub serves what it serves under the team's `/orgs/{org}/teams/{team_slug}`.
 */
const LEGACY = '/organizations/{org_id}/team/{team_id}/invitations';
const ALIASES: Record<string, string> = { [LEGACY]: '/orgs/{org}/teams/{team_slug}/invitations' };
const matchers = [...OPERATIONS, LEGACY].map((template) => ({
  template,
  regex: new RegExp(`^${template.replace(/\{path\}/, '.*').replace(/\{[^}]+\}/g, '[^/]+')}$`),
}));

const seen = new Set<string>();
const problems: string[] = [];

/** The schema of the answer `status` of an operation, compiled once. */
function validator(operation: string, method: string, status: number, schema: object) {
  let validate = validators.get(`${operation} ${method} ${status}`);
  if (!validate) {
    validate = ajv.compile(jsonSchema(schema) as object);
    validators.set(`${operation} ${method} ${status}`, validate);
  }
  return validate;
}

function check(method: string, url: string, status: number, body: unknown): void {
  const path = url.includes('{')
    ? url.split('?')[0]!
    : new URL(url).pathname.replace(/^\/api\/v3/, '');
  const template = matchers.find((m) => m.template === path || m.regex.test(path))?.template;
  if (!template) {
    problems.push(`${method} ${path}: not an operation under test`);
    return;
  }
  const operation = ALIASES[template] ?? template;
  const key = `${method.toUpperCase()} ${template} ${status}`;
  seen.add(key);
  const responses = spec.paths[operation]?.[method.toLowerCase()]?.responses;
  const declared = responses?.[String(status)];
  if (!declared) {
    problems.push(`${key}: status not declared by GitHub's description`);
    return;
  }
  const schema = declared.content?.['application/json']?.schema;
  if (!schema) return;
  const validate = validator(operation, method, status, schema);
  if (!validate(body)) {
    problems.push(`${key}: ${ajv.errorsText(validate.errors, { separator: '; ' }).slice(0, 600)}`);
  }
}

/**
 * OpenAPI 3.0's `nullable: true` as JSON Schema: `null` joins the type (and
 * the enum), or the schema becomes "this or null" when it names no type.
 */
function jsonSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(jsonSchema);
  if (node === null || typeof node !== 'object') return node;
  const { nullable, ...rest } = node as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(rest)) {
    // `example(s)` hold data, not schemas.
    out[k] = k === 'example' || k === 'examples' || k === 'enum' ? v : jsonSchema(v);
  }
  if (nullable !== true) return out;
  if (Array.isArray(out.enum)) out.enum = [...out.enum, null];
  if (typeof out.type === 'string') return { ...out, type: [out.type, 'null'] };
  return { anyOf: [out, { type: 'null' }] };
}

const quiet = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

/** An Octokit whose every answer (and error answer) is checked against the description. */
function checkedOctokit(baseUrl: string, token: string): Octokit {
  const octokit = new Octokit({ auth: token, baseUrl, log: quiet });
  octokit.hook.after('request', (response, options) => {
    check(options.method, options.url, response.status, response.data);
  });
  octokit.hook.error('request', (error, options) => {
    const e = error as { status?: number; response?: { data: unknown } };
    if (e.status !== undefined && e.response)
      check(options.method, options.url, e.status, e.response.data);
    throw error;
  });
  return octokit;
}

/** A role Octokit's types refuse, to see GitHub's (the fake's) 422. */
const invalidRole = (role: string): object => ({ role });

const failure = async (p: Promise<unknown>): Promise<number> => {
  try {
    await p;
  } catch (e) {
    return (e as { status: number }).status;
  }
  throw new Error('the request succeeded');
};

let github: FakeGitHub;
beforeAll(async () => {
  github = await startFakeGitHub({ token: 'ghp_admin', pathPrefix: '/api/v3' });
  github.addToken('ghp_bot', { user: 'app-sre-bot' });
  github.addOrg('app-sre', { name: 'App SRE' });
  github.addOrgMember('app-sre', 'app-sre-bot', 'admin');
  github.addTeam('app-sre', 'App SRE Team', { description: 'the team', privacy: 'closed' });
  for (let i = 0; i < 45; i++) github.addTeamMember('app-sre', 'App SRE Team', `user${i}`);
  github.addTeam('app-sre', 'empty');
  github.addUser('outsider', { name: 'Out Sider', email: 'out@example.com' });
  github.addUser('newcomer');
  github.addFile({ repo: 'app-sre/cfg', ref: 'main', path: 'dir/a.txt', content: 'hello' });
  github.addCommit('app-sre/cfg', 'main', 'f'.repeat(40));
});
afterAll(() => github.close());

describe("the fake GitHub's answers match GitHub's OpenAPI description", () => {
  it('for every endpoint, with Octokit, on a GitHub Enterprise base URL', async () => {
    const api = checkedOctokit(github.url, 'ghp_bot');
    const org = 'app-sre';

    await api.rest.orgs.get({ org });
    expect(await failure(api.rest.orgs.get({ org: 'nope' }))).toBe(404);

    const teams = await api.paginate(api.rest.teams.list, { org, per_page: 1 });
    expect(teams.map((t) => t.slug)).toEqual(['app-sre-team', 'empty']);
    const created = await api.rest.teams.create({ org, name: 'New Team', privacy: 'secret' });
    expect(created.status).toBe(201);
    expect(await failure(api.rest.teams.create({ org, name: 'new team' }))).toBe(422);

    const team = await api.rest.teams.getByName({ org, team_slug: 'app-sre-team' });
    expect(team.data.members_count).toBe(45);
    expect(await failure(api.rest.teams.getByName({ org, team_slug: 'nope' }))).toBe(404);

    const members = await api.paginate(api.rest.teams.listMembersInOrg, {
      org,
      team_slug: 'app-sre-team',
      per_page: 20,
    });
    expect(members).toHaveLength(45);

    const pending = await api.rest.teams.addOrUpdateMembershipForUserInOrg({
      org,
      team_slug: 'app-sre-team',
      username: 'outsider',
    });
    expect(pending.data.state).toBe('pending');
    const active = await api.rest.teams.addOrUpdateMembershipForUserInOrg({
      org,
      team_slug: 'empty',
      username: 'user1',
      role: 'maintainer',
    });
    expect(active.data).toMatchObject({ state: 'active', role: 'maintainer' });
    expect(
      await failure(
        api.request('PUT /orgs/{org}/teams/{team_slug}/memberships/{username}', {
          org,
          team_slug: 'empty',
          username: 'user1',
          ...invalidRole('owner'),
        }),
      ),
    ).toBe(422);

    const teamInvitations = await api.paginate(api.rest.teams.listPendingInvitationsInOrg, {
      org,
      team_slug: 'app-sre-team',
    });
    expect(teamInvitations.map((i) => i.login)).toEqual(['outsider']);
    const legacy = await api.request('GET /organizations/{org_id}/team/{team_id}/invitations', {
      org_id: (await api.rest.orgs.get({ org })).data.id,
      team_id: team.data.id,
    });
    expect((legacy.data as Array<{ login: string }>).map((i) => i.login)).toEqual(['outsider']);

    const orgMembers = await api.paginate(api.rest.orgs.listMembers, { org, per_page: 100 });
    expect(orgMembers).toHaveLength(46);
    expect(
      await failure(api.request('GET /orgs/{org}/members', { org, ...invalidRole('owner') })),
    ).toBe(422);

    const invited = await api.rest.orgs.setMembershipForUser({ org, username: 'newcomer' });
    expect(invited.data.state).toBe('pending');
    const promoted = await api.rest.orgs.setMembershipForUser({
      org,
      username: 'user2',
      role: 'admin',
    });
    expect(promoted.data).toMatchObject({ state: 'active', role: 'admin' });
    expect(
      await failure(
        api.request('PUT /orgs/{org}/memberships/{username}', {
          org,
          username: 'user2',
          ...invalidRole('boss'),
        }),
      ),
    ).toBe(422);
    const invitations = await api.paginate(api.rest.orgs.listPendingInvitations, { org });
    expect(invitations.map((i) => i.login).sort()).toEqual(['newcomer', 'outsider']);
    const outsider = invitations.find((i) => i.login === 'outsider')!;
    expect(outsider.team_count).toBe(1);
    const invitationTeams = await api.paginate(api.rest.orgs.listInvitationTeams, {
      org,
      invitation_id: outsider.id,
    });
    expect(invitationTeams.map((t) => t.slug)).toEqual(['app-sre-team']);
    expect(await failure(api.rest.orgs.listInvitationTeams({ org, invitation_id: 999_999 }))).toBe(
      404,
    );

    await api.rest.users.getByUsername({ username: 'outsider' });
    expect(await failure(api.rest.users.getByUsername({ username: 'ghost-of-nobody' }))).toBe(404);

    expect(
      (
        await api.rest.teams.removeMembershipForUserInOrg({
          org,
          team_slug: 'empty',
          username: 'user1',
        })
      ).status,
    ).toBe(204);
    expect(
      (await api.rest.orgs.removeMembershipForUser({ org, username: 'newcomer' })).status,
    ).toBe(204);
    expect(
      await failure(api.rest.orgs.removeMembershipForUser({ org, username: 'newcomer' })),
    ).toBe(404);
    expect((await api.rest.orgs.removeMember({ org, username: 'user3' })).status).toBe(204);

    const file = await api.rest.repos.getContent({
      owner: org,
      repo: 'cfg',
      path: 'dir/a.txt',
      ref: 'main',
    });
    expect(Buffer.from((file.data as { content: string }).content, 'base64').toString()).toBe(
      'hello',
    );
    expect(
      await failure(
        api.rest.repos.getContent({ owner: org, repo: 'cfg', path: 'missing', ref: 'main' }),
      ),
    ).toBe(404);
    const blob = await api.rest.git.getBlob({
      owner: org,
      repo: 'cfg',
      file_sha: (file.data as { sha: string }).sha,
    });
    expect(blob.data.size).toBe(5);
    expect(await failure(api.rest.git.getBlob({ owner: org, repo: 'cfg', file_sha: 'abc' }))).toBe(
      404,
    );
    expect(
      (await api.rest.repos.getCommit({ owner: org, repo: 'cfg', ref: 'main' })).data.sha,
    ).toBe('f'.repeat(40));
    expect(await failure(api.rest.repos.getCommit({ owner: org, repo: 'cfg', ref: 'nope' }))).toBe(
      422,
    );

    expect(problems).toEqual([]);
    expect([...seen].sort()).toEqual(
      [
        'DELETE /orgs/{org}/members/{username} 204',
        'DELETE /orgs/{org}/memberships/{username} 204',
        'DELETE /orgs/{org}/memberships/{username} 404',
        'DELETE /orgs/{org}/teams/{team_slug}/memberships/{username} 204',
        'GET /organizations/{org_id}/team/{team_id}/invitations 200',
        'GET /orgs/{org} 200',
        'GET /orgs/{org} 404',
        'GET /orgs/{org}/invitations 200',
        'GET /orgs/{org}/invitations/{invitation_id}/teams 200',
        'GET /orgs/{org}/invitations/{invitation_id}/teams 404',
        'GET /orgs/{org}/members 200',
        'GET /orgs/{org}/members 422',
        'GET /orgs/{org}/teams 200',
        'GET /orgs/{org}/teams/{team_slug} 200',
        'GET /orgs/{org}/teams/{team_slug} 404',
        'GET /orgs/{org}/teams/{team_slug}/invitations 200',
        'GET /orgs/{org}/teams/{team_slug}/members 200',
        'GET /repos/{owner}/{repo}/commits/{ref} 200',
        'GET /repos/{owner}/{repo}/commits/{ref} 422',
        'GET /repos/{owner}/{repo}/contents/{path} 200',
        'GET /repos/{owner}/{repo}/contents/{path} 404',
        'GET /repos/{owner}/{repo}/git/blobs/{file_sha} 200',
        'GET /repos/{owner}/{repo}/git/blobs/{file_sha} 404',
        'GET /users/{username} 200',
        'GET /users/{username} 404',
        'POST /orgs/{org}/teams 201',
        'POST /orgs/{org}/teams 422',
        'PUT /orgs/{org}/memberships/{username} 200',
        'PUT /orgs/{org}/memberships/{username} 422',
        'PUT /orgs/{org}/teams/{team_slug}/memberships/{username} 200',
        'PUT /orgs/{org}/teams/{team_slug}/memberships/{username} 422',
      ].sort(),
    );
  });

  it('for repositories: directories, files of 1 MiB and more, refs, private repositories', async () => {
    seen.clear();
    github.addRepo('app-sre', 'saas', { private: true });
    const first = github.pushCommit('app-sre/saas', 'main', {
      'deploy/a.yaml': 'kind: A\n',
      'deploy/b.yaml': 'kind: B\n',
      'deploy/sub/c.yaml': 'kind: C\n',
      'big.txt': 'x'.repeat(1024 * 1024),
    });
    github.tag('app-sre/saas', 'v1', first);
    const second = github.pushCommit('app-sre/saas', 'main', { 'deploy/b.yaml': null });
    github.addToken('ghp_outsider', { orgs: ['elsewhere'] });
    const api = checkedOctokit(github.url, 'ghp_bot');
    const owner = 'app-sre';
    const repo = 'saas';

    const info = await api.rest.repos.get({ owner, repo });
    expect(info.data).toMatchObject({
      full_name: 'app-sre/saas',
      private: true,
      default_branch: 'main',
    });
    expect(await failure(api.rest.repos.get({ owner, repo: 'nope' }))).toBe(404);
    const outsider = checkedOctokit(github.url, 'ghp_outsider');
    expect(await failure(outsider.rest.repos.get({ owner, repo }))).toBe(404);
    expect(await failure(outsider.rest.repos.getCommit({ owner, repo, ref: 'main' }))).toBe(404);

    expect((await api.rest.repos.getCommit({ owner, repo, ref: 'main' })).data.sha).toBe(second);
    expect((await api.rest.repos.getCommit({ owner, repo, ref: 'v1' })).data.sha).toBe(first);
    const short = await api.rest.repos.getCommit({ owner, repo, ref: first.slice(0, 7) });
    expect(short.data.sha).toBe(first);
    expect((await api.rest.repos.getCommit({ owner, repo, ref: second })).data.parents).toEqual([
      expect.objectContaining({ sha: first }),
    ]);

    const dir = await api.rest.repos.getContent({ owner, repo, path: 'deploy', ref: first });
    expect(
      (dir.data as Array<{ name: string; type: string }>).map((e) => [e.name, e.type]),
    ).toEqual([
      ['a.yaml', 'file'],
      ['b.yaml', 'file'],
      ['sub', 'dir'],
    ]);
    const now = await api.rest.repos.getContent({ owner, repo, path: 'deploy', ref: 'main' });
    expect((now.data as Array<{ name: string }>).map((e) => e.name)).toEqual(['a.yaml', 'sub']);
    const root = await api.rest.repos.getContent({ owner, repo, path: '' });
    expect((root.data as Array<{ name: string }>).map((e) => e.name)).toEqual([
      'big.txt',
      'deploy',
    ]);

    const big = await api.rest.repos.getContent({ owner, repo, path: 'big.txt', ref: 'v1' });
    expect(big.data).toMatchObject({
      type: 'file',
      encoding: 'none',
      content: '',
      size: 1024 * 1024,
    });
    const blob = await api.rest.git.getBlob({
      owner,
      repo,
      file_sha: (big.data as { sha: string }).sha,
    });
    expect(Buffer.from(blob.data.content, 'base64').length).toBe(1024 * 1024);
    expect(
      await failure(api.rest.repos.getContent({ owner, repo, path: 'deploy/a.yaml', ref: 'nope' })),
    ).toBe(404);

    expect(problems).toEqual([]);
    expect([...seen].sort()).toEqual(
      [
        'GET /repos/{owner}/{repo} 200',
        'GET /repos/{owner}/{repo} 404',
        'GET /repos/{owner}/{repo}/commits/{ref} 200',
        'GET /repos/{owner}/{repo}/commits/{ref} 404',
        'GET /repos/{owner}/{repo}/contents/{path} 200',
        'GET /repos/{owner}/{repo}/contents/{path} 404',
        'GET /repos/{owner}/{repo}/git/blobs/{file_sha} 200',
      ].sort(),
    );
  });

  it("for error answers: rate limits and refused tokens carry GitHub's basic error body", async () => {
    const basicError = ajv.compile(
      jsonSchema(
        spec.paths['/orgs/{org}/teams']!.get!.responses['403']!.content!['application/json']!
          .schema!,
      ) as object,
    );
    const limited = await startFakeGitHub({ token: 'ghp_x', rateLimit: { limit: 1 } });
    try {
      limited.addOrg('o');
      await fetch(`${limited.url}/orgs/o/teams`, { headers: { authorization: 'token ghp_x' } });
      const over = await fetch(`${limited.url}/orgs/o/teams`, {
        headers: { authorization: 'token ghp_x' },
      });
      expect(over.status).toBe(403);
      expect(basicError(await over.json())).toBe(true);
      const bad = await fetch(`${limited.url}/orgs/o/teams`, {
        headers: { authorization: 'token nope' },
      });
      expect(bad.status).toBe(401);
      expect(basicError(await bad.json())).toBe(true);
    } finally {
      await limited.close();
    }
  });
});

/** Every path of the description, the most specific first: fewest parameters, then most literal text. */
const DESCRIBED = Object.keys(spec.paths)
  .map((template) => ({
    template,
    // `{path}` and `{ref}` may hold slashes (`dir/a.txt`, `refs/tags/v1`); the root's path is empty.
    regex: new RegExp(
      `^${template
        .replace(/\{path\}$/, '.*')
        .replace(/\{ref\}$/, '.+')
        .replace(/\{[^}]+\}/g, '[^/]+')}$`,
    ),
    params: template.split('{').length - 1,
    literal: template.replace(/\{[^}]+\}/g, '').length,
  }))
  .sort((a, b) => a.params - b.params || b.literal - a.literal);

/** The description's path of an API path; paths by organisation and team id as their by-name twins. */
function describedPath(path: string): string | undefined {
  const byName = path
    .replace(/^\/organizations\/\d+\/team\/\d+(?=\/|$)/, '/orgs/o/teams/t')
    .replace(/^\/organizations\/\d+(?=\/)/, '/orgs/o');
  return DESCRIBED.find((d) => d.regex.test(byName))?.template;
}

describe('every URL the fake GitHub hands out answers as GitHub describes it', () => {
  it('follows the URLs, Link and Location headers of its answers on a GitHub Enterprise base URL', async () => {
    const gh = await startFakeGitHub({ token: 'ghp_admin', pathPrefix: '/api/v3' });
    try {
      gh.addToken('ghp_bot', { user: 'app-sre-bot' });
      const org = gh.addOrg('app-sre', { name: 'App SRE' });
      gh.addOrgMember('app-sre', 'app-sre-bot', 'admin');
      const team = gh.addTeam('app-sre', 'SRE');
      gh.addTeamMember('app-sre', 'SRE', 'alice', 'maintainer');
      gh.addTeamMember('app-sre', 'SRE', 'bob');
      gh.addInvitation('app-sre', 'newcomer', { teams: ['sre'] });
      gh.addUser('outsider');
      gh.addRepo('app-sre', 'cfg');
      gh.pushCommit('app-sre/cfg', 'main', {
        'README.md': 'hello\n',
        'deploy/a.yaml': 'kind: A\n',
        'deploy/sub/b.yaml': 'kind: B\n',
      });
      gh.tag('app-sre/cfg', 'v1', 'main');
      gh.pushCommit('app-sre/cfg', 'main', { 'deploy/a.yaml': 'kind: A2\n' });
      gh.pushCommit('app-sre/cfg', 'feature', { 'x.txt': 'x' });
      // Not empty: GitHub answers 404 and 409 to reading the contents and commits of an empty one.
      gh.addRepo('app-sre', 'secret', { private: true });
      gh.pushCommit('app-sre/secret', 'main', { 'token.txt': 's3cret' });
      gh.addRepo('alice', 'dotfiles');
      gh.pushCommit('alice/dotfiles', 'main', { '.bashrc': 'set -o vi\n' });

      // Writes hand out URLs too: the memberships they create.
      const api = new Octokit({ auth: 'ghp_bot', baseUrl: gh.url, log: quiet });
      const written = [
        await api.rest.orgs.setMembershipForUser({ org: 'app-sre', username: 'outsider' }),
        await api.rest.teams.addOrUpdateMembershipForUserInOrg({
          org: 'app-sre',
          team_slug: 'sre',
          username: 'bob',
          role: 'member',
        }),
      ].flatMap((r) => urlsInJson(r.data).map((u) => u.url));
      const origin = new URL(gh.url).origin;
      const results = await crawl({
        start: [
          ...[
            '/orgs/app-sre',
            '/orgs/app-sre/teams',
            '/orgs/app-sre/invitations',
            '/orgs/app-sre/members',
            '/users/outsider',
            '/repos/app-sre/cfg',
            '/repos/app-sre/cfg/contents/deploy',
            '/repos/app-sre/cfg/contents/README.md',
            '/repos/app-sre/cfg/commits/main',
          ].map((p) => `${gh.url}${p}`),
          ...written,
        ],
        // The whole host: GitHub Enterprise serves archives (codeload) outside `/api/v3`.
        within: origin,
        headers: { authorization: 'token ghp_bot' },
      });

      const problems: string[] = [];
      const writeTargets = new Set<string>();
      const undescribed = new Set<string>();
      for (const r of results) {
        const path = new URL(r.url).pathname;
        const where = `${r.url} (${r.key} of ${r.from})`;
        if (path.startsWith('/_codeload/')) {
          const type = path.includes('/legacy.zip/') ? 'application/zip' : 'application/x-gzip';
          if (r.status !== 200 || r.contentType !== type) {
            problems.push(`${where}: ${r.status} ${r.contentType}`);
          }
          continue;
        }
        const apiPath = path.replace(/^\/api\/v3/, '');
        const template = describedPath(apiPath);
        const json = r.body !== undefined && typeof r.body !== 'string';
        if (json && r.contentType !== 'application/json; charset=utf-8') {
          problems.push(`${where}: content type ${r.contentType}`);
        }
        if (template === undefined) {
          undescribed.add(apiPath);
          if (r.status !== 200) problems.push(`${where}: ${r.status}, not in the description`);
          continue;
        }
        const get = spec.paths[template]!.get;
        if (!get) {
          // URLs of things to create (`git/blobs`, `merges`): GitHub has nothing to GET there.
          writeTargets.add(template);
          if (r.status !== 404) problems.push(`${where}: ${r.status} where GitHub answers 404`);
          continue;
        }
        const declared = get.responses[String(r.status)];
        if (!declared) {
          problems.push(`${where}: ${r.status}, not declared for GET ${template}`);
          continue;
        }
        const notFound = r.status >= 400;
        // GitHub answers 404 to "do I watch this repository?" when the token's account does not.
        if (notFound && template !== '/repos/{owner}/{repo}/subscription') {
          problems.push(`${where}: ${r.status}`);
        }
        const schema = declared.content?.['application/json']?.schema;
        if (!schema || notFound) continue;
        // An empty list matches any list schema; compiling the big ones (events) takes seconds.
        if (
          Array.isArray(r.body) &&
          r.body.length === 0 &&
          (schema as { type?: string }).type === 'array'
        ) {
          continue;
        }
        const validate = validator(template, 'get', r.status, schema);
        if (!validate(r.body)) {
          problems.push(
            `${where}: ${ajv.errorsText(validate.errors, { separator: '; ' }).slice(0, 400)}`,
          );
        }
      }
      expect(problems).toEqual([]);
      expect([...writeTargets].sort()).toEqual([
        '/repos/{owner}/{repo}/git/blobs',
        '/repos/{owner}/{repo}/git/commits',
        '/repos/{owner}/{repo}/git/refs',
        '/repos/{owner}/{repo}/git/tags',
        '/repos/{owner}/{repo}/git/trees',
        '/repos/{owner}/{repo}/merges',
      ]);
      // The Downloads API is gone from the description; GitHub still hands its URL out.
      expect([...undescribed].sort()).toEqual([
        '/repos/alice/dotfiles/downloads',
        '/repos/app-sre/cfg/downloads',
        '/repos/app-sre/secret/downloads',
      ]);
      // The team's URLs by id, which clients other than ours follow, are among them.
      const teamUrl = `${gh.url}/organizations/${org.id}/team/${team.id}`;
      const answered = new Map(results.map((r) => [r.url, r.status]));
      for (const suffix of ['', '/members', '/repos', '/memberships/bob']) {
        expect(answered.get(`${teamUrl}${suffix}`)).toBe(200);
      }
      expect(results.length).toBeGreaterThan(150);
    } finally {
      await gh.close();
    }
  });
});
