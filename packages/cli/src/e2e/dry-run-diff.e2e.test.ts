import { Buffer } from 'node:buffer';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { editFile, messages, runQontractReconcile, useExampleEnvironment } from './harness.ts';

const start = useExampleEnvironment();

const STAGE = 'data/services/example-app/namespaces/example-app-stage.yml';
const DESIRED_SECRET = 'desired-s3cret-value';
const HAND_SECRET = 'hand-edited-s3cret';
const KEPT_SECRET = 'kept-t0ken-value';
const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');

describe('dry-run --diff', () => {
  it('prints a readable diff per changed object, masks Secret values, writes nothing', async () => {
    const env = await start({ namespaces: true });
    const { server, configPath, appInterfaceDir } = env;
    await writeFile(
      join(appInterfaceDir, 'resources/example-app/db-secret.yml'),
      `apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ntype: Opaque\nstringData:\n  password: ${DESIRED_SECRET}\n  token: ${KEPT_SECRET}\n`,
    );
    await editFile(join(appInterfaceDir, STAGE), (t) =>
      t.replace(
        'openshiftResources:\n',
        'openshiftResources:\n  - provider: resource\n    path: /example-app/db-secret.yml\n',
      ),
    );
    expect((await runQontractReconcile(['--config', configPath, 'openshift-resources'])).code).toBe(
      0,
    );

    // Edited by hand on the cluster: a ConfigMap value and a Secret value.
    const settings = server.get(
      'appint-ex-01',
      'v1',
      'ConfigMap',
      'example-app-stage',
      'example-app-settings',
    )!;
    const secret = server.get('appint-ex-01', 'v1', 'Secret', 'example-app-stage', 'db')!;
    server.seed(
      'appint-ex-01',
      [
        { ...settings, data: { ...(settings.data as object), GREETING: 'edited by hand' } },
        { ...secret, data: { ...(secret.data as object), password: b64(HAND_SECRET) } },
      ],
      { manager: 'kubectl-edit' },
    );

    const dir = await mkdtemp(join(tmpdir(), 'plan-diff-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    const planFile = join(dir, 'plan.json');
    server.resetLog();
    const dry = await runQontractReconcile([
      '--config',
      configPath,
      '--dry-run',
      '--diff',
      '--plan-out',
      planFile,
      'openshift-resources',
    ]);
    expect(dry.code).toBe(0);
    expect(server.mutatingRequests()).toEqual([]);

    const logged = messages(dry);
    const cmLine =
      "['apply', 'privileged=False', 'appint-ex-01', 'example-app-stage', 'ConfigMap', 'example-app-settings']";
    const secretLine =
      "['apply', 'privileged=False', 'appint-ex-01', 'example-app-stage', 'Secret', 'db']";
    // Each diff follows its action line.
    const cmDiff = logged[logged.indexOf(cmLine) + 1]!;
    const secretDiff = logged[logged.indexOf(secretLine) + 1]!;
    expect(cmDiff.split('\n').slice(0, 2)).toEqual([
      '--- live/appint-ex-01/example-app-stage/ConfigMap/example-app-settings',
      '+++ desired/appint-ex-01/example-app-stage/ConfigMap/example-app-settings',
    ]);
    // Exactly the edited value changes (and the qontract.update time of the re-apply).
    const changed = (d: string) =>
      d.split('\n').filter((l) => /^[-+][^-+]/.test(l) && !l.includes('qontract.update'));
    expect(changed(cmDiff)).toEqual([
      '-  GREETING: edited by hand',
      '+  GREETING: hello from stage',
    ]);
    expect(cmDiff).not.toContain('managedFields');
    expect(cmDiff).not.toContain('resourceVersion');

    expect(secretDiff.split('\n').slice(0, 2)).toEqual([
      '--- live/appint-ex-01/example-app-stage/Secret/db',
      '+++ desired/appint-ex-01/example-app-stage/Secret/db',
    ]);
    expect(changed(secretDiff)).toEqual([
      '-  password: "*** (old value)"',
      '+  password: "*** (changed)"',
    ]);
    expect(secretDiff).toContain('   token: "*** (unchanged)"');
    // The body's hash is masked too (shown when the qontract.update time differs).
    expect(secretDiff).not.toMatch(/sha256sum: [0-9a-f]{64}/);

    // The plan file carries the same diffs.
    const plan = JSON.parse(await readFile(planFile, 'utf8')) as {
      actions: Array<{ kind: string; name: string; unifiedDiff?: string }>;
    };
    const inPlan = (kind: string, name: string) =>
      plan.actions.find((a) => a.kind === kind && a.name === name)?.unifiedDiff;
    expect(inPlan('ConfigMap', 'example-app-settings')).toBe(cmDiff);
    expect(inPlan('Secret', 'db')).toBe(secretDiff);

    // No secret value, plain or base64, reaches the logs or the plan file.
    const planText = await readFile(planFile, 'utf8');
    for (const value of [DESIRED_SECRET, HAND_SECRET, KEPT_SECRET]) {
      for (const text of [dry.stderr, dry.stdout, planText]) {
        expect(text).not.toContain(value);
        expect(text).not.toContain(b64(value));
        expect(text).not.toContain(b64(value).replace(/=+$/, ''));
      }
    }
  });

  it('without --diff the dry-run prints only the action lines; SHOW_DIFF=true turns it on', async () => {
    const { configPath } = await start({ namespaces: true });
    const argv = ['--config', configPath, '--dry-run', 'openshift-resources'];
    const plain = await runQontractReconcile(argv);
    expect(plain.code).toBe(0);
    expect(plain.stderr).not.toContain('+++ desired/');
    const withEnv = await runQontractReconcile(argv, { SHOW_DIFF: 'true' });
    expect(withEnv.code).toBe(0);
    // A creation: the whole desired object is added.
    expect(messages(withEnv)).toContainEqual(
      expect.stringMatching(
        /^--- \/dev\/null\n\+\+\+ desired\/appint-ex-01\/example-app-stage\/ConfigMap\/example-app-settings\n@@ -0,0 \+1,\d+ @@\n\+apiVersion: v1\n/,
      ),
    );
  });
});
