import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { promisify } from 'node:util';
import { startFakeKubeApiServer } from '@qontract/fake-kube-apiserver';
import { parse } from 'smol-toml';
import { QONTRACT_RECONCILE_BIN } from './child-run.ts';
import { main } from './main.ts';

// npm run demo -w @qontract/mr-check [-- SCENARIO [qontract-mr-check options]]:
// the example merge request against simulated clusters, start to end.
const REPO_ROOT = resolve(import.meta.dirname, '../../..');
const CONFIG = relative(process.cwd(), resolve(REPO_ROOT, 'examples/config.toml'));
const BASE = relative(process.cwd(), resolve(REPO_ROOT, 'examples/app-interface'));
const MAKE_HEAD = resolve(REPO_ROOT, 'examples/mr/make-head.mjs');
const run = promisify(execFile);
const say = (text: string) => process.stderr.write(`\n\x1b[1m== ${text}\x1b[0m\n`);

const [scenario = 'namespace', ...options] = process.argv.slice(2);

const config = parse(await readFile(CONFIG, 'utf8')) as {
  clusters?: Record<string, { server: string; token: string }>;
};
say("Starting SIMULATED clusters (the project's fake Kubernetes/OpenShift API server)");
const server = await startFakeKubeApiServer({
  clusters: Object.entries(config.clusters ?? {}).map(([name, c]) => ({
    name,
    token: c.token,
    openshift: !name.endsWith('-k8s'),
    port: Number(new URL(c.server).port),
  })),
});
const head = await mkdtemp(join(tmpdir(), 'mr-head-'));
let code = 1;
try {
  say('The target branch is deployed: the base applied to the clusters');
  for (const integration of [
    'openshift-namespaces',
    'openshift-resources',
    'openshift-vault-secrets',
  ]) {
    process.stderr.write(`$ qontract-reconcile --config ${CONFIG} ${integration}\n`);
    await run(process.execPath, [QONTRACT_RECONCILE_BIN, '--config', CONFIG, integration]);
  }
  say(`The merge request: node examples/mr/make-head.mjs ${BASE} ${head} ${scenario}`);
  await run(process.execPath, [MAKE_HEAD, BASE, head, scenario]);
  const writesBefore = server.mutatingRequests().length;
  const argv = ['--base', BASE, '--head', head, '--config', CONFIG, ...options];
  say(`qontract-mr-check ${argv.join(' ')}`);
  code = await main(argv);
  say(
    `exit code ${code}; ${server.mutatingRequests().length - writesBefore} write request(s) reached the simulated clusters during the check`,
  );
} finally {
  await server.close();
  await rm(head, { recursive: true, force: true });
}
process.exitCode = code;
