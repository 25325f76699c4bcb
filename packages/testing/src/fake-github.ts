import {
  type FakeGitCommit,
  type FakeGitFiles,
  gitBlobSha,
  normalizePath,
  tarGz,
  zipArchive,
} from './fake-git.ts';
import {
  type FakeGitHubInvitation,
  type FakeGitHubOrg,
  type FakeGitHubRepo,
  type FakeGitHubTeam,
  type FakeGitHubUser,
  GitHubModel,
  GitHubShapes,
  type InvitationRole,
  NotFound,
  type OrgRole,
  type RepoState,
  type TeamPrivacy,
  type TeamRole,
} from './fake-github-state.ts';
import {
  type FakeRequest,
  type FakeResponse,
  type HttpFake,
  type HttpFaultRule,
  startHttpFake,
} from './http-fake.ts';

/** @public the files of `pushCommit` (path → content, `null` deletes) */
export type { FakeGitFiles } from './fake-git.ts';
/** @public the shapes the fake's builders and readers use */
export type {
  FakeGitHubInvitation,
  FakeGitHubOrg,
  FakeGitHubRepo,
  FakeGitHubTeam,
  FakeGitHubUser,
  InvitationRole,
  OrgRole,
  TeamPrivacy,
  TeamRole,
} from './fake-github-state.ts';

/**
 * A file served by the fake GitHub: `owner/repo`, `ref`, `path`, content
 * (committed on branch `ref` of a public repository, created when missing).
 *
 * @public
 */
export interface FakeGitHubFile {
  readonly repo: string;
  readonly ref: string;
  readonly path: string;
  readonly content: string;
}

/**
 * A primary rate limit: `limit` requests per token per window (GitHub: 5000 an hour).
 *
 * @public
 */
export interface FakeGitHubRateLimit {
  readonly limit?: number;
  /** From the token's first request in a window; GitHub's is one hour. */
  readonly windowMs?: number;
}

/** @public */
export interface FakeGitHubTokenOptions {
  /** The organisations the token may read and change, and whose private repositories it sees; all when absent. */
  readonly orgs?: readonly string[];
  /** Private repositories (`owner/name`) the token may read besides those of its organisations. */
  readonly repos?: readonly string[];
  /** The account the token acts for: it invites, and maintains the teams it creates. */
  readonly user?: string;
  /** This token's primary quota (default: the fake's `rateLimit`). */
  readonly rateLimit?: FakeGitHubRateLimit;
}

export interface FakeGitHubOptions {
  /** A token with access to every organisation (default `ghp_fake_token`). */
  readonly token?: string;
  readonly files?: readonly FakeGitHubFile[];
  /** The primary quota of every token (default 5000 an hour). */
  readonly rateLimit?: FakeGitHubRateLimit;
  /** Served under this path, as GitHub Enterprise serves `/api/v3`. */
  readonly pathPrefix?: string;
  /** Latency added to every request. */
  readonly latencyMs?: number;
  /** The clock of rate-limit windows and timestamps. */
  readonly now?: () => number;
  /** A fixed port (the demo); a free one when absent. */
  readonly port?: number;
}

/**
 * A token's primary rate-limit state, as the `x-ratelimit-*` headers tell it.
 *
 * @public
 */
export interface FakeGitHubQuota {
  readonly limit: number;
  readonly remaining: number;
  readonly used: number;
  /** Epoch seconds when the window ends. */
  readonly reset: number;
}

export interface FakeGitHub extends HttpFake {
  /** The API base URL (what `GITHUB_API` / Octokit's `baseUrl` take). */
  readonly url: string;
  /** The all-organisations token given at start. */
  readonly token: string;
  // `faults` (from HttpFake): see `secondaryRateLimit` and `primaryRateLimit` for GitHub's limits.

  addFile(file: FakeGitHubFile): void;
  /** A commit with this sha (same files) becomes the tip of branch `ref` of `owner/repo`. */
  addCommit(repo: string, ref: string, sha: string): void;
  /** A repository, public unless `private`; an existing one is returned as it is. */
  addRepo(owner: string, name: string, options?: { private?: boolean }): FakeGitHubRepo;
  /**
   * A new commit on `branch` of repository `owner/name` (the branch is
   * created when missing; the first one is the default branch): the branch's
   * files with `files` applied, `null` deleting a path. Returns its sha.
   */
  pushCommit(
    repo: string,
    branch: string,
    files: FakeGitFiles,
    options?: { message?: string },
  ): string;
  /** Points tag `name` of `owner/name` at `ref` (branch, tag or sha); returns the commit sha. */
  tag(repo: string, name: string, ref: string): string;
  /** The commit sha `ref` names in `owner/name` (branch, tag, full or abbreviated sha), or undefined. */
  commitSha(repo: string, ref: string): string | undefined;
  addToken(token: string, options?: FakeGitHubTokenOptions): void;
  addUser(login: string, fields?: { id?: number; name?: string; email?: string }): FakeGitHubUser;
  addOrg(login: string, fields?: { id?: number; name?: string }): FakeGitHubOrg;
  addOrgMember(org: string, login: string, role?: OrgRole): void;
  addTeam(
    org: string,
    name: string,
    fields?: { description?: string; privacy?: TeamPrivacy; permission?: string },
  ): FakeGitHubTeam;
  /** A user outside the organisation becomes a member of it first. */
  addTeamMember(org: string, team: string, login: string, role?: TeamRole): void;
  addInvitation(
    org: string,
    login: string,
    options?: { role?: InvitationRole; teams?: readonly string[] },
  ): void;
  /** The invited user joins the organisation and the invitation's teams. */
  acceptInvitation(org: string, login: string): void;

