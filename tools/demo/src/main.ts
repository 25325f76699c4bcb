import { relative } from 'node:path';
import { EXAMPLE_CONFIG, REPO_ROOT, runQontractReconcile, startExampleClusters } from './demo.ts';

// npm start [-- INTEGRATION ...]: the README's first command.
const requested = process.argv.slice(2);
// The main job, openshift-resources, needs its namespaces: openshift-namespaces runs first.
const integrations = requested.length ? requested : ['openshift-namespaces', 'openshift-resources'];
const config = relative(process.cwd(), EXAMPLE_CONFIG) || EXAMPLE_CONFIG;

const say = (text: string) => process.stdout.write(`\n\x1b[1m== ${text}\x1b[0m\n`);

say(
  "Starting SIMULATED clusters (the project's fake Kubernetes/OpenShift API server, not real clusters)",
);
const server = await startExampleClusters();
for (const c of server.clusters.values()) {
  process.stdout.write(
    `   ${c.name.padEnd(14)} ${c.url}  (${c.openshift ? 'OpenShift' : 'Kubernetes'}, simulated)\n`,
  );
}
let failed = 0;
try {
  for (const integration of integrations) {
    for (const [title, flags] of [
      ['dry-run: the plan, nothing is written', ['--dry-run']],
      ['wet run: the plan is applied', []],
      ['second wet run: nothing left to do', []],
    ] as const) {
      say(`${integration} — ${title}`);
      const args = ['--config', config, ...flags, integration];
      process.stdout.write(`$ qontract-reconcile ${args.join(' ')}\n`);
      const before = server.mutatingRequests().length;
      const code = await runQontractReconcile(args);
      const writes = server.mutatingRequests().length - before;
      process.stdout.write(
        `-> exit code ${code}, ${writes} write request(s) reached the simulated clusters\n`,
      );
      if (code !== 0) failed++;
    }
  }
} finally {
  await server.close();
}
say(failed ? `${failed} run(s) failed` : 'done');
process.stdout.write(
  `To run against real clusters and a real qontract-server, use a config.toml whose [graphql] server is\n` +
    `your qontract-server URL (and [vault] if app-interface settings say vault: true), e.g.:\n` +
    `  npx qontract-reconcile --config /path/to/config.toml --dry-run ${integrations.at(-1)}\n` +
    `(repository: ${REPO_ROOT})\n`,
);
process.exitCode = failed ? 1 : 0;
