import { join } from 'node:path';
import {
  APP_INTERFACE_PROJECT,
  mergeAppInterfaceMergeRequest,
  seedAppInterfaceRepo,
} from '@qontract/testing/app-interface-repo';
import type { FakePrometheus } from '@qontract/testing/fake-prometheus';
import { afterEach, describe, expect, it } from 'vitest';
import { createNamespaces, editFile, messages, runQontractReconcile } from './harness.ts';
import {
  type SaasEnvironment,
  SLO_QUERY,
  startSloPrometheus,
  useSaasEnvironment,
} from './saas-environment.ts';

const start = useSaasEnvironment();

const SAAS_FILE = '/services/example-app/cicd/saas-example-app.yml';
const APP = ['--saas-file-name', 'saas-example-app'];
const STAGE = ['--env-name', 'example-stage'];
const PRODUCTION = ['--env-name', 'example-production'];
// Computed from the channel name as the original does (sha256 mod 10^8).
const TITLE = '[SAPM] auto-promotion ID 12424523 - batch size: 1';

function sapm(e: SaasEnvironment, dryRun = false) {
  return runQontractReconcile(
    [
      '--config',
      e.env.configPath,
      ...(dryRun ? ['--dry-run'] : []),
      'saas-auto-promotions-manager',
    ],
    { GITHUB_API: e.github.url, QONTRACT_GITLAB_RETRY_UNIT_MS: '20' },
  );
}

const openMrs = (e: SaasEnvironment) =>
  e.gitlab.mergeRequests(APP_INTERFACE_PROJECT).filter((m) => m.state === 'opened');

