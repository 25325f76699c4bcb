import type { Octokit } from '@octokit/rest';
import { gqlClient } from '@qontract/app-interface';
import {
  type ClientKey,
  defineClient,
  errorMessage,
  QontractError,
  type SecretRef,
} from '@qontract/core';
import { GithubOrgsDocument, type GithubOrgsQuery } from './github-orgs.generated.ts';
import { createOctokit, type GithubLog, type OctokitTuning, tuningFromEnv } from './octokit.ts';

/**
 * A `githuborg_v1` entry of app-interface.
 *
 * @public the element type of `GithubOrgClients.orgs`, for the integrations
 */
export interface GithubOrg {
  readonly name: string;
  readonly default: boolean;
  readonly managedTeams: readonly string[];
  readonly token: SecretRef;
}

export interface GithubOrgClients {
  /** Every githuborg_v1 entry of app-interface. */
  readonly orgs: readonly GithubOrg[];
  /**
   * The org's Octokit (its own token, read through ctx.secrets), created on
   * first use and cached for the run. Unknown org → QontractError naming it.
   */
  forOrg(name: string): Promise<Octokit>;
}

/** What the per-org clients are made of (the run context gives them). */
export interface GithubOrgClientsSettings extends OctokitTuning {
  readonly orgs: GithubOrgsQuery['orgs'];
  readonly readSecret: (ref: SecretRef) => Promise<string>;
  /** `GITHUB_API`; api.github.com when unset (GitHub Enterprise sets it). */
  readonly apiUrl?: string | undefined;
  readonly signal?: AbortSignal | undefined;
  readonly log: GithubLog;
}

/** One Octokit per organisation, each made with the org's token when first asked for. */
export function githubOrgClients(settings: GithubOrgClientsSettings): GithubOrgClients {
  const { readSecret, apiUrl, signal, log, orgs: raw, ...tuning } = settings;
  const orgs: GithubOrg[] = (raw ?? []).map((o) => ({
    name: o.name,
    default: o.default === true,
    managedTeams: o.managedTeams ?? [],
    token: o.token,
  }));
  const cache = new Map<string, Promise<Octokit>>();
  const create = async (org: GithubOrg): Promise<Octokit> => {
    let token: string;
    try {
      token = await readSecret(org.token);
    } catch (e) {
      throw new QontractError(
        `cannot read the token of GitHub organisation '${org.name}': ${errorMessage(e)}`,
        { cause: e },
      );
    }
    return createOctokit({ ...tuning, token, baseUrl: apiUrl, signal, log });
  };
  return {
    orgs,
    forOrg(name) {
      const org = orgs.find((o) => o.name === name);
      if (!org) {
        return Promise.reject(
          new QontractError(
            `unknown GitHub organisation '${name}': no githuborg_v1 of app-interface has this name`,
          ),
        );
      }
      let client = cache.get(name);
      if (!client) {
        client = create(org);
        cache.set(name, client);
      }
      return client;
    },
  };
}

/** The run's GitHub clients, one per organisation of app-interface. */
export const githubOrgs: ClientKey<GithubOrgClients> = defineClient('github:orgs', async (ctx) => {
  const gql = await ctx.client(gqlClient);
  const { orgs } = await gql.query(GithubOrgsDocument);
  return githubOrgClients({
    ...tuningFromEnv(ctx.env.vars),
    orgs,
    readSecret: (ref) => ctx.secrets.read(ref),
    apiUrl: ctx.env.vars.GITHUB_API,
    signal: ctx.signal,
    log: ctx.log,
  });
});
