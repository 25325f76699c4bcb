import { QontractError } from '@qontract/core';
import { describe, expect, it } from 'vitest';
import {
  desiredGroupMembers,
  type GitlabGroupPermission,
  gitlabPermissions,
  grantingPermissions,
  pagerDutyTargetKey,
  permissionsOfGroup,
  singleInstance,
} from './desired.ts';

const permission = (
  name: string,
  group: string,
  access: string,
  users: string[],
  extra: Partial<GitlabGroupPermission> = {},
): GitlabGroupPermission => ({
  name,
  group,
  access,
  roles: [{ users: users.map((org_username) => ({ org_username })), bots: null }],
  ...extra,
});

const oncall = { name: 'sre-oncall', instance: { name: 'example' }, scheduleID: 'PSCHED1' };

describe('desiredGroupMembers', () => {
  it.each([
    { title: 'no permission', permissions: [], onCall: [], expected: [] },
    {
      title: 'every role user at the permission level',
      permissions: [permission('p', 'g', 'developer', ['alice', 'bob'])],
      onCall: [],
      expected: [
        ['alice', 30],
        ['bob', 30],
      ],
    },
    {
      title: 'the highest level wins for a user of several permissions',
      permissions: [
        permission('dev', 'g', 'developer', ['alice', 'bob']),
        permission('own', 'g', 'owner', ['bob']),
        permission('guest', 'g', 'guest', ['bob', 'carol']),
      ],
      onCall: [],
      expected: [
        ['alice', 30],
        ['bob', 50],
        ['carol', 10],
      ],
    },
    {
      title: 'access names are case-insensitive, as upstream',
      permissions: [permission('p', 'g', 'Maintainer', ['alice'])],
      onCall: [],
      expected: [['alice', 40]],
    },
    {
      title: 'bots join with their org_username; bots without one are left out',
      permissions: [
        {
          name: 'p',
          group: 'g',
          access: 'reporter',
          roles: [{ users: [], bots: [{ org_username: 'ci-bot' }, { org_username: null }] }],
        },
      ],
      onCall: [],
      expected: [['ci-bot', 20]],
    },
    {
      title: 'users on call in a PagerDuty target are merged in at the permission level',
      permissions: [
        permission('dev', 'g', 'developer', ['alice']),
        permission('oncall', 'g', 'maintainer', [], { pagerduty: [oncall] }),
      ],
      onCall: [[pagerDutyTargetKey(oncall), ['alice', 'dave']]] as const,
      expected: [
        ['alice', 40],
        ['dave', 40],
      ],
    },
    {
      title: 'a target nobody is on call in adds nobody',
      permissions: [permission('oncall', 'g', 'maintainer', [], { pagerduty: [oncall] })],
      onCall: [],
      expected: [],
    },
  ])('$title', ({ permissions, onCall, expected }) => {
    const members = desiredGroupMembers(permissions, new Map(onCall));
    expect([...members].sort()).toEqual(expected);
  });

  it('names the permissions that grant a user, by role or by on-call shift, once each', () => {
    const permissions = [
      permission('devs', 'g', 'developer', ['alice', 'bob']),
      permission('oncall', 'g', 'maintainer', ['alice'], { pagerduty: [oncall] }),
    ];
    const onCall = new Map([[pagerDutyTargetKey(oncall), ['alice', 'dave']]]);
    expect(grantingPermissions(permissions, onCall, 'alice')).toEqual(['devs', 'oncall']);
    expect(grantingPermissions(permissions, onCall, 'dave')).toEqual(['oncall']);
  });

  it('refuses an unknown access level, naming the permission and group', () => {
    expect(() => desiredGroupMembers([permission('p', 'g', 'admin', ['alice'])])).toThrow(
      /permission p: invalid access level 'admin' for GitLab group g/,
    );
  });
});

describe('pagerDutyTargetKey', () => {
  it('tells targets apart by instance, name, schedule and escalation policy', () => {
    const keys = new Set(
      [
        oncall,
        { ...oncall, instance: { name: 'other' } },
        { ...oncall, scheduleID: null, escalationPolicyID: 'PESC1' },
      ].map(pagerDutyTargetKey),
    );
    expect(keys.size).toBe(3);
    expect(pagerDutyTargetKey({ ...oncall })).toBe(pagerDutyTargetKey(oncall));
  });
});

describe('singleInstance', () => {
  it.each([
    { instances: null, error: 'No gitlab instance found!' },
    { instances: [], error: 'No gitlab instance found!' },
    { instances: [1, 2], error: 'More than one gitlab instance found!' },
  ])('refuses $instances', ({ instances, error }) => {
    expect(() => singleInstance(instances)).toThrow(QontractError);
    expect(() => singleInstance(instances)).toThrow(error);
  });

  it('returns the one instance', () => {
    expect(singleInstance([{ name: 'gitlab' }])).toEqual({ name: 'gitlab' });
  });
});

describe('gitlabPermissions / permissionsOfGroup', () => {
  it('keeps the group memberships of a group and drops other permission types', () => {
    const all = gitlabPermissions([
      {},
      permission('a', 'g1', 'guest', []),
      permission('b', 'g2', 'guest', []),
    ]);
    expect(all.map((p) => p.name)).toEqual(['a', 'b']);
    expect(permissionsOfGroup(all, 'g2').map((p) => p.name)).toEqual(['b']);
  });
});
