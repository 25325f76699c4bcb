import { describe, expect, it } from 'vitest';
import { describeMemberAction, planGroupMembers } from './plan.ts';

const member = (id: number, username: string, accessLevel: number) => ({
  id,
  username,
  accessLevel,
});

describe('planGroupMembers', () => {
  it.each([
    {
      title: 'nothing to do',
      current: [member(1, 'alice', 30)],
      desired: [['alice', 30]],
      expected: [],
    },
    {
      title: 'a desired user who is no member is added',
      current: [],
      desired: [['alice', 30]],
      expected: [{ action: 'add_user_to_group', group: 'G', user: 'alice', accessLevel: 30 }],
    },
    {
      title: 'a member nobody grants is removed by id',
      current: [member(7, 'mallory', 50)],
      desired: [],
      expected: [{ action: 'remove_user_from_group', group: 'G', user: 'mallory', userId: 7 }],
    },
    {
      title: 'a member at another level gets the desired level',
      current: [member(3, 'bob', 50)],
      desired: [['bob', 30]],
      expected: [{ action: 'change_access', group: 'G', user: 'bob', userId: 3, accessLevel: 30 }],
    },
    {
      title: 'adds, removals, then changes; each sorted by username',
      current: [
        member(2, 'zed', 10),
        member(3, 'bob', 10),
        member(4, 'yan', 10),
        member(5, 'amy', 10),
      ],
      desired: [
        ['dan', 20],
        ['amy', 40],
        ['carl', 20],
        ['bob', 40],
      ],
      expected: [
        { action: 'add_user_to_group', group: 'G', user: 'carl', accessLevel: 20 },
        { action: 'add_user_to_group', group: 'G', user: 'dan', accessLevel: 20 },
        { action: 'remove_user_from_group', group: 'G', user: 'yan', userId: 4 },
        { action: 'remove_user_from_group', group: 'G', user: 'zed', userId: 2 },
        { action: 'change_access', group: 'G', user: 'amy', userId: 5, accessLevel: 40 },
        { action: 'change_access', group: 'G', user: 'bob', userId: 3, accessLevel: 40 },
      ],
    },
    {
      title: 'usernames are compared exactly',
      current: [member(1, 'Alice', 30)],
      desired: [['alice', 30]],
      expected: [
        { action: 'add_user_to_group', group: 'G', user: 'alice', accessLevel: 30 },
        { action: 'remove_user_from_group', group: 'G', user: 'Alice', userId: 1 },
      ],
    },
  ] as const)('$title', ({ current, desired, expected }) => {
    expect(planGroupMembers('G', current, new Map(desired))).toEqual(expected);
  });
});

describe('describeMemberAction', () => {
  it.each([
    {
      action: { action: 'add_user_to_group', group: 'App SRE', user: 'alice', accessLevel: 30 },
      line: "['alice', 'add_user_to_group', 'App SRE', 'developer']",
    },
    {
      action: { action: 'change_access', group: 'g', user: "o'neil", userId: 1, accessLevel: 50 },
      line: `["o'neil", 'change_access', 'g', 'owner']`,
    },
    {
      action: { action: 'remove_user_from_group', group: 'g', user: 'bob', userId: 2 },
      line: "['bob', 'remove_user_from_group', 'g']",
    },
  ] as const)('$line', ({ action, line }) => {
    expect(describeMemberAction(action)).toBe(line);
  });
});