  /** Logins of the organisation's members, sorted. */
  orgMembers(org: string): string[];
  /** Logins of the team's members (team by name or slug), sorted. */
  teamMembers(org: string, team: string): string[];
  /** Pending invitations of the organisation, sorted by login. */
  invitations(org: string): FakeGitHubInvitation[];
  /** The organisation's teams, sorted by name. */
  teams(org: string): FakeGitHubTeam[];
  quota(token: string): FakeGitHubQuota;
  /** Every token's quota starts a new window now. */
  resetRateLimits(): void;
}

const DOCS = 'https://docs.github.com/rest';
const RATE_LIMIT_DOCS =
  'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits';

/** GitHub's answer to a request beyond a secondary rate limit, as a fault rule. */
export function secondaryRateLimit(
  options: {
    readonly retryAfterSeconds?: number;
    readonly status?: 403 | 429;
    readonly times?: number;
    readonly method?: string;
    readonly path?: string | RegExp;
  } = {},
): HttpFaultRule {
  return {
    status: options.status ?? 403,
    headers: { 'retry-after': String(options.retryAfterSeconds ?? 1) },
    body: {
      message:
        'You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID 0000:0000:0000000:0000000:00000000.',
      documentation_url: RATE_LIMIT_DOCS,
    },
    times: options.times ?? 1,
    ...(options.method ? { method: options.method } : {}),
    ...(options.path ? { path: options.path } : {}),
  };
}

/**
 * GitHub's answer when a token's primary quota is used up, as a fault rule:
 * 403, `x-ratelimit-remaining: 0`, the window ending `resetInSeconds` from now.
 */
export function primaryRateLimit(
  options: {
    readonly resetInSeconds?: number;
    readonly times?: number;
    readonly method?: string;
    readonly path?: string | RegExp;
  } = {},
): HttpFaultRule {
  const reset = Math.ceil(Date.now() / 1000) + (options.resetInSeconds ?? 0);
  return {
    status: 403,
    headers: {
      'x-ratelimit-limit': '5000',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-used': '5000',
      'x-ratelimit-reset': String(reset),
      'x-ratelimit-resource': 'core',
    },
    body: {
      message: 'API rate limit exceeded for user ID 1.',
      documentation_url: DOCS,
    },
    times: options.times ?? 1,
    ...(options.method ? { method: options.method } : {}),
    ...(options.path ? { path: options.path } : {}),
  };
}

/** GitHub's contents API returns no content for files of 1 MiB and more. */
const CONTENTS_LIMIT = 1024 * 1024;
const DEFAULT_PER_PAGE = 30;
const MAX_PER_PAGE = 100;

interface TokenState {
  readonly orgs: ReadonlySet<string> | undefined;
  /** Lower-case `owner/name` of private repositories granted one by one. */
  readonly repos: ReadonlySet<string>;
  readonly user: string | undefined;
  readonly quota: { limit: number; windowMs: number; used: number; windowStart: number };
}

interface Routed {
  readonly req: FakeRequest;
  readonly token: TokenState;
  readonly params: Readonly<Record<string, string>>;
}

type Handler = (r: Routed) => FakeResponse | Promise<FakeResponse>;

interface Route {
  readonly method: string;
  readonly pattern: RegExp;
  readonly handle: Handler;
  /** Reading the organisation itself is public; everything else under it needs access. */
  readonly publicOrg?: boolean;
}

/**
 * A fake of GitHub's REST API with GitHub's semantics for what the project
 * uses: repositories with branches, tags and commits of file trees, served
 * as contents (files, directories, no content from 1 MiB), blobs and
 * commits (the `github()` template helper, integrations-manager,
 * openshift-saas-deploy; private repositories are hidden (404) from tokens
 * without access), and organisations, teams, members and
 * invitations (the `github` integration). Tokens are checked (401 `Bad
 * credentials`) and may be limited to some organisations; lists page with
 * `per_page`/`page` and a `Link` header; every answer carries the
 * `x-ratelimit-*` headers of its token's quota, which answers 403 when used
 * up. Faults (secondary limits, 5xx, latency) come from the HTTP fake.
 * Every URL an answer hands out answers too, as on GitHub (a team's URL by
 * id, a tag's tarball, a user's followers), for clients other than ours.
 *
 * ```ts
 * const github = await startFakeGitHub({ token: 'ghp_admin', rateLimit: { limit: 100, windowMs: 1000 } });
 * github.addToken('ghp_org_a', { orgs: ['org-a'], user: 'bot' });
 * github.addOrg('org-a');
 * github.addTeam('org-a', 'SRE');                  // slug `sre`, secret
 * github.addTeamMember('org-a', 'sre', 'alice');   // alice joins org-a too
 * github.addRepo('org-a', 'app', { private: true });
 * const sha = github.pushCommit('org-a/app', 'main', { 'deploy/t.yaml': 'kind: Template' });
 * github.tag('org-a/app', 'v1', sha);
 * github.faults.add(secondaryRateLimit({ retryAfterSeconds: 1, times: 2 }));
 * // ... run the code under test with GITHUB_API=github.url ...
 * github.teamMembers('org-a', 'sre');              // ['alice', ...]
 * github.invitations('org-a');                     // pending ones, with their teams
 * github.mutatingRequests().length;                // writes sent
 * ```
 */
