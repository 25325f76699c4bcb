import { Readable } from 'node:stream';
import { gunzipSync } from 'node:zlib';
import { Gitlab } from '@gitbeaker/rest';
import { type Logger, QontractError, type SecretRef } from '@qontract/core';
import { extract } from 'tar-stream';
import { Agent } from 'undici';
import { z } from 'zod';
import { mergeRequestCalls } from './merge-requests.ts';
import {
  createRequester,
  defaultSleep,
  GitlabHttpError,
  GitlabTransportError,
  type RetryNotice,
} from './requester.ts';

/** A GitLab instance as app-interface describes it (`gitlabinstance_v1`). */
export interface GitlabInstanceSettings {
  readonly name: string;
  readonly url: string;
  readonly token: SecretRef;
  readonly sslVerify?: boolean | null;
}

export interface GitlabGroup {
  readonly id: number;
  readonly name: string;
  readonly fullPath: string;
}

export interface GitlabGroupMember {
  readonly id: number;
  readonly username: string;
  readonly accessLevel: number;
}

export interface GitlabProject {
  readonly id: number;
  readonly name: string;
  readonly path: string;
  readonly webUrl: string;
}

/** What the integrations do with a GitLab instance (the original's `GitLabApi`, in part). */
export interface GitlabApi {
  /** The instance URL without a trailing slash. */
  readonly url: string;
  /** A group by full path; a missing group → QontractError naming it. */
  getGroup(fullPath: string): Promise<GitlabGroup>;
  /** Direct members of the group, every page, GitLab's group bot users (username `group_<id>_bot_<hex>`) left out. */
  listGroupMembers(group: GitlabGroup): Promise<GitlabGroupMember[]>;
  /** Whether a user of that username (case-insensitive) exists on the instance. */
  userExists(username: string): Promise<boolean>;
  /** Adds the user (looked up by username; unknown → QontractError) at the level; if already a member, changes the level. */
  addGroupMember(group: GitlabGroup, username: string, accessLevel: number): Promise<void>;
  changeGroupMemberAccess(group: GitlabGroup, userId: number, accessLevel: number): Promise<void>;
  removeGroupMember(group: GitlabGroup, userId: number): Promise<void>;
  /** Projects directly in the group, every page. */
  listGroupProjects(group: GitlabGroup): Promise<GitlabProject[]>;
  createProject(group: GitlabGroup, name: string): Promise<GitlabProject>;
  /** The original's initiate_saas_bundle_repo: a README on `master`, then branches `staging` and `production` from it. */
  initiateSaasBundleRepo(project: GitlabProject): Promise<void>;
  /** `<url>/<group>/<project>`, as the original's get_project_url. */
  projectUrl(groupFullPath: string, projectName: string): string;
  /** The raw content of a file at a branch, tag or commit; a missing file or project → GitlabNotFoundError. */
  getFile(projectPath: string, filePath: string, ref: string): Promise<string>;
  /**
   * The commit sha a branch, tag or sha names: the first commit GitLab lists
   * for `ref_name`, as the original; an unknown ref or project → GitlabNotFoundError.
   */
  resolveRef(projectPath: string, ref: string): Promise<string>;
  /**
   * Every file at or below directory `dirPath` at commit `sha`, read from the
   * repository's tar.gz archive of that path as the original does (so files
   * of sub-directories are included), in archive order. `name` is the path
   * relative to the directory. A missing project, commit or path →
   * GitlabNotFoundError.
   */
  listFiles(projectPath: string, dirPath: string, sha: string): Promise<GitlabFile[]>;

  // Merge requests of a project (the original's app-interface MR calls, used by
  // saas-auto-promotions-manager). Each failure names the project and the MR or branch.
  /** The project's default branch (the original's `main_branch`). */
  defaultBranch(projectPath: string): Promise<string>;
  /** Open merge requests of the project, every page. */
  listOpenMergeRequests(projectPath: string): Promise<GitlabMergeRequest[]>;
  createBranch(projectPath: string, branch: string, ref: string): Promise<void>;
  deleteBranch(projectPath: string, branch: string): Promise<void>;
  /** One commit on `branch` with every action (`update` an existing file, `create` a new one). */
  commitFiles(
    projectPath: string,
    branch: string,
    message: string,
    actions: readonly GitlabFileAction[],
  ): Promise<void>;
  /** Whether `to` changes any file compared with `from`. */
  hasChanges(projectPath: string, from: string, to: string): Promise<boolean>;
  createMergeRequest(projectPath: string, mr: NewGitlabMergeRequest): Promise<GitlabMergeRequest>;
  addMergeRequestNote(projectPath: string, iid: number, body: string): Promise<void>;
  closeMergeRequest(projectPath: string, iid: number): Promise<void>;
  /** The statuses of the merge request's pipelines, newest first. */
  mergeRequestPipelineStatuses(projectPath: string, iid: number): Promise<string[]>;
}

