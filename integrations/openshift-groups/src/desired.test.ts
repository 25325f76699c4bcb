import { describe, expect, it } from 'vitest';
import { type DesiredMembersInput, desiredGroupMembers, withoutOcmGroups } from './desired.ts';

const cluster = (name = 'c1', auth: Array<{ service: string }> = []) => ({ name, auth });
const role = (name: string, access: unknown[], extra: Record<string, unknown> = {}) => ({
  name,
  expirationDate: null,
  users: [{ github_username: 'gh-alice', org_username: 'alice' }],
  access,
  ...extra,
});
const input = (
  roles: unknown[],
  extra: Partial<DesiredMembersInput> = {},
): DesiredMembersInput => ({
  roles: roles as DesiredMembersInput['roles'],
  clusters: new Set(['c1', 'c2']),
  today: new Date('2026-11-21T08:00:00Z'),
  ...extra,
});
const triples = (members: ReturnType<typeof desiredGroupMembers>) =>
  members.map((m) => `${m.cluster}/${m.group}/${m.user}`);

describe('desiredGroupMembers', () => {
  it.each([
    ['no auth → GitHub username', [], ['c1/admins/gh-alice']],
    ['github-org', [{ service: 'github-org' }], ['c1/admins/gh-alice']],
    ['oidc → org username', [{ service: 'oidc' }], ['c1/admins/alice']],
    [
      'several auth services → both usernames',
      [{ service: 'rhidp' }, { service: 'github-org-team' }],
      ['c1/admins/alice', 'c1/admins/gh-alice'],
    ],
  ])('%s', (_title, auth, expected) => {
    expect(
      triples(
        desiredGroupMembers(
          input([role('r', [{ cluster: cluster('c1', auth), group: 'admins' }])]),
        ),
      ),
    ).toEqual(expected);
  });

  it.each([
    [
      'an expired role',
      role('r', [{ cluster: cluster(), group: 'g' }], { expirationDate: '2026-11-21' }),
    ],
    ['a cluster without a working client', role('r', [{ cluster: cluster('c9'), group: 'g' }])],
    [
      'access without a group',
      role('r', [{ cluster: cluster(), group: null, clusterRole: 'view' }]),
    ],
    ['namespace access', role('r', [{ cluster: null, group: null, namespace: { name: 'ns' } }])],
    ['a role without users', role('r', [{ cluster: cluster(), group: 'g' }], { users: null })],
    [
      'a user without the username the cluster uses',
      role('r', [{ cluster: cluster('c1', [{ service: 'oidc' }]), group: 'g' }], {
        users: [{ github_username: 'gh-bob', org_username: '' }],
      }),
    ],
  ])('grants nothing for %s', (_title, r) => {
    expect(desiredGroupMembers(input([r]))).toEqual([]);
  });

  it('lists a member granted by several roles once, in first-seen order', () => {
    const members = desiredGroupMembers(
      input([
        role('a', [
          { cluster: cluster(), group: 'viewers' },
          { cluster: cluster('c2'), group: 'viewers' },
        ]),
        role('b', [{ cluster: cluster(), group: 'viewers' }], {
          users: [
            { github_username: 'gh-bob', org_username: 'bob' },
            { github_username: 'gh-alice', org_username: 'alice' },
          ],
        }),
      ]),
    );
    expect(triples(members)).toEqual([
      'c1/viewers/gh-alice',
      'c2/viewers/gh-alice',
      'c1/viewers/gh-bob',
    ]);
  });

  it('fails on an unknown auth service and a malformed expiration date', () => {
    expect(() =>
      desiredGroupMembers(
        input([role('r', [{ cluster: cluster('c1', [{ service: 'ldap' }]), group: 'g' }])]),
      ),
    ).toThrow('[c1] auth service not implemented: ldap');
    expect(() =>
      desiredGroupMembers(input([role('r', [], { expirationDate: '21.11.2026' })])),
    ).toThrow("expirationDate '21.11.2026'");
  });
});

describe('withoutOcmGroups', () => {
  const members = [
    { cluster: 'ocm', group: 'dedicated-admins', user: 'a' },
    { cluster: 'ocm', group: 'cluster-admins', user: 'a' },
    { cluster: 'ocm', group: 'viewers', user: 'a' },
    { cluster: 'plain', group: 'dedicated-admins', user: 'a' },
  ];
  it('drops dedicated-admins and cluster-admins of OCM clusters only', () => {
    expect(withoutOcmGroups(members, new Set(['ocm']))).toEqual([
      { cluster: 'ocm', group: 'viewers', user: 'a' },
      { cluster: 'plain', group: 'dedicated-admins', user: 'a' },
    ]);
    expect(withoutOcmGroups(members, new Set())).toEqual(members);
  });
});
