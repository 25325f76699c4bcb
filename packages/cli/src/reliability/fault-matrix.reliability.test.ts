import { describe, expect, it } from 'vitest';
import { useGitlabEnvironment } from '../e2e/gitlab-environment.ts';
import { useExampleEnvironment } from '../e2e/harness.ts';
import { FAULTS, SERVICE_FAULTS } from './faults.ts';
import { cellName, cells, FULL, runCell } from './matrix.ts';
import { SCENARIOS } from './scenarios.ts';
import { soak } from './soak.ts';

// The fault matrix: every integration that writes, under every fault that
// means something for it. One row per (integration, fault), generated from
// SCENARIOS × FAULTS; `npm test` runs the CI_CELLS, `npm run
// test:reliability` all of them.

const start = { kube: useExampleEnvironment(), gitlab: useGitlabEnvironment() };

describe('fault matrix', () => {
  it.each(cells(SCENARIOS, [...FAULTS, ...SERVICE_FAULTS]).map((c) => [cellName(c), c] as const))(
    '%s',
    async (_name, cell) => {
      await runCell(cell, start);
    },
  );
});

// The long soak runs only under `npm run test:reliability`: it takes minutes.
if (FULL) {
  describe('soak', () => {
    const seed = Number(process.env.QONTRACT_SOAK_SEED ?? 1);
    const rounds = Number(process.env.QONTRACT_SOAK_ROUNDS ?? 25);
    it(`openshift-resources, ${rounds} rounds under random cluster faults (seed ${seed})`, {
      timeout: 900_000,
    }, async () => {
      const env = await start.kube({ namespaces: true });
      const codes = await soak(env, rounds, seed);
      // The rounds mixed failing and clean runs, or the soak proved little.
      expect(new Set(codes).size).toBe(2);
    });
  });
}