export interface GitlabMergeRequest {
  readonly iid: number;
  readonly title: string;
  readonly description: string;
  readonly labels: readonly string[];
  readonly sourceBranch: string;
  readonly webUrl: string;
  readonly hasConflicts: boolean;
}

export interface NewGitlabMergeRequest {
  readonly sourceBranch: string;
  readonly targetBranch: string;
  readonly title: string;
  readonly description: string;
  readonly labels: readonly string[];
  readonly removeSourceBranch: boolean;
}

export interface GitlabFileAction {
  readonly action: 'create' | 'update';
  readonly filePath: string;
  readonly content: string;
}

/** A file read from a repository archive. */
export interface GitlabFile {
  /** Relative to the directory that was read (`a.yaml`, `sub/b.yaml`). */
  readonly name: string;
  readonly content: string;
}

/** GitLab answered 404 for the object named in the message. */
export class GitlabNotFoundError extends QontractError {}

export interface GitlabApiOptions {
  /** The instance URL (`https://gitlab.example.com`), as `gitlabinstance_v1.url`. */
  readonly url: string;
  readonly token: string;
  /** `false` accepts any server certificate (app-interface's `sslVerify`); verified when absent. */
  readonly sslVerify?: boolean | null | undefined;
  /** The run's stop signal: requests in flight and retry waits end with it. */
  readonly signal?: AbortSignal | undefined;
  /** Per attempt; the original's 120 s by default. */
  readonly timeoutMs?: number;
  /** Retries of a 429 / 5xx answer (python-gitlab's 10 by default). */
  readonly retries?: number;
  /** First backoff when GitLab sends no `Retry-After` (default 500 ms, doubled per retry, at most 60 s). */
  readonly backoffMs?: number;
  readonly maxBackoffMs?: number;
  /** For tests: how a retry waits. */
  readonly sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  readonly log?: Pick<Logger, 'warn'> | undefined;
  /** Told about each HTTP request sent to GitLab, retries included. */
  readonly onRequest?: (() => void) | undefined;
}

/** A GitLab client that owns a connection pool: `close()` ends it. */
export interface ClosableGitlabApi extends GitlabApi {
  close(): Promise<void>;
}

/** gitbeaker types levels as its enum; GitLab validates the number itself. */
type MemberLevel = Parameters<InstanceType<typeof Gitlab>['GroupMembers']['add']>[1];

/** GitLab's group bot users (`group_<id>_bot_<hex>`), matched as the original does. */
const GROUP_BOT_NAME = /^group_.+_bot_.+/;

// Only the fields we read are checked: GitLab adds fields between versions.
const GroupBody = z.object({ id: z.number(), name: z.string(), full_path: z.string() });
const MemberBody = z.object({ id: z.number(), username: z.string(), access_level: z.number() });
const UserBody = z.object({ id: z.number(), username: z.string() });
const ProjectBody = z.object({
  id: z.number(),
  name: z.string(),
  path: z.string(),
  web_url: z.string(),
});
const CommitBody = z.object({ id: z.string() });

/**
 * A client for one GitLab instance on `@gitbeaker/rest`, with the run's
 * request policy (see `createRequester`). Every failure is a QontractError
 * naming the group, user, project or file; no message carries the token.
 */
