import { errorMessage, QontractError, type RunContext, type SecretRef } from '@qontract/core';
import { type FakeGitHub, startFakeGitHub } from '@qontract/testing/fake-github';
import { type FakeGitlab, startFakeGitlab } from '@qontract/testing/fake-gitlab';
import { afterEach, describe, expect, it } from 'vitest';
import { type RepoSources, repoSourcesForRun, requestPool } from './sources.ts';
import { inTestRun } from './test-support/run.ts';

const DEFAULT_TOKEN = 'ghp_default_org_token';
const SAAS_TOKEN = 'ghp_saas_file_token';
const GITLAB_TOKEN = 'glpat-instance-token';
const secret = (path: string): SecretRef => ({ path, field: 'token', version: null, format: null });
const SECRETS: Record<string, string> = {
  'creds/github-default': DEFAULT_TOKEN,
  'creds/saas-code': SAAS_TOKEN,
  'creds/gitlab': GITLAB_TOKEN,
};
const BIG = `${'x'.repeat(1024 * 1024 + 10)}\n`;

let github: FakeGitHub | undefined;
let gitlab: FakeGitlab | undefined;
afterEach(async () => {
  await Promise.all([github?.close(), gitlab?.close()]);
  github = undefined;
  gitlab = undefined;
});

async function startGithub(): Promise<FakeGitHub> {
  github = await startFakeGitHub({ token: 'ghp_admin' });
  // The default organisation's token sees app-sre only; the saas file's sees its private repository.
  github.addToken(DEFAULT_TOKEN, { orgs: ['app-sre'] });
  github.addToken(SAAS_TOKEN, { repos: ['other-org/private'] });
  github.addOrg('app-sre');
  github.addRepo('app-sre', 'saas');
  github.addRepo('other-org', 'private', { private: true });
  return github;
}

async function startGitlab(): Promise<FakeGitlab> {
  gitlab = await startFakeGitlab({ token: GITLAB_TOKEN });
  gitlab.addGroup('service');
  gitlab.addProject('service', 'deploy');
  return gitlab;
}

/** One run of a throw-away integration with app-interface's GitHub org and GitLab instance. */
async function inRun(body: (ctx: RunContext) => Promise<void>): Promise<void> {
  const gql = {
    endpoint: 'test',
    sha: undefined,
    gitCommit: null,
    query: async (doc: { definitions: Array<{ name?: { value: string } }> }) => {
      const operation = doc.definitions[0]?.name?.value;
      if (operation === 'GithubOrgs') {
        return {
          orgs: [
            {
              name: 'app-sre',
              default: true,
              managedTeams: [],
              token: secret('creds/github-default'),
            },
          ],
        };
      }
      if (operation === 'SaasGitlabInstances') {
        return {
          instances: gitlab
            ? [{ name: 'gitlab', url: gitlab.url, token: secret('creds/gitlab'), sslVerify: true }]
            : [],
        };
      }
      throw new Error(`unexpected query ${operation}`);
    },
  };
  await inTestRun(body, {
    secrets: SECRETS,
    gql,
    vars: {
      ...(github ? { GITHUB_API: github.url } : {}),
      QONTRACT_GITHUB_RETRY_UNIT_MS: '1',
      QONTRACT_GITLAB_RETRY_UNIT_MS: '1',
    },
  });
}

async function failureOf(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(QontractError);
    return e as Error;
  }
  throw new Error('expected a failure');
}

const requestsTo = (fake: FakeGitHub | FakeGitlab, pattern: RegExp) =>
  fake.requestLog.filter((r) => pattern.test(r.path)).length;

