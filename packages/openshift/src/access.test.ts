import { describe, expect, it } from 'vitest';
import {
  type AccessRole,
  desiredClusterUsers,
  isRoleActive,
  managesRoleBindings,
  roleBindingSubjects,
  roleGroupMembers,
  userKeysForAccess,
} from './access.ts';

describe('userKeysForAccess', () => {
  it.each([
    [[], ['github_username']],
    [null, ['github_username']],
    [[{ service: 'github-org' }], ['github_username']],
    [[{ service: 'github-org-team' }, { service: 'github-org' }], ['github_username']],
    [[{ service: 'oidc' }], ['org_username']],
    [
      [{ service: 'rhidp' }, { service: 'github-org' }],
      ['org_username', 'github_username'],
    ],
  ])('%j → %j', (auth, keys) => {
    expect(userKeysForAccess('c1', auth)).toEqual(keys);
  });

  it('rejects an auth service it does not know, naming the cluster', () => {
    expect(() => userKeysForAccess('c1', [{ service: 'ldap' }])).toThrow(
      '[c1] auth service not implemented: ldap',
    );
  });
});

describe('isRoleActive', () => {
  const today = new Date('2026-11-21T23:59:00Z');
  it.each([
    [null, true],
    ['', true],
    ['2026-11-22', true],
    ['2026-11-21', false],
    ['2020-01-01', false],
  ])('expirationDate %j → %j', (date, active) => {
    expect(isRoleActive('r', date, today)).toBe(active);
  });

  it.each(['2026-13-01', '21-11-2026', '2026-02-30'])('rejects the malformed date %j', (date) => {
    expect(() => isRoleActive('r', date, today)).toThrow(
      `role r: expirationDate '${date}' is not a YYYY-MM-DD date`,
    );
  });
});

describe('roleBindingSubjects', () => {
  it('names one binding per user and key, then one per bot service account, and skips other bots', () => {
    expect(
      roleBindingSubjects(
        'view',
        {
          users: [
            { github_username: 'alice-gh', org_username: 'alice' },
            { github_username: null, org_username: 'bob' },
          ],
          bots: [
            { openshift_serviceaccount: 'ci/deployer' },
            { openshift_serviceaccount: 'not-a-service-account' },
            { openshift_serviceaccount: 'a/b/c' },
            { openshift_serviceaccount: null },
          ],
        },
        ['github_username', 'org_username'],
      ),
    ).toEqual([
      { name: 'view-alice-gh', subject: { kind: 'User', name: 'alice-gh' } },
      { name: 'view-alice', subject: { kind: 'User', name: 'alice' } },
      { name: 'view-bob', subject: { kind: 'User', name: 'bob' } },
      {
        name: 'view-ci-deployer',
        subject: { kind: 'ServiceAccount', name: 'deployer', namespace: 'ci' },
      },
    ]);
  });

  it('has nothing for a role without members', () => {
    expect(roleBindingSubjects('edit', {}, ['github_username'])).toEqual([]);
  });
});

describe('cluster access of roles', () => {
  const today = new Date('2026-11-21T08:00:00Z');
  const oidc = { name: 'c-oidc', auth: [{ service: 'oidc' }] };
  const ldap = { name: 'c-ldap', auth: [{ service: 'ldap' }] };
  const ns = (name: string, cluster: { name: string }, extra: Record<string, unknown> = {}) => ({
    name,
    managedRoles: true,
    cluster,
    ...extra,
  });
  const roles: AccessRole[] = [
    {
      name: 'r1',
      users: [{ github_username: 'gh-alice', org_username: 'alice' }],
      access: [
        { namespace: ns('a', oidc), role: 'admin' },
        { namespace: ns('b', oidc, { managedRoles: false }), role: 'admin' },
        { namespace: ns('c', oidc, { delete: true }), clusterRole: 'view' },
        { namespace: ns('d', oidc) },
        { cluster: ldap, group: 'g' },
      ],
    },
    {
      name: 'r2',
      expirationDate: '2020-01-01',
      users: [{ github_username: 'gh-old', org_username: 'old' }],
      access: [{ namespace: ns('a', oidc), role: 'admin' }],
    },
  ];

  it('managesRoleBindings: managedRoles, not deleted, in the shard', () => {
    expect(managesRoleBindings(ns('a', oidc), () => true)).toBe(true);
    expect(managesRoleBindings(ns('a', oidc), (k) => k !== 'c-oidc/a')).toBe(false);
    expect(managesRoleBindings(ns('a', oidc, { delete: true }), () => true)).toBe(false);
  });

  it('desiredClusterUsers: RoleBinding users of managed namespaces, then group members, with enforced keys', () => {
    expect(
      desiredClusterUsers(roles, { today, userKeys: ['github_username'], isInShard: () => true }),
    ).toEqual([
      { cluster: 'c-oidc', user: 'gh-alice' },
      { cluster: 'c-ldap', user: 'gh-alice' },
    ]);
  });

  it("uses the cluster's auth when no key is enforced (an unknown service is an error)", () => {
    expect(() => desiredClusterUsers(roles, { today, isInShard: () => true })).toThrow(
      '[c-ldap] auth service not implemented: ldap',
    );
    expect(roleGroupMembers(roles, { today, clusters: new Set(['c-oidc']) })).toEqual([]);
  });
});
