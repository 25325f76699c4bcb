import { join } from 'node:path';
import { type FakeJenkins, startFakeJenkins } from '@qontract/testing/fake-jenkins';
import type { FakePrometheus } from '@qontract/testing/fake-prometheus';
import { afterEach, describe, expect, it } from 'vitest';
import { editFile, messages, planLines } from './harness.ts';
import {
  PIPELINES,
  pipelineRuns,
  type SaasEnvironment,
  SLO_QUERY,
  startSloPrometheus,
  stateFiles,
  useSaasEnvironment,
} from './saas-environment.ts';

const start = useSaasEnvironment();

const CONFIGS = 'openshift-saas-deploy-trigger-configs';
const APP_FILE = 'data/services/example-app/cicd/saas-example-app.yml';
const STAGE_KEY = 'saas-example-app/example-app/appint-ex-01/example-app-stage/example-stage';
const PRODUCTION_KEY =
  'saas-example-app/example-app/appint-ex-02/example-app-production/example-production';

/**
 * The Pipeline openshift-tekton-resources creates for a saas file. Tests seed the app's (the
 * worker's stays missing) and, for the build-driven triggers, the edge saas file's.
 */
function seedPipeline(e: SaasEnvironment, saasFile: string): void {
  e.env.server.seed(PIPELINES.cluster, [
    {
      apiVersion: 'tekton.dev/v1',
      kind: 'Pipeline',
      metadata: {
        name: `o-openshift-saas-deploy-${saasFile}`,
        namespace: PIPELINES.namespace,
      },
      spec: { tasks: [] },
    },
  ]);
}
const seedAppPipeline = (e: SaasEnvironment) => seedPipeline(e, 'saas-example-app');
/** The edge saas file's targets follow builds (images, a Jenkins job), not refs. */
const seedEdgePipeline = (e: SaasEnvironment) => seedPipeline(e, 'saas-example-edge');

/** The state key prefix of an edge target (its resource template's). */
const edgeKey = (rt: string) =>
  `saas-example-edge/${rt}/appint-ex-k8s/example-app-edge/example-production`;
const EDGE_RUN =
  "['create', 'appint-ex-01', 'app-sre-pipelines', 'PipelineRun', 'saas-example-edge-example-production']";

