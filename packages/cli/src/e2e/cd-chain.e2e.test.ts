import {
  APP_INTERFACE_PROJECT,
  mergeAppInterfaceChange,
  mergeAppInterfaceMergeRequest,
  seedAppInterfaceRepo,
} from '@qontract/testing/app-interface-repo';
import { TektonPlayer } from '@qontract/testing/tekton-player';
import { describe, expect, it } from 'vitest';
import { type CliRun, messages, planLines } from './harness.ts';
import {
  PIPELINES,
  pipelineRuns,
  type SaasEnvironment,
  stateFiles,
  useSaasEnvironment,
} from './saas-environment.ts';

/**
 * The CD family end to end, with no Python anywhere: a merge to app-interface →
 * openshift-saas-deploy-trigger-configs creates a PipelineRun → the test plays
 * Tekton (it runs the command the PipelineRun's Pipeline and Task name, with
 * the real CLI) → stage deploys and publishes → saas-auto-promotions-manager
 * opens the merge request that moves production → merged → the configs
 * trigger deploys production through the promotion gate. Each step is
 * dry-run first, which must write nothing at any fake nor in the state store.
 */

const start = useSaasEnvironment();

const SAAS_FILE = '/services/example-app/cicd/saas-example-app.yml';
const APP = ['--saas-file-name', 'saas-example-app'];
const CONFIGS = 'openshift-saas-deploy-trigger-configs';
const SAPM = 'saas-auto-promotions-manager';

/** The action lines of a run (`['create', ...]`), without other bracketed messages. */
const actions = (run: CliRun) => planLines(run).filter((l) => l.startsWith("['"));

/** Runs INTEGRATION as a dry-run (asserting it wrote nothing anywhere), then wet. */
async function dryThenWet(
  e: SaasEnvironment,
  integration: string,
  args: readonly string[] = [],
): Promise<{ dry: CliRun; wet: CliRun }> {
  const writes = e.writes();
  const state = await stateFiles(e);
  const dry = await e.runIntegration(integration, args, { dryRun: true });
  expect(dry.code, dry.stderr).toBe(0);
  expect(e.writes(), `${integration} --dry-run wrote to a fake`).toBe(writes);
  expect(await stateFiles(e), `${integration} --dry-run wrote state`).toEqual(state);
  const wet = await e.runIntegration(integration, args);
  return { dry, wet };
}

/**
 * Tekton, played: each PipelineRun not run yet has its Pipeline's commands run
 * with the real CLI (the `qontract-reconcile` step of each task), as the
 * controller would in the provider namespace, one after the other in the order
 * they were created.
 */
async function playTekton(
  e: SaasEnvironment,
  tekton: TektonPlayer,
): Promise<Array<{ env: string; argv: readonly string[]; run: CliRun }>> {
  const out: Array<{ env: string; argv: readonly string[]; run: CliRun }> = [];
  for (const { pipelineRun, commands } of tekton.next()) {
    for (const { argv } of commands) {
      const [integration = '', ...args] = argv;
      const run = await e.runIntegration(integration, args);
      out.push({ env: pipelineRun.metadata.labels?.['qontract.env_name'] ?? '', argv, run });
    }
  }
  return out;
}

const imageIn = (e: SaasEnvironment, cluster: string, namespace: string) =>
  (
    e.env.server
      .list(cluster, 'apps/v1', 'Deployment', namespace)
      .find((o) => (o as { metadata: { name: string } }).metadata.name === 'example-app') as
      | { spec: { replicas: number; template: { spec: { containers: Array<{ image: string }> } } } }
      | undefined
  )?.spec;

/** Tekton resources created, both targets deployed once by the configs trigger: the steady start. */
async function deployedExample(e: SaasEnvironment, tekton: TektonPlayer): Promise<void> {
  await seedAppInterfaceRepo(e.gitlab, e.env.appInterfaceDir, [SAAS_FILE]);
  const resources = await dryThenWet(e, 'openshift-tekton-resources', APP);
  expect(resources.wet.code, resources.wet.stderr).toBe(0);
  const first = await dryThenWet(e, CONFIGS, ['--include-trigger-trace']);
  expect(first.wet.code, first.wet.stderr).toBe(0);
  expect(pipelineRuns(e)).toHaveLength(2);
  const deploys = await playTekton(e, tekton);
  expect(deploys.map((d) => [d.env, d.argv.join(' '), d.run.code])).toEqual([
    [
      'example-stage',
      'openshift-saas-deploy --saas-file-name saas-example-app --env-name example-stage',
      0,
    ],
    [
      'example-production',
      'openshift-saas-deploy --saas-file-name saas-example-app --env-name example-production',
      0,
    ],
  ]);
  // Stage and production run the same commit: nothing to promote.
  const idle = await dryThenWet(e, SAPM);
  expect(idle.wet.code, idle.wet.stderr).toBe(0);
  expect(e.gitlab.mergeRequests(APP_INTERFACE_PROJECT)).toEqual([]);
}

