import { type FakeGitHub, startFakeGitHub } from '@qontract/testing/fake-github';
import { afterEach, describe, expect, it } from 'vitest';
import { octokitForDefaultOrg } from './default-org.ts';

let github: FakeGitHub | undefined;
afterEach(async () => {
  await github?.close();
  github = undefined;
});

const token = { path: 'creds/github', field: 'token' };
const quiet = { warn: () => {} };

describe('octokitForDefaultOrg', () => {
  it("talks to GITHUB_API with the default organisation's token", async () => {
    github = await startFakeGitHub({ token: 'ghp_default' });
    github.addCommit('org/repo', 'main', 'a'.repeat(40));
    const read: string[] = [];
    const api = await octokitForDefaultOrg({
      orgs: [
        { default: false, token: { path: 'creds/other', field: 'token' } },
        { default: true, token },
      ],
      readSecret: async (ref) => {
        read.push(ref.path);
        return ref.path === 'creds/github' ? 'ghp_default' : 'ghp_wrong';
      },
      apiUrl: github.url,
      log: quiet,
    });
    const { data } = await api.rest.repos.getCommit({ owner: 'org', repo: 'repo', ref: 'main' });
    expect(data.sha).toBe('a'.repeat(40));
    expect(read).toEqual(['creds/github']);
  });

  it('says so when app-interface has no default organisation, reading no secret', async () => {
    await expect(
      octokitForDefaultOrg({
        orgs: [{ default: false, token }],
        readSecret: async () => {
          throw new Error('must not be read');
        },
        log: quiet,
      }),
    ).rejects.toThrow('no default GitHub organisation (githuborg_v1 with default: true)');
  });
});
