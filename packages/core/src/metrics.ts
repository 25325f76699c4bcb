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
}

export function createMetrics(registry = new Registry()): Metrics {
  const runLabels = ['integration', 'shards', 'shard_id'] as const;
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
  };
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