describe('the CD family end to end: merge → trigger → Tekton → deploy → promotion MR → production', () => {
  it('deploys a merged change to stage, promotes it by merge request and deploys production through the gate', async () => {
    const e = await start();
    const tekton = new TektonPlayer(e.env.server, PIPELINES);
    await deployedExample(e, tekton);

    // A merge: new code on main (its image built) and a parameter of stage changed.
    const next = e.github.pushCommit('example/example-app', 'main', { 'README.md': 'v1\n' });
    e.registry.pushImage('example/example-app', next.slice(0, 7));
    await mergeAppInterfaceChange(e.gitlab, e.env.appInterfaceDir, SAAS_FILE, (t) =>
      t.replace('REPLICAS: 1', 'REPLICAS: 2'),
    );

    const trigger = await dryThenWet(e, CONFIGS, ['--include-trigger-trace']);
    expect(actions(trigger.dry)).toEqual([
      "['create', 'appint-ex-01', 'app-sre-pipelines', 'PipelineRun', 'saas-example-app-example-stage']",
    ]);
    expect(trigger.wet.code, trigger.wet.stderr).toBe(0);
    const stageDeploy = await playTekton(e, tekton);
    expect(stageDeploy.map((d) => [d.env, d.run.code])).toEqual([['example-stage', 0]]);
    expect(imageIn(e, 'appint-ex-01', 'example-app-stage')).toMatchObject({ replicas: 2 });
    expect(
      imageIn(e, 'appint-ex-01', 'example-app-stage')?.template.spec.containers[0]?.image,
    ).toBe(`${e.registry.host}/example/example-app:${next.slice(0, 7)}`);

    // Production subscribes to stage's channel: the promotion manager opens the MR moving its ref.
    const promote = await dryThenWet(e, SAPM);
    expect(messages(promote.dry)).toContain(
      'Open MR for update in channel(s) example-app-stage-deployed',
    );
    expect(promote.wet.code, promote.wet.stderr).toBe(0);
    const [mr] = e.gitlab.mergeRequests(APP_INTERFACE_PROJECT).filter((m) => m.state === 'opened');
    expect(mr?.title).toMatch(/^\[SAPM\] auto-promotion ID \d+ - batch size: 1$/);
    // Not merged yet: production is not triggered.
    const waiting = await e.runIntegration(CONFIGS, [], { dryRun: true });
    expect(actions(waiting)).toEqual([]);

    // Merged: the configs trigger sees production's new ref and production deploys it.
    await mergeAppInterfaceMergeRequest(e.gitlab, e.env.appInterfaceDir, mr?.iid ?? 0);
    const production = await dryThenWet(e, CONFIGS, ['--include-trigger-trace']);
    expect(actions(production.dry)).toEqual([
      "['create', 'appint-ex-01', 'app-sre-pipelines', 'PipelineRun', 'saas-example-app-example-production']",
    ]);
    expect(production.wet.code, production.wet.stderr).toBe(0);
    const productionDeploy = await playTekton(e, tekton);
    expect(productionDeploy.map((d) => [d.env, d.run.code])).toEqual([['example-production', 0]]);
    expect(
      imageIn(e, 'appint-ex-02', 'example-app-production')?.template.spec.containers[0]?.image,
    ).toBe(`${e.registry.host}/example/example-app:${next.slice(0, 7)}`);

    // Everything is where it should be: no trigger, no MR, no write.
    const writes = e.writes();
    for (const [integration, args] of [
      [CONFIGS, []],
      [SAPM, []],
      ['openshift-tekton-resources', APP],
    ] as const) {
      const idle = await e.runIntegration(integration, args);
      expect(idle.code, idle.stderr).toBe(0);
      expect(actions(idle)).toEqual([]);
    }
    expect(e.writes()).toBe(writes);
    expect(
      e.gitlab.mergeRequests(APP_INTERFACE_PROJECT).filter((m) => m.state === 'opened'),
    ).toEqual([]);
  });

  it('a failed stage deploy blocks the chain: nothing is promoted, production keeps running its commit', async () => {
    const e = await start();
    const tekton = new TektonPlayer(e.env.server, PIPELINES);
    await deployedExample(e, tekton);
    const productionBefore = imageIn(e, 'appint-ex-02', 'example-app-production');

    // A merge whose code has no image: stage's deploy fails.
    const broken = e.github.pushCommit('example/example-app', 'main', { 'README.md': 'broken\n' });
    await mergeAppInterfaceChange(e.gitlab, e.env.appInterfaceDir, SAAS_FILE, (t) =>
      t.replace('REPLICAS: 1', 'REPLICAS: 2'),
    );
    const trigger = await dryThenWet(e, CONFIGS);
    expect(trigger.wet.code, trigger.wet.stderr).toBe(0);
    const stageDeploy = await playTekton(e, tekton);
    expect(stageDeploy.map((d) => [d.env, d.run.code])).toEqual([['example-stage', 1]]);

    const promote = await dryThenWet(e, SAPM);
    expect(promote.wet.code, promote.wet.stderr).toBe(0);
    expect(messages(promote.wet)).toContain(
      `[example-app-stage-deployed] Commit sha ${broken} not found in deployments`,
    );
    expect(e.gitlab.mergeRequests(APP_INTERFACE_PROJECT)).toEqual([]);
    const again = await e.runIntegration(CONFIGS, [], { dryRun: true });
    expect(actions(again)).toEqual([]);
    expect(imageIn(e, 'appint-ex-02', 'example-app-production')).toEqual(productionBefore);
  });
});
