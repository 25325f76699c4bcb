import { gqlClient } from '@qontract/app-interface';
import { errorMessage, QontractError, type RunContext, type SecretRef } from '@qontract/core';
import {
  defaultGithubOrg,
  githubClientWithToken,
  listGithubFiles,
  type Octokit,
  readGithubFile,
  resolveGithubRef,
} from '@qontract/github';
import { type GitlabApi, type GitlabInstanceSettings, gitlabApi } from '@qontract/gitlab';
import PQueue from 'p-queue';
import { SaasGitlabInstancesDocument } from './gitlab-instances.generated.ts';

/** A file of a repository directory. */
export interface RepoFile {
  readonly name: string;
  readonly content: string;
}

/** Calls that went to GitHub or GitLab (cache misses), by kind. */
export interface RepoSourceRequests {
  readonly resolveRef: number;
  readonly getFile: number;
  readonly listFiles: number;
}

/**
 * The git reads of openshift-saas-deploy's targets (the original's
 * `_get_commit_sha`, `_get_file_contents`, `_get_directory_contents`) for
 * resource-template URLs on GitHub or on app-interface's GitLab instance.
 *
 * Which platform a URL is on: its origin is GITHUB_API's origin → GitHub;
 * else its host name contains `github` → GitHub; its origin is the GitLab
 * instance's (the first `gitlabinstance_v1`, as the original) or its host
 * name contains `gitlab` → GitLab; anything else is an error naming the URL.
 * (The origins let a GitHub Enterprise or a test server on any host count.)
 *
 * Cached for the run: one resolve per (url, ref) and one read per (url,
 * path, sha) — concurrent callers share the request; a failure is not kept,
 * so a later caller asks again. GitHub reads are cached per token (a private
 * repository one token sees is not served to another).
 */
export interface RepoSources {
  /** The commit sha of a branch, tag or sha (GitHub: get commit; GitLab: first commit listed for `ref_name`). */
  resolveRef(url: string, ref: string): Promise<string>;
  /** The text of a file at a commit (a leading `/` of the path is ignored). */
  getFile(url: string, path: string, sha: string): Promise<string>;
  /**
   * The files of a directory at a commit. GitHub: the files directly in it,
   * a sub-directory being an error; GitLab: every file of the path's
   * repository archive, sub-directories included, `name` relative to the
   * directory — both as the original reads them.
   */
  listFiles(url: string, path: string, sha: string): Promise<readonly RepoFile[]>;
  /**
   * The original's `get_archive_info`: the file name of a commit's source
   * archive (`<repository path with - for />-<sha>.tar.gz`) and where to
   * download it: GitHub's tarball link (where the API redirects to), or the
   * GitLab project's `/-/archive/` URL (no request).
   */
  archive(url: string, sha: string): Promise<{ readonly file: string; readonly url: string }>;
  /** Calls this run made to GitHub/GitLab through any RepoSources (cache misses). */
  readonly requests: RepoSourceRequests;
}

/**
 * Runs a request when the pool has room: at most the run's
 * `--thread-pool-size` at once; among waiting requests the higher `stage`
 * goes first.
 */
export type RequestLimit = <T>(request: () => Promise<T>, stage?: number) => Promise<T>;

/**
 * A pool of `concurrency` requests to one peer, later stages first. A run
 * starts every target at once; served first in, first out, the pool would
 * resolve every target's ref before reading any template, and the rendering
 * (CPU) would only start once the round trips are over. A template read
 * (stage 1) goes before the refs still waiting (stage 0): each target goes on
 * as soon as its ref is known, and its rendering overlaps the other refs'.
 */
export function requestPool(concurrency: number): RequestLimit {
  const queue = new PQueue({ concurrency: Math.max(1, concurrency) });
  return (request, stage = 0) => queue.add(request, { priority: stage });
}

export interface RepoSourcesOptions {
  /** The saas file's `authentication.code`: the GitHub token; the default organisation's when null. */
  readonly codeAuth: SecretRef | null | undefined;
  /**
   * The run's pool of repository requests (one for every saas file). Only
   * requests really made take a place in it: a caller served by the cache, or
   * waiting for a request another caller made, holds none, so the pool stays
   * full however many targets share a repository. Unlimited when absent.
   */
  readonly limit?: RequestLimit | undefined;
}

