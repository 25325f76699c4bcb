import { gqlClient } from '@qontract/app-interface';
import { type ClientKey, QontractError, type RunContext, type SecretRef } from '@qontract/core';
import { type FakeGitHub, startFakeGitHub } from '@qontract/testing/fake-github';
import { afterEach, describe, expect, it } from 'vitest';
import { defaultGithubOrg } from './default-org.ts';
import type { GithubOrgsQuery } from './github-orgs.generated.ts';
import { githubOrgClients, githubOrgs } from './orgs.ts';

let github: FakeGitHub | undefined;
afterEach(async () => {
  await github?.close();
  github = undefined;
});

const quiet = { debug: () => {}, warn: () => {} };
const ref = (path: string) => ({ path, field: 'token', version: null, format: null });
const ORGS: NonNullable<GithubOrgsQuery['orgs']> = [
  { name: 'app-sre', default: true, managedTeams: ['sre'], token: ref('creds/app-sre') },
  { name: 'other', default: null, managedTeams: null, token: ref('creds/other') },
];
const TOKENS: Record<string, string> = {
  'creds/app-sre': 'ghp_app_sre',
  'creds/other': 'ghp_other',
};

/** Two organisations, each reachable only with its own token. */
async function twoOrgs(options: { pathPrefix?: string } = {}) {
  github = await startFakeGitHub({ token: 'ghp_admin', ...options });
  for (const org of ['app-sre', 'other']) {
    github.addOrg(org);
    github.addTeam(org, `${org}-team`);
  }
  github.addToken('ghp_app_sre', { orgs: ['app-sre'] });
  github.addToken('ghp_other', { orgs: ['other'] });
  return github;
}

function secretReader() {
  const reads: string[] = [];
  return {
    reads,
    read: async (r: SecretRef) => {
      reads.push(r.path);
      const value = TOKENS[r.path];
      if (value === undefined) throw new Error(`secret not found: ${r.path}`);
      return value;
    },
  };
}

/** The parts of a run context the GitHub clients use; clients are cached as the runner does. */
function runContext(orgs: GithubOrgsQuery['orgs'], vars: Record<string, string>) {
  const secrets = secretReader();
  const cache = new Map<string, Promise<unknown>>();
  const ctx = {
    env: { vars },
    signal: new AbortController().signal,
    log: quiet,
    secrets: { read: secrets.read },
    client<T>(key: ClientKey<T>): Promise<T> {
      if (key.id === gqlClient.id) {
        return Promise.resolve({ query: async () => ({ orgs }) } as T);
      }
      let client = cache.get(key.id);
      if (!client) {
        client = Promise.resolve(key.create(ctx as unknown as RunContext));
        cache.set(key.id, client);
      }
      return client as Promise<T>;
    },
  };
  return { ctx: ctx as unknown as RunContext, reads: secrets.reads };
}

describe('githubOrgClients', () => {
  it('gives each organisation a client with its own token, made once and read once', async () => {
    const gh = await twoOrgs();
    const secrets = secretReader();
    const clients = githubOrgClients({
      orgs: ORGS,
      readSecret: secrets.read,
      apiUrl: gh.url,
      log: quiet,
    });
    expect(clients.orgs).toEqual([
      { name: 'app-sre', default: true, managedTeams: ['sre'], token: ref('creds/app-sre') },
      { name: 'other', default: false, managedTeams: [], token: ref('creds/other') },
    ]);

    const appSre = await clients.forOrg('app-sre');
    const other = await clients.forOrg('other');
    expect((await appSre.rest.teams.list({ org: 'app-sre' })).data.map((t) => t.slug)).toEqual([
      'app-sre-team',
    ]);
    expect((await other.rest.teams.list({ org: 'other' })).data.map((t) => t.slug)).toEqual([
      'other-team',
    ]);
    // Each token reaches its own organisation only: the clients do not share one.
    await expect(appSre.rest.teams.list({ org: 'other' })).rejects.toMatchObject({ status: 403 });

    expect(await clients.forOrg('app-sre')).toBe(appSre);
    expect(secrets.reads).toEqual(['creds/app-sre', 'creds/other']);
  });

  it('names an unknown organisation, and one whose token cannot be read', async () => {
    const clients = githubOrgClients({
      orgs: [
        ...ORGS,
        { name: 'broken', default: false, managedTeams: [], token: ref('creds/missing') },
      ],
      readSecret: secretReader().read,
      log: quiet,
    });
    const unknown = clients.forOrg('nope');
    await expect(unknown).rejects.toBeInstanceOf(QontractError);
    await expect(unknown).rejects.toThrow("unknown GitHub organisation 'nope'");
    await expect(clients.forOrg('broken')).rejects.toThrow(
      "cannot read the token of GitHub organisation 'broken': secret not found: creds/missing",
    );
  });
});

