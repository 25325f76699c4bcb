import { describe, expect, it } from 'vitest';
import { type StartupMeasurement, startupMarkdown } from './startup.ts';

const measured = (
  name: string,
  command: string,
  variant: 'source' | 'bundle',
  peakRssMiB: number,
): StartupMeasurement => ({
  name,
  command,
  variant,
  runs: 10,
  medianMs: 500,
  minMs: 450,
  maxMs: 600,
  medianCpuMs: 400,
  peakRssMiB,
  exitCode: 0,
  loadAverage: 0.5,
  footprint: {
    rssMiB: peakRssMiB - 2,
    heapMiB: 35,
    youngMiB: 16,
    externalMiB: 4,
    workers: 0,
  },
});

describe('startupMarkdown', () => {
  it("breaks the bundle's peak RSS down, the original's figure beside the pod's run", () => {
    const pod = 'run-integration, RUN_ONCE: the pod';
    const text = startupMarkdown([
      measured(
        'startup qontract-reconcile --help (bundle)',
        'qontract-reconcile --help',
        'bundle',
        80,
      ),
      measured('startup run-integration RUN_ONCE x (the pod) (source)', pod, 'source', 135),
      measured('startup run-integration RUN_ONCE x (the pod) (bundle)', pod, 'bundle', 113),
    ]);
    const rows = text.split('\n');
    // Both variants in the start-up table, the bundle alone in the breakdown.
    expect(rows.filter((r) => r.startsWith(`| \`${pod}\``))).toEqual([
      `| \`${pod}\` | source | 10 | 500 (450–600) | 400 | 135 | 0 | 0.5 |`,
      `| \`${pod}\` | bundle | 10 | 500 (450–600) | 400 | 113 | 0 | 0.5 |`,
      // 111 MiB at exit: 35 of V8 heap (16 young), 4 external, 72 the rest.
      `| \`${pod}\` | 113 | 35 (16) | 4 | 72 | 0 | 106–134 |`,
    ]);
    expect(rows).toContain('| `qontract-reconcile --help` | 80 | 35 (16) | 4 | 39 | 0 |  |');
  });
});
