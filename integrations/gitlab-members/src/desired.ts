import { QontractError } from '@qontract/core';
import { accessLevel } from '@qontract/gitlab';
import type { PagerDutyTargetRef as PagerDutyTarget } from '@qontract/pagerduty';

/**
 * The desired members of the managed GitLab groups: pure functions of
 * app-interface data (and of the PagerDuty on-call names, read beforehand).
 */

/** A `PermissionGitlabGroupMembership_v1` as the query returns it. */
export interface GitlabGroupPermission {
  readonly name: string;
  readonly group: string;
  readonly access: string;
  readonly pagerduty?: readonly PagerDutyTarget[] | null;
  readonly roles?: ReadonlyArray<{
    readonly users?: ReadonlyArray<{ readonly org_username: string }> | null;
    readonly bots?: ReadonlyArray<{ readonly org_username?: string | null }> | null;
  }> | null;
}

/** Username → access level (10 guest … 50 owner). */
export type GroupMembers = ReadonlyMap<string, number>;

/**
 * The one GitLab instance of app-interface. The original refuses none and
 * several alike, as the managed groups would otherwise be ambiguous.
 */
export function singleInstance<T>(instances: readonly T[] | null | undefined): T {
  const all = instances ?? [];
  if (all.length === 0) throw new QontractError('No gitlab instance found!');
  if (all.length > 1) {
    throw new QontractError(
      `More than one gitlab instance found! (${all.length} gitlabinstance_v1 files; gitlab-members manages exactly one)`,
    );
  }
  return all[0]!;
}

/** Only the group-membership permissions (the inline fragment leaves the others empty). */
export function gitlabPermissions(
  permissions: ReadonlyArray<GitlabGroupPermission | Record<PropertyKey, never>>,
): GitlabGroupPermission[] {
  return permissions.filter((p): p is GitlabGroupPermission => 'group' in p);
}

/** The permissions granting membership of `group`. */
export function permissionsOfGroup(
  permissions: readonly GitlabGroupPermission[],
  group: string,
): GitlabGroupPermission[] {
  return permissions.filter((p) => p.group === group);
}

/** A stable key of a PagerDuty target, to look its on-call users up. */
export function pagerDutyTargetKey(target: PagerDutyTarget): string {
  return JSON.stringify([
    target.instance.name,
    target.name,
    target.scheduleID ?? null,
    target.escalationPolicyID ?? null,
  ]);
}

/**
 * The desired members of one group: every user and bot of the roles of its
 * permissions, plus the app-interface users on call in each permission's
 * PagerDuty targets (`onCall`: org usernames by `pagerDutyTargetKey`), at the
 * permission's access level; a user reached by several permissions gets the
 * highest level. Bots without an `org_username` have no GitLab account to add.
 */
export function desiredGroupMembers(
  permissions: readonly GitlabGroupPermission[],
  onCall: ReadonlyMap<string, readonly string[]> = new Map(),
): GroupMembers {
  const members = new Map<string, number>();
  for (const { username, level } of grants(permissions, onCall)) {
    members.set(username, Math.max(level, members.get(username) ?? 0));
  }
  return members;
}

/** The names of the permissions that grant `username` membership (to name them when its account is missing). */
export function grantingPermissions(
  permissions: readonly GitlabGroupPermission[],
  onCall: ReadonlyMap<string, readonly string[]>,
  username: string,
): string[] {
  const names = [...grants(permissions, onCall)]
    .filter((g) => g.username === username)
    .map((g) => g.permission);
  return [...new Set(names)];
}

/** Each membership the permissions grant, one per role user, bot and on-call user. */
function* grants(
  permissions: readonly GitlabGroupPermission[],
  onCall: ReadonlyMap<string, readonly string[]>,
): Generator<{ username: string; level: number; permission: string }> {
  for (const permission of permissions) {
    const level = permissionAccessLevel(permission);
    const grant = (username: string) => ({ username, level, permission: permission.name });
    for (const role of permission.roles ?? []) {
      for (const user of role.users ?? []) yield grant(user.org_username);
      for (const bot of role.bots ?? []) if (bot.org_username) yield grant(bot.org_username);
    }
    for (const target of permission.pagerduty ?? []) {
      for (const username of onCall.get(pagerDutyTargetKey(target)) ?? []) yield grant(username);
    }
  }
}

function permissionAccessLevel(permission: GitlabGroupPermission): number {
  try {
    return accessLevel(permission.access);
  } catch {
    throw new QontractError(
      `permission ${permission.name}: invalid access level '${permission.access}' for GitLab group ${permission.group} (owner, maintainer, developer, reporter or guest)`,
    );
  }
}
