import { describe, expect, it } from 'vitest';
import {
  type PagerDutyUserRef,
  pagerDutyName,
  pagerDutyNotFoundWarning,
  usernamesFromPagerDuty,
  validatePagerDutyTarget,
} from './usernames.ts';

const users: PagerDutyUserRef[] = [
  { org_username: 'alice' },
  { org_username: 'bob', pagerduty_username: 'bsmith' },
  { org_username: 'carol', pagerduty_username: null },
  { org_username: 'dave', pagerduty_username: '' },
];
const byOrgUsername = (u: PagerDutyUserRef) => u.org_username;

describe('usernamesFromPagerDuty', () => {
  it.each([
    {
      case: 'matches org_username when there is no pagerduty_username',
      onCall: ['alice'],
      usernames: ['alice'],
      notFound: [],
    },
    {
      case: 'matches pagerduty_username, not org_username, when it is set',
      onCall: ['bsmith', 'bob'],
      usernames: ['bob'],
      notFound: ['bob'],
    },
    {
      case: 'an empty pagerduty_username falls back to org_username',
      onCall: ['dave'],
      usernames: ['dave'],
      notFound: [],
    },
    {
      case: 'cuts names at the first +',
      onCall: ['alice+pd', 'bsmith+a+b'],
      usernames: ['alice', 'bob'],
      notFound: [],
    },
    {
      case: 'drops names containing nobody, before and after +',
      onCall: ['nobody', 'nobody+x', 'alice+nobody', 'carol'],
      usernames: ['carol'],
      notFound: [],
    },
    {
      case: 'only nobody on call: nothing, and no warning',
      onCall: ['nobody'],
      usernames: [],
      notFound: [],
    },
    {
      case: 'nobody on call at all',
      onCall: [],
      usernames: [],
      notFound: [],
    },
    {
      case: 'names without an app-interface user are reported, duplicates kept',
      onCall: ['ghost', 'alice', 'ghost'],
      usernames: ['alice'],
      notFound: ['ghost', 'ghost'],
    },
    {
      case: 'users come in the order of the user list, once each',
      onCall: ['carol', 'alice', 'alice'],
      usernames: ['alice', 'carol'],
      notFound: [],
    },
  ])('$case', ({ onCall, usernames, notFound }) => {
    expect(usernamesFromPagerDuty(onCall, users, byOrgUsername)).toEqual({ usernames, notFound });
  });

  it('picks with pagerDutyName unless told otherwise', () => {
    expect(usernamesFromPagerDuty(['bsmith'], users).usernames).toEqual(['bsmith']);
    expect(usernamesFromPagerDuty(['bsmith'], users, (u) => u.org_username).usernames).toEqual([
      'bob',
    ]);
  });

  it('lets a caller concatenate several targets, as the original loop does', () => {
    const perTarget = [['alice'], ['nobody'], ['bsmith', 'ghost']].map((names) =>
      usernamesFromPagerDuty(names, users, byOrgUsername),
    );
    expect(perTarget.flatMap((r) => r.usernames)).toEqual(['alice', 'bob']);
    expect(perTarget.map((r) => r.notFound)).toEqual([[], [], ['ghost']]);
  });
});

describe('pagerDutyName', () => {
  it('is pagerduty_username, else org_username', () => {
    expect(users.map(pagerDutyName)).toEqual(['alice', 'bsmith', 'carol', 'dave']);
  });
});

describe('validatePagerDutyTarget', () => {
  const instance = { name: 'acme' };
  it.each([
    { target: { scheduleID: 'PS1' }, resource: { kind: 'schedule', id: 'PS1' } },
    { target: { escalationPolicyID: 'PE1' }, resource: { kind: 'escalationPolicy', id: 'PE1' } },
    {
      target: { scheduleID: 'PS1', escalationPolicyID: 'PE1' },
      resource: { kind: 'escalationPolicy', id: 'PE1' },
    },
    {
      target: { scheduleID: 'PS1', escalationPolicyID: null },
      resource: { kind: 'schedule', id: 'PS1' },
    },
  ])('$target → $resource', ({ target, resource }) => {
    expect(validatePagerDutyTarget({ name: 't', instance, ...target })).toEqual(resource);
  });

  it('refuses a target with neither id, naming it', () => {
    expect(() =>
      validatePagerDutyTarget({ name: 'sre-primary', instance, scheduleID: null }),
    ).toThrow('pagerduty sre-primary: Either schedule_id or escalation_policy_id must be set!');
  });
});

describe('pagerDutyNotFoundWarning', () => {
  it("is the original's line, names as a Python list", () => {
    expect(pagerDutyNotFoundWarning('my-group', ['ghost', "o'neil"])).toBe(
      `[my-group] PagerDuty username not found in app-interface: ['ghost', "o'neil"] (hint: user files should contain pagerduty_username if it is different than org_username)`,
    );
  });
});
