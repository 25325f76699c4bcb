import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { actionOfLine, runChild } from './child-run.ts';

describe('actionOfLine', () => {
  it("reads the original's action lines", () => {
    expect(
      actionOfLine(
        "['apply', 'privileged=False', 'appint-ex-01', 'example-app-stage', 'ConfigMap', 'example-app-settings']",
      ),
    ).toEqual({
      action: 'apply',
      cluster: 'appint-ex-01',
      namespace: 'example-app-stage',
      kind: 'ConfigMap',
      name: 'example-app-settings',
    });
    expect(actionOfLine("['delete', 'privileged=True', 'c1', None, 'ClusterRole', 'x']")).toEqual({
      action: 'delete',
      cluster: 'c1',
      kind: 'ClusterRole',
      name: 'x',
    });
    expect(actionOfLine("['create_namespace', 'c1', 'ns']")).toEqual({
      action: 'create_namespace',
      cluster: 'c1',
      namespace: 'ns',
    });
    expect(actionOfLine("['add_user_to_group', 'c1', 'dedicated-admins', 'alice']")).toEqual({
      action: 'add_user_to_group',
      cluster: 'c1',
      namespace: 'dedicated-admins',
      name: 'alice',
    });
    expect(actionOfLine("['o\\'brien', 'c1']")).toBeNull();
  });

  it('leaves other messages alone', () => {
    expect(actionOfLine('No changes in desired state. Exit PR check early.')).toBeNull();
    expect(actionOfLine("run openshift-resources for shards ['appint-ex-01']")).toBeNull();
    expect(actionOfLine("['not', 'closed'")).toBeNull();
  });
});

describe('runChild', () => {
  it('stops a run that outlives --timeout (SIGKILL when it ignores SIGTERM) and says so', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mr-check-child-'));
    try {
      const bin = join(dir, 'hang.mjs');
      await writeFile(bin, "process.on('SIGTERM', () => {});\nsetInterval(() => {}, 1000);\n");
      const r = await runChild(
        { cmd: 'openshift-resources' },
        {
          configPath: join(dir, 'config.toml'),
          baseSha: 'abc',
          planFile: join(dir, 'plan.json'),
          env: {},
          timeoutMs: 200,
          graceMs: 100,
          bin,
        },
      );
      expect(r.exitCode).not.toBe(0);
      expect(r.errors[0]).toBe(
        'timed out after 0.2 s: the run was stopped (qontract-mr-check --timeout)',
      );
      expect(r.actions).toBeNull();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
