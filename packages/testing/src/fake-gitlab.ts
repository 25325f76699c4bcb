import { createHash } from 'node:crypto';
import {
  type FakeGitCommit,
  type FakeGitFiles,
  FakeGitRepository,
  normalizePath,
  tarGz,
} from './fake-git.ts';
import { type FakeRequest, type FakeResponse, type HttpFake, startHttpFake } from './http-fake.ts';

/** @public A request quota per fixed window, as GitLab's rate limits (Rack::Attack) apply them. */
export interface FakeGitlabQuota {
  /** Requests allowed per window. */
  readonly limit: number;
  /** Window length in seconds (default 60); a 429 says how long until it ends in `Retry-After`. */
  readonly windowSeconds?: number;
}

export interface FakeGitlabOptions {
  /** The one token the fake accepts (`PRIVATE-TOKEN` header or `Authorization: Bearer`). */
  readonly token?: string;
  /**
   * The account the token belongs to (`GET /user`), the first user (id 1);
   * by default GitLab's first account, the administrator `root`.
   */
  readonly user?: string;
  /** Serve HTTPS with a self-signed certificate. */
  readonly tls?: boolean;
  readonly latencyMs?: number;
  readonly random?: () => number;
  readonly quota?: FakeGitlabQuota;
  /** A fixed port (the demo); a free one when absent. */
  readonly port?: number;
}

/** @public */
export interface FakeGitlabUser {
  readonly id: number;
  readonly username: string;
}

/** @public */
export interface FakeGitlabGroup {
  readonly id: number;
  readonly fullPath: string;
}

/** @public */
export interface FakeGitlabProject {
  readonly id: number;
  readonly name: string;
  readonly path: string;
  /** `group/sub/project` */
  readonly pathWithNamespace: string;
}

export interface FakeGitlab extends HttpFake {
  /** The instance URL (`https://127.0.0.1:PORT`), what app-interface's `gitlabinstance_v1.url` holds. */
  readonly url: string;
  /** `<url>/api/v4` */
  readonly apiUrl: string;
  readonly token: string;
  /** Sets (or lifts, with `undefined`) the request quota; the window starts anew. */
  setQuota(quota: FakeGitlabQuota | undefined): void;

  addUser(username: string, options?: { name?: string; bot?: boolean }): FakeGitlabUser;
  /** A group by full path; missing parent groups are created too. Idempotent. */
  addGroup(fullPath: string, options?: { name?: string }): FakeGitlabGroup;
  /** Makes `username` (created when unknown) a direct member of the group at `accessLevel`. */
  addGroupMember(groupPath: string, username: string, accessLevel: number): void;
  addProject(groupPath: string, name: string, options?: { path?: string }): FakeGitlabProject;
  /** Commits one file on `ref` (the branch is created when missing); returns the commit sha. */
  addFile(projectPath: string, ref: string, filePath: string, content: string): string;
  /** Commits on `ref` (created when missing) with these files added; returns the sha. */
  addCommit(
    projectPath: string,
    ref: string,
    options?: { files?: FakeGitFiles; message?: string; sha?: string },
  ): string;
  /**
   * A new commit on `branch` (created when missing): the branch's files with
   * `files` applied, `null` deleting a path. Returns its sha.
   */
  pushCommit(
    projectPath: string,
    branch: string,
    files: FakeGitFiles,
    options?: { message?: string },
  ): string;
  /** Points tag `name` at `ref` (branch, tag or sha); returns the commit sha. */
  tag(projectPath: string, name: string, ref: string): string;

  /** Direct members of the group, in the order they were added. */
  groupMembers(groupPath: string): Array<{ username: string; accessLevel: number }>;
  /** Projects directly in the group, in the order they were created. */
  projects(groupPath: string): FakeGitlabProject[];
  /** Branch names of the project, sorted. */
  branches(projectPath: string): string[];
  /** The content of a file at a branch or commit, or undefined. */
  file(projectPath: string, ref: string, filePath: string): string | undefined;
  /** The commit sha a branch (or sha) resolves to, or undefined. */
  commitSha(projectPath: string, ref: string): string | undefined;

  /** The project's merge requests, oldest first. */
  mergeRequests(projectPath: string): FakeGitlabMergeRequest[];
  /**
   * What a merge request changes: path → content on its source branch, or
   * null for a deleted path, against the target branch as it was when the
   * merge request was opened.
   */
  mergeRequestChanges(projectPath: string, iid: number): Record<string, string | null>;
  /** Merges it as GitLab would (its changes committed on the target branch, state `merged`). */
  mergeMergeRequest(projectPath: string, iid: number): void;
  /** A CI pipeline of the merge request (the newest is listed first), as CI reports it. */
  addMergeRequestPipeline(
    projectPath: string,
    iid: number,
    status: 'success' | 'failed' | 'running' | 'pending' | 'canceled',
  ): void;
}

/** @public A merge request as the fake keeps it. */
export interface FakeGitlabMergeRequest {
  readonly iid: number;
  readonly title: string;
  readonly description: string;
  readonly state: 'opened' | 'closed' | 'merged';
  readonly labels: readonly string[];
  readonly sourceBranch: string;
  readonly targetBranch: string;
  /** The bodies of its notes, oldest first. */
  readonly notes: readonly string[];
}

interface User {
  readonly id: number;
  readonly username: string;
  readonly name: string;
  readonly bot: boolean;
  readonly createdAt: string;
}

interface Member {
  readonly userId: number;
  accessLevel: number;
  readonly createdAt: string;
}

interface Group {
  readonly id: number;
  readonly name: string;
  readonly path: string;
  readonly fullPath: string;
  readonly parentId: number | null;
  readonly createdAt: string;
  /** By user id; a Map keeps insertion order, as GitLab lists members by id. */
  readonly members: Map<number, Member>;
  readonly projectIds: number[];
}

interface Project {
  readonly id: number;
  readonly name: string;
  readonly path: string;
  readonly namespaceId: number;
  readonly createdAt: string;
  readonly git: FakeGitRepository;
  readonly mergeRequests: MergeRequest[];
}

interface MergeRequest {
  readonly id: number;
  readonly iid: number;
  title: string;
  description: string;
  state: 'opened' | 'closed' | 'merged';
  labels: string[];
  readonly sourceBranch: string;
  readonly targetBranch: string;
  /** The target branch's commit when it was opened: what its changes are measured against. */
  readonly baseSha: string;
  readonly removeSourceBranch: boolean | null;
  readonly authorId: number;
  readonly createdAt: string;
  updatedAt: string;
  closedAt: string | null;
  mergedAt: string | null;
  readonly notes: Note[];
  readonly pipelines: Pipeline[];
}

interface Note {
  readonly id: number;
  readonly body: string;
  readonly authorId: number;
  readonly createdAt: string;
}

