import {
  isRoleActive,
  managesRoleBindings,
  type RbacSubject,
  roleBindingSubjects,
  userKeysForAccess,
} from '@qontract/openshift';
import type { OpenshiftRolebindingsRolesQuery } from './roles.generated.ts';

type Role = NonNullable<OpenshiftRolebindingsRolesQuery['roles']>[number];

export interface DesiredRoleBinding {
  readonly cluster: string;
  readonly namespace: string;
  readonly privileged: boolean;
  readonly body: {
    apiVersion: 'rbac.authorization.k8s.io/v1';
    kind: 'RoleBinding';
    metadata: { name: string };
    roleRef: { kind: 'Role' | 'ClusterRole'; name: string };
    subjects: RbacSubject[];
  };
  /** The role granting it, for error messages. */
  readonly role: string;
}

export interface RoleBindingsInput {
  readonly roles: readonly Role[];
  readonly isInShard: (key: string) => boolean;
  /** Clusters with a working client; access to other clusters is left alone. */
  readonly clusters: ReadonlySet<string>;
  /** `--support-role-ref`: bind a namespaced `role` as a Role instead of a ClusterRole of that name. */
  readonly supportRoleRef: boolean;
  readonly today: Date;
}

/**
 * The RoleBindings roles ask for: one per user (named `<role>-<username>`,
 * with the user key the cluster's auth uses) and one per bot service account
 * `<namespace>/<name>` (named `<role>-<namespace>-<name>`), in every managed
 * namespace the role grants access to. Expired roles grant nothing; the first
 * definition of a (cluster, namespace, name) wins, as upstream.
 */
export function desiredRoleBindings(input: RoleBindingsInput): DesiredRoleBinding[] {
  const out = new Map<string, DesiredRoleBinding>();
  for (const role of input.roles) {
    if (!isRoleActive(role.name, role.expirationDate, input.today)) continue;
    for (const access of role.access ?? []) {
      const ns = access.namespace;
      const roleName = access.role || access.clusterRole;
      if (!ns || !roleName || !managesRoleBindings(ns, input.isInShard)) continue;
      if (!input.clusters.has(ns.cluster.name)) continue;
      const roleRef = {
        kind: access.role && input.supportRoleRef ? ('Role' as const) : ('ClusterRole' as const),
        name: roleName,
      };
      const keys = userKeysForAccess(ns.cluster.name, ns.cluster.auth);
      for (const { name, subject } of roleBindingSubjects(roleName, role, keys)) {
        const key = `${ns.cluster.name}/${ns.name}/${name}`;
        if (out.has(key)) continue;
        out.set(key, {
          cluster: ns.cluster.name,
          namespace: ns.name,
          privileged: Boolean(ns.clusterAdmin),
          role: role.name,
          body: {
            apiVersion: 'rbac.authorization.k8s.io/v1',
            kind: 'RoleBinding',
            metadata: { name },
            roleRef,
            subjects: [subject],
          },
        });
      }
    }
  }
  return [...out.values()];
}
