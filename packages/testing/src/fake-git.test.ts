import { describe, expect, it } from 'vitest';
import { FakeGitRepository, gitBlobSha } from './fake-git.ts';

describe('FakeGitRepository', () => {
  it("computes git's own blob and tree ids (as `git rev-parse` prints them)", () => {
    const git = new FakeGitRepository(() => 0);
    const commit = git.push('main', { 'd/a.txt': 'hello', 'd/sub/b': 'x', 't.yaml': 'top' });
    expect(gitBlobSha('hello')).toBe('b6fc4c620b67d95f953a5c1c1230aaab5db5a1b0');
    expect(commit.treeSha).toBe('b201b88e3868df051c00fc2dd9ea280e041e53a1');
    // `git rev-parse HEAD:d` of the same files
    expect(git.entries(commit, '').map((e) => [e.name, e.type, e.sha])).toEqual([
      ['d', 'dir', 'c280807974a15d98bc8a2a2c8faf16d8eddb5361'],
      ['t.yaml', 'file', gitBlobSha('top')],
    ]);
    expect(git.entries(commit, '/d/').map((e) => [e.path, e.type, e.size])).toEqual([
      ['d/a.txt', 'file', 5],
      ['d/sub', 'dir', 0],
    ]);
  });

  it('moves branches, keeps history, resolves tags and abbreviated shas', () => {
    const git = new FakeGitRepository(() => 0);
    const one = git.push('main', { a: '1', b: '1' });
    const two = git.push('main', { a: '2', b: null });
    git.tag('v1', one.sha);
    expect(git.resolve('main')).toBe(two);
    expect(git.resolve('v1')).toBe(one);
    expect(git.resolve(one.sha.slice(0, 7))).toBe(one);
    expect(git.resolve(one.sha.slice(0, 6))).toBeUndefined();
    expect(git.resolve('nope')).toBeUndefined();
    expect([...two.tree.keys()]).toEqual(['a']);
    expect(git.log('main').map((c) => c.sha)).toEqual([two.sha, one.sha]);
    expect(git.kind(two, 'b')).toBeUndefined();
    expect(git.kind(one, '/b')).toBe('file');
  });
});
