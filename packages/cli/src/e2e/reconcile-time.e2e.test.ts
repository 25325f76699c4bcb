import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createMetrics } from '@qontract/core';
import { describe, expect, it } from 'vitest';
import { runQontractReconcile, useExampleEnvironment } from './harness.ts';

const git = promisify(execFile);
const start = useExampleEnvironment();

describe('qontract_reconcile_function_elapsed_seconds_since_bundle_commit', () => {
  it("observes, for each object written, the time since the bundle's commit", async () => {
    const env = await start({ namespaces: true });
    // The app-interface checkout's HEAD, committed ten minutes ago, is the bundle's commit.
    const committed = Math.floor(Date.now() / 1000) - 600;
    const dir = env.appInterfaceDir;
    const vars = {
      ...process.env,
      GIT_AUTHOR_DATE: `@${committed} +0000`,
      GIT_COMMITTER_DATE: `@${committed} +0000`,
    };
    const identity = ['-c', 'user.name=t', '-c', 'user.email=t@example.com'];
    await git('git', ['init', '-q', dir]);
    await git('git', ['-C', dir, 'add', '-A']);
    await git('git', ['-C', dir, ...identity, 'commit', '-q', '-m', 'bundle'], { env: vars });

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
    const family = 'qontract_reconcile_function_elapsed_seconds_since_bundle_commit';
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
});
