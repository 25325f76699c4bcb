import { describe, expect, it } from 'vitest';
import type { GroupMember } from './desired.ts';
import { type GroupAction, groupSteps, invalidCombinations, planGroupActions } from './plan.ts';

const m = (spec: string): GroupMember => {
  const [cluster, group, user] = spec.split('/') as [string, string, string];
  return { cluster, group, user };
};
const row = (a: GroupAction) => [a.action, a.cluster, a.group, a.user];

describe('planGroupActions', () => {
  it.each<{ title: string; current: string[]; desired: string[]; expected: unknown[][] }>([
    { title: 'nothing to do', current: ['c/g/a'], desired: ['c/g/a'], expected: [] },
    {
      title: 'a new group: created once, before its members',
      current: [],
      desired: ['c/g/a', 'c/g/b'],
      expected: [
        ['create_group', 'c', 'g', null],
        ['add_user_to_group', 'c', 'g', 'a'],
        ['add_user_to_group', 'c', 'g', 'b'],
      ],
    },
    {
      title: 'a member more in a group that has members',
      current: ['c/g/a'],
      desired: ['c/g/a', 'c/g/b'],
      expected: [['add_user_to_group', 'c', 'g', 'b']],
    },
    {
      title: 'a member less',
      current: ['c/g/a', 'c/g/b'],
      desired: ['c/g/a'],
      expected: [['del_user_from_group', 'c', 'g', 'b']],
    },
    {
      title: 'the last member gone: delete_group (never executed) after the removals',
      current: ['c/g/a', 'c/g/b'],
      desired: [],
      expected: [
        ['del_user_from_group', 'c', 'g', 'a'],
        ['del_user_from_group', 'c', 'g', 'b'],
        ['delete_group', 'c', 'g', null],
      ],
    },
    {
      title:
        'create_group and removals first, then additions and group deletions, each in diff order',
      current: ['c/old/x', 'c/keep/a', 'c/keep/b'],
      desired: ['c/keep/a', 'c/new/y', 'c/keep/z'],
      expected: [
        ['create_group', 'c', 'new', null],
        ['del_user_from_group', 'c', 'old', 'x'],
        ['del_user_from_group', 'c', 'keep', 'b'],
        ['add_user_to_group', 'c', 'new', 'y'],
        ['add_user_to_group', 'c', 'keep', 'z'],
        ['delete_group', 'c', 'old', null],
      ],
    },
    {
      title: 'groups are per cluster',
      current: ['c1/g/a'],
      desired: ['c1/g/a', 'c2/g/a'],
      expected: [
        ['create_group', 'c2', 'g', null],
        ['add_user_to_group', 'c2', 'g', 'a'],
      ],
    },
  ])('$title', ({ current, desired, expected }) => {
    expect(planGroupActions(current.map(m), desired.map(m)).map(row)).toEqual(expected);
  });
});

describe('invalidCombinations', () => {
  const managed = [
    { name: 'c1', managedGroups: ['g'] },
    { name: 'c2', managedGroups: null },
  ];
  it.each<{
    title: string;
    actions: string[];
    expected: Array<{ cluster: string; group: string }>;
  }>([
    { title: 'all managed', actions: ['c1/g/a', 'c1/g/b'], expected: [] },
    {
      title: 'a group not in managedGroups, once',
      actions: ['c1/h/a', 'c1/h/b', 'c1/g/a'],
      expected: [{ cluster: 'c1', group: 'h' }],
    },
    {
      title: 'a cluster without managedGroups and an unknown cluster',
      actions: ['c2/g/a', 'c9/g/a'],
      expected: [
        { cluster: 'c2', group: 'g' },
        { cluster: 'c9', group: 'g' },
      ],
    },
  ])('$title', ({ actions, expected }) => {
    const plan = actions.map((s) => ({ action: 'add_user_to_group' as const, ...m(s) }));
    expect(invalidCombinations(plan, managed)).toEqual(expected);
  });
});

describe('groupSteps', () => {
  it('folds the additions and the removals of each group into one write each, delete_group apart', () => {
    const plan = planGroupActions(
      ['c/old/x', 'c/keep/a', 'c/keep/b'].map(m),
      ['c/keep/a', 'c/new/y', 'c/new/w', 'c/keep/z'].map(m),
    );
    expect(
      groupSteps(plan).map((s) => ({
        actions: s.actions.map((a) => `${a.action} ${a.group} ${a.user}`),
        change: s.change,
        removal: s.removal,
      })),
    ).toEqual([
      {
        actions: ['create_group new null', 'add_user_to_group new y', 'add_user_to_group new w'],
        change: { cluster: 'c', group: 'new', create: true, add: ['y', 'w'], remove: [] },
        removal: false,
      },
      {
        actions: ['del_user_from_group old x'],
        change: { cluster: 'c', group: 'old', create: false, add: [], remove: ['x'] },
        removal: true,
      },
      {
        actions: ['del_user_from_group keep b'],
        change: { cluster: 'c', group: 'keep', create: false, add: [], remove: ['b'] },
        removal: true,
      },
      {
        actions: ['add_user_to_group keep z'],
        change: { cluster: 'c', group: 'keep', create: false, add: ['z'], remove: [] },
        removal: false,
      },
      { actions: ['delete_group old null'], change: undefined, removal: true },
    ]);
  });
});
