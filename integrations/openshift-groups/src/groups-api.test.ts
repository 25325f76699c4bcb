import { type FakeKubeApiServer, startFakeKubeApiServer } from '@qontract/fake-kube-apiserver';
import { type ClusterHandle, KubeApiError, KubeClient } from '@qontract/openshift';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { applyGroupChange, readGroupUsers, readManagedGroups, servesGroups } from './groups-api.ts';
import type { GroupChange } from './plan.ts';

const GROUP_API = 'user.openshift.io/v1';
const FIELD_MANAGER = 'qontract-reconcile-openshift-groups';
let server: FakeKubeApiServer;
let openshift: ClusterHandle;
let kubernetes: ClusterHandle;

async function handleFor(name: string): Promise<ClusterHandle> {
  const client = new KubeClient(
    {
      name,
      server: server.cluster(name).url,
      token: server.cluster(name).token,
      insecureSkipTLSVerify: true,
    },
    { attempts: 1 },
  );
  const catalog = await client.discover();
  return { name, privileged: false, client, catalog, isOpenShift: name === 'ocp' };
}

beforeAll(async () => {
  server = await startFakeKubeApiServer({
    clusters: [
      { name: 'ocp', token: 't-ocp', openshift: true },
      { name: 'k8s', token: 't-k8s', openshift: false },
    ],
  });
  openshift = await handleFor('ocp');
  kubernetes = await handleFor('k8s');
});
afterAll(async () => server.close());
beforeEach(() => {
  server.faults.clear();
  server.resetLog();
});

const users = (group: string) =>
  (server.get('ocp', GROUP_API, 'Group', '', group) as { users?: string[] } | undefined)?.users;
const change = (group: string, c: Partial<GroupChange>): GroupChange => ({
  cluster: 'ocp',
  group,
  create: false,
  add: [],
  remove: [],
  ...c,
});

