import { errorMessage, type RunContext } from '@qontract/core';
import type { GithubOrgClients, Octokit } from '@qontract/github';
import type { LimitFunction } from 'p-limit';
import type { DesiredGithub } from './desired.ts';
import type { GithubAction } from './plan.ts';

/**
 * Desired logins without a GitHub account. Upstream tries to add such a user,
 * logs the failure and goes on, removals included, and exits 0. Here a wet run
 * warns (`…: not added`) and skips the addition; a dry-run, as the MR check
 * runs it, makes it an error, so the merge request asking for it fails.
 * Neither holds back a removal: the organisation's state is known.
 */
export interface GithubAccounts {
  /**
   * Dry-run: looks up every login the plan adds (`GET /users/{login}`, once
   * per login; members and invitees exist by definition). A look-up that fails
   * otherwise than 404 is an error of the organisation.
   */
  checkAdditions(actions: readonly GithubAction[]): Promise<void>;
  /**
   * Wet run, after an addition answered 404 (no such user, or no such
   * organisation or team): whether the login has no account; it is then reported.
   */
  isMissing(org: string, login: string, octokit: Octokit): Promise<boolean>;
}

export function githubAccounts(
  ctx: RunContext,
  gh: GithubOrgClients,
  grants: DesiredGithub['grants'],
  limit: LimitFunction,
): GithubAccounts {
  const lookups = new Map<string, Promise<boolean>>();
  const exists = (login: string, octokit: Octokit): Promise<boolean> => {
    let found = lookups.get(login);
    if (!found) {
      found = limit(() => octokit.rest.users.getByUsername({ username: login })).then(
        () => true,
        (e: unknown) => {
          if ((e as { status?: unknown }).status === 404) return false;
          throw e;
        },
      );
      lookups.set(login, found);
    }
    return found;
  };
  const reported = new Set<string>();
  const report = (org: string, login: string) => {
    const key = `${org}\u0000${login}`;
    if (reported.has(key)) return;
    reported.add(key);
    const by = [...(grants.get(login) ?? ['app-interface'])].join(', ');
    const message = `[${org}] GitHub user '${login}' does not exist (github_username of ${by})`;
    // Scoped to the account: no removal depends on it.
    if (ctx.dryRun) ctx.errors.register(org, message, { removalScope: `user ${login}` });
    else ctx.log.warn(`${message}: not added`);
  };
  return {
    async checkAdditions(actions) {
      const additions = new Map<string, { org: string; login: string }>();
      for (const a of actions) {
        if (a.action !== 'add_to_org' && a.action !== 'add_to_team') continue;
        additions.set(`${a.org}\u0000${a.member}`, { org: a.org, login: a.member });
      }
      await Promise.all(
        [...additions.values()].map(async ({ org, login }) => {
          try {
            if (!(await exists(login, await gh.forOrg(org)))) report(org, login);
          } catch (e) {
            ctx.errors.register(
              org,
              `[${org}] could not look up GitHub user ${login}: ${errorMessage(e)}`,
              { removalScope: org },
            );
          }
        }),
      );
    },
    async isMissing(org, login, octokit) {
      if (await exists(login, octokit)) return false;
      report(org, login);
      return true;
    },
  };
}
