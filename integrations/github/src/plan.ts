import { pyRepr } from '@qontract/openshift';
import type { AggregatedDiff, AggregatedItem } from './aggregated.ts';

/** One write to GitHub, as the original names and logs it. */
export type GithubAction =
  | { readonly action: 'create_team'; readonly org: string; readonly team: string }
  | {
      readonly action: 'add_to_team' | 'del_from_team';
      readonly member: string;
      readonly org: string;
      readonly team: string;
    }
  | {
      readonly action: 'add_to_org' | 'del_from_org';
      readonly member: string;
      readonly org: string;
    };

/** A difference the integration cannot act on (the original raises for it). */
export interface PlanProblem {
  readonly org: string;
  readonly message: string;
}

export interface GithubPlan {
  readonly actions: readonly GithubAction[];
  readonly problems: readonly PlanProblem[];
}

/**
 * The original's eight registrations, in its order: insert org (error),
 * insert team (create it, then add every member), delete org (error), delete
 * team (remove every member; the team stays), update-insert org (add to the
 * org), update-insert team, update-delete org (remove from the org),
 * update-delete team.
 */
export function planGithubActions(diff: AggregatedDiff): GithubPlan {
  const actions: GithubAction[] = [];
  const problems: PlanProblem[] = [];
  const orgs = (items: readonly AggregatedItem[]) =>
    items.flatMap(({ params, items: members }) =>
      params.service === 'github-org' ? [{ org: params.org, members }] : [],
    );
  const teams = (items: readonly AggregatedItem[]) =>
    items.flatMap(({ params, items: members }) =>
      params.service === 'github-org-team' ? [{ org: params.org, team: params.team, members }] : [],
    );

  for (const { org } of orgs(diff.insert)) {
    problems.push({ org, message: `Cannot create a Github Org: ${org}` });
  }
  for (const { org, team } of teams(diff.insert))
    actions.push({ action: 'create_team', org, team });
  for (const { org, team, members } of teams(diff.insert)) {
    for (const member of members) actions.push({ action: 'add_to_team', member, org, team });
  }
  for (const { org } of orgs(diff.delete)) {
    problems.push({ org, message: `Cannot delete a Github Org: ${org}` });
  }
  for (const { org, team, members } of teams(diff.delete)) {
    for (const member of members) actions.push({ action: 'del_from_team', member, org, team });
  }
  for (const { org, members } of orgs(diff.updateInsert)) {
    for (const member of members) actions.push({ action: 'add_to_org', member, org });
  }
  for (const { org, team, members } of teams(diff.updateInsert)) {
    for (const member of members) actions.push({ action: 'add_to_team', member, org, team });
  }
  for (const { org, members } of orgs(diff.updateDelete)) {
    for (const member of members) actions.push({ action: 'del_from_org', member, org });
  }
  for (const { org, team, members } of teams(diff.updateDelete)) {
    for (const member of members) actions.push({ action: 'del_from_team', member, org, team });
  }
  return { actions, problems };
}

/** Removals: held back by the run's rules once any error exists. */
export function isRemoval(a: GithubAction): boolean {
  return a.action === 'del_from_team' || a.action === 'del_from_org';
}

/** The original's log line: `['add_to_team', member, org, team]`, `['create_team', org, team]`. */
export function actionLine(a: GithubAction): string {
  switch (a.action) {
    case 'create_team':
      return pyRepr([a.action, a.org, a.team]);
    case 'add_to_team':
    case 'del_from_team':
      return pyRepr([a.action, a.member, a.org, a.team]);
    default:
      return pyRepr([a.action, a.member, a.org]);
  }
}

/**
 * The original asserts that current and desired name the same organisations
 * and aborts otherwise. Here each organisation on one side only is an error
 * naming it, and only the organisations on both sides are reconciled; an
 * organisation whose read failed (already reported) is no extra problem.
 */
export function checkOrgs(
  currentOrgs: ReadonlySet<string>,
  desiredOrgs: ReadonlySet<string>,
  unreadable: ReadonlySet<string>,
): { readonly orgs: ReadonlySet<string>; readonly problems: readonly PlanProblem[] } {
  const problems: PlanProblem[] = [];
  for (const org of desiredOrgs) {
    if (currentOrgs.has(org) || unreadable.has(org)) continue;
    problems.push({
      org,
      message: `github org ${org}: roles or cluster auth grant membership in it, but it is no githuborg_v1 with managedTeams`,
    });
  }
  for (const org of currentOrgs) {
    if (desiredOrgs.has(org)) continue;
    problems.push({
      org,
      message: `github org ${org}: has managedTeams, but no role or cluster auth grants membership in it`,
    });
  }
  return { orgs: new Set([...currentOrgs].filter((o) => desiredOrgs.has(o))), problems };
}

/** The items of these organisations only. */
export function itemsOfOrgs(
  items: readonly AggregatedItem[],
  orgs: ReadonlySet<string>,
): AggregatedItem[] {
  return items.filter((i) => orgs.has(i.params.org));
}
