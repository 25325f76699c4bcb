import { gqlClient } from '@qontract/app-interface';
import {
  commonOptions,
  defineIntegration,
  executeActions,
  QontractError,
  type RunContext,
} from '@qontract/core';
import {
  type GithubOrgClients,
  githubErrorMessage,
  githubOrgs,
  type Octokit,
} from '@qontract/github';
import pLimit, { type LimitFunction } from 'p-limit';
import { type GithubAccounts, githubAccounts } from './accounts.ts';
import { AggregatedList } from './aggregated.ts';
import { GithubClustersDocument } from './clusters.generated.ts';
import { readOrgState } from './current.ts';
import { type DesiredGithub, desiredGithubMembers } from './desired.ts';
import {
  actionLine,
  checkOrgs,
  type GithubAction,
  isRemoval,
  itemsOfOrgs,
  planGithubActions,
} from './plan.ts';
import { GithubRolesDocument } from './roles.generated.ts';

/** The original declares no version; the CLI's convention for integrations without one. */
const QONTRACT_INTEGRATION_VERSION = '0.1.0';

export const github = defineIntegration({
  name: 'github',
  version: QONTRACT_INTEGRATION_VERSION,
  description: 'Configures the GitHub organisations and teams (membership from roles).',
  options: {
    threadPoolSize: commonOptions.threadPoolSize(10),
  },
  run: async (ctx, opts) => {
    const gh = await ctx.client(githubOrgs);
    const desired = await readDesired(ctx);
    const limit = pLimit(Math.max(1, opts.threadPoolSize));
    const { current, slugs, unreadable } = await readCurrent(ctx, gh, limit);

    const desiredItems = desired.members.dump();
    const { orgs, problems } = checkOrgs(orgsOf(current), orgsOf(desiredItems), unreadable);
    const diff = AggregatedList.of(itemsOfOrgs(current, orgs)).diff(
      AggregatedList.of(itemsOfOrgs(desiredItems, orgs)),
    );
    const plan = planGithubActions(diff);
    for (const p of [...problems, ...plan.problems]) {
      ctx.errors.register(p.org, p.message, { removalScope: p.org });
    }
    const accounts = githubAccounts(ctx, gh, desired.grants, limit);
    if (ctx.dryRun) await accounts.checkAdditions(plan.actions);
    await realize(ctx, gh, slugs, plan.actions, opts.threadPoolSize, accounts);
  },
  desiredStateForEarlyExit: async (ctx) => {
    const gh = await ctx.client(githubOrgs);
    return {
      github_orgs: gh.orgs.map((o) => ({
        name: o.name,
        token: o.token,
        default: o.default,
        managedTeams: o.managedTeams,
      })),
      github_org_members: (await readDesired(ctx)).members.dump(),
    };
  },
});

async function readDesired(ctx: RunContext): Promise<DesiredGithub> {
  const gql = await ctx.client(gqlClient);
  const [{ roles }, { clusters }] = await Promise.all([
    gql.query(GithubRolesDocument),
    gql.query(GithubClustersDocument),
  ]);
  return desiredGithubMembers({ roles: roles ?? [], clusters: clusters ?? [], today: new Date() });
}

function orgsOf(items: ReadonlyArray<{ readonly params: { readonly org: string } }>): Set<string> {
  return new Set(items.map((i) => i.params.org));
}

/**
 * Every organisation with managed teams, read in parallel (bounded). An
 * organisation that cannot be read is an error naming it and is left out of
 * both states; the others are reconciled. Its state is unknown, so the error
 * holds back that organisation's removals (its removal scope), not the others'.
 */
async function readCurrent(ctx: RunContext, gh: GithubOrgClients, limit: LimitFunction) {
  const managed = gh.orgs.filter((o) => o.managedTeams.length > 0);
  const unreadable = new Set<string>();
  const slugs = new Map<string, Map<string, string>>();
  const perOrg = await Promise.all(
    managed.map(async (org) => {
      try {
        const octokit = await gh.forOrg(org.name);
        const state = await readOrgState(octokit, org.name, org.managedTeams, limit);
        slugs.set(org.name, new Map(state.slugs));
        return state.items;
      } catch (e) {
        unreadable.add(org.name);
        ctx.errors.register(
          org.name,
          `[${org.name}] could not read the GitHub organisation: ${githubErrorMessage(e)}`,
          { removalScope: org.name },
        );
        return [];
      }
    }),
  );
  return { current: perOrg.flat(), slugs, unreadable };
}

