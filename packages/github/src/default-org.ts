import { Octokit } from '@octokit/rest';
import { gqlClient } from '@qontract/app-interface';
import {
  type ClientKey,
  defineClient,
  type Logger,
  QontractError,
  type SecretRef,
} from '@qontract/core';
import { GithubOrgsDocument } from './github-orgs.generated.ts';

/** What the default organisation's client is made of (the run context gives them). */
export interface DefaultOrgSettings {
  readonly orgs: ReadonlyArray<{ readonly default?: boolean | null; readonly token: SecretRef }>;
  readonly readSecret: (ref: SecretRef) => Promise<string>;
  /** `GITHUB_API`; api.github.com when unset (GitHub Enterprise sets it). */
  readonly apiUrl?: string | undefined;
  readonly signal?: AbortSignal | undefined;
  readonly log: Pick<Logger, 'warn'>;
}

/**
 * Octokit with the token of app-interface's default GitHub organisation, as
 * upstream's helpers use it. No retries of its own: callers report a failure
 * once, as the object's error, so Octokit's own log lines (but warnings) are
 * left out too.
 */
export async function octokitForDefaultOrg(settings: DefaultOrgSettings): Promise<Octokit> {
  const org = settings.orgs.find((o) => o.default);
  if (!org) {
    throw new QontractError('no default GitHub organisation (githuborg_v1 with default: true)');
  }
  return new Octokit({
    auth: await settings.readSecret(org.token),
    baseUrl: settings.apiUrl || 'https://api.github.com',
    request: { retries: 0, ...(settings.signal ? { signal: settings.signal } : {}) },
    log: {
      debug: () => {},
      info: () => {},
      warn: (message: string) => settings.log.warn(message),
      error: () => {},
    },
  });
}

/** The run's client for the default GitHub organisation, created once per run on first use. */
export const defaultGithubOrg: ClientKey<Octokit> = defineClient(
  'github:default-org',
  async (ctx) => {
    const gql = await ctx.client(gqlClient);
    const { orgs } = await gql.query(GithubOrgsDocument);
    return octokitForDefaultOrg({
      orgs: orgs ?? [],
      readSecret: (ref) => ctx.secrets.read(ref),
      apiUrl: ctx.env.vars.GITHUB_API,
      signal: ctx.signal,
      log: ctx.log,
    });
  },
);
