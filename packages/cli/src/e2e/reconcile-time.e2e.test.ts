import { createMetrics } from '@qontract/core';
import { describe, expect, it } from 'vitest';
import {
  type CliRun,
  commitBundle,
  messages,
  observedReconcileTimes as observed,
  planLines,
  RECONCILE_TIME,
  runQontractReconcile,
  useExampleEnvironment,
} from './harness.ts';

const start = useExampleEnvironment();

describe('qontract_reconcile_function_elapsed_seconds_since_bundle_commit', () => {
  it("observes, for each object written, the time since the bundle's commit", async () => {
    const env = await start({ namespaces: true });
    // The app-interface checkout's HEAD, committed ten minutes ago, is the bundle's commit.
    const committed = await commitBundle(env.appInterfaceDir, 600);

    const dryMetrics = createMetrics();
    const dry = await runQontractReconcile(
      ['--config', env.configPath, '--dry-run', 'openshift-limitranges'],
      {},
      undefined,
      dryMetrics,
    );
    expect(dry.code).toBe(0);
    // A dry-run writes nothing, so it observes nothing.
    expect((await dryMetrics.reconcileTime.get()).values).toEqual([]);

    const metrics = createMetrics();
    const before = Date.now() / 1000;
    const wet = await runQontractReconcile(
      ['--config', env.configPath, 'openshift-limitranges'],
      {},
      undefined,
      metrics,
    );
    const after = Date.now() / 1000;
    expect(wet.code).toBe(0);
    // The exposition as Prometheus scrapes it: `<name>{<labels>} <value>` per line.
    const lines = (await metrics.registry.metrics()).split('\n');
    const family = RECONCILE_TIME;
    const labels = 'name="reconcile.utils.oc.OCCli.apply",integration="openshift-limitranges"';
    const sample = (line: string) =>
      Number(lines.find((l) => l.startsWith(`${line} `))?.split(' ')[1]);
    // Four LimitRanges applied, each between 600 s and 600 s + the run's length after the commit.
    expect(sample(`${family}_count{${labels}}`)).toBe(4);
    const sum = sample(`${family}_sum{${labels}}`);
    expect(sum).toBeGreaterThanOrEqual(4 * (before - committed));
    expect(sum).toBeLessThanOrEqual(4 * (after - committed));
    // The bucket of 600 s holds none of them, that of 1200 s all four.
    expect(sample(`${family}_bucket{le="600",${labels}}`)).toBe(0);
    expect(sample(`${family}_bucket{le="1200",${labels}}`)).toBe(4);
  });

  it('observes namespace creations (new_project) and label writes (label), as the original times them', async () => {
    const env = await start();
    await commitBundle(env.appInterfaceDir, 120);
    const metrics = createMetrics();
    const run = (integration: string) =>
      runQontractReconcile(['--config', env.configPath, integration], {}, undefined, metrics);
    const namespaces = await run('openshift-namespaces');
    expect(namespaces.code, namespaces.stderr).toBe(0);
    const created = planLines(namespaces).filter((m) => m.startsWith("['create'")).length;
    expect(created).toBeGreaterThan(0);
    expect(await observed(metrics, 'new_project', 'openshift-namespaces')).toBe(created);

    const labels = await run('openshift-namespace-labels');
    expect(labels.code, labels.stderr).toBe(0);
    const labelled = messages(labels).filter((m) => m.startsWith('Updating labels on ')).length;
    expect(labelled).toBeGreaterThan(0);
    expect(await observed(metrics, 'label', 'openshift-namespace-labels')).toBe(labelled);
  });

  it('logs a write later than SLOW_OC_RECONCILE_THRESHOLD with LOG_SLOW_OC_RECONCILE=true, as the original', async () => {
    const env = await start({ namespaces: true });
    const committed = await commitBundle(env.appInterfaceDir, 600);
    const slowLines = (run: CliRun) =>
      messages(run).filter((m) => / took [0-9.]+ to reconcile\. /.test(m));
    // Under the threshold: nothing logged, though each write is observed.
    const under = await runQontractReconcile(
      ['--config', env.configPath, 'openshift-resourcequotas'],
      {
        LOG_SLOW_OC_RECONCILE: 'true',
        SLOW_OC_RECONCILE_THRESHOLD: '3600',
      },
    );
    expect(under.code, under.stderr).toBe(0);
    expect(planLines(under).length).toBeGreaterThan(0);
    expect(slowLines(under)).toEqual([]);

    const over = await runQontractReconcile(['--config', env.configPath, 'openshift-limitranges'], {
      LOG_SLOW_OC_RECONCILE: 'yes',
      SLOW_OC_RECONCILE_THRESHOLD: '300',
    });
    expect(over.code, over.stderr).toBe(0);
    const lines = slowLines(over);
    expect(lines).toHaveLength(4);
    for (const line of lines) {
      expect(line).toMatch(
        new RegExp(
          `^Action reconcile\\.utils\\.oc\\.OCCli\\.apply for LimitRange \\S+ in namespace \\S+ ` +
            `from appint-ex-\\S+ took [0-9.]+ to reconcile\\. Commit sha [0-9a-f]{40} and commit ts ${committed}\\.$`,
        ),
      );
    }
  });
});
