import { describe, expect, it } from 'vitest';
import { type AggregatedItem, AggregatedList, orgParams, teamParams } from './aggregated.ts';
import { actionLine, checkOrgs, isRemoval, itemsOfOrgs, planGithubActions } from './plan.ts';

const org = (name: string, ...items: string[]): AggregatedItem => ({
  params: orgParams(name),
  items,
});
const team = (o: string, t: string, ...items: string[]): AggregatedItem => ({
  params: teamParams(o, t),
  items,
});
const lines = (current: AggregatedItem[], desired: AggregatedItem[]) => {
  const plan = planGithubActions(AggregatedList.of(current).diff(AggregatedList.of(desired)));
  return { lines: plan.actions.map(actionLine), problems: plan.problems.map((p) => p.message) };
};

describe('planGithubActions', () => {
  it('plans nothing when current equals desired, whatever the member order', () => {
    expect(
      lines(
        [team('o', 't', 'a', 'b'), org('o', 'a', 'b')],
        [org('o', 'b', 'a'), team('o', 't', 'b', 'a')],
      ),
    ).toEqual({ lines: [], problems: [] });
  });

  it('removes a user gone from every role from the team and the org', () => {
    expect(
      lines(
        [team('o', 't', 'alice', 'mallory'), org('o', 'alice', 'mallory')],
        [team('o', 't', 'alice'), org('o', 'alice')],
      ).lines,
    ).toEqual(["['del_from_org', 'mallory', 'o']", "['del_from_team', 'mallory', 'o', 't']"]);
  });

  it('creates a new team, then adds its members (the org membership too)', () => {
    expect(
      lines(
        [team('o', 'old', 'alice'), org('o', 'alice')],
        [team('o', 'old', 'alice'), team('o', 'new', 'alice', 'bob'), org('o', 'alice', 'bob')],
      ).lines,
    ).toEqual([
      "['create_team', 'o', 'new']",
      "['add_to_team', 'alice', 'o', 'new']",
      "['add_to_team', 'bob', 'o', 'new']",
      "['add_to_org', 'bob', 'o']",
    ]);
  });

  it('orders the actions as the original registers them', () => {
    const current = [
      team('o', 'gone', 'x'),
      team('o', 't', 'alice', 'y'),
      org('o', 'x', 'alice', 'y'),
    ];
    const desired = [
      team('o', 'n1', 'p'),
      team('o', 'n2', 'q'),
      team('o', 't', 'alice', 'z'),
      org('o', 'alice', 'z', 'p', 'q'),
    ];
    expect(lines(current, desired).lines).toEqual([
      "['create_team', 'o', 'n1']",
      "['create_team', 'o', 'n2']",
      "['add_to_team', 'p', 'o', 'n1']",
      "['add_to_team', 'q', 'o', 'n2']",
      "['del_from_team', 'x', 'o', 'gone']",
      "['add_to_org', 'z', 'o']",
      "['add_to_org', 'p', 'o']",
      "['add_to_org', 'q', 'o']",
      "['add_to_team', 'z', 'o', 't']",
      "['del_from_org', 'x', 'o']",
      "['del_from_org', 'y', 'o']",
      "['del_from_team', 'y', 'o', 't']",
    ]);
  });

  it('keeps a managed team nobody is granted, removing its members only', () => {
    expect(lines([team('o', 't', 'a'), org('o', 'a')], [org('o', 'a')]).lines).toEqual([
      "['del_from_team', 'a', 'o', 't']",
    ]);
  });

  it('refuses to create or delete an organisation', () => {
    expect(lines([org('gone', 'a')], [org('new', 'b')])).toEqual({
      lines: [],
      problems: ['Cannot create a Github Org: new', 'Cannot delete a Github Org: gone'],
    });
  });

  it('compares members exactly (case folding happens when the states are read)', () => {
    expect(lines([team('o', 't', 'alice')], [team('o', 't', 'alice', 'alice')]).lines).toEqual([]);
  });
});

describe('isRemoval', () => {
  it.each([
    [{ action: 'del_from_team', member: 'a', org: 'o', team: 't' }, true],
    [{ action: 'del_from_org', member: 'a', org: 'o' }, true],
    [{ action: 'add_to_team', member: 'a', org: 'o', team: 't' }, false],
    [{ action: 'add_to_org', member: 'a', org: 'o' }, false],
    [{ action: 'create_team', org: 'o', team: 't' }, false],
  ] as const)('%j → %s', (action, expected) => {
    expect(isRemoval(action)).toBe(expected);
  });
});

describe('checkOrgs', () => {
  const set = (...s: string[]) => new Set(s);

  it('reconciles the orgs on both sides and names each org on one side only', () => {
    const { orgs, problems } = checkOrgs(set('a', 'managed-only'), set('a', 'no-teams'), set());
    expect([...orgs]).toEqual(['a']);
    expect(problems).toEqual([
      {
        org: 'no-teams',
        message:
          'github org no-teams: roles or cluster auth grant membership in it, but it is no githuborg_v1 with managedTeams',
      },
      {
        org: 'managed-only',
        message:
          'github org managed-only: has managedTeams, but no role or cluster auth grants membership in it',
      },
    ]);
  });

  it('adds no problem for an org whose read failed (already reported)', () => {
    expect(checkOrgs(set('a'), set('a', 'down'), set('down'))).toEqual({
      orgs: set('a'),
      problems: [],
    });
  });

  it('keeps the items of the reconciled orgs only', () => {
    expect(itemsOfOrgs([org('a'), team('b', 't'), team('a', 't')], set('a'))).toEqual([
      org('a'),
      team('a', 't'),
    ]);
  });
});
