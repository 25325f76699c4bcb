import { describe, expect, it } from 'vitest';
import {
  type ClusterRoleBindingsInput,
  desiredClusterRoleBindings,
  isManagedCluster,
} from './desired.ts';

const cluster = (name = 'c1', auth: Array<{ service: string }> = []) => ({ name, auth });
const role = (name: string, access: unknown[], extra: Record<string, unknown> = {}) => ({
  name,
  expirationDate: null,
  users: [{ github_username: 'gh-alice', org_username: 'alice' }],
  bots: [
    { openshift_serviceaccount: 'ci/robot' },
    { openshift_serviceaccount: 'not-a-sa' },
    { openshift_serviceaccount: 'a/b/c' },
    { openshift_serviceaccount: null },
  ],
  access,
  ...extra,
});
const input = (
  roles: unknown[],
  extra: Partial<ClusterRoleBindingsInput> = {},
): ClusterRoleBindingsInput => ({
  roles: roles as ClusterRoleBindingsInput['roles'],
  clusters: new Set(['c1', 'c2']),
  today: new Date('2026-11-21T12:00:00Z'),
  ...extra,
});
const names = (r: ReturnType<typeof desiredClusterRoleBindings>) =>
  r.bindings.map((b) => `${b.cluster}/${b.body.metadata.name}`);

describe('isManagedCluster', () => {
  it.each([
    [{ name: 'c', managedClusterRoles: true, automationToken: { path: 'p' } }, true],
    [{ name: 'c', managedClusterRoles: true, automationToken: null }, false],
    [{ name: 'c', managedClusterRoles: false, automationToken: { path: 'p' } }, false],
    [{ name: 'c', managedClusterRoles: null, automationToken: { path: 'p' } }, false],
  ])('%j → %s', (c, expected) => {
    expect(isManagedCluster(c)).toBe(expected);
  });
});

describe('desiredClusterRoleBindings', () => {
  it('binds users (by the cluster auth key) and bot service accounts to the cluster role', () => {
    const r = desiredClusterRoleBindings(
      input([role('readers', [{ cluster: cluster(), clusterRole: 'cluster-reader' }])]),
    );
    expect(names(r)).toEqual(['c1/cluster-reader-gh-alice', 'c1/cluster-reader-ci-robot']);
    expect(r.bindings[0]!.body).toEqual({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'cluster-reader-gh-alice' },
      roleRef: { kind: 'ClusterRole', name: 'cluster-reader' },
      subjects: [{ kind: 'User', name: 'gh-alice' }],
    });
    expect(r.bindings[1]!.body.subjects).toEqual([
      { kind: 'ServiceAccount', name: 'robot', namespace: 'ci' },
    ]);
    expect(r.invalid).toEqual([]);
  });

  it.each([
    [[{ service: 'oidc' }], ['c1/view-alice']],
    [[{ service: 'rhidp' }], ['c1/view-alice']],
    [[{ service: 'github-org-team' }], ['c1/view-gh-alice']],
    [
      [{ service: 'oidc' }, { service: 'github-org' }],
      ['c1/view-alice', 'c1/view-gh-alice'],
    ],
  ])('uses the user keys of the cluster auth %j', (auth, expected) => {
    const r = desiredClusterRoleBindings(
      input([role('r', [{ cluster: cluster('c1', auth), clusterRole: 'view' }], { bots: [] })]),
    );
    expect(names(r)).toEqual(expected);
  });

  it.each([
    [
      'an expired role (it expires on its date)',
      role('r', [{ cluster: cluster(), clusterRole: 'view' }], { expirationDate: '2026-11-21' }),
    ],
    [
      'a cluster without a working client',
      role('r', [{ cluster: cluster('c9'), clusterRole: 'view' }]),
    ],
    ['access without a clusterRole', role('r', [{ cluster: cluster(), clusterRole: null }])],
    [
      'namespace access',
      role('r', [{ cluster: null, clusterRole: null, namespace: { name: 'ns' }, role: 'edit' }]),
    ],
    ['group access', role('r', [{ cluster: cluster(), clusterRole: null, group: 'admins' }])],
    [
      'a role without users and bots',
      role('r', [{ cluster: cluster(), clusterRole: 'view' }], { users: null, bots: null }),
    ],
  ])('grants nothing for %s', (_title, r) => {
    expect(desiredClusterRoleBindings(input([r]))).toEqual({ bindings: [], invalid: [] });
  });

  it('keeps a role that expires tomorrow', () => {
    const r = desiredClusterRoleBindings(
      input([
        role('r', [{ cluster: cluster(), clusterRole: 'view' }], {
          expirationDate: '2026-11-22',
          bots: [],
        }),
      ]),
    );
    expect(names(r)).toEqual(['c1/view-gh-alice']);
  });

  it('keeps the first definition of a binding and binds per cluster', () => {
    const r = desiredClusterRoleBindings(
      input([
        role('first', [{ cluster: cluster(), clusterRole: 'view' }], { bots: [] }),
        role(
          'second',
          [
            { cluster: cluster(), clusterRole: 'view' },
            { cluster: cluster('c2'), clusterRole: 'view' },
          ],
          { bots: [] },
        ),
      ]),
    );
    expect(r.bindings.map((b) => [b.cluster, b.body.metadata.name, b.role])).toEqual([
      ['c1', 'view-gh-alice', 'first'],
      ['c2', 'view-gh-alice', 'second'],
    ]);
  });

  it('skips users without a username for the cluster auth key', () => {
    const r = desiredClusterRoleBindings(
      input([
        role('r', [{ cluster: cluster('c1', [{ service: 'oidc' }]), clusterRole: 'view' }], {
          users: [{ github_username: 'gh-bob', org_username: '' }],
          bots: [],
        }),
      ]),
    );
    expect(r.bindings).toEqual([]);
  });

  it.each([
    ['a/b', "may not contain '/'"],
    ['100%', "may not contain '%'"],
  ])('reports a binding name the API refuses (clusterRole %s)', (clusterRole, why) => {
    const r = desiredClusterRoleBindings(
      input([role('r', [{ cluster: cluster(), clusterRole }], { bots: [] })]),
    );
    expect(r.bindings).toEqual([]);
    expect(r.invalid).toEqual([
      {
        cluster: 'c1',
        name: `${clusterRole}-gh-alice`,
        role: 'r',
        message: `[c1] role r: ClusterRoleBinding name '${clusterRole}-gh-alice' ${why}`,
      },
    ]);
  });

  it('fails on an unknown auth service and a malformed expiration date', () => {
    expect(() =>
      desiredClusterRoleBindings(
        input([
          role('r', [{ cluster: cluster('c1', [{ service: 'ldap' }]), clusterRole: 'view' }]),
        ]),
      ),
    ).toThrow('[c1] auth service not implemented: ldap');
    expect(() =>
      desiredClusterRoleBindings(input([role('r', [], { expirationDate: '2026-13-01' })])),
    ).toThrow("expirationDate '2026-13-01'");
  });
});
