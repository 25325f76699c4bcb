import type { Octokit } from '@octokit/rest';
import { type ClientKey, defineClient, QontractError } from '@qontract/core';
import { githubOrgs } from './orgs.ts';

/**
 * The client of app-interface's default GitHub organisation (`githuborg_v1`
 * with `default: true`), as upstream's helpers use it; the same Octokit as
 * `forOrg` of that organisation.
 */
export const defaultGithubOrg: ClientKey<Octokit> = defineClient(
  'github:default-org',
  async (ctx) => {
    const clients = await ctx.client(githubOrgs);
    const org = clients.orgs.find((o) => o.default);
    if (!org) {
      throw new QontractError('no default GitHub organisation (githuborg_v1 with default: true)');
    }
    return clients.forOrg(org.name);
  },
);
