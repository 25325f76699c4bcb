import { type ClusterGroupMember, roleGroupMembers } from '@qontract/openshift';
import type { OpenshiftGroupsManagedRolesQuery } from './managed-roles.generated.ts';

type Role = NonNullable<OpenshiftGroupsManagedRolesQuery['roles']>[number];

/** One user in one group on one cluster: the unit of both states. */
export type GroupMember = ClusterGroupMember;

/**
 * Groups OCM owns on its clusters (the original's OCMClusterGroupId values):
 * the ocm-groups integration manages them, so they leave both states here.
 */
const OCM_MANAGED_GROUPS: readonly string[] = ['dedicated-admins', 'cluster-admins'];

export interface DesiredMembersInput {
  readonly roles: readonly Role[];
  /** Clusters with a working client; access to any other cluster is left alone. */
  readonly clusters: ReadonlySet<string>;
  readonly today: Date;
}

/**
 * The group members roles ask for: for every active role and every access
 * entry with a `cluster` and a `group`, each user under every username key
 * the cluster's auth uses. A member granted by several roles appears once.
 */
export function desiredGroupMembers(input: DesiredMembersInput): GroupMember[] {
  return roleGroupMembers(input.roles, { today: input.today, clusters: input.clusters });
}

/** Drops the OCM-owned groups of OCM clusters. */
export function withoutOcmGroups(
  members: readonly GroupMember[],
  ocmClusters: ReadonlySet<string>,
): GroupMember[] {
  return members.filter(
    (m) => !(ocmClusters.has(m.cluster) && OCM_MANAGED_GROUPS.includes(m.group)),
  );
}

export function memberKey(m: GroupMember): string {
  return `${m.cluster}\u0000${m.group}\u0000${m.user}`;
}