describe('groups API', () => {
  it('knows which clusters serve groups', () => {
    expect(servesGroups(openshift)).toBe(true);
    expect(servesGroups(kubernetes)).toBe(false);
  });

  it('reads members; a missing group is undefined, a group without users is empty', async () => {
    server.seed('ocp', [
      { apiVersion: GROUP_API, kind: 'Group', metadata: { name: 'read-a' }, users: ['x', 'y'] },
      { apiVersion: GROUP_API, kind: 'Group', metadata: { name: 'read-b' }, users: null },
    ]);
    expect(await readGroupUsers(openshift, 'read-a')).toEqual(['x', 'y']);
    expect(await readGroupUsers(openshift, 'read-b')).toEqual([]);
    expect(await readGroupUsers(openshift, 'read-missing')).toBeUndefined();
  });

  it.each([
    { title: 'one list for three or more groups', groups: ['m1', 'm2', 'm-missing'], listed: true },
    { title: 'a GET per group for fewer', groups: ['m1', 'm-missing'], listed: false },
  ])('reads managed groups with $title', async ({ groups, listed }) => {
    server.seed('ocp', [
      { apiVersion: GROUP_API, kind: 'Group', metadata: { name: 'm1' }, users: ['a'] },
      { apiVersion: GROUP_API, kind: 'Group', metadata: { name: 'm2' }, users: ['b'] },
    ]);
    server.resetLog();
    const read = await readManagedGroups(openshift, groups, (fn) => fn());
    expect(Object.fromEntries(read)).toEqual(
      Object.fromEntries(groups.map((g) => [g, { m1: ['a'], m2: ['b'] }[g as 'm1' | 'm2']])),
    );
    expect(server.requests({ cluster: 'ocp', verb: 'list' })).toHaveLength(listed ? 1 : 0);
    expect(server.requests({ cluster: 'ocp', verb: 'get' })).toHaveLength(
      listed ? 0 : groups.length,
    );
  });

  it('falls back to a GET per group when listing groups is forbidden', async () => {
    server.seed('ocp', [
      { apiVersion: GROUP_API, kind: 'Group', metadata: { name: 'm1' }, users: ['a'] },
    ]);
    server.resetLog();
    server.faults.set('ocp', { verb: 'list', status: 403 });
    const read = await readManagedGroups(openshift, ['m1', 'm2', 'm3'], (fn) => fn());
    expect(read.get('m1')).toEqual(['a']);
    expect(read.get('m3')).toBeUndefined();
    expect(server.requests({ cluster: 'ocp', verb: 'list' }).map((r) => r.status)).toEqual([403]);
    expect(server.requests({ cluster: 'ocp', verb: 'get' })).toHaveLength(3);
  });

  it('creates a missing group with its new members in one request', async () => {
    await applyGroupChange(
      openshift,
      change('new', { create: true, add: ['a', 'b', 'a'] }),
      FIELD_MANAGER,
    );
    expect(users('new')).toEqual(['a', 'b']);
    expect(server.mutatingRequests().map((r) => r.verb)).toEqual(['create']);
  });

  it('adds and removes members and keeps the others, in one update', async () => {
    server.seed('ocp', [
      { apiVersion: GROUP_API, kind: 'Group', metadata: { name: 'upd' }, users: ['keep', 'gone'] },
    ]);
    server.resetLog();
    await applyGroupChange(
      openshift,
      change('upd', { add: ['new'], remove: ['gone'] }),
      FIELD_MANAGER,
    );
    expect(users('upd')).toEqual(['keep', 'new']);
    expect(server.mutatingRequests().map((r) => r.verb)).toEqual(['update']);
  });

  it('writes nothing when the group already is as wanted, or is missing and only loses members', async () => {
    server.seed('ocp', [
      { apiVersion: GROUP_API, kind: 'Group', metadata: { name: 'same' }, users: ['a'] },
    ]);
    server.resetLog();
    await applyGroupChange(openshift, change('same', { create: true, add: ['a'] }), FIELD_MANAGER);
    await applyGroupChange(openshift, change('absent', { remove: ['a'] }), FIELD_MANAGER);
    expect(server.mutatingRequests()).toEqual([]);
    expect(users('absent')).toBeUndefined();
  });

  it('re-reads and retries when the write is refused as stale or the group appeared meanwhile', async () => {
    server.seed('ocp', [
      { apiVersion: GROUP_API, kind: 'Group', metadata: { name: 'busy' }, users: ['a'] },
    ]);
    server.faults.set('ocp', { verb: 'update', status: 409, times: 2 });
    await applyGroupChange(openshift, change('busy', { add: ['b'] }), FIELD_MANAGER);
    expect(users('busy')).toEqual(['a', 'b']);

    server.faults.set('ocp', { verb: 'create', status: 409, times: 1 });
    await applyGroupChange(openshift, change('racy', { create: true, add: ['c'] }), FIELD_MANAGER);
    // The injected AlreadyExists did not create it; the retry reads it missing and creates it.
    expect(users('racy')).toEqual(['c']);
  });

  it('gives up after five conflicts and passes other API errors on', async () => {
    server.seed('ocp', [
      { apiVersion: GROUP_API, kind: 'Group', metadata: { name: 'stuck' }, users: [] },
    ]);
    server.faults.set('ocp', { verb: 'update', status: 409 });
    await expect(
      applyGroupChange(openshift, change('stuck', { add: ['a'] }), FIELD_MANAGER),
    ).rejects.toBeInstanceOf(KubeApiError);
    expect(server.requests({ cluster: 'ocp', verb: 'update' })).toHaveLength(5);

    server.faults.clear();
    server.faults.set('ocp', { verb: 'update', status: 403 });
    await expect(
      applyGroupChange(openshift, change('stuck', { add: ['a'] }), FIELD_MANAGER),
    ).rejects.toMatchObject({ status: 403 });
    expect(users('stuck')).toEqual([]);
  });
});