export async function startFakeGitHub(options: FakeGitHubOptions = {}): Promise<FakeGitHub> {
  const now = options.now ?? Date.now;
  const mainToken = options.token ?? 'ghp_fake_token';
  const defaultLimit = {
    limit: options.rateLimit?.limit ?? 5000,
    windowMs: options.rateLimit?.windowMs ?? 3_600_000,
  };
  const prefix = (options.pathPrefix ?? '').replace(/\/+$/, '');
  const model = new GitHubModel(now);
  const tokens = new Map<string, TokenState>();
  const anonymous: TokenState = {
    orgs: new Set(),
    repos: new Set(),
    user: undefined,
    quota: { limit: 60, windowMs: 3_600_000, used: 0, windowStart: now() },
  };
  const addToken = (token: string, o: FakeGitHubTokenOptions = {}) => {
    tokens.set(token, {
      orgs: o.orgs ? new Set(o.orgs.map((x) => x.toLowerCase())) : undefined,
      repos: new Set((o.repos ?? []).map((x) => x.toLowerCase())),
      user: o.user === undefined ? undefined : model.addUser(o.user).login,
      quota: {
        limit: o.rateLimit?.limit ?? defaultLimit.limit,
        windowMs: o.rateLimit?.windowMs ?? defaultLimit.windowMs,
        used: 0,
        windowStart: now(),
      },
    });
  };
  addToken(mainToken);

  /** The repository `owner/name`, created (public) when missing. */
  const repoNamed = (fullName: string): RepoState => {
    const [owner, name, ...rest] = fullName.split('/');
    if (!owner || !name || rest.length)
      throw new Error(`fake GitHub: '${fullName}' is not owner/name`);
    return model.addRepo(owner, name);
  };
  const addFile = (f: FakeGitHubFile) => {
    repoNamed(f.repo).git.push(f.ref, { [f.path]: f.content }, { message: `Add ${f.path}` });
  };
  for (const f of options.files ?? []) addFile(f);

  let baseUrl = '';
  const shapes = () => new GitHubShapes(baseUrl, model);
  const routes = githubRoutes({ model, shapes, baseUrl: () => baseUrl });

  const quotaOf = (state: TokenState): FakeGitHubQuota => {
    const q = state.quota;
    if (now() >= q.windowStart + q.windowMs) {
      q.used = 0;
      q.windowStart = now();
    }
    return {
      limit: q.limit,
      remaining: Math.max(q.limit - q.used, 0),
      used: q.used,
      reset: Math.ceil((q.windowStart + q.windowMs) / 1000),
    };
  };
  const rateHeaders = (q: FakeGitHubQuota): Record<string, string> => ({
    'x-ratelimit-limit': String(q.limit),
    'x-ratelimit-remaining': String(q.remaining),
    'x-ratelimit-used': String(q.used),
    'x-ratelimit-reset': String(q.reset),
    'x-ratelimit-resource': 'core',
  });

  const handle = async (req: FakeRequest): Promise<FakeResponse> => {
    const auth = req.headers.authorization ?? '';
    const presented = /^(?:token|bearer)\s+(.+)$/i.exec(auth)?.[1];
    const token = presented === undefined ? undefined : tokens.get(presented);
    if (!token) {
      anonymous.quota.used = Math.min(anonymous.quota.used + 1, anonymous.quota.limit);
      return withHeaders(
        {
          status: 401,
          body: { message: 'Bad credentials', documentation_url: DOCS, status: '401' },
        },
        rateHeaders(quotaOf(anonymous)),
      );
    }
    const before = quotaOf(token);
    if (before.remaining === 0) {
      return withHeaders(
        {
          status: 403,
          body: {
            message: `API rate limit exceeded for user ID ${token.user ? (model.user(token.user)?.id ?? 1) : 1}.`,
            documentation_url: `${DOCS}/overview/rate-limits-for-the-rest-api`,
            status: '403',
          },
        },
        rateHeaders(before),
      );
    }
    token.quota.used += 1;
    const headers = rateHeaders(quotaOf(token));
    const path = req.url.pathname;
    // GitHub Enterprise serves archive downloads (codeload) at the host's root, outside the API prefix.
    const outside = path.startsWith('/_codeload/');
    if (prefix && !outside && !path.startsWith(`${prefix}/`)) {
      return withHeaders(notFound(), headers);
    }
    let route: string;
    try {
      route = byName(outside ? path : path.slice(prefix.length), model);
    } catch (e) {
      if (e instanceof NotFound) return withHeaders(notFound(), headers);
      throw e;
    }
    for (const r of routes) {
      if (r.method !== req.method) continue;
      const m = r.pattern.exec(route);
      if (!m) continue;
      const params: Record<string, string> = {};
      for (const [k, v] of Object.entries(m.groups ?? {})) {
        if (v !== undefined) params[k] = decodeURIComponent(v);
      }
      try {
        const denied = r.publicOrg ? undefined : orgAccessDenied(token, params);
        return withHeaders(denied ?? (await r.handle({ req, token, params })), headers);
      } catch (e) {
        if (e instanceof NotFound) return withHeaders(notFound(), headers);
        throw e;
      }
    }
    return withHeaders(notFound(), headers);
  };

  const http = await startHttpFake({
    handle,
    ...(options.latencyMs !== undefined ? { latencyMs: options.latencyMs } : {}),
    ...(options.port !== undefined ? { port: options.port } : {}),
  });
  baseUrl = `${http.url}${prefix}`;

  const sortedLogins = (members: ReadonlyMap<string, unknown>) =>
    [...members.keys()].map((k) => model.userLogin(k)).sort(byLowerCase);

  const own: Omit<FakeGitHub, keyof HttpFake> = {
    token: mainToken,
    addFile,
    addCommit: (repo, ref, sha) => {
      repoNamed(repo).git.push(ref, {}, { sha, message: 'commit' });
    },
    addRepo: (owner, name, o = {}) => {
      const { createdAt: _, git: __, ...repo } = model.addRepo(owner, name, o);
      return repo;
    },
    pushCommit: (repo, branch, files, o = {}) =>
      model
        .repo(repo)
        .git.push(branch, files, o.message === undefined ? {} : { message: o.message }).sha,
    tag: (repo, name, ref) => model.repo(repo).git.tag(name, ref),
    commitSha: (repo, ref) => model.repo(repo).git.resolve(ref)?.sha,
    addToken,
    addUser: (login, fields) => model.addUser(login, fields),
    addOrg: (login, fields) => model.addOrg(login, fields),
    addOrgMember: (org, login, role) => model.addOrgMember(org, login, role),
    addTeam: (org, name, fields) => model.addTeam(org, name, fields),
    addTeamMember: (org, team, login, role) => model.addTeamMember(org, team, login, role),
    addInvitation: (org, login, o = {}) => {
      model.invite(org, login, o.role ?? 'direct_member', undefined, o.teams ?? []);
    },
    acceptInvitation: (org, login) => model.acceptInvitation(org, login),
    orgMembers: (org) => sortedLogins(model.org(org).members),
    teamMembers: (org, team) => sortedLogins(model.team(org, team).members),
    invitations: (org) =>
      model
        .invitationsOf(model.org(org))
        .map((i) => ({ id: i.id, login: i.login, role: i.role, teams: model.teamSlugs(i).sort() }))
        .sort((a, b) => byLowerCase(a.login, b.login)),
    teams: (org) => model.teamsOf(model.org(org)).map((t) => t.team),
    quota: (token) => {
      const state = tokens.get(token);
      if (!state) throw new Error(`fake GitHub: unknown token`);
      return quotaOf(state);
    },
    resetRateLimits: () => {
      for (const t of tokens.values()) {
        t.quota.used = 0;
        t.quota.windowStart = now();
      }
    },
  };
  // The HTTP side (request log, faults, latency, close) is the fake server's own; the URL
  // carries the GitHub Enterprise path prefix.
  return Object.assign(http, own, { url: baseUrl });
}

