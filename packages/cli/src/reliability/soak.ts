import { join } from 'node:path';
import type { FaultRule } from '@qontract/fake-kube-apiserver';
import { seededRandom } from '@qontract/fake-kube-apiserver';
import type { ExampleEnvironment } from '@qontract/testing';
import { expect } from 'vitest';
import { editFile, objectNames, runQontractReconcile } from '../e2e/harness.ts';
import { summaryOf } from './matrix.ts';

const CLUSTERS = ['appint-ex-01', 'appint-ex-02', 'appint-ex-k8s'] as const;
const HOMES: Record<string, string> = {
  'appint-ex-01': 'example-app-stage',
  'appint-ex-02': 'example-app-production',
  'appint-ex-k8s': 'example-app-edge',
};

/**
 * Flaky-cluster faults the soak draws from: each fails a share of the reads
 * or writes. Deletes are left alone: a delete that fails after others went
 * through is an error that comes after the deletions, not before.
 */
const FLAKES: readonly FaultRule[] = [
  { status: 500, errorRate: 0.3, verb: 'list' },
  { status: 503, errorRate: 0.5, verb: 'apply' },
  { drop: true, errorRate: 0.2, verb: 'get' },
  { drop: true, errorRate: 0.2, verb: 'apply' },
  { status: 429, retryAfter: 0, errorRate: 0.4, verb: 'list' },
  { latencyMs: 40 },
  { status: 409, errorRate: 0.5, verb: 'apply' },
];

const configMaps = (env: ExampleEnvironment, cluster: string) =>
  objectNames(env, cluster, 'v1', 'ConfigMap', HOMES[cluster]).filter((n) =>
    n.startsWith('example-app-config'),
  );

/**
 * The long soak: round after round, the example ConfigMap is renamed and
 * openshift-resources runs while randomly chosen clusters misbehave
 * (seeded, so a failing round can be replayed). Every round must keep the
 * rules: the summary agrees with the exit code; a failed run deletes
 * nothing; a clean run converges. Returns the exit codes of the rounds.
 */
export async function soak(
  env: ExampleEnvironment,
  rounds: number,
  seed: number,
): Promise<number[]> {
  const random = seededRandom(seed);
  const codes: number[] = [];
  let name = 'example-app-config';
  for (let round = 1; round <= rounds; round++) {
    const next = `example-app-config-r${round}`;
    await editFile(join(env.appInterfaceDir, 'resources/example-app/configmap.yml'), (t) =>
      t.replace(`name: ${name}\n`, `name: ${next}\n`),
    );
    name = next;
    env.server.faults.clear();
    for (const cluster of CLUSTERS) {
      if (random() < 0.5) continue;
      env.server.faults.set(cluster, FLAKES[Math.floor(random() * FLAKES.length)] ?? {});
    }
    env.server.resetLog();
    const run = await runQontractReconcile(['--config', env.configPath, 'openshift-resources'], {
      QONTRACT_CLUSTER_RETRY_UNIT_MS: '5',
    });
    const summary = summaryOf(run);
    const where = `round ${round} (seed ${seed})`;
    expect(summary.exit_code, where).toBe(run.code);
    expect(summary.errors > 0, where).toBe(run.code !== 0);
    expect(run.code === 0 || run.code === 1, `${where}: exit ${run.code}`).toBe(true);
    if (run.code !== 0) {
      const deleted = env.server
        .mutatingRequests({ verb: 'delete' })
        .filter((r) => r.status >= 200 && r.status < 300);
      expect(deleted, where).toEqual([]);
    } else {
      for (const cluster of CLUSTERS) expect(configMaps(env, cluster), where).toEqual([name]);
    }
    codes.push(run.code);
  }
  // Once the faults are gone, one clean run converges whatever the rounds left behind.
  env.server.faults.clear();
  const clean = await runQontractReconcile(['--config', env.configPath, 'openshift-resources']);
  expect(clean.code, clean.stderr).toBe(0);
  for (const cluster of CLUSTERS) expect(configMaps(env, cluster)).toEqual([name]);
  return codes;
}
