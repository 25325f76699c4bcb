import { accessLevelName } from '@qontract/gitlab';
import { compareCodePoints, pyStrRepr } from '@qontract/pycompat';
import type { GroupMembers } from './desired.ts';

/** A member of a GitLab group today. */
export interface CurrentMember {
  readonly id: number;
  readonly username: string;
  readonly accessLevel: number;
}

export type MemberAction =
  | {
      readonly action: 'add_user_to_group';
      readonly group: string;
      readonly user: string;
      readonly accessLevel: number;
    }
  | {
      readonly action: 'change_access';
      readonly group: string;
      readonly user: string;
      readonly userId: number;
      readonly accessLevel: number;
    }
  | {
      readonly action: 'remove_user_from_group';
      readonly group: string;
      readonly user: string;
      readonly userId: number;
    };

/**
 * The original's diff of one group, by username: desired users who are no
 * member are added, members nobody grants are removed, and members at another
 * level get the desired one. `group` is the name the log lines show (the
 * group's GitLab name, as upstream). Each kind is sorted by username, so the
 * plan does not depend on the order of the data.
 */
export function planGroupMembers(
  group: string,
  current: readonly CurrentMember[],
  desired: GroupMembers,
): MemberAction[] {
  const byUsername = new Map(current.map((m) => [m.username, m]));
  const sorted = (names: Iterable<string>) => [...names].sort(compareCodePoints);
  const adds: MemberAction[] = [];
  const changes: MemberAction[] = [];
  for (const user of sorted(desired.keys())) {
    const level = desired.get(user)!;
    const member = byUsername.get(user);
    if (!member) {
      adds.push({ action: 'add_user_to_group', group, user, accessLevel: level });
    } else if (member.accessLevel !== level) {
      changes.push({ action: 'change_access', group, user, userId: member.id, accessLevel: level });
    }
  }
  const removals: MemberAction[] = sorted(byUsername.keys())
    .filter((user) => !desired.has(user))
    .map((user) => ({
      action: 'remove_user_from_group',
      group,
      user,
      userId: byUsername.get(user)!.id,
    }));
  return [...adds, ...removals, ...changes];
}

/** The original's log line: `['alice', 'add_user_to_group', 'group', 'developer']`. */
export function describeMemberAction(action: MemberAction): string {
  const fields =
    action.action === 'remove_user_from_group'
      ? [action.user, action.action, action.group]
      : [action.user, action.action, action.group, accessLevelName(action.accessLevel)];
  return `[${fields.map(pyStrRepr).join(', ')}]`;
}
