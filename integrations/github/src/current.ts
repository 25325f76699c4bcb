import { QontractError } from '@qontract/core';
import { githubErrorMessage, type Octokit } from '@qontract/github';
import type { LimitFunction } from 'p-limit';
import { z } from 'zod';
import { type AggregatedItem, orgParams, teamParams } from './aggregated.ts';

const Team = z.object({ id: z.number(), name: z.string(), slug: z.string() });
const Member = z.object({ login: z.string() });
// An invitation by e-mail has no login yet.
const Invitation = z.object({
  id: z.number(),
  login: z.string().nullish(),
  team_count: z.number(),
});

/** What one organisation's read gives: its items and how to address its teams. */
export interface OrgState {
  /** The managed teams' items, then the organisation's (the union of their members). */
  readonly items: readonly AggregatedItem[];
  /** Team name → slug, for every team of the organisation. */
  readonly slugs: ReadonlyMap<string, string>;
}

/**
 * An organisation's current state as the original computes it: its teams; for
 * each team named in `managedTeams`, the members plus the logins of the
 * pending invitations that name the team (lower-cased); the organisation's
 * item is the union of the managed teams' members, not its real membership,
 * so members of no managed team are never seen (and never removed).
 *
 * The original reads each team's pending invitations; this reads the
 * organisation's once (`GET /orgs/{org}/invitations`) and the teams of an
 * invitation only where it has a login and teams: the same answer in one read
 * per organisation instead of one per team (none has invitations in the
 * steady state).
 */
export async function readOrgState(
  octokit: Octokit,
  org: string,
  managedTeams: readonly string[],
  limit: LimitFunction,
): Promise<OrgState> {
  const [teams, invitedByTeam] = await Promise.all([
    limit(() => octokit.paginate(octokit.rest.teams.list, { org, per_page: 100 })).then((t) =>
      z.array(Team).parse(t),
    ),
    readInvitedLogins(octokit, org, limit),
  ]);
  const managed = teams.filter((t) => managedTeams.includes(t.name));
  const perTeam = await Promise.all(
    managed.map(async (team) => {
      // Only the logins are kept, page by page: GitHub's full user objects die
      // young (cheap to collect) instead of living until the last team is read.
      const members = await limit(() =>
        octokit.paginate(
          octokit.rest.teams.listMembersInOrg,
          { org, team_slug: team.slug, per_page: 100 },
          (page) =>
            z
              .array(Member)
              .parse(page.data)
              .map((m) => m.login),
        ),
      ).catch((e: unknown) => {
        throw new QontractError(
          `could not read the members of team '${team.name}': ${githubErrorMessage(e)}`,
          { cause: e },
        );
      });
      const logins = [...members, ...(invitedByTeam.get(team.id) ?? [])].map((l) =>
        l.toLowerCase(),
      );
      return { params: teamParams(org, team.name), items: [...new Set(logins)] };
    }),
  );
  const orgMembers = [...new Set(perTeam.flatMap((t) => t.items))];
  return {
    items: [...perTeam, { params: orgParams(org), items: orgMembers }],
    slugs: new Map(teams.map((t) => [t.name, t.slug])),
  };
}

/**
 * Team id → the logins of the organisation's pending invitations to it, in
 * the order GitHub lists the invitations (as a team's own invitation list
 * gives them).
 */
async function readInvitedLogins(
  octokit: Octokit,
  org: string,
  limit: LimitFunction,
): Promise<Map<number, string[]>> {
  try {
    const invitations = z
      .array(Invitation)
      .parse(
        await limit(() =>
          octokit.paginate(octokit.rest.orgs.listPendingInvitations, { org, per_page: 100 }),
        ),
      )
      .flatMap((i) => (i.login && i.team_count > 0 ? [{ id: i.id, login: i.login }] : []));
    const teamsOf = await Promise.all(
      invitations.map((i) =>
        limit(() =>
          octokit.paginate(octokit.rest.orgs.listInvitationTeams, {
            org,
            invitation_id: i.id,
            per_page: 100,
          }),
        ).then((t) => z.array(Team).parse(t)),
      ),
    );
    const invited = new Map<number, string[]>();
    invitations.forEach((invitation, n) => {
      for (const team of teamsOf[n] ?? []) {
        invited.set(team.id, [...(invited.get(team.id) ?? []), invitation.login]);
      }
    });
    return invited;
  } catch (e) {
    throw new QontractError(`could not read the pending invitations: ${githubErrorMessage(e)}`, {
      cause: e,
    });
  }
}
