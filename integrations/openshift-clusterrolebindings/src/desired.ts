import {
  isRoleActive,
  type RbacSubject,
  roleBindingSubjects,
  userKeysForAccess,
} from '@qontract/openshift';
import type { OpenshiftClusterrolebindingsRolesQuery } from './roles.generated.ts';

type Role = NonNullable<OpenshiftClusterrolebindingsRolesQuery['roles']>[number];

/** A cluster as far as scope is concerned. */
export interface ManagedClusterCandidate {
  readonly name: string;
  readonly managedClusterRoles?: boolean | null;
  readonly automationToken?: unknown;
}

/** The original's scope: `managedClusterRoles: true` and an automationToken. Not sharded. */
export function isManagedCluster(cluster: ManagedClusterCandidate): boolean {
  return Boolean(cluster.managedClusterRoles) && Boolean(cluster.automationToken);
}

interface DesiredClusterRoleBinding {
  readonly cluster: string;
  readonly body: {
    apiVersion: 'rbac.authorization.k8s.io/v1';
    kind: 'ClusterRoleBinding';
    metadata: { name: string };
    roleRef: { kind: 'ClusterRole'; name: string };
    subjects: [RbacSubject];
  };
  /** The app-interface role granting it, for messages. */
  readonly role: string;
}

/** A binding the API server would refuse; reported instead of applied. */
interface InvalidClusterRoleBinding {
  readonly cluster: string;
  readonly name: string;
  readonly role: string;
  readonly message: string;
}

export interface ClusterRoleBindingsInput {
  readonly roles: readonly Role[];
  /** Managed clusters with a working client; access to any other cluster is left alone. */
  readonly clusters: ReadonlySet<string>;
  readonly today: Date;
}

export interface DesiredClusterRoleBindings {
  readonly bindings: DesiredClusterRoleBinding[];
  readonly invalid: InvalidClusterRoleBinding[];
}

/**
 * The ClusterRoleBindings roles ask for: for every active role and every
 * access entry with a `cluster` and a `clusterRole`, one binding per user
 * (`<clusterRole>-<username>`, with the user key of the cluster's auth) and
 * one per bot service account `<namespace>/<name>`
 * (`<clusterRole>-<namespace>-<name>`). The first definition of a
 * (cluster, name) wins: a user may get the same cluster role from several
 * roles, as upstream.
 */
export function desiredClusterRoleBindings(
  input: ClusterRoleBindingsInput,
): DesiredClusterRoleBindings {
  const out = new Map<string, DesiredClusterRoleBinding>();
  const invalid = new Map<string, InvalidClusterRoleBinding>();
  for (const role of input.roles) {
    if (!isRoleActive(role.name, role.expirationDate, input.today)) continue;
    for (const access of role.access ?? []) {
      const cluster = access.cluster;
      const clusterRole = access.clusterRole;
      if (!cluster || !clusterRole || !input.clusters.has(cluster.name)) continue;
      const keys = userKeysForAccess(cluster.name, cluster.auth);
      for (const { name, subject } of roleBindingSubjects(clusterRole, role, keys)) {
        const key = `${cluster.name}/${name}`;
        if (out.has(key) || invalid.has(key)) continue;
        const problem = invalidNameReason(name);
        if (problem) {
          invalid.set(key, {
            cluster: cluster.name,
            name,
            role: role.name,
            message: `[${cluster.name}] role ${role.name}: ClusterRoleBinding name '${name}' ${problem}`,
          });
          continue;
        }
        out.set(key, {
          cluster: cluster.name,
          role: role.name,
          body: {
            apiVersion: 'rbac.authorization.k8s.io/v1',
            kind: 'ClusterRoleBinding',
            metadata: { name },
            roleRef: { kind: 'ClusterRole', name: clusterRole },
            subjects: [subject],
          },
        });
      }
    }
  }
  return { bindings: [...out.values()], invalid: [...invalid.values()] };
}

/**
 * RBAC object names are path segments (Kubernetes ValidatePathSegmentName):
 * not `.` or `..`, no `/` or `%`. Checked here so that a bad clusterRole or
 * username is reported before anything is applied, and switches deletions off.
 */
function invalidNameReason(name: string): string | undefined {
  if (name === '.' || name === '..') return 'may not be "." or ".."';
  if (name.includes('/')) return "may not contain '/'";
  if (name.includes('%')) return "may not contain '%'";
  return undefined;
}
