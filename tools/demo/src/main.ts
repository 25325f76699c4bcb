import { relative } from 'node:path';
import { runCdChain } from './cd-chain.ts';
import { EXAMPLE_CONFIG, REPO_ROOT, runQontractReconcile } from './demo.ts';
import { startDemoServices } from './services.ts';

// npm start [-- INTEGRATION ...]: the README's first command; `npm start -- cd-chain`: the CD family's chain.
const requested = process.argv.slice(2);
if (requested[0] === 'cd-chain') {
  const failed = await runCdChain();
  process.stdout.write(`\n${failed ? `${failed} step(s) failed` : 'done'}\n`);
  process.exit(failed ? 1 : 0);
}
// The main job, openshift-resources, needs its namespaces: openshift-namespaces runs first.
const integrations = requested.length ? requested : ['openshift-namespaces', 'openshift-resources'];
// Saas files, their Tekton objects and the manager's pods go into namespaces: they are created first, as in
// production.
if (
  integrations.some((i) =>
    ['openshift-saas-deploy', 'openshift-tekton-resources', 'integrations-manager'].includes(i),
  ) &&
  !integrations.includes('openshift-namespaces')
) {
  integrations.unshift('openshift-namespaces');
}
/**
 * The runs of an integration: once, or once per argument list. openshift-saas-deploy runs as
 * its pipelines do, one saas file and environment at a time, stage before production (which
 * its promotion gate lets through once stage has published the commit).
 */
const RUNS: Readonly<Record<string, readonly (readonly string[])[]>> = {
  'openshift-saas-deploy': ['saas-example-app', 'saas-example-worker'].flatMap((file) =>
    ['example-stage', 'example-production'].map((env) => [
      '--saas-file-name',
      file,
      '--env-name',
      env,
    ]),
  ),
};
const config = relative(process.cwd(), EXAMPLE_CONFIG) || EXAMPLE_CONFIG;

const say = (text: string) => process.stdout.write(`\n\x1b[1m== ${text}\x1b[0m\n`);

say(
  "Starting SIMULATED systems (the project's fakes of the Kubernetes/OpenShift API, GitHub, GitLab, PagerDuty; nothing real)",
);
const services = await startDemoServices(integrations);
for (const line of services.lines) process.stdout.write(`   ${line}\n`);
let failed = 0;
try {
  for (const integration of integrations) {
    for (const extra of RUNS[integration] ?? [[]]) {
      for (const [title, flags] of [
        ['dry-run: the plan, nothing is written', ['--dry-run']],
        ['wet run: the plan is applied', []],
        ['second wet run: nothing left to do', []],
      ] as const) {
        say(`${[integration, ...extra].join(' ')} — ${title}`);
        const args = ['--config', config, ...flags, integration, ...extra];
        process.stdout.write(`$ qontract-reconcile ${args.join(' ')}\n`);
        const before = services.writes();
        const code = await runQontractReconcile(args, services.env);
        const writes = services.writes() - before;
        process.stdout.write(
          `-> exit code ${code}, ${writes} write request(s) reached the simulated systems\n`,
        );
        if (code !== 0) failed++;
      }
    }
  }
} finally {
  await services.close();
}
say(failed ? `${failed} run(s) failed` : 'done');
process.stdout.write(
  `To run against real clusters and a real qontract-server, use a config.toml whose [graphql] server is\n` +
    `your qontract-server URL (and [vault] if app-interface settings say vault: true), e.g.:\n` +
    `  npx qontract-reconcile --config /path/to/config.toml --dry-run ${integrations.at(-1)}\n` +
    `(repository: ${REPO_ROOT})\n`,
);
process.exitCode = failed ? 1 : 0;