export function createGitlabApi(options: GitlabApiOptions): ClosableGitlabApi {
  const url = options.url.replace(/\/+$/, '');
  const { token } = options;
  const dispatcher = new Agent(
    options.sslVerify === false ? { connect: { rejectUnauthorized: false } } : {},
  );
  const log = options.log;
  const gitlab = new Gitlab({
    host: url,
    token,
    // The per-attempt time-out lives in the requester; gitbeaker's would span a whole listing.
    queryTimeout: null,
    // gitbeaker's default client-side limits throttle every `groups/*/members` call (reads
    // too) to 60 a minute; GitLab's own 429 + Retry-After, waited out, are the real limit.
    rateLimits: {},
    requesterFn: createRequester({
      timeoutMs: options.timeoutMs ?? 120_000,
      // 0.5 + 1 + 2 + 4 + 8 s of backoff at most without Retry-After: a failing GitLab is
      // reported within about 16 s per request instead of holding the run for minutes.
      retries: options.retries ?? 5,
      backoffMs: options.backoffMs ?? 500,
      maxBackoffMs: options.maxBackoffMs ?? 60_000,
      dispatcher,
      signal: options.signal,
      sleep: options.sleep ?? defaultSleep,
      ...(options.onRequest ? { onRequest: options.onRequest } : {}),
      onRetry: (r: RetryNotice) =>
        log?.warn(
          `GitLab ${url}: ${r.method} ${r.endpoint} got ${r.cause}; retry ${r.retry} in ${(r.waitMs / 1000).toFixed(1)} s`,
        ),
    }),
  });

  /** Runs one GitLab call; its failure becomes a QontractError about `what`. */
  async function call<T>(what: string, fn: () => Promise<unknown>, parse: (v: unknown) => T) {
    let value: unknown;
    try {
      value = await fn();
    } catch (e) {
      throw failure(what, e);
    }
    try {
      return parse(value);
    } catch (e) {
      throw new QontractError(`${what}: unexpected answer from GitLab ${url}: ${clean(e)}`);
    }
  }

  function failure(what: string, e: unknown): QontractError {
    if (e instanceof QontractError) return e;
    if (e instanceof GitlabHttpError && e.status === 404) {
      return new GitlabNotFoundError(`${what}: not found on GitLab ${url}`);
    }
    if (e instanceof GitlabHttpError) {
      // GitLab's messages often start with the status ("401 Unauthorized"): say it once.
      const detail = clean(e.description);
      const answer = detail.startsWith(`${e.status} `)
        ? detail
        : `${e.status}${detail ? ` ${detail}` : ''}`;
      return new QontractError(`${what}: GitLab ${url} answered ${answer}`);
    }
    if (e instanceof GitlabTransportError) {
      return new QontractError(`${what}: GitLab ${url}: ${clean(e.message)}`);
    }
    return new QontractError(`${what}: GitLab ${url}: ${clean(e)}`);
  }

  /** Belt and braces: no message leaves with the token in it. */
  function clean(e: unknown): string {
    const message = e instanceof Error ? e.message : String(e);
    return token ? message.replaceAll(token, '***') : message;
  }

  const toGroup = (v: unknown): GitlabGroup => {
    const g = GroupBody.parse(v);
    return { id: g.id, name: g.name, fullPath: g.full_path };
  };
  const toProject = (v: unknown): GitlabProject => {
    const p = ProjectBody.parse(v);
    return { id: p.id, name: p.name, path: p.path, webUrl: p.web_url };
  };

  const findUser = async (username: string) => {
    const users = await call(
      `GitLab user '${username}'`,
      () => gitlab.Users.all({ username, perPage: 100 }),
      (v) => z.array(UserBody).parse(v),
    );
    return users.find((u) => u.username.toLowerCase() === username.toLowerCase());
  };

  const api: ClosableGitlabApi = {
    url,

    getGroup: (fullPath) =>
      call(
        `GitLab group '${fullPath}'`,
        // The group's project list (on by default, deprecated) is not needed here.
        () => gitlab.Groups.show(fullPath, { withProjects: false }),
        toGroup,
      ),

    listGroupMembers: (group) =>
      call(
        `members of GitLab group '${group.fullPath}'`,
        () => gitlab.GroupMembers.all(group.id, { perPage: 100 }),
        (v) =>
          z
            .array(MemberBody)
            .parse(v)
            .filter((m) => !GROUP_BOT_NAME.test(m.username))
            .map((m) => ({ id: m.id, username: m.username, accessLevel: m.access_level })),
      ),

    userExists: async (username) => (await findUser(username)) !== undefined,

    async addGroupMember(group, username, level) {
      const what = `adding user '${username}' to GitLab group '${group.fullPath}'`;
      const user = await findUser(username);
      if (!user) throw new QontractError(`GitLab user '${username}' not found on GitLab ${url}`);
      try {
        await gitlab.GroupMembers.add(group.id, level as MemberLevel, { userId: user.id });
      } catch (e) {
        // Already a member (maybe through an invitation accepted meanwhile): set the level.
        if (!(e instanceof GitlabHttpError && e.status === 409)) throw failure(what, e);
        await api.changeGroupMemberAccess(group, user.id, level);
      }
    },

    changeGroupMemberAccess: (group, userId, level) =>
      call(
        `changing access of user ${userId} in GitLab group '${group.fullPath}'`,
        () => gitlab.GroupMembers.edit(group.id, userId, level as MemberLevel),
        () => undefined,
      ),

    removeGroupMember: (group, userId) =>
      call(
        `removing user ${userId} from GitLab group '${group.fullPath}'`,
        () => gitlab.GroupMembers.remove(group.id, userId),
        () => undefined,
      ),

    listGroupProjects: (group) =>
      call(
        `projects of GitLab group '${group.fullPath}'`,
        () => gitlab.Groups.allProjects(group.id, { perPage: 100 }),
        (v) => z.array(z.unknown()).parse(v).map(toProject),
      ),

    createProject: (group, name) =>
      call(
        `creating project '${name}' in GitLab group '${group.fullPath}'`,
        () => gitlab.Projects.create({ name, namespaceId: group.id }),
        toProject,
      ),

    async initiateSaasBundleRepo(project) {
      const what = `initiating saas bundle repository ${project.webUrl}`;
      await call(
        what,
        () =>
          gitlab.RepositoryFiles.create(
            project.id,
            'README.md',
            'master',
            'Use the staging or the production branches.',
            'Initial commit',
          ),
        () => undefined,
      );
      for (const branch of ['staging', 'production']) {
        await call(
          what,
          () => gitlab.Branches.create(project.id, branch, 'master'),
          () => undefined,
        );
      }
    },

    projectUrl: (groupFullPath, projectName) => `${url}/${groupFullPath}/${projectName}`,

    getFile: (projectPath, filePath, ref) =>
      call(
        `file '${filePath}' at '${ref}' of GitLab project '${projectPath}'`,
        async () => {
          const raw = await gitlab.RepositoryFiles.showRaw(
            projectPath,
            filePath.replace(/^\/+/, ''),
            ref,
          );
          // gitbeaker answers text for text/* and a Blob for anything else.
          return typeof raw === 'string' ? raw : raw.text();
        },
        (v) => z.string().parse(v),
      ),

    async resolveRef(projectPath, ref) {
      const what = `ref '${ref}' of GitLab project '${projectPath}'`;
      const commits = await call(
        what,
        () => gitlab.Commits.all(projectPath, { refName: ref, perPage: 1, page: 1 }),
        (v) => z.array(CommitBody).parse(v),
      );
      // GitLab lists no commit (200, empty) for a ref it does not know.
      const first = commits[0];
      if (!first) throw new GitlabNotFoundError(`${what}: not found on GitLab ${url}`);
      return first.id;
    },

    async listFiles(projectPath, dirPath, sha) {
      const path = dirPath.replace(/^\/+|\/+$/g, '');
      const what = `directory '${dirPath}' at '${sha}' of GitLab project '${projectPath}'`;
      const archive = await call(
        what,
        async () => {
          const blob = await gitlab.Repositories.showArchive(projectPath, {
            fileType: 'tar.gz',
            sha,
            ...(path ? { path } : {}),
          });
          return Buffer.from(await blob.arrayBuffer());
        },
        (v) => v as Buffer,
      );
      let files: Array<{ path: string; content: Buffer }>;
      try {
        files = await readTarGz(archive);
      } catch (e) {
        throw new QontractError(`${what}: unreadable archive from GitLab ${url}: ${clean(e)}`);
      }
      const prefix = path ? `${path}/` : '';
      return files
        .filter((f) => f.path.startsWith(prefix))
        .map((f) => ({ name: f.path.slice(prefix.length), content: f.content.toString('utf8') }));
    },

    ...mergeRequestCalls(gitlab, call),

    close: () => dispatcher.close(),
  };
  return api;
}

/**
 * The files of a repository archive, each path without the archive's top
 * folder (`<project>-<sha>[-<path>]/`), as the original strips it.
 */
async function readTarGz(archive: Buffer): Promise<Array<{ path: string; content: Buffer }>> {
  const tar = gunzipSync(archive);
  const files: Array<{ path: string; content: Buffer }> = [];
  const reader = extract();
  const done = (async () => {
    for await (const entry of reader) {
      const chunks: Buffer[] = [];
      for await (const chunk of entry) chunks.push(chunk as Buffer);
      const name = entry.header.name;
      const slash = name.indexOf('/');
      const path = slash === -1 ? name : name.slice(slash + 1);
      if (entry.header.type === 'file' && path !== '') {
        files.push({ path, content: Buffer.concat(chunks) });
      }
    }
  })();
  Readable.from([tar]).pipe(reader);
  await done;
  return files;
}