interface Pipeline {
  readonly id: number;
  readonly sha: string;
  readonly status: string;
  readonly createdAt: string;
}

const VALID_ACCESS_LEVELS = new Set([5, 10, 20, 30, 40, 50]);
const PROJECT_LISTS = new Set(['issues', 'labels', 'events', 'members', 'cluster_agents']);
const DEFAULT_PER_PAGE = 20;
const MAX_PER_PAGE = 100;
const AUTHOR = { name: 'Fake GitLab', email: 'fake@gitlab.invalid' };

/**
 * A fake GitLab REST API (v4) with GitLab's semantics and JSON shapes for the
 * endpoints the project uses: groups, group members, users, group projects,
 * project creation, repository files, branches and commits. Offset pagination
 * with GitLab's `x-*` and `Link` headers, `RateLimit-*` headers and 429 with
 * `Retry-After` under a quota, GitLab's error bodies, fault injection and a
 * request log (from `startHttpFake`).
 */
export async function startFakeGitlab(options: FakeGitlabOptions = {}): Promise<FakeGitlab> {
  const token = options.token ?? 'glpat-fake-token';
  const users = new Map<number, User>();
  const usersByName = new Map<string, User>();
  const groups = new Map<number, Group>();
  const groupsByPath = new Map<string, Group>();
  const projects = new Map<number, Project>();
  const projectsByPath = new Map<string, Project>();
  const ids = { user: 0, group: 0, project: 0, mergeRequest: 0, note: 0, pipeline: 0 };
  let quota: { limit: number; windowMs: number; start: number; used: number } | undefined;
  const setQuota = (q: FakeGitlabQuota | undefined) => {
    quota = q && {
      limit: q.limit,
      windowMs: (q.windowSeconds ?? 60) * 1000,
      start: Date.now(),
      used: 0,
    };
  };
  setQuota(options.quota);
  let baseUrl = '';
  const now = () => new Date().toISOString();

  // --- model -----------------------------------------------------------------

  const addUser = (username: string, opts: { name?: string; bot?: boolean } = {}): User => {
    const known = usersByName.get(username.toLowerCase());
    if (known) return known;
    ids.user += 1;
    const user: User = {
      id: ids.user,
      username,
      name: opts.name ?? username,
      bot: opts.bot ?? /^group_.+_bot_.+/.test(username),
      createdAt: now(),
    };
    users.set(user.id, user);
    usersByName.set(username.toLowerCase(), user);
    return user;
  };

  const addGroup = (fullPath: string, opts: { name?: string } = {}): Group => {
    const known = groupsByPath.get(fullPath.toLowerCase());
    if (known) return known;
    const slash = fullPath.lastIndexOf('/');
    const parent = slash > 0 ? addGroup(fullPath.slice(0, slash)) : undefined;
    const path = fullPath.slice(slash + 1);
    ids.group += 1;
    const group: Group = {
      id: ids.group,
      name: opts.name ?? path,
      path,
      fullPath,
      parentId: parent?.id ?? null,
      createdAt: now(),
      members: new Map(),
      projectIds: [],
    };
    groups.set(group.id, group);
    groupsByPath.set(fullPath.toLowerCase(), group);
    return group;
  };

  const groupByPath = (fullPath: string): Group => {
    const group = groupsByPath.get(fullPath.toLowerCase());
    if (!group) throw new Error(`fake GitLab: no group ${fullPath}`);
    return group;
  };

  const projectFullPath = (p: Project) => `${groups.get(p.namespaceId)?.fullPath}/${p.path}`;

  const projectByPath = (fullPath: string): Project => {
    const project = projectsByPath.get(fullPath.toLowerCase());
    if (!project) throw new Error(`fake GitLab: no project ${fullPath}`);
    return project;
  };

  const createProject = (group: Group, name: string, path: string): Project => {
    ids.project += 1;
    const project: Project = {
      id: ids.project,
      name,
      path,
      namespaceId: group.id,
      createdAt: now(),
      git: new FakeGitRepository(),
      mergeRequests: [],
    };
    projects.set(project.id, project);
    projectsByPath.set(projectFullPath(project).toLowerCase(), project);
    group.projectIds.push(project.id);
    return project;
  };

  const commit = (
    project: Project,
    branch: string,
    files: FakeGitFiles,
    message: string,
    sha?: string,
  ): FakeGitCommit =>
    project.git.push(branch, files, sha === undefined ? { message } : { message, sha });

  /** A branch, tag, or full or abbreviated sha, as the repository endpoints take `ref`. */
  const resolve = (project: Project, ref: string): FakeGitCommit | undefined =>
    project.git.resolve(ref);

  const tokenUser = addUser(options.user ?? 'root', {
    ...(options.user === undefined ? { name: 'Administrator' } : {}),
  });

  // --- JSON shapes (GitLab API docs) -------------------------------------------

  const userJson = (u: User) => ({
    id: u.id,
    username: u.username,
    name: u.name,
    state: 'active',
    locked: false,
    // A user without an uploaded avatar gets Gravatar's, by the hash of the e-mail address.
    avatar_url: `https://www.gravatar.com/avatar/${createHash('sha256').update(email(u)).digest('hex')}?s=80&d=identicon`,
    web_url: `${baseUrl}/${u.username}`,
  });

  /** `GET /user`: the token's own account, with the fields GitLab shows only to its owner. */
  const currentUserJson = (u: User) => ({
    ...userJson(u),
    created_at: u.createdAt,
    bio: '',
    location: '',
    public_email: null,
    linkedin: '',
    twitter: '',
    discord: '',
    website_url: '',
    organization: '',
    job_title: '',
    pronouns: null,
    bot: u.bot,
    work_information: null,
    local_time: null,
    last_sign_in_at: u.createdAt,
    confirmed_at: u.createdAt,
    last_activity_on: u.createdAt.slice(0, 10),
    email: email(u),
    theme_id: 1,
    color_scheme_id: 1,
    projects_limit: 100000,
    current_sign_in_at: u.createdAt,
    identities: [],
    can_create_group: true,
    can_create_project: true,
    two_factor_enabled: false,
    external: false,
    private_profile: false,
    commit_email: email(u),
    is_admin: u.id === tokenUser.id && options.user === undefined,
    note: null,
  });

  const memberJson = (m: Member) => {
    const user = users.get(m.userId);
    if (!user) throw new Error(`fake GitLab: member ${m.userId} without user`);
    return {
      ...userJson(user),
      created_at: m.createdAt,
      created_by: null,
      expires_at: null,
      access_level: m.accessLevel,
      group_saml_identity: null,
      membership_state: 'active',
    };
  };

  const namespaceJson = (g: Group) => ({
    id: g.id,
    name: g.name,
    path: g.path,
    kind: 'group',
    full_path: g.fullPath,
    parent_id: g.parentId,
    avatar_url: null,
    web_url: `${baseUrl}/groups/${g.fullPath}`,
  });

  const groupJson = (g: Group, withProjects: boolean) => ({
    id: g.id,
    web_url: `${baseUrl}/groups/${g.fullPath}`,
    name: g.name,
    path: g.path,
    description: '',
    visibility: 'private',
    share_with_group_lock: false,
    require_two_factor_authentication: false,
    two_factor_grace_period: 48,
    project_creation_level: 'developer',
    auto_devops_enabled: null,
    subgroup_creation_level: 'maintainer',
    emails_disabled: false,
    emails_enabled: true,
    mentions_disabled: null,
    lfs_enabled: true,
    default_branch: null,
    default_branch_protection: 2,
    avatar_url: null,
    request_access_enabled: true,
    full_name: fullName(g),
    full_path: g.fullPath,
    created_at: g.createdAt,
    parent_id: g.parentId,
    shared_runners_setting: 'enabled',
    ldap_cn: null,
    ldap_access: null,
    wiki_access_level: 'enabled',
    shared_with_groups: [],
    prevent_sharing_groups_outside_hierarchy: false,
    ...(withProjects
      ? {
          // GitLab lists at most 100 projects in the group details.
          projects: g.projectIds
            .slice(0, 100)
            .map((id) => projectJson(projects.get(id) as Project)),
          shared_projects: [],
        }
      : {}),
  });

  const fullName = (g: Group): string => {
    const parent = g.parentId === null ? undefined : groups.get(g.parentId);
    return parent ? `${fullName(parent)} / ${g.name}` : g.name;
  };

  const projectJson = (p: Project) => {
    const group = groups.get(p.namespaceId) as Group;
    const pathWithNamespace = `${group.fullPath}/${p.path}`;
    const webUrl = `${baseUrl}/${pathWithNamespace}`;
    const host = new URL(baseUrl).host;
    return {
      id: p.id,
      description: null,
      name: p.name,
      name_with_namespace: `${fullName(group)} / ${p.name}`,
      path: p.path,
      path_with_namespace: pathWithNamespace,
      created_at: p.createdAt,
      default_branch: p.git.defaultBranch ?? null,
      tag_list: [],
      topics: [],
      ssh_url_to_repo: `git@${host}:${pathWithNamespace}.git`,
      http_url_to_repo: `${webUrl}.git`,
      web_url: webUrl,
      readme_url: p.git.defaultBranch ? `${webUrl}/-/blob/${p.git.defaultBranch}/README.md` : null,
      forks_count: 0,
      avatar_url: null,
      star_count: 0,
      last_activity_at: p.createdAt,
      namespace: namespaceJson(group),
      visibility: 'private',
      empty_repo: p.git.branches.size === 0,
      archived: false,
      issues_enabled: true,
      merge_requests_enabled: true,
      wiki_enabled: true,
      jobs_enabled: true,
      snippets_enabled: true,
      creator_id: 1,
      open_issues_count: 0,
      shared_with_groups: [],
      _links: {
        self: `${baseUrl}/api/v4/projects/${p.id}`,
        issues: `${baseUrl}/api/v4/projects/${p.id}/issues`,
        merge_requests: `${baseUrl}/api/v4/projects/${p.id}/merge_requests`,
        repo_branches: `${baseUrl}/api/v4/projects/${p.id}/repository/branches`,
        labels: `${baseUrl}/api/v4/projects/${p.id}/labels`,
        events: `${baseUrl}/api/v4/projects/${p.id}/events`,
        members: `${baseUrl}/api/v4/projects/${p.id}/members`,
        cluster_agents: `${baseUrl}/api/v4/projects/${p.id}/cluster_agents`,
      },
    };
  };

  const commitJson = (p: Project, c: FakeGitCommit) => ({
    id: c.sha,
    short_id: c.sha.slice(0, 8),
    created_at: c.date,
    parent_ids: c.parents,
    title: c.message.split('\n')[0],
    message: c.message,
    author_name: AUTHOR.name,
    author_email: AUTHOR.email,
    authored_date: c.date,
    committer_name: AUTHOR.name,
    committer_email: AUTHOR.email,
    committed_date: c.date,
    trailers: {},
    extended_trailers: {},
    web_url: `${baseUrl}/${projectFullPath(p)}/-/commit/${c.sha}`,
  });

  const branchJson = (p: Project, name: string) => {
    const c = p.git.commits.get(p.git.branches.get(name) as string) as FakeGitCommit;
    const { web_url: _, ...commitFields } = commitJson(p, c);
    return {
      name,
      commit: commitFields,
      merged: false,
      protected: false,
      developers_can_push: false,
      developers_can_merge: false,
      can_push: true,
      default: p.git.defaultBranch === name,
      web_url: `${baseUrl}/${projectFullPath(p)}/-/tree/${name}`,
    };
  };

  /** A merge request's files that differ between its base and its source branch. */
  const changedFiles = (p: Project, mr: MergeRequest): Map<string, Buffer | null> =>
    treeChanges(p.git.commits.get(mr.baseSha)?.tree, resolve(p, mr.sourceBranch)?.tree);

  /** GitLab's `has_conflicts`: a changed file the target branch has changed differently since. */
  const hasConflicts = (p: Project, mr: MergeRequest): boolean => {
    if (mr.state !== 'opened') return false;
    const base = p.git.commits.get(mr.baseSha)?.tree;
    const target = resolve(p, mr.targetBranch)?.tree;
    for (const [path, content] of changedFiles(p, mr)) {
      const now = target?.get(path);
      const before = base?.get(path);
      const same = (a: Buffer | null | undefined, b: Buffer | null | undefined) =>
        (a ?? null) === null ? (b ?? null) === null : b != null && a!.equals(b);
      if (!same(now, before) && !same(now, content)) return true;
    }
    return false;
  };

  const basicUserJson = (id: number) => {
    const {
      id: uid,
      username,
      name,
      state,
      locked,
      avatar_url,
      web_url,
    } = userJson(users.get(id) as User);
    return { id: uid, username, name, state, locked, avatar_url, web_url };
  };

  // GitLab's MR fields of the list and single endpoints (the single one adds a few).
  const mergeRequestJson = (p: Project, mr: MergeRequest) => {
    const fullPath = projectFullPath(p);
    const sha = resolve(p, mr.sourceBranch)?.sha ?? null;
    const conflicts = hasConflicts(p, mr);
    return {
      id: mr.id,
      iid: mr.iid,
      project_id: p.id,
      title: mr.title,
      description: mr.description,
      state: mr.state,
      created_at: mr.createdAt,
      updated_at: mr.updatedAt,
      merged_by: mr.mergedAt ? basicUserJson(tokenUser.id) : null,
      merge_user: mr.mergedAt ? basicUserJson(tokenUser.id) : null,
      merged_at: mr.mergedAt,
      closed_by: mr.closedAt ? basicUserJson(tokenUser.id) : null,
      closed_at: mr.closedAt,
      target_branch: mr.targetBranch,
      source_branch: mr.sourceBranch,
      user_notes_count: mr.notes.length,
      upvotes: 0,
      downvotes: 0,
      author: basicUserJson(mr.authorId),
      assignees: [],
      assignee: null,
      reviewers: [],
      source_project_id: p.id,
      target_project_id: p.id,
      labels: [...mr.labels],
      draft: /^(draft:|\[draft\]|\(draft\))/i.test(mr.title),
      work_in_progress: /^(draft:|\[draft\]|\(draft\))/i.test(mr.title),
      milestone: null,
      merge_when_pipeline_succeeds: false,
      merge_status: conflicts ? 'cannot_be_merged' : 'can_be_merged',
      detailed_merge_status:
        mr.state !== 'opened' ? 'not_open' : conflicts ? 'conflict' : 'mergeable',
      sha,
      merge_commit_sha: null,
      squash_commit_sha: null,
      discussion_locked: null,
      should_remove_source_branch: null,
      force_remove_source_branch: mr.removeSourceBranch,
      prepared_at: mr.createdAt,
      reference: `!${mr.iid}`,
      references: { short: `!${mr.iid}`, relative: `!${mr.iid}`, full: `${fullPath}!${mr.iid}` },
      web_url: `${baseUrl}/${fullPath}/-/merge_requests/${mr.iid}`,
      time_stats: {
        time_estimate: 0,
        total_time_spent: 0,
        human_time_estimate: null,
        human_total_time_spent: null,
      },
      squash: false,
      squash_on_merge: false,
      task_completion_status: { count: 0, completed_count: 0 },
      has_conflicts: conflicts,
      blocking_discussions_resolved: true,
    };
  };

  const singleMergeRequestJson = (p: Project, mr: MergeRequest) => ({
    ...mergeRequestJson(p, mr),
    subscribed: true,
    changes_count: String(changedFiles(p, mr).size),
    latest_build_started_at: null,
    latest_build_finished_at: null,
    first_deployed_to_production_at: null,
    pipeline: mr.pipelines.at(-1) ? pipelineJson(p, mr.pipelines.at(-1) as Pipeline) : null,
    head_pipeline: null,
    diff_refs: {
      base_sha: mr.baseSha,
      head_sha: resolve(p, mr.sourceBranch)?.sha ?? null,
      start_sha: mr.baseSha,
    },
    merge_error: null,
    first_contribution: false,
    user: { can_merge: true },
  });

  const noteJson = (p: Project, mr: MergeRequest, n: Note) => ({
    id: n.id,
    type: null,
    body: n.body,
    attachment: null,
    author: basicUserJson(n.authorId),
    created_at: n.createdAt,
    updated_at: n.createdAt,
    system: false,
    noteable_id: mr.id,
    noteable_type: 'MergeRequest',
    project_id: p.id,
    noteable_iid: mr.iid,
    resolvable: false,
    confidential: false,
    internal: false,
    imported: false,
    imported_from: 'none',
  });

  const pipelineJson = (p: Project, pl: Pipeline) => ({
    id: pl.id,
    iid: pl.id,
    project_id: p.id,
    sha: pl.sha,
    ref: `refs/merge-requests/${pl.id}/head`,
    status: pl.status,
    source: 'merge_request_event',
    created_at: pl.createdAt,
    updated_at: pl.createdAt,
    web_url: `${baseUrl}/${projectFullPath(p)}/-/pipelines/${pl.id}`,
  });

  const diffJson = (path: string, before: Buffer | undefined, after: Buffer | null) => ({
    old_path: path,
    new_path: path,
    a_mode: before ? '100644' : '0',
    b_mode: after ? '100644' : '0',
    diff: lineDiff(before?.toString('utf8') ?? '', after?.toString('utf8') ?? ''),
    new_file: before === undefined,
    renamed_file: false,
    deleted_file: after === null,
  });

  // --- HTTP --------------------------------------------------------------------

  const json = (status: number, body: unknown): FakeResponse => ({ status, body });
  const notFound = (what: string) => json(404, { message: `404 ${what} Not Found` });
  const badRequest = (message: unknown) => json(400, { message });
  const missing = (param: string) => json(400, { error: `${param} is missing` });

  const paginate = (req: FakeRequest, items: readonly unknown[]): FakeResponse => {
    const perPage = clamp(intParam(req, 'per_page') ?? DEFAULT_PER_PAGE, 1, MAX_PER_PAGE);
    const page = Math.max(intParam(req, 'page') ?? 1, 1);
    const totalPages = Math.max(Math.ceil(items.length / perPage), 1);
    const pageUrl = (n: number) => {
      const u = new URL(`${baseUrl}${req.url.pathname}${req.url.search}`);
      u.searchParams.set('page', String(n));
      u.searchParams.set('per_page', String(perPage));
      return u.toString();
    };
    const links: string[] = [];
    if (page > 1) links.push(`<${pageUrl(Math.min(page - 1, totalPages))}>; rel="prev"`);
    if (page < totalPages) links.push(`<${pageUrl(page + 1)}>; rel="next"`);
    links.push(`<${pageUrl(1)}>; rel="first"`, `<${pageUrl(totalPages)}>; rel="last"`);
    return {
      status: 200,
      body: items.slice((page - 1) * perPage, page * perPage),
      headers: {
        'x-page': String(page),
        'x-per-page': String(perPage),
        'x-next-page': page < totalPages ? String(page + 1) : '',
        'x-prev-page': page > 1 ? String(page - 1) : '',
        'x-total': String(items.length),
        'x-total-pages': String(totalPages),
        link: links.join(', '),
      },
    };
  };

  const findGroup = (id: string) =>
    /^\d+$/.test(id) ? groups.get(Number(id)) : groupsByPath.get(id.toLowerCase());
  const findProject = (id: string) =>
    /^\d+$/.test(id) ? projects.get(Number(id)) : projectsByPath.get(id.toLowerCase());
  const findUser = (id: string | number | undefined) =>
    id === undefined
      ? undefined
      : /^\d+$/.test(String(id))
        ? users.get(Number(id))
        : usersByName.get(String(id).toLowerCase());

  const route = async (req: FakeRequest): Promise<FakeResponse> => {
    const raw = req.url.pathname.replace(/^\/api\/v4(?=\/)/, '');
    if (raw === req.url.pathname) return json(404, { error: '404 Not Found' });
    const seg = raw.split('/').slice(1).map(decodeURIComponent);
    const p = params(req);
    const { method } = req;

    if (seg[0] === 'user' && seg.length === 1 && method === 'GET') {
      return json(200, currentUserJson(tokenUser));
    }

    if (seg[0] === 'users' && seg.length === 1 && method === 'GET') {
      const username = p.get('username');
      const search = p.get('search')?.toLowerCase();
      const list = [...users.values()].filter(
        (u) =>
          (username === undefined || u.username.toLowerCase() === username.toLowerCase()) &&
          (search === undefined ||
            u.username.toLowerCase().includes(search) ||
            u.name.toLowerCase().includes(search)),
      );
      return paginate(req, list.map(userJson));
    }

    if (seg[0] === 'groups' && seg[1] !== undefined) {
      const group = findGroup(seg[1]);
      if (!group) return notFound('Group');
      if (seg.length === 2 && method === 'GET') {
        return json(200, groupJson(group, p.get('with_projects') !== 'false'));
      }
      if (seg[2] === 'members' && seg.length === 3 && method === 'GET') {
        return paginate(req, [...group.members.values()].map(memberJson));
      }
      if (seg[2] === 'members' && seg.length === 3 && method === 'POST') {
        const userParam = p.get('user_id') ?? p.get('username');
        if (userParam === undefined) return missing('user_id, username');
        const level = p.get('access_level');
        if (level === undefined) return missing('access_level');
        if (!VALID_ACCESS_LEVELS.has(Number(level))) {
          return badRequest({ access_level: ['is not included in the list'] });
        }
        const user = findUser(userParam);
        if (!user) return notFound('User');
        if (group.members.has(user.id)) return json(409, { message: 'Member already exists' });
        const member: Member = { userId: user.id, accessLevel: Number(level), createdAt: now() };
        group.members.set(user.id, member);
        return json(201, memberJson(member));
      }
      if (seg[2] === 'members' && seg.length === 4) {
        const member = group.members.get(Number(seg[3]));
        if (method === 'GET') return member ? json(200, memberJson(member)) : notFoundPlain();
        if (method === 'PUT') {
          if (!member) return notFoundPlain();
          const level = p.get('access_level');
          if (level === undefined) return missing('access_level');
          if (!VALID_ACCESS_LEVELS.has(Number(level))) {
            return badRequest({ access_level: ['is not included in the list'] });
          }
          member.accessLevel = Number(level);
          return json(200, memberJson(member));
        }
        if (method === 'DELETE') {
          if (!member) return notFoundPlain();
          group.members.delete(member.userId);
          return { status: 204 };
        }
      }
      if (seg[2] === 'projects' && seg.length === 3 && method === 'GET') {
        // GitLab's default order: created_at, newest first.
        const list = group.projectIds.map((id) => projects.get(id) as Project).reverse();
        return paginate(req, list.map(projectJson));
      }
    }

    if (seg[0] === 'projects' && seg.length === 1 && method === 'POST') {
      const name = p.get('name');
      const path = p.get('path') ?? (name === undefined ? undefined : pathFromName(name));
      if (name === undefined && path === undefined) return missing('name, path');
      const namespaceId = p.get('namespace_id');
      // GitLab puts a project without namespace_id in the user's namespace; the fake has none.
      if (namespaceId === undefined) return missing('namespace_id');
      const group = findGroup(namespaceId);
      if (!group) return notFound('Namespace');
      const projectName = name ?? (path as string);
      const projectPath = path ?? pathFromName(projectName);
      const siblings = group.projectIds.map((id) => projects.get(id) as Project);
      const nameTaken = siblings.some((s) => s.name.toLowerCase() === projectName.toLowerCase());
      const pathTaken = siblings.some((s) => s.path.toLowerCase() === projectPath.toLowerCase());
      if (nameTaken || pathTaken) {
        return badRequest({
          ...(nameTaken ? { name: ['has already been taken'] } : {}),
          ...(pathTaken ? { path: ['has already been taken'] } : {}),
        });
      }
      return json(201, projectJson(createProject(group, projectName, projectPath)));
    }

    if (seg[0] === 'projects' && seg[1] !== undefined) {
      const project = findProject(seg[1]);
      if (!project) return notFound('Project');
      if (seg.length === 2 && method === 'GET') return json(200, projectJson(project));
      // The lists a project's `_links` name that the fake does not model: none exist.
      if (seg.length === 3 && method === 'GET' && PROJECT_LISTS.has(seg[2]!)) {
        return paginate(req, []);
      }
      if (seg[2] === 'merge_requests') return mergeRequests(req, project, seg.slice(3), p);
      if (seg[2] !== 'repository') return json(404, { error: '404 Not Found' });
      return repository(req, project, seg.slice(3), p);
    }
    return json(404, { error: '404 Not Found' });
  };

  const notFoundPlain = () => json(404, { message: '404 Not found' });

  const findMergeRequest = (project: Project, iid: string | undefined) =>
    project.mergeRequests.find((m) => String(m.iid) === iid);

  /** `/projects/:id/merge_requests[/:iid[/notes|/pipelines]]` */
  const mergeRequests = (
    req: FakeRequest,
    project: Project,
    seg: string[],
    p: Params,
  ): FakeResponse => {
    const { method } = req;
    if (seg.length === 0 && method === 'GET') {
      const state = p.get('state') ?? 'all';
      const labels = (p.get('labels') ?? '').split(',').filter(Boolean);
      const list = project.mergeRequests
        .filter((m) => state === 'all' || m.state === state)
        .filter((m) => labels.every((l) => m.labels.includes(l)))
        .filter((m) =>
          [p.get('source_branch')].every((b) => b === undefined || b === m.sourceBranch),
        )
        .filter((m) =>
          [p.get('target_branch')].every((b) => b === undefined || b === m.targetBranch),
        )
        // GitLab's default order: created_at, newest first.
        .reverse();
      return paginate(
        req,
        list.map((m) => mergeRequestJson(project, m)),
      );
    }
    if (seg.length === 0 && method === 'POST') {
      const source = p.get('source_branch');
      const target = p.get('target_branch');
      const title = p.get('title');
      for (const [name, value] of [
        ['source_branch', source],
        ['target_branch', target],
        ['title', title],
      ] as const) {
        if (value === undefined) return missing(name);
      }
      const base = resolve(project, target as string);
      if (!project.git.branches.has(source as string) || !base) {
        return json(422, {
          message: [
            `${project.git.branches.has(source as string) ? 'Target' : 'Source'} branch does not exist`,
          ],
        });
      }
      const open = project.mergeRequests.find(
        (m) => m.state === 'opened' && m.sourceBranch === source && m.targetBranch === target,
      );
      if (open) {
        return json(409, {
          message: [
            `Another open merge request already exists for this source branch: !${open.iid}`,
          ],
        });
      }
      ids.mergeRequest += 1;
      const t = now();
      const mr: MergeRequest = {
        id: ids.mergeRequest,
        iid: project.mergeRequests.length + 1,
        title: title as string,
        description: p.get('description') ?? '',
        state: 'opened',
        labels: labelList(p.get('labels')),
        sourceBranch: source as string,
        targetBranch: target as string,
        baseSha: base.sha,
        removeSourceBranch:
          p.get('remove_source_branch') === undefined
            ? null
            : p.get('remove_source_branch') === 'true',
        authorId: tokenUser.id,
        createdAt: t,
        updatedAt: t,
        closedAt: null,
        mergedAt: null,
        notes: [],
        pipelines: [],
      };
      project.mergeRequests.push(mr);
      return json(201, singleMergeRequestJson(project, mr));
    }
    const mr = findMergeRequest(project, seg[0]);
    if (!mr) return notFound('Merge Request');
    if (seg.length === 1 && method === 'GET') return json(200, singleMergeRequestJson(project, mr));
    if (seg.length === 1 && method === 'PUT') {
      const event = p.get('state_event');
      if (event !== undefined && event !== 'close' && event !== 'reopen') {
        return json(400, { error: 'state_event does not have a valid value' });
      }
      if (event === 'close' && mr.state === 'opened') {
        mr.state = 'closed';
        mr.closedAt = now();
      }
      if (event === 'reopen' && mr.state === 'closed') {
        mr.state = 'opened';
        mr.closedAt = null;
      }
      const title = p.get('title');
      if (title !== undefined) mr.title = title;
      const description = p.get('description');
      if (description !== undefined) mr.description = description;
      if (p.get('labels') !== undefined) mr.labels = labelList(p.get('labels'));
      for (const l of labelList(p.get('add_labels'))) if (!mr.labels.includes(l)) mr.labels.push(l);
      const removed = new Set(labelList(p.get('remove_labels')));
      mr.labels = mr.labels.filter((l) => !removed.has(l));
      mr.updatedAt = now();
      return json(200, singleMergeRequestJson(project, mr));
    }
    if (seg[1] === 'notes' && seg.length === 2 && method === 'GET') {
      // GitLab's default order: created_at, newest first.
      return paginate(
        req,
        [...mr.notes].reverse().map((n) => noteJson(project, mr, n)),
      );
    }
    if (seg[1] === 'notes' && seg.length === 2 && method === 'POST') {
      const body = p.get('body');
      if (body === undefined) return missing('body');
      ids.note += 1;
      const note: Note = { id: ids.note, body, authorId: tokenUser.id, createdAt: now() };
      mr.notes.push(note);
      mr.updatedAt = note.createdAt;
      return json(201, noteJson(project, mr, note));
    }
    if (seg[1] === 'pipelines' && seg.length === 2 && method === 'GET') {
      return paginate(
        req,
        [...mr.pipelines].reverse().map((pl) => pipelineJson(project, pl)),
      );
    }
    return json(404, { error: '404 Not Found' });
  };

  const repository = async (
    req: FakeRequest,
    project: Project,
    seg: string[],
    p: Params,
  ): Promise<FakeResponse> => {
    const { method } = req;
    if (seg[0] === 'files' && seg[1] !== undefined) {
      const filePath = seg[1];
      if (seg.length === 3 && seg[2] === 'raw' && method === 'GET') {
        const ref = p.get('ref') ?? project.git.defaultBranch ?? '';
        const content = resolve(project, ref)?.tree.get(normalizePath(filePath));
        if (content === undefined) return notFound('File');
        return {
          status: 200,
          body: content,
          headers: { 'content-type': 'text/plain; charset=utf-8' },
        };
      }
      if (seg.length === 2 && method === 'POST') {
        const branch = p.get('branch');
        if (branch === undefined) return missing('branch');
        const content = p.get('content');
        if (content === undefined) return missing('content');
        const message = p.get('commit_message');
        if (message === undefined) return missing('commit_message');
        const startBranch = p.get('start_branch');
        const base = project.git.branches.has(branch) ? branch : startBranch;
        // An empty repository takes its first commit on any branch.
        if (base === undefined && project.git.branches.size > 0) {
          return badRequest('You can only create or edit files when you are on a branch');
        }
        if (base !== undefined && !project.git.branches.has(base)) {
          return badRequest(`Invalid reference name: ${base}`);
        }
        if (base !== undefined && resolve(project, base)?.tree.has(filePath)) {
          return badRequest('A file with this name already exists');
        }
        if (base !== undefined && base !== branch) {
          project.git.branches.set(branch, project.git.branches.get(base) as string);
        }
        const decoded =
          p.get('encoding') === 'base64' ? Buffer.from(content, 'base64').toString() : content;
        commit(project, branch, { [filePath]: decoded }, message);
        return json(201, { file_path: filePath, branch });
      }
    }
    if (seg[0] === 'branches' && seg.length === 1 && method === 'POST') {
      const branch = p.get('branch');
      if (branch === undefined) return missing('branch');
      const ref = p.get('ref');
      if (ref === undefined) return missing('ref');
      if (project.git.branches.has(branch)) return badRequest('Branch already exists');
      const target = resolve(project, ref);
      if (!target) return badRequest(`Invalid reference name: ${ref}`);
      project.git.branches.set(branch, target.sha);
      return json(201, branchJson(project, branch));
    }
    if (seg[0] === 'branches' && seg.length === 2 && method === 'DELETE') {
      const branch = seg[1] as string;
      if (!project.git.branches.has(branch)) return notFound('Branch');
      if (project.git.defaultBranch === branch) {
        return badRequest('Cannot remove HEAD branch');
      }
      project.git.branches.delete(branch);
      return { status: 204 };
    }
    if (seg[0] === 'commits' && seg.length === 1 && method === 'POST') {
      return createCommit(req, project, p);
    }
    if (seg[0] === 'compare' && seg.length === 1 && method === 'GET') {
      const from = resolve(project, p.get('from') ?? '');
      const to = resolve(project, p.get('to') ?? '');
      if (!from || !to) return notFound('Ref');
      const before = from.tree;
      const diffs = [...treeChanges(before, to.tree)].map(([path, after]) =>
        diffJson(path, before.get(path), after),
      );
      const commits = project.git
        .log(to.sha)
        .filter((c) => !project.git.log(from.sha).some((f) => f.sha === c.sha));
      return json(200, {
        commit: commits[0] ? commitJson(project, commits[0]) : null,
        commits: commits.map((c) => commitJson(project, c)),
        diffs,
        compare_timeout: false,
        compare_same_ref: from.sha === to.sha,
        web_url: `${baseUrl}/${projectFullPath(project)}/-/compare/${from.sha}...${to.sha}`,
      });
    }
    if (seg[0] === 'branches' && seg.length === 1 && method === 'GET') {
      return paginate(
        req,
        [...project.git.branches.keys()].sort().map((b) => branchJson(project, b)),
      );
    }
    if (seg[0] === 'commits' && seg.length === 1 && method === 'GET') {
      // GitLab lists nothing (200) for a ref it does not know.
      const ref = p.get('ref_name') ?? project.git.defaultBranch ?? '';
      return paginate(
        req,
        project.git.log(ref).map((c) => commitJson(project, c)),
      );
    }
    if (seg[0] === 'tree' && seg.length === 1 && method === 'GET') {
      const c = resolve(project, p.get('ref') ?? project.git.defaultBranch ?? '');
      const path = normalizePath(p.get('path') ?? '');
      if (!c || project.git.kind(c, path) !== 'dir') return notFound('Tree');
      const recursive = p.get('recursive') === 'true';
      const list = (dir: string): unknown[] =>
        project.git.entries(c, dir).flatMap((e) => [
          {
            id: e.sha,
            name: e.name,
            type: e.type === 'dir' ? 'tree' : 'blob',
            path: e.path,
            mode: e.type === 'dir' ? '040000' : '100644',
          },
          ...(recursive && e.type === 'dir' ? list(e.path) : []),
        ]);
      return paginate(req, list(path));
    }
    if (seg[0] === 'archive.tar.gz' && seg.length === 1 && method === 'GET') {
      const c = resolve(project, p.get('sha') ?? project.git.defaultBranch ?? '');
      if (!c) return notFound('Commit');
      const path = normalizePath(p.get('path') ?? '');
      if (path !== '' && project.git.kind(c, path) === undefined) return notFound('File');
      // GitLab's top folder: `<project>-<sha>` and, for a path, `-<path with / as ->`.
      const top = [project.path, c.sha, ...(path ? [path.replaceAll('/', '-')] : [])].join('-');
      return {
        status: 200,
        body: await tarGz(
          top,
          project.git.filesUnder(c, path),
          Math.floor(Date.parse(c.date) / 1000),
        ),
        headers: {
          'content-type': 'application/octet-stream',
          'content-disposition': `attachment; filename="${top}.tar.gz"`,
        },
      };
    }
    if (seg[0] === 'commits' && seg.length === 2 && method === 'GET') {
      const c = resolve(project, seg[1] as string);
      if (!c) return notFound('Commit');
      return json(200, {
        ...commitJson(project, c),
        stats: { additions: 0, deletions: 0, total: 0 },
        status: null,
        last_pipeline: null,
        project_id: project.id,
      });
    }
    return json(404, { error: '404 Not Found' });
  };

  /**
   * `POST /projects/:id/repository/commits`: every action applied in one
   * commit, or none when one of them fails (GitLab's messages).
   */
  const createCommit = (req: FakeRequest, project: Project, p: Params): FakeResponse => {
    const branch = p.get('branch');
    if (branch === undefined) return missing('branch');
    const message = p.get('commit_message');
    if (message === undefined) return missing('commit_message');
    const body = (req.body ?? {}) as { actions?: unknown };
    const actions = Array.isArray(body.actions) ? (body.actions as Record<string, unknown>[]) : [];
    if (actions.length === 0) return missing('actions');
    const startBranch = p.get('start_branch');
    const base = project.git.branches.has(branch) ? branch : startBranch;
    if (base === undefined || !project.git.branches.has(base)) {
      return badRequest(
        base === undefined
          ? 'You can only create or edit files when you are on a branch'
          : `Invalid reference name: ${base}`,
      );
    }
    const tree = resolve(project, base)?.tree ?? new Map<string, Buffer>();
    const files: Record<string, string | null> = {};
    for (const a of actions) {
      const path = normalizePath(String(a.file_path ?? ''));
      if (!path) return missing('actions[file_path]');
      const exists = path in files ? files[path] !== null : tree.has(path);
      const content =
        a.encoding === 'base64'
          ? Buffer.from(String(a.content ?? ''), 'base64').toString()
          : String(a.content ?? '');
      switch (a.action) {
        case 'create':
          if (exists) return badRequest('A file with this name already exists');
          files[path] = content;
          break;
        case 'update':
          if (!exists) return badRequest("A file with this name doesn't exist");
          files[path] = content;
          break;
        case 'delete':
          if (!exists) return badRequest("A file with this name doesn't exist");
          files[path] = null;
          break;
        default:
          return json(400, { error: 'actions[action] does not have a valid value' });
      }
    }
    if (base !== branch) {
      project.git.branches.set(branch, project.git.branches.get(base) as string);
    }
    const c = commit(project, branch, files, message);
    return json(201, {
      ...commitJson(project, c),
      stats: { additions: 0, deletions: 0, total: 0 },
      status: null,
      last_pipeline: null,
      project_id: project.id,
    });
  };

  const rateLimitHeaders = (): Record<string, string> => {
    if (!quota) return {};
    const resetMs = quota.start + quota.windowMs;
    return {
      'RateLimit-Limit': String(quota.limit),
      'RateLimit-Observed': String(quota.used),
      'RateLimit-Remaining': String(Math.max(quota.limit - quota.used, 0)),
      'RateLimit-Reset': String(Math.ceil(resetMs / 1000)),
      'RateLimit-ResetTime': new Date(resetMs).toUTCString(),
    };
  };

  const handle = async (req: FakeRequest): Promise<FakeResponse> => {
    const tokenHeader = req.headers['private-token'];
    const bearer = /^Bearer (.+)$/i.exec(req.headers.authorization ?? '')?.[1];
    if (tokenHeader !== token && bearer !== token) {
      return json(401, { message: '401 Unauthorized' });
    }
    if (quota) {
      const t = Date.now();
      if (t >= quota.start + quota.windowMs) {
        quota.start = t;
        quota.used = 0;
      }
      quota.used += 1;
      if (quota.used > quota.limit) {
        const retryAfter = Math.max(Math.ceil((quota.start + quota.windowMs - t) / 1000), 1);
        return {
          status: 429,
          body: 'Retry later\n',
          headers: {
            'content-type': 'text/plain',
            'Retry-After': String(retryAfter),
            ...rateLimitHeaders(),
          },
        };
      }
    }
    const response = await route(req);
    return { ...response, headers: { ...response.headers, ...rateLimitHeaders() } };
  };
  // GitLab's JSON answers say `application/json`, without a charset.
  const handleJson = async (req: FakeRequest): Promise<FakeResponse> => {
    const response = await handle(req);
    const typed = Object.keys(response.headers ?? {}).some(
      (h) => h.toLowerCase() === 'content-type',
    );
    if (typed || response.body === undefined) return response;
    return { ...response, headers: { ...response.headers, 'Content-Type': 'application/json' } };
  };

  const http: HttpFake = await startHttpFake({
    handle: handleJson,
    ...(options.latencyMs !== undefined ? { latencyMs: options.latencyMs } : {}),
    ...(options.random ? { random: options.random } : {}),
    ...(options.tls ? { tls: true } : {}),
    ...(options.port !== undefined ? { port: options.port } : {}),
  });
  baseUrl = http.url;

  const own: Omit<FakeGitlab, keyof HttpFake> = {
    apiUrl: `${http.url}/api/v4`,
    token,
    setQuota,
    addUser: (username, opts) => {
      const u = addUser(username, opts);
      return { id: u.id, username: u.username };
    },
    addGroup: (fullPath, opts) => {
      const g = addGroup(fullPath, opts);
      return { id: g.id, fullPath: g.fullPath };
    },
    addGroupMember: (groupPath, username, accessLevel) => {
      const group = groupByPath(groupPath);
      const user = addUser(username);
      const known = group.members.get(user.id);
      if (known) known.accessLevel = accessLevel;
      else group.members.set(user.id, { userId: user.id, accessLevel, createdAt: now() });
    },
    addProject: (groupPath, name, opts) => {
      const p = createProject(groupByPath(groupPath), name, opts?.path ?? pathFromName(name));
      return publicProject(p);
    },
    addFile: (projectPath, ref, filePath, content) =>
      commit(projectByPath(projectPath), ref, { [filePath]: content }, `Add ${filePath}`).sha,
    addCommit: (projectPath, ref, opts = {}) =>
      commit(projectByPath(projectPath), ref, opts.files ?? {}, opts.message ?? 'commit', opts.sha)
        .sha,
    pushCommit: (projectPath, branch, files, opts = {}) =>
      commit(projectByPath(projectPath), branch, files, opts.message ?? 'commit').sha,
    tag: (projectPath, name, ref) => projectByPath(projectPath).git.tag(name, ref),
    groupMembers: (groupPath) =>
      [...groupByPath(groupPath).members.values()].map((m) => ({
        username: (users.get(m.userId) as User).username,
        accessLevel: m.accessLevel,
      })),
    projects: (groupPath) =>
      groupByPath(groupPath).projectIds.map((id) => publicProject(projects.get(id) as Project)),
    branches: (projectPath) => [...projectByPath(projectPath).git.branches.keys()].sort(),
    file: (projectPath, ref, filePath) =>
      resolve(projectByPath(projectPath), ref)?.tree.get(normalizePath(filePath))?.toString('utf8'),
    commitSha: (projectPath, ref) => resolve(projectByPath(projectPath), ref)?.sha,
    mergeRequests: (projectPath) =>
      projectByPath(projectPath).mergeRequests.map((m) => ({
        iid: m.iid,
        title: m.title,
        description: m.description,
        state: m.state,
        labels: [...m.labels],
        sourceBranch: m.sourceBranch,
        targetBranch: m.targetBranch,
        notes: m.notes.map((n) => n.body),
      })),
    mergeRequestChanges: (projectPath, iid) => {
      const project = projectByPath(projectPath);
      const mr = mergeRequestOf(project, iid);
      return Object.fromEntries(
        [...changedFiles(project, mr)].map(([path, c]) => [path, c ? c.toString('utf8') : null]),
      );
    },
    mergeMergeRequest: (projectPath, iid) => {
      const project = projectByPath(projectPath);
      const mr = mergeRequestOf(project, iid);
      if (mr.state !== 'opened') throw new Error(`fake GitLab: !${iid} is ${mr.state}`);
      commit(
        project,
        mr.targetBranch,
        Object.fromEntries(changedFiles(project, mr)),
        `Merge branch '${mr.sourceBranch}' into '${mr.targetBranch}'`,
      );
      mr.state = 'merged';
      mr.mergedAt = now();
      if (mr.removeSourceBranch) project.git.branches.delete(mr.sourceBranch);
    },
    addMergeRequestPipeline: (projectPath, iid, status) => {
      const project = projectByPath(projectPath);
      const mr = mergeRequestOf(project, iid);
      ids.pipeline += 1;
      mr.pipelines.push({
        id: ids.pipeline,
        sha: resolve(project, mr.sourceBranch)?.sha ?? mr.baseSha,
        status,
        createdAt: now(),
      });
    },
  };
  // The HTTP side (url, request log, faults, latency, close) is the fake server's own.
  return Object.assign(http, own);

  function mergeRequestOf(project: Project, iid: number): MergeRequest {
    const mr = project.mergeRequests.find((m) => m.iid === iid);
    if (!mr) throw new Error(`fake GitLab: no merge request !${iid}`);
    return mr;
  }

  function publicProject(p: Project): FakeGitlabProject {
    return { id: p.id, name: p.name, path: p.path, pathWithNamespace: projectFullPath(p) };
  }
}