describe('githubOrgs (the run client)', () => {
  it('reads the orgs from app-interface, talks to GITHUB_API, and is cached for the run', async () => {
    const gh = await twoOrgs({ pathPrefix: '/api/v3' });
    const { ctx, reads } = runContext(ORGS, {
      GITHUB_API: gh.url,
      QONTRACT_GITHUB_RETRY_UNIT_MS: '1',
    });
    gh.faults.add({ status: 502, times: 1 });
    const clients = await ctx.client(githubOrgs);
    const api = await clients.forOrg('other');
    expect((await api.rest.orgs.get({ org: 'other' })).data.login).toBe('other');
    expect(gh.requestLog.map((r) => `${r.path} ${r.status}`)).toEqual([
      '/api/v3/orgs/other 502',
      '/api/v3/orgs/other 200',
    ]);
    expect(await ctx.client(githubOrgs)).toBe(clients);
    expect(await (await ctx.client(githubOrgs)).forOrg('other')).toBe(api);
    expect(reads).toEqual(['creds/other']);
  });

  it('bounds the retries of a write by QONTRACT_GITHUB_WRITE_RETRIES', async () => {
    const gh = await twoOrgs();
    const { ctx } = runContext(ORGS, {
      GITHUB_API: gh.url,
      QONTRACT_GITHUB_RETRY_UNIT_MS: '1',
      QONTRACT_GITHUB_WRITE_INTERVAL_MS: '0',
      QONTRACT_GITHUB_WRITE_RETRIES: '2',
    });
    gh.faults.add({ method: 'PUT', status: 500 });
    const api = await (await ctx.client(githubOrgs)).forOrg('other');
    await expect(
      api.rest.orgs.setMembershipForUser({ org: 'other', username: 'u', role: 'member' }),
    ).rejects.toMatchObject({ status: 500 });
    expect(gh.mutatingRequests()).toHaveLength(3);
  });

  it('refuses a tuning variable that is not a number', async () => {
    const { ctx } = runContext(ORGS, { QONTRACT_GITHUB_WRITE_INTERVAL_MS: 'fast' });
    await expect(ctx.client(githubOrgs)).rejects.toThrow(
      "QONTRACT_GITHUB_WRITE_INTERVAL_MS must be a whole number of at least 0, not 'fast'",
    );
  });
});

describe('defaultGithubOrg', () => {
  it("is the default organisation's client, with its token", async () => {
    const gh = await twoOrgs();
    gh.addCommit('app-sre/repo', 'main', 'a'.repeat(40));
    const { ctx, reads } = runContext(ORGS, { GITHUB_API: gh.url });
    const api = await ctx.client(defaultGithubOrg);
    const { data } = await api.rest.teams.list({ org: 'app-sre' });
    expect(data.map((t) => t.slug)).toEqual(['app-sre-team']);
    expect(
      (await api.rest.repos.getCommit({ owner: 'app-sre', repo: 'repo', ref: 'main' })).data.sha,
    ).toBe('a'.repeat(40));
    expect(await (await ctx.client(githubOrgs)).forOrg('app-sre')).toBe(api);
    expect(reads).toEqual(['creds/app-sre']);
  });

  it('says so when app-interface has no default organisation, reading no secret', async () => {
    const { ctx, reads } = runContext([{ ...ORGS[1]! }], {});
    await expect(ctx.client(defaultGithubOrg)).rejects.toThrow(
      'no default GitHub organisation (githuborg_v1 with default: true)',
    );
    expect(reads).toEqual([]);
  });
});