describe('saas-auto-promotions-manager end to end', () => {
  it('opens the MR that moves production after stage published, closes it when stage moves on, and production deploys once it is merged', async () => {
    const e = await start();
    await seedAppInterfaceRepo(e.gitlab, e.env.appInterfaceDir, [SAAS_FILE]);

    // Stage has not deployed anything yet: nothing to promote.
    const idle = await sapm(e);
    expect(idle.code, idle.stderr).toBe(0);
    expect(messages(idle)).toContain(
      `[example-app-stage-deployed] Commit sha ${e.seed.appSha} not found in deployments`,
    );
    expect(e.gitlab.mutatingRequests()).toEqual([]);

    // Stage deploys production's commit: still nothing to promote.
    expect((await e.run([...APP, ...STAGE])).code).toBe(0);
    expect((await sapm(e)).code).toBe(0);
    expect(e.gitlab.mutatingRequests()).toEqual([]);

    // Stage moves to a new commit.
    const first = e.github.pushCommit('example/example-app', 'main', { 'README.md': 'v1\n' });
    e.registry.pushImage('example/example-app', first.slice(0, 7));
    expect((await e.run([...APP, ...STAGE])).code).toBe(0);

    // Dry-run: says what it would open, writes nothing at GitLab nor in the state.
    const gitlabWrites = e.gitlab.mutatingRequests().length;
    const dry = await sapm(e, true);
    expect(dry.code, dry.stderr).toBe(0);
    expect(messages(dry)).toContain('Open MR for update in channel(s) example-app-stage-deployed');
    expect(e.gitlab.mutatingRequests().length).toBe(gitlabWrites);
    expect(openMrs(e)).toEqual([]);

    const wet = await sapm(e);
    expect(wet.code, wet.stderr).toBe(0);
    const [mr] = openMrs(e);
    expect(mr).toMatchObject({
      title: TITLE,
      labels: ['SAPM', 'bot/approved: progressive-delivery'],
      targetBranch: 'master',
    });
    expect(mr?.sourceBranch).toMatch(/^SAPM-[0-9a-f]{6}$/);
    expect(mr?.description).toContain('channels: example-app-stage-deployed');
    expect(mr?.description).toContain('sapm_version: 2.3.0');
    const changed = e.gitlab.mergeRequestChanges(APP_INTERFACE_PROJECT, mr?.iid ?? 0);
    const content = changed[`data${SAAS_FILE}`] ?? '';
    // Production's ref moves to stage's commit; the rest of the file (comments included) stays.
    expect(content).toContain(`ref: ${first}`);
    expect(content).toContain('# The registry the demo simulates');
    expect(content).not.toContain(`ref: ${e.seed.appSha}`);

    // Nothing new on the next run.
    const before = e.gitlab.mutatingRequests().length;
    const again = await sapm(e);
    expect(again.code, again.stderr).toBe(0);
    expect(e.gitlab.mutatingRequests().length).toBe(before);
    expect(openMrs(e)).toHaveLength(1);

    // Stage moves on: the old MR is closed with the original's note, a new one opened.
    const next = e.github.pushCommit('example/example-app', 'main', { 'README.md': 'v2\n' });
    e.registry.pushImage('example/example-app', next.slice(0, 7));
    expect((await e.run([...APP, ...STAGE])).code).toBe(0);
    const moved = await sapm(e);
    expect(moved.code, moved.stderr).toBe(0);
    const all = e.gitlab.mergeRequests(APP_INTERFACE_PROJECT);
    expect(all[0]).toMatchObject({
      state: 'closed',
      notes: ['Closing this MR because it has out-dated content.'],
    });
    expect(e.gitlab.branches(APP_INTERFACE_PROJECT)).not.toContain(all[0]?.sourceBranch);
    const [newer] = openMrs(e);
    expect(newer?.title).toBe(TITLE);
    expect(
      e.gitlab.mergeRequestChanges(APP_INTERFACE_PROJECT, newer?.iid ?? 0)[`data${SAAS_FILE}`],
    ).toContain(`ref: ${next}`);

    // Merged: production deploys stage's commit through the promotion gate.
    await mergeAppInterfaceMergeRequest(e.gitlab, e.env.appInterfaceDir, newer?.iid ?? 0);
    const production = await e.run([...APP, ...PRODUCTION]);
    expect(production.code, production.stderr).toBe(0);
    const deployment = e.env.server
      .list('appint-ex-02', 'apps/v1', 'Deployment', 'example-app-production')
      .find((o) => (o as { metadata: { name: string } }).metadata.name === 'example-app') as
      | { spec: { template: { spec: { containers: Array<{ image: string }> } } } }
      | undefined;
    expect(deployment?.spec.template.spec.containers[0]?.image).toBe(
      `${e.registry.host}/example/example-app:${next.slice(0, 7)}`,
    );
    // Promoted: nothing left to do.
    const done = await sapm(e);
    expect(done.code, done.stderr).toBe(0);
    expect(openMrs(e)).toEqual([]);
  });

  it('opens no MR for a commit stage failed to deploy', async () => {
    const e = await start({ namespaces: false });
    await seedAppInterfaceRepo(e.gitlab, e.env.appInterfaceDir, [SAAS_FILE]);
    const stage = await e.run([...APP, ...STAGE], {
      env: { QONTRACT_SAAS_DEPLOY_NAMESPACE_WAIT_SECONDS: '1' },
    });
    expect(stage.code).toBe(1);
    // Stage really deploys production's commit, then fails on a new one.
    await createNamespaces(e.env);
    expect((await e.run([...APP, ...STAGE])).code).toBe(0);
    const next = e.github.pushCommit('example/example-app', 'main', { 'README.md': 'v2\n' });
    const failed = await e.run([...APP, ...STAGE]);
    expect(failed.code).toBe(1);
    const run = await sapm(e);
    expect(run.code, run.stderr).toBe(0);
    expect(messages(run)).toContain(
      `[example-app-stage-deployed] Commit sha ${next} not found in deployments`,
    );
    expect(e.gitlab.mergeRequests(APP_INTERFACE_PROJECT)).toEqual([]);
  });

  describe('the SLO gate', () => {
    let fakes: FakePrometheus[] = [];
    afterEach(async () => {
      await Promise.all(fakes.map((f) => f.close()));
      fakes = [];
    });
    it('opens no MR while an SLO of production is breached; a run that cannot read Prometheus fails', async () => {
      const e = await start();
      const { cluster: prometheus, external } = await startSloPrometheus(e);
      fakes = [prometheus, external];
      await editFile(join(e.env.appInterfaceDir, `data${SAAS_FILE}`), (t) =>
        t.replace(
          /(ref: [0-9a-f]{40}\n)/,
          '$1        slos:\n          - $ref: /services/example-app/slo-documents/example-app.yml\n',
        ),
      );
      await seedAppInterfaceRepo(e.gitlab, e.env.appInterfaceDir, [SAAS_FILE]);
      prometheus.setVector(SLO_QUERY, [{ value: 0.999 }]);
      // Stage's SLO (read through the external Prometheus) is breached: the document's every
      // namespace counts for SAPM, as the original's.
      external.setVector(SLO_QUERY, [{ value: 0.9 }]);

      // Stage deploys a new commit: production would be promoted.
      expect((await e.run([...APP, ...STAGE])).code).toBe(0);
      const next = e.github.pushCommit('example/example-app', 'main', { 'README.md': 'v1\n' });
      e.registry.pushImage('example/example-app', next.slice(0, 7));
      expect((await e.run([...APP, ...STAGE])).code).toBe(0);

      const held = await sapm(e);
      expect(held.code, held.stderr).toBe(0);
      expect(messages(held)).toEqual(
        expect.arrayContaining([
          'Subscriber at path /services/example-app/cicd/saas-example-app.yml promotion stopped because following breached SLOs',
          'SLO:availability of document example-app-slos is breached. Current value:0.900000 Expected:0.990000 ',
        ]),
      );
      expect(e.gitlab.mutatingRequests()).toEqual([]);
      expect(external.requestLog.map((r) => r.status)).toEqual([200]);

      // Prometheus down: as the original (its ConnectionError is raised), the run fails, no MR.
      await external.close();
      const down = await sapm(e);
      expect(down.code).toBe(1);
      expect(messages(down, 50)).toContain(
        'Connection error  getting current value for SLO: availability of document: example-app-slos for namespace: example-app-stage',
      );
      expect(e.gitlab.mutatingRequests()).toEqual([]);
    });
  });
});
