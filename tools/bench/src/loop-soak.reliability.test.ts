import { describe, expect, it } from 'vitest';
import { runLoopSoak, slope } from './loop-soak.ts';
import { LOOP_POD_MEMORY_LIMIT_MIB } from './scenarios.ts';

/**
 * The soak of run-integration's loop mode with a flapping cluster. `npm test`
 * runs a short one (the rules over an outage and a recovery);
 * `npm run test:reliability` (QONTRACT_RELIABILITY=full) runs
 * QONTRACT_LOOP_SOAK_ITERATIONS (default 60) and prints the figures that
 * docs/reliability.md reports.
 */
const full = process.env.QONTRACT_RELIABILITY === 'full';
const iterations = full ? Number(process.env.QONTRACT_LOOP_SOAK_ITERATIONS ?? 60) : 3;

describe('least-squares slope', () => {
  it('is the trend per iteration, 0 for a flat or single sample', () => {
    expect(slope([5, 7, 9, 11])).toBe(2);
    expect(slope([3, 3, 3])).toBe(0);
    expect(slope([4])).toBe(0);
    expect(slope([10, 0, 10, 0])).toBeCloseTo(-2);
  });
});

describe(`run-integration loop soak (${iterations} iterations, a flapping cluster, the heap of a ${LOOP_POD_MEMORY_LIMIT_MIB} MiB pod)`, () => {
  it(
    'converges whenever the cluster is up, and deletes nothing while it is down',
    async () => {
      const report = await runLoopSoak(iterations, LOOP_POD_MEMORY_LIMIT_MIB);
      const mib = (b: number) => (b / 2 ** 20).toFixed(1);
      const first = report.iterations[0]!;
      const last = report.iterations.at(-1)!;
      process.stdout.write(
        `loop soak: ${report.iterations.length} iterations, ${report.iterations.filter((i) => !i.clusterUp).length} with ${report.flappingCluster} down; ` +
          `RSS ${mib(first.rssBytes)} -> ${mib(last.rssBytes)} MiB (max ${mib(Math.max(...report.iterations.map((i) => i.rssBytes)))}), ` +
          `slope ${(report.rssSlope / 1024).toFixed(1)} KiB/iteration (second half ${(report.rssSlopeSecondHalf / 1024).toFixed(1)}); ` +
          `open fds ${first.openFds} -> ${last.openFds}, slope ${report.fdSlope.toFixed(3)}/iteration\n`,
      );
      const every = Math.max(1, Math.floor(report.iterations.length / 15));
      process.stdout.write(
        `RSS MiB by iteration: ${report.iterations
          .filter((i) => i.index === 1 || i.index % every === 0)
          .map((i) => `${i.index}:${mib(i.rssBytes)}`)
          .join(' ')}\n`,
      );
      expect(report.iterations.flatMap((i) => i.violations)).toEqual([]);
      // At least one outage and one recovery after it.
      const its = report.iterations;
      expect(its.some((i, k) => !i.clusterUp && its[k + 1]?.clusterUp)).toBe(true);
      if (full) {
        // A leaked socket per run would give a slope of about 1.
        expect(report.fdSlope).toBeLessThan(0.25);
      }
    },
    full ? 3_600_000 : 120_000,
  );
});