/** The run's shared state: caches, clients and counters. */
interface RunSources {
  readonly requests: { resolveRef: number; getFile: number; listFiles: number };
  readonly refs: Map<string, Promise<string>>;
  readonly files: Map<string, Promise<string>>;
  readonly dirs: Map<string, Promise<readonly RepoFile[]>>;
  readonly githubClients: Map<string, Promise<Octokit>>;
  gitlab?: Promise<GitlabTarget | undefined>;
}

interface GitlabTarget {
  readonly instance: GitlabInstanceSettings;
  /** The instance URL without a trailing `/`. */
  readonly url: string;
  readonly origin: string;
}

type Location =
  | { readonly kind: 'github'; readonly repo: string }
  | { readonly kind: 'gitlab'; readonly project: string; readonly target: GitlabTarget };

/** Per run (the context is the run's): read synchronously for `requests`. */
const runs = new WeakMap<RunContext, RunSources>();

function runSources(ctx: RunContext): RunSources {
  let run = runs.get(ctx);
  if (!run) {
    run = {
      requests: { resolveRef: 0, getFile: 0, listFiles: 0 },
      refs: new Map(),
      files: new Map(),
      dirs: new Map(),
      githubClients: new Map(),
    };
    runs.set(ctx, run);
  }
  return run;
}

/** The run's repository reads for one saas file (its `authentication.code` is the GitHub token). */
export function repoSourcesForRun(ctx: RunContext, options: RepoSourcesOptions): RepoSources {
  const codeAuth = options.codeAuth ?? null;
  const limit: RequestLimit = options.limit ?? ((request) => request());
  const credential = codeAuth
    ? `secret:${codeAuth.path}#${codeAuth.field}#${codeAuth.version ?? ''}`
    : 'default';
  const run = runSources(ctx);

  const github = async (): Promise<Octokit> =>
    cached(run.githubClients, credential, () =>
      codeAuth ? githubClientWithToken(ctx, codeAuth) : ctx.client(defaultGithubOrg),
    );

  const gitlab = async (target: GitlabTarget): Promise<GitlabApi> => {
    try {
      return await gitlabApi(ctx, target.instance);
    } catch (e) {
      throw new QontractError(
        `GitLab instance '${target.instance.name}': cannot create its client: ${errorMessage(e)}`,
        { cause: e },
      );
    }
  };

  const locate = async (url: string): Promise<Location> => {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new QontractError(`repository URL '${url}' is not a URL`);
    }
    const repo = parsed.pathname.replace(/^\/+|\/+$/g, '').replace(/\.git$/, '');
    const host = parsed.hostname;
    if (parsed.origin === githubOrigin(ctx) || host.includes('github')) {
      return { kind: 'github', repo };
    }
    const target = await gitlabTarget(ctx, run);
    if (target && (parsed.origin === target.origin || host.includes('gitlab'))) {
      const base = `${target.url}/`;
      if (!url.startsWith(base)) {
        throw new QontractError(
          `repository URL '${url}' is not on the GitLab instance ${target.url} of app-interface`,
        );
      }
      const project = url
        .slice(base.length)
        .replace(/^\/+|\/+$/g, '')
        .replace(/\.git$/, '');
      return { kind: 'gitlab', project, target };
    }
    if (host.includes('gitlab')) {
      throw new QontractError(
        `repository URL '${url}': no GitLab instance (gitlabinstance_v1) in app-interface`,
      );
    }
    throw new QontractError(
      `repository URL '${url}': only GitHub and GitLab are supported (its host names neither)`,
    );
  };

  const key = (...parts: string[]) => parts.join('\0');
  const pathKey = (path: string) => path.replace(/^\/+/, '');

  /**
   * One upstream read through the run's cache: keyed by the repository (and
   * for GitHub the token, so one saas file never reads another's private
   * repository through the cache) and `parts`; counted when it is really made.
   */
  const read = async <T>(
    cache: Map<string, Promise<T>>,
    counter: keyof RepoSourceRequests,
    stage: number,
    url: string,
    parts: readonly string[],
    fromGithub: (octokit: Octokit, repo: string) => Promise<T>,
    fromGitlab: (api: GitlabApi, project: string) => Promise<T>,
  ): Promise<T> => {
    const where = await locate(url);
    const k = key(where.kind === 'github' ? credential : 'gitlab', url, ...parts);
    return cached(cache, k, async () => {
      if (where.kind === 'github') {
        const octokit = await github();
        run.requests[counter] += 1;
        return limit(() => fromGithub(octokit, where.repo), stage);
      }
      const api = await gitlab(where.target);
      run.requests[counter] += 1;
      return limit(() => fromGitlab(api, where.project), stage);
    });
  };

  return {
    resolveRef: (url, ref) =>
      read(
        run.refs,
        'resolveRef',
        0,
        url,
        [ref],
        (octokit, repo) => resolveGithubRef(octokit, repo, ref),
        (api, project) => api.resolveRef(project, ref),
      ),

    getFile: (url, path, sha) =>
      read(
        run.files,
        'getFile',
        1,
        url,
        [pathKey(path), sha],
        (octokit, repo) => readGithubFile(octokit, repo, path, sha),
        (api, project) => api.getFile(project, path, sha),
      ),

    listFiles: (url, path, sha) =>
      read(
        run.dirs,
        'listFiles',
        1,
        url,
        [pathKey(path), sha],
        (octokit, repo) => listGithubFiles(octokit, repo, path, sha),
        (api, project) => api.listFiles(project, path, sha),
      ),

    archive: async (url, sha) => {
      const where = await locate(url);
      const name = new URL(url).pathname.replace(/^\/+|\/+$/g, '').replace(/\.git$/, '');
      const file = `${name.replaceAll('/', '-')}-${sha}.tar.gz`;
      if (where.kind === 'gitlab') return { file, url: `${url}/-/archive/${sha}/${file}` };
      const [owner = '', repo = ''] = where.repo.split('/');
      // The link is the redirect's target: not followed (that would download the archive).
      const answer = await (await github()).request('GET /repos/{owner}/{repo}/tarball/{ref}', {
        owner,
        repo,
        ref: sha,
        request: { redirect: 'manual' },
      });
      const location = answer.headers.location;
      if (!location) throw new QontractError(`${url}: GitHub gave no archive link for ${sha}`);
      return { file, url: location };
    },

    get requests() {
      return { ...run.requests };
    },
  };
}

