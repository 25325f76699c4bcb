import { QontractError } from '@qontract/core';
import { githubErrorMessage, type Octokit } from '@qontract/github';
import type { LimitFunction } from 'p-limit';
import { z } from 'zod';
import { type AggregatedItem, orgParams, teamParams } from './aggregated.ts';

const Team = z.object({ id: z.number(), name: z.string(), slug: z.string() });
const Member = z.object({ login: z.string() });
// An invitation by e-mail has no login yet.
const Invitation = z.object({ login: z.string().nullish() });

/** What one organisation's read gives: its items and how to address its teams. */
export interface OrgState {
  /** The managed teams' items, then the organisation's (the union of their members). */
  readonly items: readonly AggregatedItem[];
  /** Team name → slug, for every team of the organisation. */
  readonly slugs: ReadonlyMap<string, string>;
}

/**
 * An organisation's current state as the original reads it: its teams; for
 * each team named in `managedTeams`, the members plus the pending
 * invitations (lower-cased); the organisation's item is the union of the
 * managed teams' members, not its real membership, so members of no managed
 * team are never seen (and never removed).
 */
export async function readOrgState(
  octokit: Octokit,
  org: string,
  managedTeams: readonly string[],
  limit: LimitFunction,
): Promise<OrgState> {
  const teams = z
    .array(Team)
    .parse(await limit(() => octokit.paginate(octokit.rest.teams.list, { org, per_page: 100 })));
  const managed = teams.filter((t) => managedTeams.includes(t.name));
  const perTeam = await Promise.all(
    managed.map(async (team) => {
      const [members, invitations] = await Promise.all([
        limit(() =>
          octokit.paginate(octokit.rest.teams.listMembersInOrg, {
            org,
            team_slug: team.slug,
            per_page: 100,
          }),
        ),
        limit(() =>
          octokit.paginate(octokit.rest.teams.listPendingInvitationsInOrg, {
            org,
            team_slug: team.slug,
            per_page: 100,
          }),
        ),
      ]).catch((e: unknown) => {
        throw new QontractError(
          `could not read the members of team '${team.name}': ${githubErrorMessage(e)}`,
          { cause: e },
        );
      });
      const logins = [
        ...z
          .array(Member)
          .parse(members)
          .map((m) => m.login),
        ...z
          .array(Invitation)
          .parse(invitations)
          .flatMap((i) => (i.login ? [i.login] : [])),
      ].map((l) => l.toLowerCase());
      return { params: teamParams(org, team.name), items: [...new Set(logins)] };
    }),
  );
  const orgMembers = [...new Set(perTeam.flatMap((t) => t.items))];
  return {
    items: [...perTeam, { params: orgParams(org), items: orgMembers }],
    slugs: new Map(teams.map((t) => [t.name, t.slug])),
  };
}