type Params = ReadonlyMap<string, string>;

/** The fake's e-mail address of a user (GitLab requires one). */
function email(u: { readonly username: string }): string {
  return `${u.username}@example.com`;
}

/** Grape reads parameters from the query string and the (JSON or form) body alike. */
function params(req: FakeRequest): Params {
  const out = new Map<string, string>(req.url.searchParams);
  if (req.body !== null && typeof req.body === 'object' && !Array.isArray(req.body)) {
    for (const [k, v] of Object.entries(req.body)) {
      if (v !== undefined && v !== null) out.set(k, String(v));
    }
  }
  return out;
}

function intParam(req: FakeRequest, name: string): number | undefined {
  const value = req.url.searchParams.get(name);
  if (value === null || !/^\d+$/.test(value)) return undefined;
  return Number(value);
}

function clamp(n: number, min: number, max: number): number {
  return Math.min(Math.max(n, min), max);
}

/** GitLab derives a project's path from its name when none is given (Rails' `parameterize`). */
function pathFromName(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^-|-$/g, '');
}

/** GitLab takes labels as a comma-separated string (or an array, which the fake's params join). */
function labelList(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((l) => l.trim())
    .filter(Boolean);
}

/** The paths that differ between two trees: the new content, or null when removed. */
function treeChanges(
  before: ReadonlyMap<string, Buffer> | undefined,
  after: ReadonlyMap<string, Buffer> | undefined,
): Map<string, Buffer | null> {
  const out = new Map<string, Buffer | null>();
  for (const [path, content] of after ?? []) {
    if (!before?.get(path)?.equals(content)) out.set(path, content);
  }
  for (const path of before?.keys() ?? []) if (!after?.has(path)) out.set(path, null);
  return out;
}

/** A whole-file unified diff hunk (GitLab's `diff` field), enough for a reader to see the change. */
function lineDiff(before: string, after: string): string {
  const lines = (t: string) => (t === '' ? [] : t.replace(/\n$/, '').split('\n'));
  const a = lines(before);
  const b = lines(after);
  return [
    `@@ -${a.length ? 1 : 0},${a.length} +${b.length ? 1 : 0},${b.length} @@`,
    ...a.map((l) => `-${l}`),
    ...b.map((l) => `+${l}`),
    '',
  ].join('\n');
}
