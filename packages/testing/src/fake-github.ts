import { createHash } from 'node:crypto';
import { createServer } from 'node:http';

/** A file served by the fake GitHub: `owner/repo`, `ref`, `path`, content. */
export interface FakeGitHubFile {
  readonly repo: string;
  readonly ref: string;
  readonly path: string;
  readonly content: string;
}

export interface FakeGitHub {
  /** The API base URL (what `GITHUB_API` / Octokit's `baseUrl` take). */
  readonly url: string;
  readonly token: string;
  readonly requestLog: ReadonlyArray<{ method: string; path: string; status: number }>;
  addFile(file: FakeGitHubFile): void;
  /** `GET /repos/{owner}/{repo}/commits/{ref}` answers this sha. */
  addCommit(repo: string, ref: string, sha: string): void;
  close(): Promise<void>;
}

/** GitHub's contents API returns no content for files of 1 MiB and more. */
const CONTENTS_LIMIT = 1024 * 1024;

/**
 * The parts of GitHub's REST API the project uses: repository contents
 * (`GET /repos/{owner}/{repo}/contents/{path}?ref=`), blobs
 * (`GET /repos/{owner}/{repo}/git/blobs/{sha}`) and the commit of a ref
 * (`GET /repos/{owner}/{repo}/commits/{ref}`), with token auth (401),
 * 404 for missing files, and the real JSON shapes.
 */
export async function startFakeGitHub(
  options: { token?: string; files?: FakeGitHubFile[] } = {},
): Promise<FakeGitHub> {
  const token = options.token ?? 'ghp_fake_token';
  const files = new Map<string, string>();
  const blobs = new Map<string, string>();
  const commits = new Map<string, string>();
  const log: Array<{ method: string; path: string; status: number }> = [];
  const add = (f: FakeGitHubFile) => {
    files.set(`${f.repo}@${f.ref}:${f.path}`, f.content);
    blobs.set(`${f.repo}:${blobSha(f.content)}`, f.content);
  };
  for (const f of options.files ?? []) add(f);

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const send = (status: number, body: unknown) => {
      log.push({ method: req.method ?? 'GET', path: url.pathname, status });
      res
        .writeHead(status, { 'Content-Type': 'application/json; charset=utf-8' })
        .end(JSON.stringify(body));
    };
    const auth = req.headers.authorization ?? '';
    if (auth !== `token ${token}` && auth !== `Bearer ${token}`) {
      return send(401, {
        message: 'Bad credentials',
        documentation_url: 'https://docs.github.com/rest',
      });
    }
    const contents = /^\/repos\/([^/]+)\/([^/]+)\/contents\/(.+)$/.exec(url.pathname);
    if (req.method === 'GET' && contents) {
      const [, owner, repo, path] = contents;
      const ref = url.searchParams.get('ref') ?? 'main';
      const content = files.get(`${owner}/${repo}@${ref}:${decodeURIComponent(path!)}`);
      if (content === undefined) return send(404, { message: 'Not Found' });
      const size = Buffer.byteLength(content);
      const large = size >= CONTENTS_LIMIT;
      return send(200, {
        type: 'file',
        name: path!.split('/').pop(),
        path: decodeURIComponent(path!),
        sha: blobSha(content),
        size,
        encoding: large ? 'none' : 'base64',
        content: large ? '' : Buffer.from(content).toString('base64'),
      });
    }
    const commit = /^\/repos\/([^/]+)\/([^/]+)\/commits\/(.+)$/.exec(url.pathname);
    if (req.method === 'GET' && commit) {
      const [, owner, repo, ref] = commit;
      const sha = commits.get(`${owner}/${repo}@${decodeURIComponent(ref!)}`);
      if (sha === undefined) return send(422, { message: `No commit found for SHA: ${ref}` });
      return send(200, { sha, commit: { message: 'fake commit' } });
    }
    const blob = /^\/repos\/([^/]+)\/([^/]+)\/git\/blobs\/([0-9a-f]+)$/.exec(url.pathname);
    if (req.method === 'GET' && blob) {
      const [, owner, repo, sha] = blob;
      const content = blobs.get(`${owner}/${repo}:${sha}`);
      if (content === undefined) return send(404, { message: 'Not Found' });
      return send(200, {
        sha,
        size: Buffer.byteLength(content),
        encoding: 'base64',
        content: Buffer.from(content).toString('base64'),
      });
    }
    return send(404, { message: 'Not Found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    token,
    requestLog: log,
    addFile: add,
    addCommit: (repo, ref, sha) => commits.set(`${repo}@${ref}`, sha),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Git's blob id: sha1 of `blob <size>\0<content>`. */
function blobSha(content: string): string {
  const bytes = Buffer.from(content);
  return createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex');
}
