import { describe, expect, it } from 'vitest';
import { type DesiredInput, desiredGithubMembers } from './desired.ts';

type Role = DesiredInput['roles'][number];
type Cluster = DesiredInput['clusters'][number];

const today = new Date('2026-11-21T08:00:00Z');
const teamPerm = (org: string, team: string) => ({ service: 'github-org-team', org, team });
const role = (name: string, extra: Partial<Role> = {}): Role => ({
  name,
  expirationDate: null,
  users: [],
  bots: [],
  permissions: [],
  access: [],
  ...extra,
});
const users = (...names: string[]) => names.map((github_username) => ({ github_username }));
const ns = (name: string, cluster: string, extra: Record<string, unknown> = {}) => ({
  name,
  delete: null,
  managedRoles: true,
  cluster: { name: cluster },
  ...extra,
});
const cluster = (name: string, auth: Cluster['auth']): Cluster => ({ name, auth });
const dump = (input: Partial<DesiredInput>) =>
  desiredGithubMembers({ roles: [], clusters: [], today, ...input }).members.dump();

describe('desiredGithubMembers', () => {
  it('puts the users and bots of a team permission into the team and its org, lower-cased', () => {
    expect(
      dump({
        roles: [
          role('devs', {
            users: users('Alice', 'bob'),
            bots: [{ github_username: 'CI-Bot' }],
            permissions: [teamPerm('acme', 'Developers'), {}],
          }),
        ],
      }),
    ).toEqual([
      {
        params: { service: 'github-org-team', org: 'acme', team: 'Developers' },
        items: ['alice', 'bob', 'ci-bot'],
      },
      { params: { service: 'github-org', org: 'acme' }, items: ['alice', 'bob', 'ci-bot'] },
    ]);
  });

  it('lists a member once, in first-seen order, when several roles or case variants grant it', () => {
    expect(
      dump({
        roles: [
          role('a', { users: users('bob', 'Alice'), permissions: [teamPerm('acme', 't1')] }),
          role('b', {
            users: users('alice', 'carol'),
            permissions: [teamPerm('acme', 't1'), teamPerm('acme', 't2')],
          }),
        ],
      }),
    ).toEqual([
      {
        params: { service: 'github-org-team', org: 'acme', team: 't1' },
        items: ['bob', 'alice', 'carol'],
      },
      { params: { service: 'github-org', org: 'acme' }, items: ['bob', 'alice', 'carol'] },
      {
        params: { service: 'github-org-team', org: 'acme', team: 't2' },
        items: ['alice', 'carol'],
      },
    ]);
  });

  it('keeps team names as they are written (only usernames are case-folded)', () => {
    const items = dump({
      roles: [
        role('a', {
          users: users('x'),
          permissions: [teamPerm('acme', 'SRE'), teamPerm('acme', 'sre')],
        }),
      ],
    });
    expect(items.map((i) => ('team' in i.params ? i.params.team : i.params.org))).toEqual([
      'SRE',
      'acme',
      'sre',
    ]);
  });

  it.each([
    ['expired yesterday', '2026-11-20'],
    ['expiring today', '2026-11-21'],
  ])('ignores a role %s', (_title, expirationDate) => {
    expect(
      dump({
        roles: [
          role('old', { expirationDate, users: users('x'), permissions: [teamPerm('acme', 't')] }),
        ],
      }),
    ).toEqual([]);
  });

  it('keeps a role expiring tomorrow and rejects a malformed expiration date', () => {
    expect(
      dump({
        roles: [
          role('r', {
            expirationDate: '2026-11-22',
            users: users('x'),
            permissions: [teamPerm('o', 't')],
          }),
        ],
      }),
    ).toHaveLength(2);
    expect(() => dump({ roles: [role('r', { expirationDate: '22.11.2026' })] })).toThrow(
      "role r: expirationDate '22.11.2026' is not a YYYY-MM-DD date",
    );
  });

  it('skips a bot without a github_username (upstream crashes on it)', () => {
    expect(
      dump({
        roles: [
          role('r', {
            users: users('alice'),
            bots: [{ github_username: null }, { github_username: 'ci' }],
            permissions: [teamPerm('acme', 't')],
          }),
        ],
      })[0],
    ).toEqual({
      params: { service: 'github-org-team', org: 'acme', team: 't' },
      items: ['alice', 'ci'],
    });
  });

  it('grants nothing for a role without github-org-team permissions', () => {
    expect(dump({ roles: [role('r', { users: users('alice'), permissions: [{}] })] })).toEqual([]);
  });

  describe('cluster auth', () => {
    const roles = [
      role('ns-admins', {
        users: users('Alice'),
        bots: [{ github_username: 'ci' }],
        access: [
          {
            namespace: ns('a', 'c1'),
            role: 'admin',
            clusterRole: null,
            cluster: null,
            group: null,
          },
          {
            namespace: ns('b', 'c2', { managedRoles: false }),
            role: 'admin',
            clusterRole: null,
            cluster: null,
            group: null,
          },
        ],
      }),
      role('viewers', {
        users: users('bob'),
        access: [
          {
            namespace: null,
            role: null,
            clusterRole: null,
            cluster: { name: 'c2' },
            group: 'viewers',
          },
        ],
      }),
      role('deleted-ns', {
        users: users('dave'),
        access: [
          {
            namespace: ns('d', 'c1', { delete: true }),
            role: null,
            clusterRole: 'view',
            cluster: null,
            group: null,
          },
        ],
      }),
      role('expired', {
        expirationDate: '2020-01-01',
        users: users('eve'),
        access: [
          { namespace: null, role: null, clusterRole: null, cluster: { name: 'c1' }, group: 'g' },
        ],
      }),
    ];

    it('puts the users of managed RoleBindings and cluster groups into the org (and team) of the auth', () => {
      expect(
        dump({
          roles,
          clusters: [
            cluster('c1', [{ service: 'github-org', org: 'acme' }]),
            cluster('c2', [
              { service: 'github-org-team', org: 'acme', team: 'c2-users' },
              { service: 'oidc' },
            ]),
            cluster('c3', [{ service: 'oidc' }]),
          ],
        }),
      ).toEqual([
        { params: { service: 'github-org', org: 'acme' }, items: ['alice', 'bob'] },
        { params: { service: 'github-org-team', org: 'acme', team: 'c2-users' }, items: ['bob'] },
      ]);
    });

    it('records what grants each login: its roles, then the clusters of its access', () => {
      const { grants } = desiredGithubMembers({
        roles: [
          ...roles,
          role('devs', { users: users('Alice'), permissions: [teamPerm('acme', 'devs')] }),
        ],
        clusters: [
          cluster('c1', [{ service: 'github-org', org: 'acme' }]),
          cluster('c2', [{ service: 'github-org', org: 'acme' }]),
        ],
        today,
      });
      expect(Object.fromEntries([...grants].map(([login, by]) => [login, [...by]]))).toEqual({
        alice: ['role devs', 'cluster c1'],
        bob: ['cluster c2'],
      });
    });

    it('adds a cluster auth org nobody is granted (empty item: the org must be managed)', () => {
      expect(
        dump({ clusters: [cluster('c1', [{ service: 'github-org', org: 'other' }])] }),
      ).toEqual([{ params: { service: 'github-org', org: 'other' }, items: [] }]);
    });
  });
});
