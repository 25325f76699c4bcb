import { describe, expect, it } from 'vitest';
import { createMetrics, serveMetrics } from './metrics.ts';

describe('metrics', () => {
  it('serves the original metric names and labels over HTTP on /metrics', async () => {
    const metrics = createMetrics();
    const labels = { integration: 'openshift-groups', shards: '2', shard_id: '1' };
    metrics.executionCounter.inc(labels);
    metrics.lastRunStatus.set(labels, 0);
    metrics.lastRunSeconds.set(labels, 12.5);
    const server = await serveMetrics(metrics.registry, 0, '127.0.0.1');
    try {
      const { port } = server.address() as { port: number };
      const response = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toContain('text/plain');
      const text = await response.text();
      expect(text).toContain(
        'qontract_reconcile_execution_counter_total{integration="openshift-groups",shards="2",shard_id="1"} 1',
      );
      expect(text).toContain(
        'qontract_reconcile_last_run_status{integration="openshift-groups",shards="2",shard_id="1"} 0',
      );
      expect(text).toContain(
        'qontract_reconcile_last_run_seconds{integration="openshift-groups",shards="2",shard_id="1"} 12.5',
      );
      // prom-client's default collectors: the process and runtime metrics of the pod.
      for (const name of [
        'process_cpu_seconds_total',
        'process_resident_memory_bytes',
        'process_open_fds',
        'process_start_time_seconds',
        'nodejs_heap_size_used_bytes',
        'nodejs_eventloop_lag_seconds',
      ]) {
        expect(text).toMatch(new RegExp(`^${name} [0-9.e+-]+$`, 'm'));
      }
      expect((await fetch(`http://127.0.0.1:${port}/other`)).status).toBe(404);
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  it("declares the original's request and cache metrics, with its label names", async () => {
    const text = await createMetrics().registry.metrics();
    for (const [name, type] of [
      ['qontract_reconcile_gitlab_request_total', 'counter'],
      ['qontract_reconcile_registry_get_manifest_total', 'counter'],
      ['qontract_reconcile_cache_hits_total', 'counter'],
      ['qontract_reconcile_cache_misses_total', 'counter'],
      ['qontract_reconcile_cache_cardinality', 'gauge'],
    ]) {
      expect(text).toContain(`# TYPE ${name} ${type}\n`);
    }
    const metrics = createMetrics();
    metrics.registryGetManifest.inc({
      integration: 'i',
      shard: '1',
      shard_id: '0',
      registry: 'quay.io',
    });
    expect(await metrics.registry.metrics()).toContain(
      'qontract_reconcile_registry_get_manifest_total{integration="i",shard="1",shard_id="0",registry="quay.io"} 1',
    );
  });

  it('answers /healthz with 200 while healthy and 503 once stopping', async () => {
    let healthy = true;
    const server = await serveMetrics(createMetrics().registry, 0, '127.0.0.1', () => healthy);
    try {
      const { port } = server.address() as { port: number };
      const alive = await fetch(`http://127.0.0.1:${port}/healthz`);
      expect(alive.status).toBe(200);
      expect(await alive.text()).toBe('ok\n');
      healthy = false;
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(503);
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
