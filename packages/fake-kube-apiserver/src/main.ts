import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { FaultBook, startControlServer } from './control-server.ts';
import { type ClusterFault, parseFaultSpec, seededRandom } from './fault-spec.ts';
import { type FakeClusterSpec, parseSeedYaml, startFakeKubeApiServer } from './server.ts';

const USAGE = `usage: fake-kube-apiserver --clusters a,b[:openshift] [--openshift]
         [--token [CLUSTER=]TOKEN]... [--port CLUSTER=PORT]... [--port-base N]
         [--latency-ms N] [--fault SPEC]... [--fault-seed N] [--seed FILE.yaml]...
         [--workload-ready-delay-ms N] [--max-log-entries N] [--compression]
         [--control-port N] [--control-token TOKEN] [--kubeconfig FILE]

Serves one fake Kubernetes API per cluster on 127.0.0.1 until SIGINT/SIGTERM,
and a control endpoint (http://127.0.0.1:<control-port>/_control, bearer token)
to add and clear faults, take clusters down and up, seed objects and read the
request log while it runs.

  --clusters          cluster names; "name:openshift" (or --openshift for all)
                      serves the OpenShift groups
  --token             a cluster's bearer token (CLUSTER=TOKEN), or TOKEN for
                      every cluster not named; random otherwise
  --port, --port-base a cluster's port; or port-base + index; random otherwise
  --latency-ms        added to every request
  --compression       gzip answers of 128 KiB or more when the client accepts
                      it, as kube-apiserver does (off by default)
  --fault             a fault rule, as key=value pairs or JSON, e.g.
                      cluster=k8s,verb=list,resource=secrets,status=503,times=1
                      (no cluster: every cluster). Fields: verb, resource,
                      namespace, name, latencyMs, errorRate, status,
                      retryAfter, drop, hang, continued, times
  --fault-seed        seed of the error-rate dice (default: random)
  --seed              YAML objects seeded into every cluster, or documents
                      {cluster: NAME, objects: [...]} for one cluster
  --control-port      port of the control endpoint (default: any free port)
  --control-token     its bearer token (default: random, printed)`;

function fail(message: string): never {
  process.stderr.write(`${message}\n\n${USAGE}\n`);
  process.exit(2);
}

function integer(
  text: string | undefined,
  flag: string,
  allowNegative = false,
): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (text.trim() === '' || !Number.isInteger(n) || (!allowNegative && n < 0)) {
    fail(`${flag} must be ${allowNegative ? 'an' : 'a non-negative'} integer, got "${text}"`);
  }
  return n;
}

/** `NAME=VALUE` options that name one of the clusters; other values apply to all of them. */
function perCluster(
  values: readonly string[] | undefined,
  names: ReadonlySet<string>,
  flag: string,
  allowAll: boolean,
): { byCluster: Map<string, string>; all?: string } {
  const byCluster = new Map<string, string>();
  let all: string | undefined;
  for (const value of values ?? []) {
    const eq = value.indexOf('=');
    const name = eq > 0 ? value.slice(0, eq) : '';
    if (names.has(name)) byCluster.set(name, value.slice(eq + 1));
    else if (allowAll) all = value;
    else fail(`${flag} "${value}": expected CLUSTER=VALUE with one of the --clusters`);
  }
  return { byCluster, ...(all !== undefined ? { all } : {}) };
}

async function main(): Promise<void> {
  let parsed: ReturnType<typeof parse>;
  function parse() {
    return parseArgs({
      options: {
        clusters: { type: 'string' },
        openshift: { type: 'boolean', default: false },
        token: { type: 'string', multiple: true },
        port: { type: 'string', multiple: true },
        'port-base': { type: 'string' },
        kubeconfig: { type: 'string' },
        'latency-ms': { type: 'string' },
        compression: { type: 'boolean', default: false },
        fault: { type: 'string', multiple: true },
        'fault-seed': { type: 'string' },
        seed: { type: 'string', multiple: true },
        'workload-ready-delay-ms': { type: 'string' },
        'max-log-entries': { type: 'string' },
        'control-port': { type: 'string' },
        'control-token': { type: 'string' },
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
  const clusters = values.clusters
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
  const names = new Set(clusters.map((c) => c.name));
  const tokens = perCluster(values.token, names, '--token', true);
  const ports = perCluster(values.port, names, '--port', false);
  const specs: FakeClusterSpec[] = clusters.map((c) => {
    const token = tokens.byCluster.get(c.name) ?? tokens.all;
    const port = integer(ports.byCluster.get(c.name), `--port ${c.name}`);
    return {
      ...c,
      ...(token !== undefined ? { token } : {}),
      ...(port !== undefined ? { port } : {}),
    };
  });
  const faults: ClusterFault[] = (values.fault ?? []).map((spec) => {
    try {
      const fault = parseFaultSpec(spec);
      if (fault.cluster !== undefined && !names.has(fault.cluster)) {
        fail(`--fault "${spec}": no cluster named ${fault.cluster}`);
      }
      return fault;
    } catch (e) {
      return fail(`--fault: ${(e as Error).message}`);
    }
  });
  const portBase = integer(values['port-base'], '--port-base');
  const latencyMs = integer(values['latency-ms'], '--latency-ms');
  const faultSeed = integer(values['fault-seed'], '--fault-seed');
  const readyDelay = integer(values['workload-ready-delay-ms'], '--workload-ready-delay-ms', true);
  const maxLogEntries = integer(values['max-log-entries'], '--max-log-entries');
  const controlPort = integer(values['control-port'], '--control-port');
  const seeds = (values.seed ?? []).map((file) => {
    try {
      return parseSeedYaml(readFileSync(file, 'utf8'));
    } catch (e) {
      return fail(`--seed ${file}: ${(e as Error).message}`);
    }
  });

  const server = await startFakeKubeApiServer({
    clusters: specs,
    ...(portBase !== undefined ? { portBase } : {}),
    ...(latencyMs !== undefined ? { latencyMs } : {}),
    ...(faultSeed !== undefined ? { random: seededRandom(faultSeed) } : {}),
    ...(readyDelay !== undefined ? { workloadReadyDelayMs: readyDelay } : {}),
    ...(maxLogEntries !== undefined ? { maxLogEntries } : {}),
    compression: values.compression,
  });
  for (const docs of seeds) {
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
  const book = new FaultBook(server);
  for (const fault of faults) book.add(fault);
  const control = await startControlServer(server, book, {
    ...(controlPort !== undefined ? { port: controlPort } : {}),
    ...(values['control-token'] !== undefined ? { token: values['control-token'] } : {}),
  });

  for (const c of server.clusters.values()) {
    process.stdout.write(
      `${c.name}\t${c.url}\ttoken=${c.token}${c.openshift ? '\topenshift' : ''}\n`,
    );
  }
  process.stdout.write(`control\t${control.url}\ttoken=${control.token}\n`);
  if (values.kubeconfig) {
    writeFileSync(values.kubeconfig, server.kubeconfig(), { mode: 0o600 });
    process.stdout.write(`kubeconfig written to ${values.kubeconfig}\n`);
  } else {
    process.stdout.write(`---\n${server.kubeconfig()}`);
  }
  const stop = () => {
    Promise.all([control.close(), server.close()]).then(() => process.exit(0));
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