function githubRoutes(deps: {
  model: GitHubModel;
  shapes: () => GitHubShapes;
  baseUrl: () => string;
}): Route[] {
  const { model, shapes } = deps;
  /** The repository of the route, hidden (404) from a token that may not see it, as GitHub does. */
  const repoOf = (params: Readonly<Record<string, string>>, token: TokenState): RepoState => {
    const repo = model.repo(`${params.owner}/${params.repo}`);
    if (repo.private && !seesPrivate(token, repo)) throw new NotFound('repository');
    return repo;
  };
  const page = (items: readonly unknown[], req: FakeRequest) =>
    paginate(items, req, deps.baseUrl());
  const teamOf = (params: Readonly<Record<string, string>>) => {
    const org = model.org(params.org!);
    const team = org.teams.get(params.team!.toLowerCase());
    if (!team) throw new NotFound('team');
    return { org, team };
  };
  const repositoryShape = (repo: RepoState) =>
    shapes().repository({ ...repo, defaultBranch: repo.git.defaultBranch ?? 'main' });
  /** A git tree (`GET /repos/{owner}/{repo}/git/trees/{sha}`): paths relative to the tree. */
  const treeShape = (
    repo: RepoState,
    tree: { commit: FakeGitCommit; dir: string; sha: string },
    recursive: boolean,
  ) => {
    const { commit, dir, sha } = tree;
    const repoUrl = `${deps.baseUrl()}/repos/${repo.fullName}`;
    const base = dir === '' ? '' : `${dir}/`;
    const list = (d: string): unknown[] =>
      repo.git.entries(commit, d).flatMap((e) => [
        e.type === 'dir'
          ? {
              path: e.path.slice(base.length),
              mode: '040000',
              type: 'tree',
              sha: e.sha,
              url: `${repoUrl}/git/trees/${e.sha}`,
            }
          : {
              path: e.path.slice(base.length),
              mode: '100644',
              type: 'blob',
              sha: e.sha,
              size: e.size,
              url: `${repoUrl}/git/blobs/${e.sha}`,
            },
        ...(recursive && e.type === 'dir' ? list(e.path) : []),
      ]);
    return { sha, url: `${repoUrl}/git/trees/${sha}`, tree: list(dir), truncated: false };
  };
  const ORG = '(?<org>[^/]+)';
  const TEAM = '(?<team>[^/]+)';
  const USER = '(?<user>[^/]+)';
  const REPO = '(?<owner>[^/]+)/(?<repo>[^/]+)';
  const route = (method: string, path: string, handle: Handler, publicOrg = false): Route => ({
    method,
    pattern: new RegExp(`^${path}$`),
    handle,
    publicOrg,
  });

  return [
    route(
      'GET',
      `/orgs/${ORG}`,
      ({ params }) => ({
        status: 200,
        body: shapes().orgFull(model.org(params.org!)),
      }),
      true,
    ),
    route('GET', `/orgs/${ORG}/teams`, ({ params, req }) => {
      const org = model.org(params.org!);
      return page(
        model.teamsOf(org).map((t) => shapes().team(org.org, t)),
        req,
      );
    }),
    route('POST', `/orgs/${ORG}/teams`, ({ params, req, token }) => {
      const org = model.org(params.org!);
      const body = (req.body ?? {}) as Record<string, unknown>;
      if (typeof body.name !== 'string' || body.name.trim() === '') {
        return validationFailed([{ resource: 'Team', code: 'missing_field', field: 'name' }]);
      }
      if (body.privacy !== undefined && body.privacy !== 'secret' && body.privacy !== 'closed') {
        return validationFailed([
          { resource: 'Team', code: 'invalid', field: 'privacy', value: String(body.privacy) },
        ]);
      }
      if (model.findTeam(org, body.name)) {
        return validationFailed([
          {
            resource: 'Team',
            code: 'already_exists',
            field: 'name',
            message: 'Name must be unique for this org',
          },
        ]);
      }
      const team = model.addTeam(org.org.login, body.name, {
        ...(typeof body.description === 'string' ? { description: body.description } : {}),
        ...(body.privacy === 'closed' ? { privacy: 'closed' as const } : {}),
        ...(typeof body.permission === 'string' ? { permission: body.permission } : {}),
      });
      const state = model.team(org.org.login, team.slug);
      // GitHub makes the creating account a maintainer of the new team.
      if (token.user && org.members.has(token.user.toLowerCase())) {
        state.members.set(token.user.toLowerCase(), 'maintainer');
      }
      for (const login of Array.isArray(body.maintainers) ? body.maintainers : []) {
        if (typeof login === 'string' && org.members.has(login.toLowerCase())) {
          state.members.set(login.toLowerCase(), 'maintainer');
        }
      }
      return { status: 201, body: shapes().teamFull(org, state) };
    }),
    route('GET', `/orgs/${ORG}/teams/${TEAM}`, ({ params }) => {
      const { org, team } = teamOf(params);
      return { status: 200, body: shapes().teamFull(org, team) };
    }),
    route('GET', `/orgs/${ORG}/teams/${TEAM}/members`, ({ params, req }) => {
      const { team } = teamOf(params);
      const role = req.url.searchParams.get('role') ?? 'all';
      const users = model.usersOf(team.members, role === 'all' ? undefined : role);
      return page(
        users.map((u) => shapes().simpleUser(u)),
        req,
      );
    }),
    route('GET', `/orgs/${ORG}/teams/${TEAM}/invitations`, ({ params, req }) => {
      const { org, team } = teamOf(params);
      return page(
        model.invitationsOf(org, team.team.id).map((i) => shapes().invitation(org.org, i)),
        req,
      );
    }),
    route('GET', `/orgs/${ORG}/teams/${TEAM}/repos`, ({ params, req }) => {
      teamOf(params);
      // The fake grants teams no repositories.
      return page([], req);
    }),
    route('GET', `/orgs/${ORG}/teams/${TEAM}/memberships/${USER}`, ({ params }) => {
      const { org, team } = teamOf(params);
      const user = model.existingUser(params.user!);
      const role = team.members.get(user.login.toLowerCase());
      if (role !== undefined) {
        return {
          status: 200,
          body: shapes().teamMembership(org.org, team.team, user.login, role, 'active'),
        };
      }
      const invitation = org.invitations.get(user.login.toLowerCase());
      if (!invitation?.teamIds.has(team.team.id)) throw new NotFound('membership');
      return {
        status: 200,
        body: shapes().teamMembership(org.org, team.team, user.login, 'member', 'pending'),
      };
    }),
    route('PUT', `/orgs/${ORG}/teams/${TEAM}/memberships/${USER}`, ({ params, req, token }) => {
      const { org, team } = teamOf(params);
      const body = (req.body ?? {}) as Record<string, unknown>;
      const role = body.role ?? 'member';
      if (role !== 'member' && role !== 'maintainer') {
        return validationFailed([
          { resource: 'TeamMember', code: 'invalid', field: 'role', value: String(role) },
        ]);
      }
      const user = model.existingUser(params.user!);
      const state = model.setTeamMembership(
        org.org.login,
        team.team.slug,
        user.login,
        role,
        token.user,
      );
      return {
        status: 200,
        body: shapes().teamMembership(org.org, team.team, user.login, role, state),
      };
    }),
    route('DELETE', `/orgs/${ORG}/teams/${TEAM}/memberships/${USER}`, ({ params }) => {
      const { org, team } = teamOf(params);
      model.removeTeamMembership(org.org.login, team.team.slug, params.user!);
      return { status: 204 };
    }),
    route('GET', `/orgs/${ORG}/members`, ({ params, req }) => {
      const org = model.org(params.org!);
      const role = req.url.searchParams.get('role') ?? 'all';
      if (!['all', 'admin', 'member'].includes(role)) {
        return validationFailed([
          { resource: 'Search', code: 'invalid', field: 'role', value: role },
        ]);
      }
      const users = model.usersOf(org.members, role === 'all' ? undefined : role);
      return page(
        users.map((u) => shapes().simpleUser(u)),
        req,
      );
    }),
    route('GET', `/orgs/${ORG}/invitations`, ({ params, req }) => {
      const org = model.org(params.org!);
      return page(
        model.invitationsOf(org).map((i) => shapes().invitation(org.org, i)),
        req,
      );
    }),
    route('GET', `/orgs/${ORG}/invitations/(?<id>\\d+)/teams`, ({ params, req }) => {
      const org = model.org(params.org!);
      const invitation = model.invitationsOf(org).find((i) => i.id === Number(params.id));
      if (!invitation) throw new NotFound('invitation');
      return page(
        model.invitationTeams(invitation).map((t) => shapes().team(org.org, t)),
        req,
      );
    }),
    route('GET', `/orgs/${ORG}/memberships/${USER}`, ({ params }) => {
      const org = model.org(params.org!);
      const user = model.existingUser(params.user!);
      const role = org.members.get(user.login.toLowerCase());
      if (role !== undefined) {
        return { status: 200, body: shapes().orgMembership(org.org, user, role, 'active') };
      }
      const invitation = org.invitations.get(user.login.toLowerCase());
      if (!invitation) throw new NotFound('membership');
      const invited = invitation.role === 'admin' ? 'admin' : 'member';
      return { status: 200, body: shapes().orgMembership(org.org, user, invited, 'pending') };
    }),
    route('GET', `/orgs/${ORG}/repos`, ({ params, req, token }) => {
      const org = model.org(params.org!);
      const repos = model
        .reposOwnedBy(org.org.login)
        .filter((r) => !r.private || seesPrivate(token, r));
      return page(repos.map(repositoryShape), req);
    }),
    // What the fake does not model: none exists, as in a new organisation.
    route('GET', `/orgs/${ORG}/(?:events|hooks|issues|public_members)`, ({ params, req }) => {
      model.org(params.org!);
      return page([], req);
    }),
    route('PUT', `/orgs/${ORG}/memberships/${USER}`, ({ params, req, token }) => {
      const org = model.org(params.org!);
      const user = model.existingUser(params.user!);
      const body = (req.body ?? {}) as Record<string, unknown>;
      const role = body.role ?? 'member';
      if (role !== 'member' && role !== 'admin') {
        return validationFailed([
          {
            resource: 'OrganizationMembership',
            code: 'invalid',
            field: 'role',
            value: String(role),
          },
        ]);
      }
      if (org.members.has(user.login.toLowerCase())) {
        org.members.set(user.login.toLowerCase(), role);
        return { status: 200, body: shapes().orgMembership(org.org, user, role, 'active') };
      }
      model.invite(
        org.org.login,
        user.login,
        role === 'admin' ? 'admin' : 'direct_member',
        token.user,
      );
      return { status: 200, body: shapes().orgMembership(org.org, user, role, 'pending') };
    }),
    route('DELETE', `/orgs/${ORG}/memberships/${USER}`, ({ params }) => {
      model.org(params.org!);
      const user = model.existingUser(params.user!);
      if (!model.removeOrgMembership(params.org!, user.login)) throw new NotFound('membership');
      return { status: 204 };
    }),
    route('DELETE', `/orgs/${ORG}/members/${USER}`, ({ params }) => {
      model.org(params.org!);
      const user = model.existingUser(params.user!);
      model.removeOrgMember(params.org!, user.login);
      return { status: 204 };
    }),
    route('GET', `/users/${USER}`, ({ params }) => ({
      status: 200,
      body: shapes().account(params.user!),
    })),
    route('GET', `/users/${USER}/repos`, ({ params, req }) => {
      const { login } = shapes().account(params.user!);
      // Another account's repositories: the public ones.
      return page(
        model
          .reposOwnedBy(login)
          .filter((r) => !r.private)
          .map(repositoryShape),
        req,
      );
    }),
    // Memberships are private by default, and the fake models no social activity.
    route(
      'GET',
      `/users/${USER}/(?:events|followers|following|gists|orgs|received_events|starred|subscriptions)`,
      ({ params, req }) => {
        shapes().account(params.user!);
        return page([], req);
      },
    ),

    route('GET', `/repos/${REPO}`, ({ params, token }) => ({
      status: 200,
      body: repositoryShape(repoOf(params, token)),
    })),
    route('GET', `/repos/${REPO}/branches`, ({ params, req, token }) => {
      const repo = repoOf(params, token);
      const branches = [...repo.git.branches].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      return page(
        branches.map(([name, sha]) => shapes().branch(repo.fullName, name, sha)),
        req,
      );
    }),
    route('GET', `/repos/${REPO}/tags`, ({ params, req, token }) => {
      const repo = repoOf(params, token);
      // GitHub lists the newest-looking names first.
      const tags = [...repo.git.tags].sort(([a], [b]) => (a < b ? 1 : a > b ? -1 : 0));
      return page(
        tags.map(([name, sha]) => shapes().tag(repo.fullName, name, sha)),
        req,
      );
    }),
    route('GET', `/repos/${REPO}/commits`, ({ params, req, token }) => {
      const repo = repoOf(params, token);
      if (!repo.git.defaultBranch) return conflict('Git Repository is empty.');
      const ref = req.url.searchParams.get('sha') ?? repo.git.defaultBranch;
      const commit = resolveRef(repo, ref);
      if (!commit) return notFound(`No commit found for SHA: ${ref}`);
      return page(
        repo.git.log(commit.sha).map((c) => shapes().commit(repo.fullName, c)),
        req,
      );
    }),
    route('GET', `/repos/${REPO}/commits/(?<sha>[^/]+)/comments`, ({ params, req, token }) => {
      repoOf(params, token);
      return page([], req);
    }),
    route('GET', `/repos/${REPO}/git/commits/(?<sha>[0-9a-f]{40})`, ({ params, token }) => {
      const repo = repoOf(params, token);
      const commit = repo.git.commits.get(params.sha!);
      if (!commit) throw new NotFound('commit');
      return { status: 200, body: shapes().gitCommit(repo.fullName, commit) };
    }),
    route('GET', `/repos/${REPO}/git/trees/(?<tree>.+)`, ({ params, req, token }) => {
      const repo = repoOf(params, token);
      // A tree sha, or a ref naming its commit's root tree.
      const sha = params.tree!;
      const byRef = resolveRef(repo, sha);
      const found = repo.git.findTree(sha);
      const tree = found
        ? { ...found, sha }
        : byRef && { commit: byRef, dir: '', sha: byRef.treeSha };
      if (!tree) throw new NotFound('tree');
      const recursive = !['', '0', 'false'].includes(req.url.searchParams.get('recursive') ?? '');
      return { status: 200, body: treeShape(repo, tree, recursive) };
    }),
    route('GET', `/repos/${REPO}/languages`, ({ params, token }) => {
      repoOf(params, token);
      return { status: 200, body: {} };
    }),
    route('GET', `/repos/${REPO}/contributors`, ({ params, req, token }) => {
      const repo = repoOf(params, token);
      // The fake's commits are by no GitHub account: no contributors, and 204 for an empty repository.
      return repo.git.defaultBranch ? page([], req) : { status: 204 };
    }),
    route(
      'GET',
      `/repos/${REPO}/(?<format>tarball|zipball)(?:/(?<ref>.+))?`,
      ({ params, token }) => {
        const repo = repoOf(params, token);
        const commit = resolveRef(repo, params.ref ?? repo.git.defaultBranch ?? '');
        if (!commit) throw new NotFound('ref');
        const ext = params.format === 'tarball' ? 'tar.gz' : 'zip';
        const origin = new URL(deps.baseUrl()).origin;
        const location = `${origin}/_codeload/${repo.fullName}/legacy.${ext}/${commit.sha}`;
        return { status: 302, headers: { Location: location } };
      },
    ),
    route(
      'GET',
      `/_codeload/${REPO}/legacy\\.(?<ext>tar\\.gz|zip)/(?<ref>[0-9a-f]{40})`,
      async ({ params, token }) => {
        const repo = repoOf(params, token);
        const commit = repo.git.commits.get(params.ref!);
        if (!commit) throw new NotFound('commit');
        // GitHub's top folder: `<owner>-<repo>-<short sha>`.
        const top = `${repo.owner}-${repo.name}-${commit.sha.slice(0, 7)}`;
        const files = repo.git.filesUnder(commit, '');
        const mtime = Math.floor(Date.parse(commit.date) / 1000);
        const tar = params.ext === 'tar.gz';
        return {
          status: 200,
          body: tar ? await tarGz(top, files, mtime) : zipArchive(top, files, mtime),
          headers: {
            'Content-Type': tar ? 'application/x-gzip' : 'application/zip',
            'Content-Disposition': `attachment; filename=${top}.${params.ext}`,
          },
        };
      },
    ),
    // What the fake does not model: none exists, as in a new repository.
    route(
      'GET',
      `/repos/${REPO}/(?:assignees|collaborators|comments|deployments|downloads|events|forks|hooks|issues|issues/comments|issues/events|keys|labels|milestones|notifications|pulls|releases|stargazers|subscribers|teams)`,
      ({ params, req, token }) => {
        repoOf(params, token);
        return page([], req);
      },
    ),
    route('GET', `/repos/${REPO}/contents(?:/(?<path>.*))?`, ({ params, req, token }) => {
      const repo = repoOf(params, token);
      const ref = req.url.searchParams.get('ref') ?? repo.git.defaultBranch ?? 'main';
      const commit = repo.git.resolve(ref);
      if (!commit) {
        return {
          status: 404,
          body: {
            message: `No commit found for the ref ${ref}`,
            documentation_url: DOCS,
            status: '404',
          },
        };
      }
      const path = normalizePath(params.path ?? '');
      const repoUrl = `${deps.baseUrl()}/repos/${repo.fullName}`;
      const links = (p: string, type: 'file' | 'dir', sha: string) => {
        const self = `${repoUrl}/contents/${p}?ref=${encodeURIComponent(ref)}`;
        const git = `${repoUrl}/git/${type === 'file' ? 'blobs' : 'trees'}/${sha}`;
        const html = `https://github.com/${repo.fullName}/${type === 'file' ? 'blob' : 'tree'}/${ref}/${p}`;
        return {
          url: self,
          git_url: git,
          html_url: html,
          download_url:
            type === 'file'
              ? `https://raw.githubusercontent.com/${repo.fullName}/${ref}/${p}`
              : null,
          _links: { self, git, html },
        };
      };
      const kind = repo.git.kind(commit, path);
      if (kind === undefined) throw new NotFound('path');
      if (kind === 'dir') {
        return {
          status: 200,
          body: repo.git.entries(commit, path).map((e) => ({
            type: e.type,
            size: e.size,
            name: e.name,
            path: e.path,
            sha: e.sha,
            ...links(e.path, e.type, e.sha),
          })),
        };
      }
      const content = commit.tree.get(path) as Buffer;
      // GitHub leaves the content out of files of 1 MiB and more: the blob API has it.
      const large = content.length >= CONTENTS_LIMIT;
      const sha = gitBlobSha(content);
      return {
        status: 200,
        body: {
          type: 'file',
          encoding: large ? 'none' : 'base64',
          size: content.length,
          name: path.split('/').pop(),
          path,
          content: large ? '' : base64Lines(content),
          sha,
          ...links(path, 'file', sha),
        },
      };
    }),
    route('GET', `/repos/${REPO}/commits/(?<ref>.+)`, ({ params, token }) => {
      const repo = repoOf(params, token);
      const commit = resolveRef(repo, params.ref!);
      if (!commit) return validationFailed([], `No commit found for SHA: ${params.ref}`);
      return {
        status: 200,
        body: {
          ...shapes().commit(repo.fullName, commit),
          files: [],
          stats: { additions: 0, deletions: 0, total: 0 },
        },
      };
    }),
    route('GET', `/repos/${REPO}/git/blobs/(?<sha>[0-9a-f]+)`, ({ params, token }) => {
      const repo = repoOf(params, token);
      const content = repo.git.blobs.get(params.sha!);
      if (content === undefined) throw new NotFound('blob');
      return {
        status: 200,
        body: {
          sha: params.sha,
          node_id: Buffer.from(`04:Blob${params.sha}`).toString('base64'),
          url: `${deps.baseUrl()}/repos/${repo.fullName}/git/blobs/${params.sha}`,
          size: content.length,
          encoding: 'base64',
          content: base64Lines(content),
        },
      };
    }),
  ];
}

