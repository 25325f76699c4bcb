import { describe, expect, it } from 'vitest';
import { desiredRoleBindings, type RoleBindingsInput } from './desired.ts';

const ns = (
  name: string,
  extra: Record<string, unknown> = {},
  cluster = 'c1',
  auth: Array<{ service: string }> = [],
) => ({
  name,
  delete: null,
  managedRoles: true,
  clusterAdmin: null,
  cluster: { name: cluster, auth },
  ...extra,
});
const role = (name: string, access: unknown[], extra: Record<string, unknown> = {}) => ({
  name,
  expirationDate: null,
  users: [{ github_username: 'gh-alice', org_username: 'alice' }],
  bots: [
    { openshift_serviceaccount: 'ci/robot' },
    { openshift_serviceaccount: 'not-a-sa' },
    { openshift_serviceaccount: null },
  ],
  access,
  ...extra,
});
const input = (roles: unknown[], extra: Partial<RoleBindingsInput> = {}): RoleBindingsInput => ({
  roles: roles as RoleBindingsInput['roles'],
  isInShard: () => true,
  clusters: new Set(['c1', 'c2']),
  supportRoleRef: false,
  today: new Date('2026-11-21T00:00:00Z'),
  ...extra,
});
const names = (r: ReturnType<typeof desiredRoleBindings>) =>
  r.map((b) => `${b.cluster}/${b.namespace}/${b.body.metadata.name}`);

describe('desiredRoleBindings', () => {
  it('binds users (by the cluster auth key) and bot service accounts', () => {
    const r = desiredRoleBindings(
      input([role('dev', [{ namespace: ns('app'), role: 'edit', clusterRole: null }])]),
    );
    expect(names(r)).toEqual(['c1/app/edit-gh-alice', 'c1/app/edit-ci-robot']);
    expect(r[0]!.body).toEqual({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'edit-gh-alice' },
      roleRef: { kind: 'ClusterRole', name: 'edit' },
      subjects: [{ kind: 'User', name: 'gh-alice' }],
    });
    expect(r[1]!.body.subjects).toEqual([
      { kind: 'ServiceAccount', name: 'robot', namespace: 'ci' },
    ]);
  });

  it.each([
    [[{ service: 'oidc' }], ['c1/app/view-alice']],
    [
      [{ service: 'oidc' }, { service: 'github-org' }],
      ['c1/app/view-alice', 'c1/app/view-gh-alice'],
    ],
  ])('uses the user keys of the cluster auth %j', (auth, expected) => {
    const r = desiredRoleBindings(
      input([
        role('r', [{ namespace: ns('app', {}, 'c1', auth), role: 'view', clusterRole: null }], {
          bots: [],
        }),
      ]),
    );
    expect(names(r)).toEqual(expected);
  });

  it('binds a namespaced role as a ClusterRole unless --support-role-ref', () => {
    const roles = [
      role('r', [{ namespace: ns('app'), role: 'custom', clusterRole: null }], { bots: [] }),
    ];
    expect(desiredRoleBindings(input(roles))[0]!.body.roleRef).toEqual({
      kind: 'ClusterRole',
      name: 'custom',
    });
    expect(desiredRoleBindings(input(roles, { supportRoleRef: true }))[0]!.body.roleRef).toEqual({
      kind: 'Role',
      name: 'custom',
    });
  });

  it('uses clusterRole when no role is given', () => {
    const r = desiredRoleBindings(
      input([
        role('r', [{ namespace: ns('app'), role: null, clusterRole: 'admin' }], { bots: [] }),
      ]),
    );
    expect(r[0]!.body.roleRef).toEqual({ kind: 'ClusterRole', name: 'admin' });
  });

  it.each([
    [
      'an expired role',
      role('r', [{ namespace: ns('app'), role: 'view' }], { expirationDate: '2026-11-21' }),
    ],
    [
      'a namespace without managedRoles',
      role('r', [{ namespace: ns('app', { managedRoles: false }), role: 'view' }]),
    ],
    [
      'a namespace being deleted',
      role('r', [{ namespace: ns('app', { delete: true }), role: 'view' }]),
    ],
    ['a cluster without a client', role('r', [{ namespace: ns('app', {}, 'c9'), role: 'view' }])],
    ['access without a role', role('r', [{ namespace: ns('app'), role: null, clusterRole: null }])],
    [
      'cluster access (no namespace)',
      role('r', [{ namespace: null, cluster: { name: 'c1' }, group: 'g' }]),
    ],
  ])('grants nothing for %s', (_title, r) => {
    expect(desiredRoleBindings(input([r]))).toEqual([]);
  });

  it('keeps the first definition of a binding', () => {
    const r = desiredRoleBindings(
      input([
        role('first', [{ namespace: ns('app'), role: 'view' }], { bots: [] }),
        role('second', [{ namespace: ns('app', { clusterAdmin: true }), role: 'view' }], {
          bots: [],
        }),
      ]),
    );
    expect(r.map((b) => [b.body.metadata.name, b.role, b.privileged])).toEqual([
      ['view-gh-alice', 'first', false],
    ]);
  });

  it('only the namespaces of this shard', () => {
    const r = desiredRoleBindings(
      input(
        [
          role(
            'r',
            [
              { namespace: ns('a'), role: 'view' },
              { namespace: ns('b'), role: 'view' },
            ],
            { bots: [] },
          ),
        ],
        {
          isInShard: (k) => k === 'c1/b',
        },
      ),
    );
    expect(names(r)).toEqual(['c1/b/view-gh-alice']);
  });

  it('fails on an unknown auth service and a malformed expiration date', () => {
    expect(() =>
      desiredRoleBindings(
        input([
          role('r', [{ namespace: ns('app', {}, 'c1', [{ service: 'ldap' }]), role: 'view' }]),
        ]),
      ),
    ).toThrow('[c1] auth service not implemented: ldap');
    expect(() => desiredRoleBindings(input([role('r', [], { expirationDate: 'soon' })]))).toThrow(
      "expirationDate 'soon'",
    );
  });
});
