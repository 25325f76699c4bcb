import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { parseSeedYaml, startFakeKubeApiServer } from './server.ts';

const USAGE = `usage: fake-kube-apiserver --clusters a,b[:openshift] [--openshift] [--port-base N]
                           [--kubeconfig FILE] [--latency-ms N] [--seed FILE.yaml]

Serves one fake Kubernetes API per cluster on 127.0.0.1 until SIGINT/SIGTERM.
A cluster named "name:openshift" (or every cluster with --openshift) serves the
OpenShift groups. A seed file holds YAML objects seeded into every cluster, or
documents {cluster: NAME, objects: [...]} for one cluster.`;

function fail(message: string): never {
  process.stderr.write(`${message}\n\n${USAGE}\n`);
  process.exit(2);
}

function number(text: string | undefined, flag: string): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 0) fail(`${flag} must be a non-negative integer, got "${text}"`);
  return n;
}

async function main(): Promise<void> {
  let parsed: ReturnType<typeof parse>;
  function parse() {
    return parseArgs({
      options: {
        clusters: { type: 'string' },
        openshift: { type: 'boolean', default: false },
        'port-base': { type: 'string' },
        kubeconfig: { type: 'string' },
        'latency-ms': { type: 'string' },
        seed: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  }
  try {
    parsed = parse();
  } catch (error) {
    fail(error instanceof Error ? error.message : String(error));
  }
  const { values } = parsed;
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  if (!values.clusters) fail('--clusters is required');
  const specs = values.clusters
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map((s) => {
      const [name = '', flavour] = s.split(':');
      if (flavour !== undefined && flavour !== 'openshift' && flavour !== 'kubernetes') {
        fail(`cluster "${s}": flavour must be openshift or kubernetes`);
      }
      return {
        name,
        openshift: flavour === undefined ? values.openshift === true : flavour === 'openshift',
      };
    });
  const portBase = number(values['port-base'], '--port-base');
  const latencyMs = number(values['latency-ms'], '--latency-ms');
  const server = await startFakeKubeApiServer({
    clusters: specs,
    ...(portBase !== undefined ? { portBase } : {}),
    ...(latencyMs !== undefined ? { latencyMs } : {}),
  });
  if (values.seed) {
    const docs = parseSeedYaml(readFileSync(values.seed, 'utf8'));
    for (const doc of docs) {
      if (typeof doc.cluster === 'string' && Array.isArray(doc.objects)) {
        server.seed(
          doc.cluster,
          doc.objects.filter(
            (o): o is Record<string, unknown> => typeof o === 'object' && o !== null,
          ),
        );
      } else {
        for (const name of server.clusters.keys()) server.seed(name, [doc]);
      }
    }
  }
  for (const c of server.clusters.values()) {
    process.stdout.write(
      `${c.name}\t${c.url}\ttoken=${c.token}${c.openshift ? '\topenshift' : ''}\n`,
    );
  }
  if (values.kubeconfig) {
    writeFileSync(values.kubeconfig, server.kubeconfig(), { mode: 0o600 });
    process.stdout.write(`kubeconfig written to ${values.kubeconfig}\n`);
  } else {
    process.stdout.write(`---\n${server.kubeconfig()}`);
  }
  const stop = () => {
    server.close().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((error: unknown) => {
  process.stderr.write(
    `fake-kube-apiserver: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
});
