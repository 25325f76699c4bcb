/**
 * Scale check of the fake: 100,000 objects across 20 clusters in one process,
 * then a full paginated list of every cluster over HTTPS, without and with
 * injected latency. The lists run in a worker thread so that the client's JSON
 * parsing does not count against the server. Run:
 * node --expose-gc packages/fake-kube-apiserver/bench/scale.ts
 * (flags: --clusters N --objects N --limit N --latency-ms N).
 */
import { Agent, request } from 'node:https';
import { parseArgs } from 'node:util';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { startFakeKubeApiServer } from '../src/index.ts';

interface Target {
  readonly url: string;
  readonly token: string;
}

const { values } = parseArgs({
  options: {
    clusters: { type: 'string', default: '20' },
    objects: { type: 'string', default: '100000' },
    limit: { type: 'string', default: '500' },
    'latency-ms': { type: 'string', default: '5' },
  },
});
const clusterCount = Number(values.clusters);
const objectCount = Number(values.objects);
const limit = isMainThread ? Number(values.limit) : (workerData as { limit: number }).limit;
const latencyMs = Number(values['latency-ms']);
const perCluster = Math.ceil(objectCount / clusterCount);
const NAMESPACES = 50;

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;
const gc = () => (globalThis as { gc?: () => void }).gc?.();

function configMap(i: number) {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: `cm-${String(i).padStart(6, '0')}`,
      namespace: `ns-${i % NAMESPACES}`,
      labels: { app: `app-${i % 100}`, 'qontract.integration': 'openshift-resources' },
      annotations: {
        'qontract.integration': 'openshift-resources',
        'qontract.sha256sum': 'a'.repeat(64),
      },
    },
    data: { 'config.yaml': `key: value-${i}\nother: ${'x'.repeat(200)}\n` },
  };
}

function getJson(
  cluster: Target,
  agent: Agent,
  path: string,
): Promise<{ items: unknown[]; metadata: { continue?: string } }> {
  return new Promise((resolve, reject) => {
    const req = request(
      new URL(path, cluster.url),
      { headers: { Authorization: `Bearer ${cluster.token}`, Accept: 'application/json' }, agent },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString('utf8'))));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

async function listAll(
  cluster: Target,
  agent: Agent,
): Promise<{ items: number; requests: number }> {
  let token = '';
  let items = 0;
  let requests = 0;
  do {
    const page = await getJson(
      cluster,
      agent,
      `/api/v1/configmaps?limit=${limit}${token ? `&continue=${encodeURIComponent(token)}` : ''}`,
    );
    items += page.items.length;
    requests++;
    token = page.metadata.continue ?? '';
  } while (token);
  return { items, requests };
}

async function main() {
  gc();
  const baseline = process.memoryUsage();
  const server = await startFakeKubeApiServer({
    clusters: Array.from({ length: clusterCount }, (_, i) => ({ name: `cluster-${i}` })),
    maxLogEntries: 10_000,
  });
  const seedStart = performance.now();
  for (const handle of server.clusters.values()) {
    const objects = Array.from({ length: perCluster }, (_, i) => configMap(i));
    server.seed(handle.name, objects);
  }
  const seedMs = performance.now() - seedStart;
  gc();
  const loaded = process.memoryUsage();
  const stored = [...server.clusters.values()].reduce(
    (n, h) => n + h.state.store.count('/configmaps'),
    0,
  );

  const targets: Target[] = [...server.clusters.values()].map((h) => ({
    url: h.url,
    token: h.token,
  }));
  const ca = server.cluster('cluster-0').caCertificate;
  // The server's own cost is the CPU time of this (the server's) thread; the
  // lister runs in another thread.
  const runList = (label: string) =>
    new Promise<{ label: string; ms: number; busyMs: number; items: number; requests: number }>(
      (resolve, reject) => {
        const before = process.threadCpuUsage();
        const worker = new Worker(new URL(import.meta.url), { workerData: { targets, ca, limit } });
        worker.once('message', (m: { ms: number; items: number; requests: number }) => {
          const used = process.threadCpuUsage(before);
          const busyMs = (used.user + used.system) / 1000;
          resolve({ label, busyMs, ...m });
        });
        worker.once('error', reject);
      },
    );

  // One unreported pass first, so both measured passes run on warm code (JIT, TLS sessions).
  await runList('warm-up');
  const plain = await runList('no injected latency');
  for (const name of server.clusters.keys()) server.faults.set(name, { verb: 'list', latencyMs });
  const slow = await runList(`${latencyMs} ms injected per list request`);
  gc();
  const after = process.memoryUsage();
  await server.close();

  const lines = [
    `fake-kube-apiserver scale: ${stored.toLocaleString('en')} ConfigMaps across ${clusterCount} clusters (${NAMESPACES} namespaces each), Node ${process.version}`,
    `seeding: ${(seedMs / 1000).toFixed(1)} s (${Math.round((stored / seedMs) * 1000).toLocaleString('en')} objects/s)`,
    `RSS: ${mb(baseline.rss)} before seeding, ${mb(loaded.rss)} loaded (${mb(after.rss)} after the lists, lister threads included); V8 heap used when loaded: ${mb(loaded.heapUsed)} (${Math.round((loaded.heapUsed - baseline.heapUsed) / stored)} bytes/object)`,
  ];
  for (const r of [plain, slow]) {
    lines.push(
      `full paginated list (limit=${limit}; clusters in parallel, pages in sequence): ${r.items.toLocaleString('en')} items in ${r.requests} requests, ${(r.ms / 1000).toFixed(2)} s (server CPU ${(r.busyMs / 1000).toFixed(2)} s) — ${r.label}`,
    );
  }
  process.stdout.write(`${lines.join('\n')}\n`);
  if (plain.items !== stored || slow.items !== stored) {
    process.stderr.write(
      `expected ${stored} items per full list, got ${plain.items} and ${slow.items}\n`,
    );
    process.exit(1);
  }
}

async function lister(): Promise<void> {
  const { targets, ca } = workerData as { targets: Target[]; ca: string };
  const agent = new Agent({ keepAlive: true, maxSockets: 4, ca });
  const start = performance.now();
  const results = await Promise.all(targets.map((t) => listAll(t, agent)));
  const ms = performance.now() - start;
  agent.destroy();
  parentPort?.postMessage({
    ms,
    items: results.reduce((n, r) => n + r.items, 0),
    requests: results.reduce((n, r) => n + r.requests, 0),
  });
}

(isMainThread ? main() : lister()).catch((error: unknown) => {
  process.stderr.write(
    `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
