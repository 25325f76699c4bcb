import { type FakeGitHub, startFakeGitHub } from '@qontract/testing/fake-github';
import { afterEach, describe, expect, it } from 'vitest';
import { createOctokit } from './octokit.ts';
import { listGithubFiles, readGithubFile, resolveGithubRef } from './repo-contents.ts';

let github: FakeGitHub | undefined;
afterEach(async () => {
  await github?.close();
  github = undefined;
});

const quiet = { debug: () => {}, warn: () => {} };

describe('GitHub repository reads', () => {
  it('resolve refs, read files (blob API from 1 MiB) and the files of a directory at a sha', async () => {
    github = await startFakeGitHub({ token: 'ghp_t' });
    github.addRepo('o', 'r');
    const big = 'y'.repeat(1024 * 1024);
    const sha = github.pushCommit('o/r', 'main', {
      'small.yaml': 'a: 1\n',
      'big.yaml': big,
      'dir/x.yaml': 'x\n',
      'dir/y.yaml': big,
    });
    const octokit = createOctokit({ token: 'ghp_t', baseUrl: github.url, log: quiet });
    expect(await resolveGithubRef(octokit, 'o/r', 'main')).toBe(sha);
    expect(await readGithubFile(octokit, 'o/r', '/small.yaml', sha)).toBe('a: 1\n');
    expect(await readGithubFile(octokit, 'o/r', 'big.yaml', sha)).toBe(big);
    expect(await listGithubFiles(octokit, 'o/r', 'dir/', sha)).toEqual([
      { name: 'x.yaml', content: 'x\n' },
      { name: 'y.yaml', content: big },
    ]);
    const paths = github.requestLog.map((r) =>
      decodeURIComponent(r.path).replace('/repos/o/r', ''),
    );
    expect(paths.filter((p) => p.startsWith('/git/blobs/'))).toHaveLength(3);
    expect(paths.filter((p) => p.startsWith('/contents/'))).toEqual([
      '/contents/small.yaml',
      '/contents/big.yaml',
      '/contents/dir',
    ]);
    await expect(resolveGithubRef(octokit, 'not-a-repo', 'main')).rejects.toThrow(
      "ref 'main' of GitHub repository 'not-a-repo': 'not-a-repo' is not owner/name",
    );
  });
});