describe('openshift-saas-deploy-trigger-configs end to end', () => {
  it('dry-run writes nothing; wet triggers each changed (saas file, env) once and stores its state', async () => {
    const e = await start();
    seedAppPipeline(e);
    const setup = e.writes();

    const dry = await e.runIntegration(CONFIGS, [], { dryRun: true });
    expect(dry.code, dry.stderr).toBe(0);
    expect(planLines(dry)).toEqual([
      "['create', 'appint-ex-01', 'app-sre-pipelines', 'PipelineRun', 'saas-example-app-example-stage']",
      "['create', 'appint-ex-01', 'app-sre-pipelines', 'PipelineRun', 'saas-example-app-example-production']",
    ]);
    // The worker's Pipeline was not created yet: a warning, no trigger, no state.
    expect(messages(dry, 40)).toContain(
      'Pipeline o-openshift-saas-deploy-saas-example-worker does not exist in appint-ex-01/app-sre-pipelines.',
    );
    expect(e.writes()).toBe(setup);
    expect(await stateFiles(e, CONFIGS)).toEqual({});

    const wet = await e.runIntegration(CONFIGS, ['--include-trigger-trace']);
    expect(wet.code, wet.stderr).toBe(0);
    const runs = pipelineRuns(e);
    expect(runs).toHaveLength(2);
    const stage = runs.find((r) => r.metadata.labels['qontract.env_name'] === 'example-stage');
    expect(stage?.metadata.name).toMatch(/^saas-example-app-example-stage-[a-z0-9]{5}$/);
    expect(stage?.metadata.labels).toMatchObject({
      'qontract.saas_file_name': 'saas-example-app',
      'qontract.target_ref': 'main',
    });
    expect(stage?.metadata.annotations).toMatchObject({
      'qontract.trigger_integration': CONFIGS,
      'qontract.integration': CONFIGS,
      'qontract.integration_version': '0.3.0',
    });
    expect(stage?.metadata.annotations['qontract.trigger_reason']).toMatch(/\/commit\//);
    expect(stage?.spec.params.map((p) => p.name)).toEqual([
      'saas_file_name',
      'env_name',
      'tkn_cluster_console_url',
      'tkn_namespace_name',
      'trigger_integration',
      'trigger_reason',
    ]);
    const state = await stateFiles(e, CONFIGS);
    expect(Object.keys(state).sort()).toEqual([STAGE_KEY, PRODUCTION_KEY]);
    expect(JSON.parse(state[STAGE_KEY]!)).toMatchObject({
      ref: 'main',
      parameters: '{"REPLICAS":1}',
      rt_parameters: '{"MEMORY_LIMIT":"512Mi"}',
      saas_file_managed_resource_types: ['Deployment', 'Service'],
      url: 'https://github.com/example/example-app',
    });

    // Nothing changed: nothing to trigger, nothing written.
    const before = e.writes();
    const again = await e.runIntegration(CONFIGS);
    expect(again.code, again.stderr).toBe(0);
    expect(planLines(again)).toEqual([]);
    expect(e.writes()).toBe(before);

    // A parameter of stage changes: stage alone is triggered again.
    await editFile(join(e.env.appInterfaceDir, APP_FILE), (t) =>
      t.replace('REPLICAS: 1', 'REPLICAS: 2'),
    );
    const changed = await e.runIntegration(CONFIGS);
    expect(changed.code, changed.stderr).toBe(0);
    expect(planLines(changed)).toEqual([
      "['create', 'appint-ex-01', 'app-sre-pipelines', 'PipelineRun', 'saas-example-app-example-stage']",
    ]);
    expect(pipelineRuns(e)).toHaveLength(3);
    expect(JSON.parse((await stateFiles(e, CONFIGS))[STAGE_KEY]!).parameters).toBe(
      '{"REPLICAS":2}',
    );
  });

  it('a refused create stores no state and exits 1', async () => {
    const e = await start();
    seedAppPipeline(e);
    e.env.server.faults.set(PIPELINES.cluster, {
      verb: 'create',
      resource: 'pipelineruns',
      status: 500,
    });
    const failed = await e.runIntegration(CONFIGS);
    expect(failed.code).toBe(1);
    expect(messages(failed, 50)).toContainEqual(
      expect.stringMatching(
        /^could not trigger pipeline saas-example-app-example-stage in appint-ex-01\/app-sre-pipelines\. details: /,
      ),
    );
    expect(await stateFiles(e, CONFIGS)).toEqual({});

    // Once the cluster takes it again the trigger happens (nothing was recorded as deployed).
    e.env.server.faults.clear(PIPELINES.cluster);
    const retried = await e.runIntegration(CONFIGS);
    expect(retried.code, retried.stderr).toBe(0);
    expect(pipelineRuns(e)).toHaveLength(2);
    expect(Object.keys(await stateFiles(e, CONFIGS))).toHaveLength(2);
  });
});

describe('the SLO gate of openshift-saas-deploy-trigger-configs end to end', () => {
  const PRODUCTION_REF = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';
  let fakes: FakePrometheus[] = [];
  afterEach(async () => {
    await Promise.all(fakes.map((f) => f.close()));
    fakes = [];
  });

  it('holds a target while its SLO is breached, triggers it once met or as a hotfix; fails the run when Prometheus is down', async () => {
    const e = await start();
    seedAppPipeline(e);
    // Production is read through its cluster's prometheusUrl (appint-ex-02's automation token),
    // stage through prometheusAccess (config.toml's basic credentials).
    const { cluster, external } = await startSloPrometheus(e);
    fakes = [cluster, external];
    // Production lists the example app's SLO document.
    await editFile(join(e.env.appInterfaceDir, APP_FILE), (t) =>
      t.replace(
        `ref: ${PRODUCTION_REF}\n`,
        `ref: ${PRODUCTION_REF}\n        slos:\n          - $ref: /services/example-app/slo-documents/example-app.yml\n`,
      ),
    );
    cluster.setVector(SLO_QUERY, [{ metric: { job: 'example-app' }, value: 0.95 }]);
    external.setVector(SLO_QUERY, [{ metric: { job: 'example-app' }, value: 0.999 }]);

    // Breached: dry-run and wet plan stage only; production is skipped with the original's lines.
    const dry = await e.runIntegration(CONFIGS, [], { dryRun: true });
    expect(dry.code, dry.stderr).toBe(0);
    expect(planLines(dry)).toEqual([
      "['create', 'appint-ex-01', 'app-sre-pipelines', 'PipelineRun', 'saas-example-app-example-stage']",
    ]);
    const held = await e.runIntegration(CONFIGS);
    expect(held.code, held.stderr).toBe(0);
    expect(messages(held)).toEqual(
      expect.arrayContaining([
        'Skipping target from saas file saas-example-app due to following breached SLOs.',
        'SLO: availability of document example-app-slos is breached. Current value: 0.95 Expected: 0.99',
      ]),
    );
    expect(pipelineRuns(e).map((r) => r.metadata.labels['qontract.env_name'])).toEqual([
      'example-stage',
    ]);
    expect(Object.keys(await stateFiles(e, CONFIGS))).toEqual([STAGE_KEY]);
    // Every namespace of the document was read, each with its own credentials (none refused).
    expect(cluster.queries).toEqual([SLO_QUERY, SLO_QUERY]);
    expect(external.queries).toEqual([SLO_QUERY, SLO_QUERY]);
    expect([...cluster.requestLog, ...external.requestLog].every((r) => r.status === 200)).toBe(
      true,
    );
    expect(held.stdout + held.stderr).not.toContain('slo-password-not-real');

    // Met again (0.99 is not below 0.99): production is triggered and stored.
    cluster.setVector(SLO_QUERY, [{ metric: { job: 'example-app' }, value: 0.99 }]);
    const met = await e.runIntegration(CONFIGS);
    expect(met.code, met.stderr).toBe(0);
    expect(planLines(met)).toEqual([
      "['create', 'appint-ex-01', 'app-sre-pipelines', 'PipelineRun', 'saas-example-app-example-production']",
    ]);
    expect(Object.keys(await stateFiles(e, CONFIGS)).sort()).toEqual([STAGE_KEY, PRODUCTION_KEY]);

    // Production changes while Prometheus is down: as the original, the run fails, nothing is triggered.
    await editFile(join(e.env.appInterfaceDir, APP_FILE), (t) =>
      t.replace('REPLICAS: 3', 'REPLICAS: 4'),
    );
    await cluster.close();
    const storedBefore = (await stateFiles(e, CONFIGS))[PRODUCTION_KEY];
    const down = await e.runIntegration(CONFIGS);
    expect(down.code).toBe(1);
    expect(messages(down, 50)).toContain(
      'Connection error  getting current value for SLO: availability of document: example-app-slos for namespace: example-app-production',
    );
    expect(pipelineRuns(e)).toHaveLength(2);
    expect((await stateFiles(e, CONFIGS))[PRODUCTION_KEY]).toBe(storedBefore);

    // Production's ref is a hotfix of the code component: deployed without asking Prometheus.
    await editFile(join(e.env.appInterfaceDir, 'data/services/example-app/app.yml'), (t) =>
      t.replace(
        'url: https://github.com/example/example-app\n',
        `url: https://github.com/example/example-app\n    hotfixVersions:\n      - ${PRODUCTION_REF}\n`,
      ),
    );
    const hotfix = await e.runIntegration(CONFIGS);
    expect(hotfix.code, hotfix.stderr).toBe(0);
    expect(planLines(hotfix)).toEqual([
      "['create', 'appint-ex-01', 'app-sre-pipelines', 'PipelineRun', 'saas-example-app-example-production']",
    ]);
    expect(JSON.parse((await stateFiles(e, CONFIGS))[PRODUCTION_KEY]!).parameters).toBe(
      '{"REPLICAS":4}',
    );
  });
});

describe('openshift-saas-deploy-trigger-moving-commits end to end', () => {
  const MOVING = 'openshift-saas-deploy-trigger-moving-commits';
  const KEY = `${STAGE_KEY}/main`;

  it('stores a ref the first time without triggering, then triggers when it moves', async () => {
    const e = await start();
    seedAppPipeline(e);
    const setup = e.writes();

    // Dry-run: not even the first-seen commits are stored.
    const dry = await e.runIntegration(MOVING, [], { dryRun: true });
    expect(dry.code, dry.stderr).toBe(0);
    expect(planLines(dry)).toEqual([]);
    expect(await stateFiles(e, MOVING)).toEqual({});
    expect(e.writes()).toBe(setup);

    // First wet run: the commit of each branch ref is stored (the configs trigger deploys new targets).
    const first = await e.runIntegration(MOVING);
    expect(first.code, first.stderr).toBe(0);
    expect(planLines(first)).toEqual([]);
    expect(pipelineRuns(e)).toHaveLength(0);
    const stored = await stateFiles(e, MOVING);
    expect(stored[KEY]).toBe(JSON.stringify(e.seed.appSha));
    // The worker's stage ref is stored too; production refs are commit shas and never move.
    expect(Object.keys(stored)).toHaveLength(2);

    // main moves: a dry-run plans the trigger and writes nothing ...
    const moved = 'b'.repeat(40);
    e.github.addCommit('example/example-app', 'main', moved);
    const before = e.writes();
    const planned = await e.runIntegration(MOVING, [], { dryRun: true });
    expect(planLines(planned)).toEqual([
      "['create', 'appint-ex-01', 'app-sre-pipelines', 'PipelineRun', 'saas-example-app-example-stage']",
    ]);
    expect(e.writes()).toBe(before);
    expect((await stateFiles(e, MOVING))[KEY]).toBe(JSON.stringify(e.seed.appSha));

    // ... a wet run creates the PipelineRun for the new commit and stores it.
    const wet = await e.runIntegration(MOVING, ['--include-trigger-trace']);
    expect(wet.code, wet.stderr).toBe(0);
    const runs = pipelineRuns(e);
    expect(runs).toHaveLength(1);
    expect(runs[0]?.metadata.labels['qontract.target_ref']).toBe(moved);
    expect(runs[0]?.metadata.annotations['qontract.trigger_reason']).toBe(
      `https://github.com/example/example-app/commit/${moved}`,
    );
    expect((await stateFiles(e, MOVING))[KEY]).toBe(JSON.stringify(moved));

    const again = await e.runIntegration(MOVING);
    expect(again.code, again.stderr).toBe(0);
    expect(pipelineRuns(e)).toHaveLength(1);
  });
});

describe('openshift-saas-deploy-trigger-cleaner end to end', () => {
  it("deletes the PipelineRuns the provider's retention does not keep; dry-run deletes nothing", async () => {
    const e = await start();
    // The provider's own retention overrides the defaults': a day, at most 2 runs. (The fake
    // API server stamps creation times itself, so all runs are new: only `maximum` removes one.)
    await editFile(
      join(e.env.appInterfaceDir, 'data/app-sre/pipelines-providers/tekton-appint-ex-01.yml'),
      (t) => `${t}retention:\n  days: 1\n  maximum: 2\n`,
    );
    e.env.server.seed(
      PIPELINES.cluster,
      [0, 1, 2].map((i) => ({
        apiVersion: 'tekton.dev/v1',
        kind: 'PipelineRun',
        metadata: { name: `run-${i}`, namespace: PIPELINES.namespace },
        spec: { pipelineRef: { name: 'o-openshift-saas-deploy-saas-example-app' } },
      })),
    );
    const CLEANER = 'openshift-saas-deploy-trigger-cleaner';
    const before = e.writes();
    const dry = await e.runIntegration(CLEANER, [], { dryRun: true });
    expect(dry.code, dry.stderr).toBe(0);
    const planned = planLines(dry);
    expect(planned).toHaveLength(1);
    expect(planned[0]).toMatch(
      /^\['delete_trigger', 'appint-ex-01', 'app-sre-pipelines', 'PipelineRun', 'run-\d'\]$/,
    );
    expect(e.writes()).toBe(before);
    expect(pipelineRuns(e)).toHaveLength(3);

    const wet = await e.runIntegration(CLEANER);
    expect(wet.code, wet.stderr).toBe(0);
    expect(pipelineRuns(e)).toHaveLength(2);
  });
});

describe('openshift-saas-deploy-trigger-upstream-jobs end to end', () => {
  const UPSTREAM = 'openshift-saas-deploy-trigger-upstream-jobs';
  const JOB = 'example-worker-build-main';
  const KEY = `${edgeKey('example-worker-edge')}/ci-int/${JOB}`;
  const jenkinsFakes: FakeJenkins[] = [];
  afterEach(async () => {
    await Promise.all(jenkinsFakes.splice(0).map((j) => j.close()));
  });

  /** The example environment with a fake Jenkins where examples/config.toml's ci-int secret points. */
  async function startWithJenkins() {
    const e = await start();
    seedEdgePipeline(e);
    // The password of examples/config.toml's [jenkins.ci-int] secret is the user's API token.
    const jenkins = await startFakeJenkins({ token: 'jenkins-api-token-not-real' });
    jenkinsFakes.push(jenkins);
    await editFile(e.env.configPath, (t) => t.replaceAll('http://127.0.0.1:16464', jenkins.url));
    const writes = () => e.writes() + jenkins.writeCount();
    return { e, jenkins, writes };
  }

  it('stores the first build, triggers a newer successful one only; dry-run writes nothing', async () => {
    const { e, jenkins, writes } = await startWithJenkins();
    jenkins.addBuild(JOB, { result: 'SUCCESS', commitSha: 'a'.repeat(40) });
    const setup = writes();

    // Dry-run: first sight is not even stored.
    const dry = await e.runIntegration(UPSTREAM, [], { dryRun: true });
    expect(dry.code, dry.stderr).toBe(0);
    expect(planLines(dry)).toEqual([]);
    expect(await stateFiles(e, UPSTREAM)).toEqual({});
    expect(writes()).toBe(setup);

    // First wet run: the build is stored, nothing triggered (the configs trigger deploys new targets).
    const first = await e.runIntegration(UPSTREAM);
    expect(first.code, first.stderr).toBe(0);
    expect(pipelineRuns(e)).toHaveLength(0);
    const stored = await stateFiles(e, UPSTREAM);
    expect(Object.keys(stored)).toEqual([KEY]);
    expect(JSON.parse(stored[KEY]!)).toMatchObject({
      number: 1,
      result: 'SUCCESS',
      commit_sha: 'a'.repeat(40),
    });

    // A newer build still running, then failed: nothing triggered, the stored build stays.
    const running = jenkins.addBuild(JOB, { commitSha: 'b'.repeat(40) });
    const whileRunning = await e.runIntegration(UPSTREAM);
    expect(whileRunning.code, whileRunning.stderr).toBe(0);
    jenkins.setResult(JOB, running, 'FAILURE');
    const failed = await e.runIntegration(UPSTREAM);
    expect(failed.code, failed.stderr).toBe(0);
    expect(pipelineRuns(e)).toHaveLength(0);
    expect(await stateFiles(e, UPSTREAM)).toEqual(stored);

    // A newer successful build: dry-run plans the trigger and writes nothing ...
    const c = 'c'.repeat(40);
    jenkins.addBuild(JOB, { result: 'SUCCESS', commitSha: c });
    const before = writes();
    const planned = await e.runIntegration(UPSTREAM, [], { dryRun: true });
    expect(planned.code, planned.stderr).toBe(0);
    expect(planLines(planned)).toEqual([EDGE_RUN]);
    expect(writes()).toBe(before);
    expect(await stateFiles(e, UPSTREAM)).toEqual(stored);

    // ... a wet run creates one PipelineRun for the build's commit and stores the build.
    const wet = await e.runIntegration(UPSTREAM, ['--include-trigger-trace']);
    expect(wet.code, wet.stderr).toBe(0);
    const runs = pipelineRuns(e);
    expect(runs).toHaveLength(1);
    expect(runs[0]?.metadata.labels).toMatchObject({
      'qontract.saas_file_name': 'saas-example-edge',
      'qontract.env_name': 'example-production',
      'qontract.target_ref': c,
    });
    expect(runs[0]?.metadata.annotations).toMatchObject({
      'qontract.trigger_integration': UPSTREAM,
      'qontract.integration_version': '0.3.0',
    });
    expect(runs[0]?.metadata.annotations['qontract.trigger_reason']).toMatch(
      new RegExp(`/service/example-app/commit/${c} via http://127\\.0\\.0\\.1:16464/job/${JOB}/3$`),
    );
    expect(JSON.parse((await stateFiles(e, UPSTREAM))[KEY]!)).toMatchObject({ number: 3 });

    // The same build again: nothing.
    const again = await e.runIntegration(UPSTREAM);
    expect(again.code, again.stderr).toBe(0);
    expect(planLines(again)).toEqual([]);
    expect(pipelineRuns(e)).toHaveLength(1);
    // The trigger only reads Jenkins.
    expect(jenkins.writeCount()).toBe(0);
  });

  it('an instance it cannot read: "instance unreachable", nothing triggered or stored, exit 1', async () => {
    const { e, jenkins } = await startWithJenkins();
    jenkins.addBuild(JOB, { result: 'SUCCESS', commitSha: 'a'.repeat(40) });
    jenkins.faults.add({ status: 403 });
    const run = await e.runIntegration(UPSTREAM);
    expect(run.code).toBe(1);
    expect(messages(run, 50)).toContain('instance unreachable: ci-int');
    expect(await stateFiles(e, UPSTREAM)).toEqual({});
    expect(pipelineRuns(e)).toHaveLength(0);
    // The token never reaches the output.
    expect(run.stderr + run.stdout).not.toContain('jenkins-api-token-not-real');
  });
});

describe('openshift-saas-deploy-trigger-images end to end', () => {
  const IMAGES = 'openshift-saas-deploy-trigger-images';

  it("stores the first tag, waits for a new commit's image, then triggers it once", async () => {
    const e = await start();
    seedEdgePipeline(e);
    const image = `${e.registry.host}/example/example-app`;
    const key = `${edgeKey('example-app-edge')}/${image}`;
    const setup = e.writes();

    // Dry-run: the first-seen tag is not even stored.
    const dry = await e.runIntegration(IMAGES, [], { dryRun: true });
    expect(dry.code, dry.stderr).toBe(0);
    expect(planLines(dry)).toEqual([]);
    expect(await stateFiles(e, IMAGES)).toEqual({});
    expect(e.writes()).toBe(setup);

    // First wet run: the tag of main's commit (its image is in the registry) is stored, no trigger.
    const first = await e.runIntegration(IMAGES);
    expect(first.code, first.stderr).toBe(0);
    expect(pipelineRuns(e)).toHaveLength(0);
    expect(await stateFiles(e, IMAGES)).toEqual({
      [key]: JSON.stringify(e.seed.appSha.slice(0, 7)),
    });

    // main moves to a commit whose image is not built yet: the original's error, no trigger.
    const next = 'd'.repeat(40);
    const tag = next.slice(0, 7);
    e.github.addCommit('example/example-app', 'main', next);
    const waiting = await e.runIntegration(IMAGES);
    expect(waiting.code, waiting.stderr).toBe(0);
    expect(messages(waiting, 50)).toContain(
      `[saas-example-edge/example-app-edge] main: Image does not exist: ${image}:${tag}`,
    );
    expect(pipelineRuns(e)).toHaveLength(0);

    // The image is pushed: dry-run plans the trigger and writes nothing ...
    e.registry.pushImage('example/example-app', tag);
    const before = e.writes();
    const planned = await e.runIntegration(IMAGES, [], { dryRun: true });
    expect(planned.code, planned.stderr).toBe(0);
    expect(planLines(planned)).toEqual([EDGE_RUN]);
    expect(e.writes()).toBe(before);

    // ... a wet run creates one PipelineRun for the commit and stores the new tag.
    const wet = await e.runIntegration(IMAGES, ['--include-trigger-trace']);
    expect(wet.code, wet.stderr).toBe(0);
    const runs = pipelineRuns(e);
    expect(runs).toHaveLength(1);
    expect(runs[0]?.metadata.labels['qontract.target_ref']).toBe(next);
    expect(runs[0]?.metadata.annotations['qontract.trigger_reason']).toBe(
      `https://github.com/example/example-app/commit/${next} build ${image}:${tag}`,
    );
    expect((await stateFiles(e, IMAGES))[key]).toBe(JSON.stringify(tag));

    const again = await e.runIntegration(IMAGES);
    expect(again.code, again.stderr).toBe(0);
    expect(planLines(again)).toEqual([]);
    expect(pipelineRuns(e)).toHaveLength(1);
  });
});