/** A token limited to some organisations may not see inside the others. */
function orgAccessDenied(
  token: TokenState,
  params: Readonly<Record<string, string>>,
): FakeResponse | undefined {
  if (!token.orgs) return undefined;
  const org = params.org;
  if (org === undefined || token.orgs.has(org.toLowerCase())) return undefined;
  return {
    status: 403,
    body: {
      message: 'Resource not accessible by personal access token',
      documentation_url: DOCS,
      status: '403',
    },
  };
}

/** GitHub's page of a list: `per_page` (default 30, at most 100), `page`, and the `Link` header. */
function paginate(items: readonly unknown[], req: FakeRequest, baseUrl: string): FakeResponse {
  const perPageParam = Number.parseInt(req.url.searchParams.get('per_page') ?? '', 10);
  const perPage =
    Number.isFinite(perPageParam) && perPageParam > 0
      ? Math.min(perPageParam, MAX_PER_PAGE)
      : DEFAULT_PER_PAGE;
  const pageParam = Number.parseInt(req.url.searchParams.get('page') ?? '', 10);
  const page = Number.isFinite(pageParam) && pageParam > 0 ? pageParam : 1;
  const last = Math.max(Math.ceil(items.length / perPage), 1);
  const body = items.slice((page - 1) * perPage, page * perPage);
  const link = (n: number, rel: string) => {
    const url = new URL(req.url.pathname + req.url.search, baseUrl);
    url.searchParams.set('per_page', String(perPage));
    url.searchParams.set('page', String(n));
    return `<${url.toString()}>; rel="${rel}"`;
  };
  const links: string[] = [];
  if (page > 1) links.push(link(Math.min(page - 1, last), 'prev'));
  if (page < last) links.push(link(page + 1, 'next'), link(last, 'last'));
  if (page > 1) links.push(link(1, 'first'));
  return { status: 200, body, ...(links.length ? { headers: { Link: links.join(', ') } } : {}) };
}

