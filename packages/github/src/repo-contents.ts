import type { Octokit } from '@octokit/rest';
import { errorMessage, QontractError, type RunContext, type SecretRef } from '@qontract/core';
import { z } from 'zod';
import { createOctokit, githubErrorMessage, tuningFromEnv } from './octokit.ts';

/** GitHub's contents API leaves out the content of files of 1 MiB and more. */
const MAX_FILE_CONTENT_SIZE = 1024 * 1024;

/** A file read from a repository directory. */
export interface GithubRepoFile {
  readonly name: string;
  readonly content: string;
}

// Only the fields we read are checked: GitHub adds fields over time.
const CommitBody = z.object({ sha: z.string() });
const FileBody = z.object({
  type: z.string(),
  size: z.number(),
  sha: z.string(),
  encoding: z.string().optional(),
  content: z.string().optional(),
});
const DirectoryBody = z.array(
  z.object({ type: z.string(), name: z.string(), path: z.string(), sha: z.string() }),
);
const BlobBody = z.object({ content: z.string(), encoding: z.string() });

/**
 * The commit sha a branch, tag or (abbreviated) sha of repository
 * `owner/name` names (`GET /repos/{owner}/{repo}/commits/{ref}`).
 */
export async function resolveGithubRef(
  octokit: Octokit,
  repo: string,
  ref: string,
): Promise<string> {
  const what = `ref '${ref}' of GitHub repository '${repo}'`;
  const { owner, name } = split(repo, what);
  const data = await call(what, () => octokit.rest.repos.getCommit({ owner, repo: name, ref }));
  return parse(what, CommitBody, data).sha;
}

/**
 * The text of a file of `owner/name` at a commit: the contents API, and the
 * blob API for files of 1 MiB and more (as the original). A leading `/` of
 * the path is ignored.
 */
export async function readGithubFile(
  octokit: Octokit,
  repo: string,
  path: string,
  sha: string,
): Promise<string> {
  const what = `file '${path}' at '${sha}' of GitHub repository '${repo}'`;
  const { owner, name } = split(repo, what);
  const data = await call(what, () =>
    octokit.rest.repos.getContent({ owner, repo: name, path: trimSlashes(path), ref: sha }),
  );
  if (Array.isArray(data)) throw new QontractError(`${what}: is a directory, not a file`);
  const file = parse(what, FileBody, data);
  if (file.type !== 'file') throw new QontractError(`${what}: is a ${file.type}, not a file`);
  if (file.size < MAX_FILE_CONTENT_SIZE && file.encoding === 'base64' && file.content) {
    return Buffer.from(file.content, 'base64').toString('utf8');
  }
  return readBlob(octokit, owner, name, file.sha, what);
}

/**
 * The files directly in directory `path` of `owner/name` at a commit, in
 * GitHub's order. A sub-directory (or submodule) in it is an error, as in
 * the original, which supports none.
 */
export async function listGithubFiles(
  octokit: Octokit,
  repo: string,
  path: string,
  sha: string,
): Promise<GithubRepoFile[]> {
  const what = `directory '${path}' at '${sha}' of GitHub repository '${repo}'`;
  const { owner, name } = split(repo, what);
  const data = await call(what, () =>
    octokit.rest.repos.getContent({ owner, repo: name, path: trimSlashes(path), ref: sha }),
  );
  if (!Array.isArray(data)) throw new QontractError(`${what}: is a file, not a directory`);
  const entries = parse(what, DirectoryBody, data);
  const unsupported = entries.find((e) => e.type === 'dir' || e.type === 'submodule');
  if (unsupported) {
    throw new QontractError(
      `${what}: '${unsupported.name}' is a ${unsupported.type === 'dir' ? 'directory' : 'submodule'}; sub-directories are not supported`,
    );
  }
  // The listing names each file's blob: one request per file, whatever its size.
  return Promise.all(
    entries.map(async (e) => ({
      name: e.name,
      content: await readBlob(
        octokit,
        owner,
        name,
        e.sha,
        `file '${e.path}' at '${sha}' of GitHub repository '${repo}'`,
      ),
    })),
  );
}

/**
 * An Octokit of the run with the token in `secret` (a saas file's
 * `authentication.code`), the API at `GITHUB_API` and the run's tuning.
 */
export async function githubClientWithToken(ctx: RunContext, secret: SecretRef): Promise<Octokit> {
  let token: string;
  try {
    token = await ctx.secrets.read(secret);
  } catch (e) {
    throw new QontractError(
      `cannot read the GitHub token at '${secret.path}' (field '${secret.field}'): ${errorMessage(e)}`,
      { cause: e },
    );
  }
  return createOctokit({
    ...tuningFromEnv(ctx.env.vars),
    token,
    baseUrl: ctx.env.vars.GITHUB_API,
    signal: ctx.signal,
    log: ctx.log,
  });
}

async function readBlob(
  octokit: Octokit,
  owner: string,
  repo: string,
  sha: string,
  what: string,
): Promise<string> {
  const data = await call(what, () => octokit.rest.git.getBlob({ owner, repo, file_sha: sha }));
  const blob = parse(what, BlobBody, data);
  return Buffer.from(blob.content, blob.encoding === 'base64' ? 'base64' : 'utf8').toString('utf8');
}

function split(repo: string, what: string): { owner: string; name: string } {
  const [owner, name, ...rest] = repo.split('/');
  if (!owner || !name || rest.length > 0) {
    throw new QontractError(`${what}: '${repo}' is not owner/name`);
  }
  return { owner, name };
}

function trimSlashes(path: string): string {
  return path.replace(/^\/+|\/+$/g, '');
}

/** Runs one GitHub request; its failure becomes a QontractError about `what` (never with the token). */
async function call(what: string, request: () => Promise<{ data: unknown }>): Promise<unknown> {
  try {
    return (await request()).data;
  } catch (e) {
    throw new QontractError(`${what}: ${problem(e)}`, { cause: e });
  }
}

function problem(e: unknown): string {
  const status = (e as { status?: unknown }).status;
  // GitHub hides private repositories from tokens that may not see them.
  if (status === 404) return 'not found on GitHub (or not visible with the token used)';
  if (status === 422 && /no commit found/i.test(errorMessage(e))) return 'no such commit on GitHub';
  return githubErrorMessage(e);
}

function parse<T>(what: string, schema: z.ZodType<T>, data: unknown): T {
  const result = schema.safeParse(data);
  if (!result.success) {
    throw new QontractError(`${what}: unexpected answer from GitHub: ${result.error.message}`);
  }
  return result.data;
}
