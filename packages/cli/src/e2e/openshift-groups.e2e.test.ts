import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { ExampleEnvironment } from '@qontract/testing';
import { describe, expect, it } from 'vitest';
import {
  editFile,
  messages,
  planLines,
  runQontractReconcile,
  useExampleEnvironment,
} from './harness.ts';

const start = useExampleEnvironment();

const GROUP_API = 'user.openshift.io/v1';

function members(e: ExampleEnvironment, cluster: string, group: string): string[] | undefined {
  const obj = e.server.get(cluster, GROUP_API, 'Group', '', group) as
    | { users?: string[] | null }
    | undefined;
  return obj ? [...(obj.users ?? [])].sort() : undefined;
}

async function addFile(e: ExampleEnvironment, path: string, lines: string[]) {
  const file = join(e.appInterfaceDir, 'data', path);
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, `${lines.join('\n')}\n`);
}

const group = (name: string, users: string[]) => ({
  apiVersion: GROUP_API,
  kind: 'Group',
  metadata: { name },
  users,
});

describe('openshift-groups end to end', () => {
  it('plans without writing, converges, then has nothing to do', async () => {
    const env = await start();
    const { server, configPath } = env;
    const planOut = join(env.dir, 'plan.json');
    const dry = await runQontractReconcile([
      '--config',
      configPath,
      '--dry-run',
      '--plan-out',
      planOut,
      'openshift-groups',
    ]);
    expect(dry.code).toBe(0);
    const plan = JSON.parse(await readFile(planOut, 'utf8')) as {
      actions: Array<Record<string, unknown>>;
    };
    expect(plan.actions).toHaveLength(8);
    expect(plan.actions[0]).toEqual({
      action: 'create_group',
      cluster: 'appint-ex-01',
      group: 'dedicated-admins',
      user: null,
      outcome: 'dry-run',
    });
    const lines = planLines(dry);
    expect([...lines].sort()).toEqual(
      [
        "['create_group', 'appint-ex-01', 'dedicated-admins', None]",
        "['create_group', 'appint-ex-01', 'example-app-viewers', None]",
        "['create_group', 'appint-ex-02', 'dedicated-admins', None]",
        "['add_user_to_group', 'appint-ex-01', 'dedicated-admins', 'alice-gh']",
        "['add_user_to_group', 'appint-ex-02', 'dedicated-admins', 'alice-gh']",
        "['add_user_to_group', 'appint-ex-01', 'example-app-viewers', 'alice-gh']",
        "['add_user_to_group', 'appint-ex-01', 'example-app-viewers', 'bob-gh']",
        "['add_user_to_group', 'appint-ex-01', 'example-app-viewers', 'dave-gh']",
      ].sort(),
    );
    // Each group is created before anyone is added to it.
    for (const line of lines.filter((l) => l.startsWith("['add_user_to_group'"))) {
      const group = line.split(', ').slice(1, 3).join(', ');
      expect(lines.indexOf(`['create_group', ${group}, None]`)).toBeLessThan(lines.indexOf(line));
    }
    expect(server.mutatingRequests()).toEqual([]);

    const wet = await runQontractReconcile(['--config', configPath, 'openshift-groups']);
    expect(wet.code).toBe(0);
    expect(members(env, 'appint-ex-01', 'dedicated-admins')).toEqual(['alice-gh']);
    expect(members(env, 'appint-ex-01', 'example-app-viewers')).toEqual([
      'alice-gh',
      'bob-gh',
      'dave-gh',
    ]);
    expect(members(env, 'appint-ex-02', 'dedicated-admins')).toEqual(['alice-gh']);
    // One write per group, however many members it gets.
    expect(
      server
        .mutatingRequests()
        .map((r) => `${r.cluster} ${r.verb} ${r.resource}`)
        .sort(),
    ).toEqual([
      'appint-ex-01 create groups',
      'appint-ex-01 create groups',
      'appint-ex-02 create groups',
    ]);

    server.resetLog();
    const again = await runQontractReconcile(['--config', configPath, 'openshift-groups']);
    expect(again.code).toBe(0);
    expect(server.mutatingRequests()).toEqual([]);
    expect(planLines(again)).toEqual([]);
    // A cluster without managedGroups is not even contacted.
    expect(server.requests({ cluster: 'appint-ex-k8s' })).toEqual([]);
  });

  it('removes members nobody grants (retrying a stale write), never deletes a group, leaves unmanaged groups alone', async () => {
    const env = await start();
    const { server, configPath } = env;
    server.seed('appint-ex-01', [
      group('example-app-viewers', ['alice-gh', 'mallory-gh', 'bob-gh', 'dave-gh']),
      group('dedicated-admins', ['alice-gh']),
      group('hand-made', ['someone']),
    ]);
    server.seed('appint-ex-02', [group('dedicated-admins', ['alice-gh'])]);
    // appint-ex-02 no longer grants dedicated-admins to anyone.
    await editFile(join(env.appInterfaceDir, 'data/access/roles/cluster-admins.yml'), (t) =>
      t.replace(
        '  - cluster:\n      $ref: /openshift/appint-ex-02/cluster.yml\n    group: dedicated-admins\n',
        '',
      ),
    );
    // Someone else changes the group between our read and our write, once.
    server.faults.set('appint-ex-01', { verb: 'update', status: 409, times: 1 });

    const run = await runQontractReconcile(['--config', configPath, 'openshift-groups']);
    expect(run.code).toBe(0);
    expect(planLines(run)).toEqual([
      "['del_user_from_group', 'appint-ex-01', 'example-app-viewers', 'mallory-gh']",
      "['del_user_from_group', 'appint-ex-02', 'dedicated-admins', 'alice-gh']",
      "['delete_group', 'appint-ex-02', 'dedicated-admins', None]",
    ]);
    expect(members(env, 'appint-ex-01', 'example-app-viewers')).toEqual([
      'alice-gh',
      'bob-gh',
      'dave-gh',
    ]);
    expect(members(env, 'appint-ex-02', 'dedicated-admins')).toEqual([]);
    expect(members(env, 'appint-ex-01', 'hand-made')).toEqual(['someone']);
    expect(server.mutatingRequests({ verb: 'delete' })).toEqual([]);
    expect(
      server.requests({ cluster: 'appint-ex-01', verb: 'update' }).map((r) => r.status),
    ).toEqual([409, 200]);
  });

  it('refuses a group that is not in managedGroups: exit 1, nothing printed or written', async () => {
    const env = await start();
    const { server, configPath } = env;
    server.seed('appint-ex-01', [
      group('example-app-viewers', ['alice-gh', 'mallory-gh', 'bob-gh', 'dave-gh']),
    ]);
    await editFile(join(env.appInterfaceDir, 'data/access/roles/example-app-developers.yml'), (t) =>
      t.replace(
        '    group: example-app-viewers\n',
        [
          '    group: example-app-viewers',
          '  - cluster:',
          '      $ref: /openshift/appint-ex-02/cluster.yml',
          '    group: example-app-admins',
          '  - cluster:',
          '      $ref: /openshift/appint-ex-k8s/cluster.yml',
          '    group: example-app-viewers',
          '',
        ].join('\n'),
      ),
    );
    server.resetLog();
    const run = await runQontractReconcile(['--config', configPath, 'openshift-groups']);
    expect(run.code).toBe(1);
    expect(messages(run, 50)).toEqual(
      expect.arrayContaining([
        'invalid cluster/group combination: appint-ex-02/example-app-admins (hint: should be added to managedGroups)',
        'invalid cluster/group combination: appint-ex-k8s/example-app-viewers (hint: should be added to managedGroups)',
      ]),
    );
    expect(planLines(run)).toEqual([]);
    expect(server.mutatingRequests()).toEqual([]);
    expect(members(env, 'appint-ex-01', 'example-app-viewers')).toContain('mallory-gh');
  });

  it("leaves an OCM cluster's dedicated-admins to OCM", async () => {
    const env = await start();
    const { server, configPath } = env;
    await addFile(env, 'dependencies/ocm/example-environment.yml', [
      '---',
      '$schema: /openshift/openshift-cluster-manager-environment-1.yml',
      'labels: {}',
      'name: example-ocm-environment',
      'description: an example OCM environment',
      'url: https://api.ocm.example.com',
      'accessTokenClientId: example',
      'accessTokenUrl: https://sso.example.com/token',
      'accessTokenClientSecret:',
      '  path: ocm/example',
      '  field: client_secret',
    ]);
    await addFile(env, 'dependencies/ocm/example.yml', [
      '---',
      '$schema: /openshift/openshift-cluster-manager-1.yml',
      'labels: {}',
      'name: example-ocm',
      'description: an example OCM organisation',
      'orgId: example-org',
      'environment:',
      '  $ref: /dependencies/ocm/example-environment.yml',
    ]);
    await editFile(join(env.appInterfaceDir, 'data/openshift/appint-ex-02/cluster.yml'), (t) =>
      t.replace('managedGroups:', 'ocm:\n  $ref: /dependencies/ocm/example.yml\n\nmanagedGroups:'),
    );
    server.seed('appint-ex-02', [group('dedicated-admins', ['ocm-admin'])]);
    const run = await runQontractReconcile(['--config', configPath, 'openshift-groups']);
    expect(run.code).toBe(0);
    expect(planLines(run).filter((l) => l.includes('appint-ex-02'))).toEqual([]);
    expect(members(env, 'appint-ex-02', 'dedicated-admins')).toEqual(['ocm-admin']);
    expect(members(env, 'appint-ex-01', 'dedicated-admins')).toEqual(['alice-gh']);
  });

  it('reports a cluster without the Group API and an unreachable one; adds, but removes nothing', async () => {
    const env = await start({ down: ['appint-ex-02'] });
    const { server, configPath } = env;
    server.seed('appint-ex-01', [group('example-app-viewers', ['mallory-gh'])]);
    await editFile(join(env.appInterfaceDir, 'data/openshift/appint-ex-k8s/cluster.yml'), (t) =>
      t.replace('auth: []', 'auth: []\n\nmanagedGroups:\n  - viewers'),
    );
    const run = await runQontractReconcile(['--config', configPath, 'openshift-groups']);
    expect(run.code).toBe(1);
    const errors = messages(run, 50);
    expect(errors).toContain(
      '[appint-ex-k8s] has managedGroups but serves no Group.user.openshift.io API (not an OpenShift cluster?)',
    );
    expect(errors.some((m) => m.startsWith('[appint-ex-02] is unreachable'))).toBe(true);
    // Additions go on; removals are held back once anything went wrong.
    expect(planLines(run)).toContain(
      "['del_user_from_group', 'appint-ex-01', 'example-app-viewers', 'mallory-gh']",
    );
    expect(errors).toContain(
      "'del_user_from_group' action is disabled due to previous errors (1 held back).",
    );
    expect(members(env, 'appint-ex-01', 'example-app-viewers')).toEqual([
      'alice-gh',
      'bob-gh',
      'dave-gh',
      'mallory-gh',
    ]);
  });
});
