import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  APP_INTERFACE_PROJECT,
  mergeAppInterfaceChange,
  mergeAppInterfaceMergeRequest,
  seedAppInterfaceRepo,
} from '@qontract/testing/app-interface-repo';
import { TektonPlayer } from '@qontract/testing/tekton-player';
import { REPO_ROOT, runQontractReconcile } from './demo.ts';
import { startDemoServices } from './services.ts';

/**
 * `npm start -- cd-chain`: the CD family's chain on the example saas files, on a
 * copy of examples/ (its state store starts empty, the repository is left as
 * it is): Tekton objects → the configs trigger → Tekton, played here (each
 * PipelineRun's command run with the real CLI) → a merge to stage → stage
 * deploys and publishes → saas-auto-promotions-manager opens the merge request
 * moving production → merged → production deploys through the promotion gate.
 * Resolves with the number of failed steps.
 */

const SAAS_FILE = '/services/example-app/cicd/saas-example-app.yml';
const PIPELINES = { cluster: 'appint-ex-01', namespace: 'app-sre-pipelines' };

const say = (text: string) => process.stdout.write(`\n\x1b[1m== ${text}\x1b[0m\n`);

export async function runCdChain(): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), 'qontract-cd-chain-'));
  await cp(join(REPO_ROOT, 'examples'), dir, {
    recursive: true,
    filter: (src) => !src.endsWith('.state'),
  });
  const config = join(dir, 'config.toml');
  const appInterface = join(dir, 'app-interface');
  say('Starting SIMULATED systems (clusters, GitHub, GitLab, registry; nothing real)');
  const services = await startDemoServices(['cd-chain']);
  for (const line of services.lines) process.stdout.write(`   ${line}\n`);
  const { clusters, github, gitlab, registry } = services.systems;
  if (!clusters || !github || !gitlab || !registry)
    throw new Error('cd-chain: a system is missing');
  let failed = 0;

  const run = async (integration: string, args: readonly string[], dryRun = false) => {
    const argv = ['--config', config, ...(dryRun ? ['--dry-run'] : []), integration, ...args];
    process.stdout.write(`$ qontract-reconcile ${argv.join(' ')}\n`);
    const before = services.writes();
    const code = await runQontractReconcile(argv, services.env);
    process.stdout.write(
      `-> exit code ${code}, ${services.writes() - before} write request(s) reached the simulated systems\n`,
    );
    return code;
  };
  const step = async (title: string, integration: string, args: readonly string[] = []) => {
    say(`${title}: ${integration} — dry-run, then wet`);
    if ((await run(integration, args, true)) !== 0) failed++;
    if ((await run(integration, args)) !== 0) failed++;
  };
  const tekton = new TektonPlayer(clusters, PIPELINES);
  const playTekton = async () => {
    say('Tekton (played by the demo): each new PipelineRun runs its Pipeline task’s command');
    for (const { pipelineRun, commands } of tekton.next()) {
      process.stdout.write(`PipelineRun ${pipelineRun.metadata.name}\n`);
      for (const { argv } of commands) {
        const [integration = '', ...args] = argv;
        if ((await run(integration, args)) !== 0) failed++;
      }
    }
  };

  try {
    await seedAppInterfaceRepo(gitlab, appInterface, [SAAS_FILE]);
    await step('Namespaces', 'openshift-namespaces');
    await step('The saas files’ Tekton Pipelines and Tasks', 'openshift-tekton-resources');
    await step('First deploy of every target', 'openshift-saas-deploy-trigger-configs', [
      '--include-trigger-trace',
    ]);
    await playTekton();
    await step(
      'Moving refs noted (nothing to trigger yet)',
      'openshift-saas-deploy-trigger-moving-commits',
    );

    say('A merge: new code on example-app main (its image built) and stage’s REPLICAS 1 → 2');
    const next = github.pushCommit('example/example-app', 'main', { 'README.md': 'v1\n' });
    registry.pushImage('example/example-app', next.slice(0, 7));
    await mergeAppInterfaceChange(gitlab, appInterface, SAAS_FILE, (t) =>
      t.replace('REPLICAS: 1', 'REPLICAS: 2'),
    );
    await step('The changed target is triggered', 'openshift-saas-deploy-trigger-configs', [
      '--include-trigger-trace',
    ]);
    await playTekton();
    await step('Stage published the commit: the promotion MR', 'saas-auto-promotions-manager');
    const [mr] = gitlab.mergeRequests(APP_INTERFACE_PROJECT).filter((m) => m.state === 'opened');
    if (!mr) {
      failed++;
      process.stdout.write('no promotion merge request was opened\n');
    } else {
      say(`Merging !${mr.iid} "${mr.title}" (production's ref → ${next.slice(0, 12)}…)`);
      await mergeAppInterfaceMergeRequest(gitlab, appInterface, mr.iid);
      await step('Production is triggered', 'openshift-saas-deploy-trigger-configs', [
        '--include-trigger-trace',
      ]);
      await playTekton();
    }
    const production = clusters
      .list('appint-ex-02', 'apps/v1', 'Deployment', 'example-app-production')
      .map(
        (d) =>
          d as {
            metadata: { name: string };
            spec: { template: { spec: { containers: Array<{ image: string }> } } };
          },
      )
      .find((d) => d.metadata.name === 'example-app');
    say(`Production runs ${production?.spec.template.spec.containers[0]?.image ?? '(nothing)'}`);
  } finally {
    await services.close();
    await rm(dir, { recursive: true, force: true });
  }
  return failed;
}