/**
 * Carries out the plan with the run's rules: removals are destructive (run
 * after every addition, and held back once an error of their organisation or
 * of the whole run exists). Teams are created first, in a call of their own,
 * so their members can be added. An addition of a login without an account
 * is skipped and reported (`accounts`).
 */
async function realize(
  ctx: RunContext,
  gh: GithubOrgClients,
  slugs: Map<string, Map<string, string>>,
  actions: readonly GithubAction[],
  concurrency: number,
  accounts: GithubAccounts,
): Promise<void> {
  const failedTeams = new Set<string>();
  const teamKey = (org: string, team: string) => `${org}\u0000${team}`;
  const slugOf = (org: string, team: string): string => {
    const slug = slugs.get(org)?.get(team);
    if (!slug) throw new QontractError(`team ${team} not found in GitHub organisation ${org}`);
    return slug;
  };
  // GitHub answers 404 for a user without an account: looked up only then.
  const addition = async (
    octokit: Octokit,
    a: { readonly org: string; readonly member: string },
    add: () => Promise<unknown>,
  ): Promise<unknown> => {
    try {
      return await add();
    } catch (e) {
      if ((e as { status?: unknown }).status !== 404) throw e;
      if (await accounts.isMissing(a.org, a.member, octokit)) return 'skipped';
      throw e;
    }
  };
  const write = async (octokit: Octokit, a: GithubAction): Promise<unknown> => {
    switch (a.action) {
      case 'create_team': {
        const { data } = await octokit.rest.teams.create({
          org: a.org,
          name: a.team,
          privacy: 'secret',
        });
        const teams = slugs.get(a.org) ?? new Map<string, string>();
        slugs.set(a.org, teams.set(a.team, data.slug));
        return;
      }
      case 'add_to_team':
        if (failedTeams.has(teamKey(a.org, a.team))) return 'skipped'; // its creation failed: reported
        return addition(octokit, a, () =>
          octokit.rest.teams.addOrUpdateMembershipForUserInOrg({
            org: a.org,
            team_slug: slugOf(a.org, a.team),
            username: a.member,
            role: 'member',
          }),
        );
      case 'del_from_team':
        return octokit.rest.teams.removeMembershipForUserInOrg({
          org: a.org,
          team_slug: slugOf(a.org, a.team),
          username: a.member,
        });
      case 'add_to_org':
        return addition(octokit, a, () =>
          octokit.rest.orgs.setMembershipForUser({
            org: a.org,
            username: a.member,
            role: 'member',
          }),
        );
      case 'del_from_org':
        return octokit.rest.orgs.removeMembershipForUser({ org: a.org, username: a.member });
    }
  };
  const handler = {
    name: (a: GithubAction) => a.action,
    describe: actionLine,
    planEntry: (a: GithubAction) => ({ ...a }),
    destructive: isRemoval,
    // A failure or a removal concerns its organisation only.
    removalScope: (a: GithubAction) => a.org,
    execute: async (a: GithubAction) => write(await gh.forOrg(a.org), a),
    failure: (a: GithubAction, e: unknown) => {
      if (a.action === 'create_team') failedTeams.add(teamKey(a.org, a.team));
      const where = 'team' in a ? `${a.org}/${a.team}` : a.org;
      const who = 'member' in a ? `${a.member}: ` : '';
      return { scope: where, message: `[${where}] ${a.action} ${who}${githubErrorMessage(e)}` };
    },
  };
  const creations = actions.filter((a) => a.action === 'create_team');
  await executeActions(ctx, creations, handler, { concurrency });
  await executeActions(
    ctx,
    actions.filter((a) => a.action !== 'create_team'),
    handler,
    { concurrency },
  );
}
