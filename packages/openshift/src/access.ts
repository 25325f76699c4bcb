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