/** The origin of `GITHUB_API` (a GitHub Enterprise or test server), if set. */
function githubOrigin(ctx: RunContext): string | undefined {
  const api = ctx.env.vars.GITHUB_API;
  if (!api) return undefined;
  try {
    return new URL(api).origin;
  } catch {
    return undefined;
  }
}

/** The first GitLab instance of app-interface, queried once per run when a URL needs it. */
function gitlabTarget(ctx: RunContext, run: RunSources): Promise<GitlabTarget | undefined> {
  run.gitlab ??= (async () => {
    const gql = await ctx.client(gqlClient);
    const { instances } = await gql.query(SaasGitlabInstancesDocument);
    const instance = instances?.[0];
    if (!instance) return undefined;
    const url = instance.url.replace(/\/+$/, '');
    let origin: string;
    try {
      origin = new URL(url).origin;
    } catch {
      throw new QontractError(
        `GitLab instance '${instance.name}': url '${instance.url}' is not a URL`,
      );
    }
    return { instance: { ...instance, url }, url, origin };
  })();
  const pending = run.gitlab;
  // A failed query is asked again by the next URL that needs it.
  pending.catch(() => {
    if (run.gitlab === pending) delete run.gitlab;
  });
  return pending;
}

/** The map's promise for `key`, made by `make` when missing; a rejected one is dropped. */
function cached<T>(map: Map<string, Promise<T>>, key: string, make: () => Promise<T>): Promise<T> {
  const known = map.get(key);
  if (known) return known;
  const made = make();
  map.set(key, made);
  made.catch(() => {
    if (map.get(key) === made) map.delete(key);
  });
  return made;
}
