import { QontractError } from '@qontract/core';

/** The user attribute that names a person on a cluster, by the cluster's auth service. */
export type UserKey = 'github_username' | 'org_username';

/**
 * The original's `determine_user_keys_for_access`: GitHub auth → github_username,
 * OIDC / Red Hat IdP → org_username; no auth → github_username; any other
 * service is an error naming the cluster.
 */
export function userKeysForAccess(
  clusterName: string,
  auth: ReadonlyArray<{ readonly service: string }> | null | undefined,
): UserKey[] {
  if (!auth || auth.length === 0) return ['github_username'];
  const keys: UserKey[] = [];
  for (const { service } of auth) {
    let key: UserKey;
    if (service === 'github-org' || service === 'github-org-team') key = 'github_username';
    else if (service === 'oidc' || service === 'rhidp') key = 'org_username';
    else throw new QontractError(`[${clusterName}] auth service not implemented: ${service}`);
    if (!keys.includes(key)) keys.push(key);
  }
  return keys;
}

/**
 * Whether a role with this `expirationDate` (YYYY-MM-DD) still grants access
 * on `today` (UTC): a role expires on its date. A malformed date is an error.
 */
export function isRoleActive(
  roleName: string,
  expirationDate: string | null | undefined,
  today: Date,
): boolean {
  if (!expirationDate) return true;
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(expirationDate);
  const date = m ? new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]))) : undefined;
  if (!date || Number.isNaN(date.getTime()) || date.toISOString().slice(0, 10) !== expirationDate) {
    throw new QontractError(
      `role ${roleName}: expirationDate '${expirationDate}' is not a YYYY-MM-DD date`,
    );
  }
  const todayUtc = today.toISOString().slice(0, 10);
  return expirationDate > todayUtc;
}

/** Who an RBAC binding grants a role to. */
export type RbacSubject =
  | { kind: 'User'; name: string }
  | { kind: 'ServiceAccount'; name: string; namespace: string };

/** The members of an app-interface role, as the access queries read them. */
export interface RoleMembers {
  readonly users?: ReadonlyArray<Partial<Record<UserKey, string | null>>> | null;
  readonly bots?: ReadonlyArray<{ readonly openshift_serviceaccount?: string | null }> | null;
}

/**
 * The bindings a role's members get for `roleName` on a cluster whose auth
 * uses `keys`, as the original names them: one per user and key
 * (`<roleName>-<username>`) and one per bot service account `<ns>/<name>`
 * (`<roleName>-<ns>-<name>`; other bot values are ignored), in that order.
 * RoleBindings and ClusterRoleBindings are built from the same list.
 */
export function roleBindingSubjects(
  roleName: string,
  members: RoleMembers,
  keys: readonly UserKey[],
): Array<{ readonly name: string; readonly subject: RbacSubject }> {
  const out: Array<{ name: string; subject: RbacSubject }> = [];
  for (const user of members.users ?? []) {
    for (const key of keys) {
      const username = user[key];
      if (username)
        out.push({ name: `${roleName}-${username}`, subject: { kind: 'User', name: username } });
    }
  }
  for (const bot of members.bots ?? []) {
    const parts = bot.openshift_serviceaccount?.split('/');
    if (parts?.length !== 2 || !parts[0] || !parts[1]) continue;
    const [namespace, name] = parts as [string, string];
    out.push({
      name: `${roleName}-${namespace}-${name}`,
      subject: { kind: 'ServiceAccount', name, namespace },
    });
  }
  return out;
}

/** A cluster as the access queries read it. */
interface AccessCluster {
  readonly name: string;
  readonly auth?: ReadonlyArray<{ readonly service: string }> | null;
}

/** A namespace a role grants access to, with what decides whether its RoleBindings are managed. */
export interface RoleBindingNamespace {
  readonly name: string;
  readonly delete?: boolean | null;
  readonly managedRoles?: boolean | null;
  readonly cluster: AccessCluster;
}

/** `managedRoles: true`, not being deleted, and in this shard (`<cluster>/<namespace>`). */
export function managesRoleBindings(
  ns: RoleBindingNamespace,
  isInShard: (key: string) => boolean,
): boolean {
  return Boolean(ns.managedRoles) && !ns.delete && isInShard(`${ns.cluster.name}/${ns.name}`);
}