describe('repoSourcesForRun: GitHub', () => {
  it('resolves refs, reads templates (blob API from 1 MiB) and directories at the sha', async () => {
    const gh = await startGithub();
    const url = 'https://github.com/app-sre/saas';
    const first = gh.pushCommit('app-sre/saas', 'main', {
      'openshift/template.yaml': 'kind: Template\n',
      'openshift/big.yaml': BIG,
      'deploy/a.yaml': 'kind: ConfigMap\n',
      'deploy/b.yaml': 'kind: Secret\n',
    });
    gh.tag('app-sre/saas', 'v1.0', first);
    await inRun(async (ctx) => {
      const sources = repoSourcesForRun(ctx, { codeAuth: null });
      expect(await sources.resolveRef(url, 'main')).toBe(first);
      expect(await sources.resolveRef(url, 'v1.0')).toBe(first);
      expect(await sources.resolveRef(url, first.slice(0, 7))).toBe(first);
      expect(await sources.getFile(url, '/openshift/template.yaml', first)).toBe(
        'kind: Template\n',
      );
      expect(await sources.getFile(url, 'openshift/big.yaml', first)).toBe(BIG);
      expect(await sources.listFiles(url, '/deploy', first)).toEqual([
        { name: 'a.yaml', content: 'kind: ConfigMap\n' },
        { name: 'b.yaml', content: 'kind: Secret\n' },
      ]);
      expect(sources.requests).toEqual({ resolveRef: 3, getFile: 2, listFiles: 1 });
    });
    // The large file: contents (no content) then its blob; the directory: listing + one blob per file.
    expect(requestsTo(gh, /\/contents\//)).toBe(3);
    expect(requestsTo(gh, /\/git\/blobs\//)).toBe(3);
    expect(
      gh.requestLog.find((r) =>
        decodeURIComponent(r.path).endsWith('/contents/openshift/template.yaml'),
      )?.query,
    ).toBe(`?ref=${first}`);
  });

  it('follows a moving branch from run to run, and reads each run at its sha', async () => {
    const gh = await startGithub();
    const url = 'https://github.com/app-sre/saas';
    const first = gh.pushCommit('app-sre/saas', 'main', { 't.yaml': 'v: 1\n' });
    let seen: string[] = [];
    const read = async (ctx: RunContext) => {
      const sources = repoSourcesForRun(ctx, { codeAuth: null });
      const sha = await sources.resolveRef(url, 'main');
      seen = [sha, await sources.getFile(url, 't.yaml', sha)];
    };
    await inRun(read);
    expect(seen).toEqual([first, 'v: 1\n']);
    const second = gh.pushCommit('app-sre/saas', 'main', { 't.yaml': 'v: 2\n' });
    expect(second).not.toBe(first);
    await inRun(read);
    expect(seen).toEqual([second, 'v: 2\n']);
  });

  it('names repository, path and ref in errors, and never the token', async () => {
    const gh = await startGithub();
    const url = 'https://github.com/app-sre/saas';
    const sha = gh.pushCommit('app-sre/saas', 'main', {
      'deploy/a.yaml': 'a: 1\n',
      'deploy/sub/b.yaml': 'b: 1\n',
    });
    const messages: string[] = [];
    await inRun(async (ctx) => {
      const sources = repoSourcesForRun(ctx, { codeAuth: null });
      const errors = [
        await failureOf(sources.resolveRef(url, 'no-such-branch')),
        await failureOf(sources.getFile(url, 'missing.yaml', sha)),
        await failureOf(sources.getFile(url, 'deploy', sha)),
        await failureOf(sources.listFiles(url, 'deploy', sha)),
        await failureOf(sources.listFiles(url, 'deploy/a.yaml', sha)),
        await failureOf(sources.resolveRef('https://github.com/app-sre/nope', 'main')),
      ];
      messages.push(...errors.map((e) => e.message));
    });
    expect(messages).toEqual([
      "ref 'no-such-branch' of GitHub repository 'app-sre/saas': no such commit on GitHub",
      `file 'missing.yaml' at '${sha}' of GitHub repository 'app-sre/saas': not found on GitHub (or not visible with the token used)`,
      `file 'deploy' at '${sha}' of GitHub repository 'app-sre/saas': is a directory, not a file`,
      `directory 'deploy' at '${sha}' of GitHub repository 'app-sre/saas': 'sub' is a directory; sub-directories are not supported`,
      `directory 'deploy/a.yaml' at '${sha}' of GitHub repository 'app-sre/saas': is a file, not a directory`,
      "ref 'main' of GitHub repository 'app-sre/nope': not found on GitHub (or not visible with the token used)",
    ]);
    for (const m of messages) expect(m).not.toContain(DEFAULT_TOKEN);
  });

  it("reads a private repository with the saas file's own token, not the default one", async () => {
    const gh = await startGithub();
    const url = 'https://github.com/other-org/private';
    const sha = gh.pushCommit('other-org/private', 'main', { 't.yaml': 'secret: no\n' });
    await inRun(async (ctx) => {
      const own = repoSourcesForRun(ctx, { codeAuth: secret('creds/saas-code') });
      expect(await own.resolveRef(url, 'main')).toBe(sha);
      expect(await own.getFile(url, 't.yaml', sha)).toBe('secret: no\n');
      // Another saas file of the run, without its own token, gets nothing from the cache.
      const other = repoSourcesForRun(ctx, { codeAuth: null });
      const hidden = await failureOf(other.getFile(url, 't.yaml', sha));
      expect(hidden.message).toContain("of GitHub repository 'other-org/private': not found");
      const unreadable = repoSourcesForRun(ctx, { codeAuth: secret('creds/none') });
      expect((await failureOf(unreadable.resolveRef(url, 'main'))).message).toBe(
        "cannot read the GitHub token at 'creds/none' (field 'token'): secret not found: creds/none",
      );
    });
    // resolve + file with the saas file's token, the refused file with the default one.
    expect(gh.requestLog.map((r) => r.status)).toEqual([200, 200, 404]);
  });

  it('asks GitHub once per (url, ref) and (url, path, sha), concurrent callers included; failures are asked again', async () => {
    const gh = await startGithub();
    const url = 'https://github.com/app-sre/saas';
    const sha = gh.pushCommit('app-sre/saas', 'main', { 't.yaml': 'x: 1\n', 'd/a.yaml': 'a\n' });
    gh.latencyMs = 20;
    await inRun(async (ctx) => {
      const a = repoSourcesForRun(ctx, { codeAuth: null });
      const b = repoSourcesForRun(ctx, { codeAuth: null });
      const shas = await Promise.all([
        a.resolveRef(url, 'main'),
        b.resolveRef(url, 'main'),
        a.resolveRef(url, 'main'),
      ]);
      expect(shas).toEqual([sha, sha, sha]);
      const texts = await Promise.all([
        a.getFile(url, 't.yaml', sha),
        b.getFile(url, '/t.yaml', sha),
        a.listFiles(url, 'd', sha),
        b.listFiles(url, '/d', sha),
      ]);
      expect(texts[0]).toBe('x: 1\n');
      expect(texts[1]).toBe('x: 1\n');
      expect(texts[2]).toEqual(texts[3]);
      expect(a.requests).toEqual({ resolveRef: 1, getFile: 1, listFiles: 1 });
      expect(b.requests).toEqual(a.requests);

      gh.faults.add({ path: '/commits/v2', status: 403, times: 1 });
      const failed = await failureOf(a.resolveRef(url, 'v2'));
      expect(failed.message).toBe(
        "ref 'v2' of GitHub repository 'app-sre/saas': GitHub answered 403 injected fault",
      );
      gh.tag('app-sre/saas', 'v2', sha);
      expect(await a.resolveRef(url, 'v2')).toBe(sha);
      expect(a.requests).toEqual({ resolveRef: 3, getFile: 1, listFiles: 1 });
    });
    expect(requestsTo(gh, /\/commits\/main$/)).toBe(1);
    expect(requestsTo(gh, /\/contents\/t\.yaml$/)).toBe(1);
    expect(requestsTo(gh, /\/contents\/d$/)).toBe(1);
  });
});

describe('repoSourcesForRun: GitLab', () => {
  it("resolves refs, reads files and directories on app-interface's GitLab instance", async () => {
    const gl = await startGitlab();
    const url = `${gl.url}/service/deploy`;
    const first = gl.pushCommit('service/deploy', 'master', {
      'openshift/template.yaml': 'kind: Template\n',
      'openshift/big.yaml': BIG,
      'resources/a.yaml': 'kind: A\n',
      'resources/nested/b.yaml': 'kind: B\n',
    });
    gl.tag('service/deploy', 'v1', first);
    const second = gl.pushCommit('service/deploy', 'master', { 'resources/a.yaml': null });
    await inRun(async (ctx) => {
      const sources = repoSourcesForRun(ctx, { codeAuth: secret('creds/saas-code') });
      expect(await sources.resolveRef(url, 'master')).toBe(second);
      expect(await sources.resolveRef(`${url}.git`, 'v1')).toBe(first);
      expect(await sources.getFile(url, '/openshift/template.yaml', first)).toBe(
        'kind: Template\n',
      );
      expect(await sources.getFile(url, 'openshift/big.yaml', first)).toBe(BIG);
      expect(await sources.listFiles(url, '/resources', first)).toEqual([
        { name: 'a.yaml', content: 'kind: A\n' },
        { name: 'nested/b.yaml', content: 'kind: B\n' },
      ]);
      expect(await sources.listFiles(url, 'resources', first)).toHaveLength(2);
      expect(await sources.listFiles(url, 'resources', second)).toEqual([
        { name: 'nested/b.yaml', content: 'kind: B\n' },
      ]);
      const unknown = await failureOf(sources.resolveRef(url, 'nope'));
      expect(unknown.message).toBe(
        `ref 'nope' of GitLab project 'service/deploy': not found on GitLab ${gl.url}`,
      );
      const missing = await failureOf(sources.getFile(url, 'nope.yaml', first));
      expect(missing.message).toBe(
        `file 'nope.yaml' at '${first}' of GitLab project 'service/deploy': not found on GitLab ${gl.url}`,
      );
      expect(sources.requests).toEqual({ resolveRef: 3, getFile: 3, listFiles: 2 });
    });
    expect(requestsTo(gl, /\/repository\/commits$/)).toBe(3);
    expect(requestsTo(gl, /\/repository\/archive\.tar\.gz$/)).toBe(2);
    expect(gl.requestLog.every((r) => r.status !== 401)).toBe(true);
  });
});

describe('repoSourcesForRun: platforms', () => {
  it('tells GitHub from GitLab by host name or configured origin, and refuses anything else', async () => {
    const gh = await startGithub();
    const gl = await startGitlab();
    const ghSha = gh.pushCommit('app-sre/saas', 'main', { a: '1' });
    const glSha = gl.pushCommit('service/deploy', 'main', { a: '1' });
    await inRun(async (ctx) => {
      const sources: RepoSources = repoSourcesForRun(ctx, { codeAuth: null });
      // GITHUB_API's origin and a host naming github are GitHub ...
      expect(await sources.resolveRef(`${new URL(gh.url).origin}/app-sre/saas`, 'main')).toBe(
        ghSha,
      );
      expect(await sources.resolveRef('https://github.com/app-sre/saas/', 'main')).toBe(ghSha);
      // ... the GitLab instance's origin is GitLab.
      expect(await sources.resolveRef(`${gl.url}/service/deploy`, 'main')).toBe(glSha);
      const messages = [
        await failureOf(sources.resolveRef('https://bitbucket.org/team/repo', 'main')),
        await failureOf(sources.resolveRef('https://gitlab.example.com/team/repo', 'main')),
        await failureOf(sources.resolveRef('not a url', 'main')),
      ].map(errorMessage);
      expect(messages).toEqual([
        "repository URL 'https://bitbucket.org/team/repo': only GitHub and GitLab are supported (its host names neither)",
        `repository URL 'https://gitlab.example.com/team/repo' is not on the GitLab instance ${gl.url} of app-interface`,
        "repository URL 'not a url' is not a URL",
      ]);
    });
  });
});

describe('requestPool', () => {
  it('runs at most its size at once and serves waiting later stages first', async () => {
    const pool = requestPool(1);
    const order: string[] = [];
    let release!: () => void;
    const first = pool(() => new Promise<void>((r) => (release = r)));
    const waiting = [
      pool(async () => order.push('ref a'), 0),
      pool(async () => order.push('ref b'), 0),
      pool(async () => order.push('file a'), 1),
    ];
    expect(order).toEqual([]);
    release();
    await Promise.all([first, ...waiting]);
    expect(order).toEqual(['file a', 'ref a', 'ref b']);
  });
});
