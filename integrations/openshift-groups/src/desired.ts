import { isRoleActive, userKeysForAccess } from '@qontract/openshift';
import type { OpenshiftGroupsManagedRolesQuery } from './managed-roles.generated.ts';

type Role = NonNullable<OpenshiftGroupsManagedRolesQuery['roles']>[number];

/** One user in one group on one cluster: the unit of both states. */
export interface GroupMember {
  readonly cluster: string;
  readonly group: string;
  readonly user: string;
}

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
  const out = new Map<string, GroupMember>();
  for (const role of input.roles) {
    if (!isRoleActive(role.name, role.expirationDate, input.today)) continue;
    for (const access of role.access ?? []) {
      const cluster = access.cluster;
      const group = access.group;
      if (!cluster || !group || !input.clusters.has(cluster.name)) continue;
      const keys = userKeysForAccess(cluster.name, cluster.auth);
      for (const user of role.users ?? []) {
        for (const key of keys) {
          const username = user[key];
          if (!username) continue;
          const member = { cluster: cluster.name, group, user: username };
          out.set(memberKey(member), member);
        }
      }
    }
  }
  return [...out.values()];
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
