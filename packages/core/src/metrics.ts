import { createServer, type Server } from 'node:http';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/**
 * The original's process metrics (`reconcile/utils/metrics.py`,
 * `run_integration.py`), with the same names and labels. prometheus_client
 * exposes a Counter named `x` as `x_total`; prom-client does not add the
 * suffix, so the counter is declared with it.
 */
export interface Metrics {
  readonly registry: Registry;
  readonly lastRunSeconds: Gauge<'integration' | 'shards' | 'shard_id'>;
  readonly lastRunStatus: Gauge<'integration' | 'shards' | 'shard_id'>;
  readonly executionCounter: Counter<'integration' | 'shards' | 'shard_id'>;
  readonly reconcileTime: Histogram<'name' | 'integration'>;
  /** Each HTTP request sent to a GitLab API, retries included. */
  readonly gitlabRequests: Counter<'integration'>;
  /** Each manifest request (HEAD or GET) sent to an image registry. */
  readonly registryGetManifest: Counter<'integration' | 'shard' | 'shard_id' | 'registry'>;
}

export function createMetrics(registry = new Registry()): Metrics {
  const runLabels = ['integration', 'shards', 'shard_id'] as const;
  declareCacheMetrics(registry);
  return {
    registry,
    lastRunSeconds: new Gauge({
      name: 'qontract_reconcile_last_run_seconds',
      help: 'Last run duration in seconds',
      labelNames: runLabels,
      registers: [registry],
    }),
    lastRunStatus: new Gauge({
      name: 'qontract_reconcile_last_run_status',
      help: 'Last run status',
      labelNames: runLabels,
      registers: [registry],
    }),
    executionCounter: new Counter({
      name: 'qontract_reconcile_execution_counter_total',
      help: 'Counts started integration executions',
      labelNames: runLabels,
      registers: [registry],
    }),
    reconcileTime: new Histogram({
      name: 'qontract_reconcile_function_elapsed_seconds_since_bundle_commit',
      help: 'Run time seconds for tracked functions',
      labelNames: ['name', 'integration'],
      buckets: [60, 150, 300, 600, 1200, 1800, 2400, 3000],
      registers: [registry],
    }),
    gitlabRequests: new Counter({
      name: 'qontract_reconcile_gitlab_request_total',
      help: 'Number of calls made to Gitlab API',
      labelNames: ['integration'],
      registers: [registry],
    }),
    // `shard`, not `shards`: the original's label name for this counter.
    registryGetManifest: new Counter({
      name: 'qontract_reconcile_registry_get_manifest_total',
      help: 'Number of GET requests on image registries',
      labelNames: ['integration', 'shard', 'shard_id', 'registry'],
      registers: [registry],
    }),
  };
}

/**
 * The original declares its cache metrics in every process but nothing
 * increments them, so dashboards find the names with no samples; the port
 * declares them the same way (no cache of the port reports to them either).
 */
function declareCacheMetrics(registry: Registry): void {
  const labelNames = ['integration', 'shards', 'shard_id'];
  new Counter({
    name: 'qontract_reconcile_cache_hits_total',
    help: 'Number of hits to this cache',
    labelNames,
    registers: [registry],
  });
  new Counter({
    name: 'qontract_reconcile_cache_misses_total',
    help: 'Number of misses on this cache',
    labelNames,
    registers: [registry],
  });
  new Gauge({
    name: 'qontract_reconcile_cache_cardinality',
    help: 'Number of keys in the cache',
    labelNames,
    registers: [registry],
  });
}

/** Registries that already carry prom-client's default collectors (they register once). */
const withProcessMetrics = new WeakSet<Registry>();

/**
 * Serves `GET /metrics` (and `/`) on `port`, and `GET /healthz` for the pod's
 * probes: 200 while `healthy()` says so, 503 once it does not (the loop is
 * stopping). Resolves once listening. The registry gains prom-client's default
 * collectors: `process_*` (CPU, resident memory, open fds, start time), as the
 * original's pods export them, and `nodejs_*` (heap, event-loop lag, GC).
 */
export async function serveMetrics(
  registry: Registry,
  port: number,
  host = '0.0.0.0',
  healthy: () => boolean = () => true,
): Promise<Server> {
  if (!withProcessMetrics.has(registry)) {
    collectDefaultMetrics({ register: registry });
    withProcessMetrics.add(registry);
  }
  const server = createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/healthz') {
      const ok = healthy();
      res
        .writeHead(ok ? 200 : 503, { 'Content-Type': 'text/plain' })
        .end(ok ? 'ok\n' : 'stopping\n');
      return;
    }
    if (req.method !== 'GET' || !(req.url === '/metrics' || req.url === '/')) {
      res.writeHead(404).end();
      return;
    }
    registry.metrics().then(
      (body) => res.writeHead(200, { 'Content-Type': registry.contentType }).end(body),
      (err: unknown) => res.writeHead(500).end(String(err)),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}
