import { desiredClusterUsers, isRoleActive } from '@qontract/openshift';
import { AggregatedList, orgParams, teamParams } from './aggregated.ts';
import type { GithubClustersQuery } from './clusters.generated.ts';
import type { GithubRolesQuery } from './roles.generated.ts';

type Role = NonNullable<GithubRolesQuery['roles']>[number];
type Cluster = NonNullable<GithubClustersQuery['clusters']>[number];

export interface DesiredInput {
  readonly roles: readonly Role[];
  readonly clusters: readonly Cluster[];
  readonly today: Date;
}

const GITHUB_AUTH = new Set(['github-org', 'github-org-team']);

/** The desired memberships, and what grants each login (to name it when its account is missing). */
export interface DesiredGithub {
  readonly members: AggregatedList;
  /** Login → `role <name>` / `cluster <name>`, in first-seen order. */
  readonly grants: ReadonlyMap<string, ReadonlySet<string>>;
}

/**
 * Who should be in which GitHub organisation and team (the original's
 * `fetch_desired_state`), all usernames lower-cased:
 * - every active role with `github-org-team` permissions puts its users' and
 *   bots' `github_username`s into each permission's team and its organisation;
 * - every cluster that logs in through a GitHub organisation (or team) puts
 *   the users who have access to it (openshift-users: RoleBindings of
 *   managed namespaces and cluster groups, always by `github_username`) into
 *   that organisation (and team).
 *
 * A bot without a `github_username` is skipped (upstream crashes on it).
 */
export function desiredGithubMembers(input: DesiredInput): DesiredGithub {
  const state = new AggregatedList();
  const grants = new Map<string, Set<string>>();
  const grant = (members: readonly string[], by: string) => {
    for (const m of members) {
      const known = grants.get(m);
      if (known) known.add(by);
      else grants.set(m, new Set([by]));
    }
  };
  const active = input.roles.filter((r) => isRoleActive(r.name, r.expirationDate, input.today));
  for (const role of active) {
    const permissions = (role.permissions ?? []).filter(
      (p): p is { service: string; org: string; team: string } =>
        'service' in p && p.service === 'github-org-team',
    );
    if (permissions.length === 0) continue;
    const members = [...(role.users ?? []), ...(role.bots ?? [])]
      .map((m) => m.github_username)
      .filter((u): u is string => Boolean(u))
      .map((u) => u.toLowerCase());
    grant(members, `role ${role.name}`);
    for (const { org, team } of permissions) {
      state.add(teamParams(org, team), members);
      state.add(orgParams(org), members);
    }
  }

  // The original asks openshift-users for every cluster's users (no client
  // map, not sharded), enforcing github_username whatever the cluster's auth.
  const clusterUsers = desiredClusterUsers(input.roles, {
    today: input.today,
    userKeys: ['github_username'],
    isInShard: () => true,
  });
  for (const cluster of input.clusters) {
    for (const auth of cluster.auth) {
      if (!GITHUB_AUTH.has(auth.service) || !('org' in auth)) continue;
      const members = clusterUsers
        .filter((u) => u.cluster === cluster.name)
        .map((u) => u.user.toLowerCase());
      grant(members, `cluster ${cluster.name}`);
      state.add(orgParams(auth.org), members);
      if (auth.service === 'github-org-team' && 'team' in auth) {
        state.add(teamParams(auth.org, auth.team), members);
      }
    }
  }
  return { members: state, grants };
}
