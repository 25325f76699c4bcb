import { Counter, Gauge, type Registry } from 'prom-client';

/** The original's metric label `integration` (its SAPMBaseMetric default). */
const INTEGRATION = 'saas_auto_promotions_manager';

function metric<T extends Counter | Gauge>(registry: Registry, name: string, make: () => T): T {
  return (registry.getSingleMetric(name) as T | undefined) ?? make();
}

/**
 * The original's SAPM metrics (`sapm_opened_mrs`, `sapm_closed_mrs` counters,
 * exposed with `_total` as Python's client does, and the
 * `sapm_parallel_open_mrs` gauge), with its labels.
 */
export function sapmMetrics(registry: Registry) {
  const opened = metric(
    registry,
    'sapm_opened_mrs_total',
    () =>
      new Counter({
        name: 'sapm_opened_mrs_total',
        help: 'Counter for the number of opened auto-promotion MRs',
        labelNames: ['integration', 'is_batchable', 'batch_size'],
        registers: [registry],
      }),
  );
  const closed = metric(
    registry,
    'sapm_closed_mrs_total',
    () =>
      new Counter({
        name: 'sapm_closed_mrs_total',
        help: 'Counter for the number of closed auto-promotion MRs',
        labelNames: ['integration', 'reason'],
        registers: [registry],
      }),
  );
  const parallel = metric(
    registry,
    'sapm_parallel_open_mrs',
    () =>
      new Gauge({
        name: 'sapm_parallel_open_mrs',
        help: 'Gauge for the number of parallel open auto-promotion MRs',
        labelNames: ['integration'],
        registers: [registry],
      }),
  );
  return {
    opened: (batchable: boolean, batchSize: number) =>
      opened.inc({
        integration: INTEGRATION,
        is_batchable: batchable ? 'True' : 'False',
        batch_size: String(batchSize),
      }),
    closed: (reason: string) => closed.inc({ integration: INTEGRATION, reason }),
    parallelOpen: (n: number) => parallel.set({ integration: INTEGRATION }, n),
  };
}