/** An app-interface role with its cluster and namespace access, as the access queries read it. */
export interface AccessRole {
  readonly name: string;
  readonly users?: RoleMembers['users'];
  readonly expirationDate?: string | null;
  readonly access?: ReadonlyArray<{
    readonly namespace?: RoleBindingNamespace | null;
    readonly role?: string | null;
    readonly clusterRole?: string | null;
    readonly cluster?: AccessCluster | null;
    readonly group?: string | null;
  }> | null;
}

/** One user on one cluster. */
export interface ClusterUser {
  readonly cluster: string;
  readonly user: string;
}

/** One user in one group on one cluster. */
export interface ClusterGroupMember extends ClusterUser {
  readonly group: string;
}

export interface RoleAccessOptions {
  readonly today: Date;
  /** Only access to these clusters counts; all clusters when absent. */
  readonly clusters?: ReadonlySet<string>;
  /**
   * The original's `enforced_user_keys`: these username keys whatever the
   * cluster's auth says (and no auth check); by the cluster's auth when absent.
   */
  readonly userKeys?: readonly UserKey[];
}

function usernamesOf(
  role: AccessRole,
  cluster: AccessCluster,
  options: RoleAccessOptions,
): string[] {
  const keys = options.userKeys ?? userKeysForAccess(cluster.name, cluster.auth);
  const out: string[] = [];
  for (const user of role.users ?? []) {
    for (const key of keys) {
      const username = user[key];
      if (username) out.push(username);
    }
  }
  return out;
}

/**
 * The group members roles ask for: for every active role and every access
 * entry with a `cluster` and a `group`, each user under every username key
 * the cluster's auth uses (or the enforced ones). A member granted by several
 * roles appears once, in first-seen order.
 */
export function roleGroupMembers(
  roles: readonly AccessRole[],
  options: RoleAccessOptions,
): ClusterGroupMember[] {
  const out = new Map<string, ClusterGroupMember>();
  for (const role of roles) {
    if (!isRoleActive(role.name, role.expirationDate, options.today)) continue;
    for (const access of role.access ?? []) {
      const { cluster, group } = access;
      if (!cluster || !group) continue;
      if (options.clusters && !options.clusters.has(cluster.name)) continue;
      for (const user of usernamesOf(role, cluster, options)) {
        out.set(`${cluster.name}\u0000${group}\u0000${user}`, {
          cluster: cluster.name,
          group,
          user,
        });
      }
    }
  }
  return [...out.values()];
}

/**
 * The users roles bind in namespaces whose RoleBindings are managed (the
 * user subjects of the original's RoleBindingSpecs; service accounts are no
 * users), in role order, possibly repeated.
 */
function roleBindingUsers(
  roles: readonly AccessRole[],
  options: RoleAccessOptions & { readonly isInShard: (key: string) => boolean },
): ClusterUser[] {
  const out: ClusterUser[] = [];
  for (const role of roles) {
    if (!isRoleActive(role.name, role.expirationDate, options.today)) continue;
    for (const access of role.access ?? []) {
      const ns = access.namespace;
      if (!ns || !(access.role || access.clusterRole)) continue;
      if (!managesRoleBindings(ns, options.isInShard)) continue;
      if (options.clusters && !options.clusters.has(ns.cluster.name)) continue;
      for (const user of usernamesOf(role, ns.cluster, options)) {
        out.push({ cluster: ns.cluster.name, user });
      }
    }
  }
  return out;
}

/**
 * The original's openshift-users desired state: the users of the managed
 * RoleBindings, then the members of the cluster groups, of every cluster
 * (possibly repeated: callers aggregate).
 */
export function desiredClusterUsers(
  roles: readonly AccessRole[],
  options: RoleAccessOptions & { readonly isInShard: (key: string) => boolean },
): ClusterUser[] {
  return [
    ...roleBindingUsers(roles, options),
    ...roleGroupMembers(roles, options).map(({ cluster, user }) => ({ cluster, user })),
  ];
}