function notFound(message = 'Not Found'): FakeResponse {
  return { status: 404, body: { message, documentation_url: DOCS, status: '404' } };
}

function conflict(message: string): FakeResponse {
  return { status: 409, body: { message, documentation_url: DOCS, status: '409' } };
}

/** A branch, tag or sha, also spelled as a full ref (`refs/tags/v1`, as the tag archive URLs do). */
function resolveRef(repo: RepoState, ref: string): FakeGitCommit | undefined {
  return repo.git.resolve(ref.replace(/^refs\/(?:heads|tags)\//, ''));
}

/**
 * GitHub hands out team and organisation URLs by id
 * (`/organizations/{org_id}/team/{team_id}`, `/organizations/{org_id}/invitations/…`)
 * and serves under them what it serves under `/orgs/{org}/teams/{team_slug}`
 * and `/orgs/{org}`: the path by id becomes the path by name.
 */
function byName(path: string, model: GitHubModel): string {
  const m = /^\/organizations\/(\d+)(?:\/team\/(\d+))?(\/.*)?$/.exec(path);
  if (!m) return path;
  const org = model.orgById(Number(m[1])).org;
  const rest = m[3] ?? '';
  const base = `/orgs/${encodeURIComponent(org.login)}`;
  if (m[2] === undefined) return `${base}${rest}`;
  const team = model.teamById(org.id, Number(m[2])).team;
  return `${base}/teams/${encodeURIComponent(team.slug)}${rest}`;
}

function validationFailed(
  errors: ReadonlyArray<Record<string, string>>,
  message = 'Validation Failed',
): FakeResponse {
  return {
    status: 422,
    body: { message, ...(errors.length ? { errors } : {}), documentation_url: DOCS, status: '422' },
  };
}

function withHeaders(response: FakeResponse, headers: Record<string, string>): FakeResponse {
  return { ...response, headers: { ...headers, ...response.headers } };
}

/** GitHub's base64 content: wrapped at 60 characters, each line ending in a newline. */
function base64Lines(content: Buffer): string {
  const text = content.toString('base64');
  const lines: string[] = [];
  for (let i = 0; i < text.length; i += 60) lines.push(`${text.slice(i, i + 60)}\n`);
  return lines.join('');
}

function byLowerCase(a: string, b: string): number {
  return a.toLowerCase().localeCompare(b.toLowerCase());
}

/** Private repositories are seen by tokens of every organisation, of their owner, or granted the repository. */
function seesPrivate(token: TokenState, repo: RepoState): boolean {
  return (
    token.orgs === undefined ||
    token.orgs.has(repo.owner.toLowerCase()) ||
    token.repos.has(repo.fullName.toLowerCase())
  );
}
