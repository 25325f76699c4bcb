import { expect } from 'vitest';
import { type CliRun, messages, runQontractReconcile } from '../e2e/harness.ts';
import type { Fault } from './faults.ts';
import type { Scenario, Starters, World } from './scenarios.ts';

/** One cell of the matrix: an integration (its scenario) under one fault. */
export interface Cell {
  readonly scenario: Scenario;
  readonly fault: Fault;
}

/**
 * The cells `npm test` runs (`integration × fault` names); the rest run
 * under `npm run test:reliability` (QONTRACT_RELIABILITY=full). Chosen so
 * that every fault and every integration appears at least once.
 */
const CI_CELLS: ReadonlySet<string> = new Set([
  'openshift-resources × 500 on every request',
  'openshift-resources × cluster goes down mid-run (during its first write)',
  'openshift-resources × list continue token expires (410)',
  'openshift-namespaces × cluster down from the start',
  'openshift-rolebindings × 422 immutable field on every write',
  'openshift-groups × connections reset on every request',
  'openshift-namespace-labels × 409 conflict on every write',
  'openshift-groups × 429 with Retry-After, twice',
  'github × 500 on every request of the target',
  'gitlab-members × connections reset on every request of the target',
  'gitlab-members × service goes down mid-run (during the first write)',
  'gitlab-projects × 422 on every write to the target',
  'openshift-resources × GraphQL answers an HTML page',
  'gitlab-members × GraphQL answers an HTML page',
  'github × Vault down',
  'openshift-namespace-labels × S3 state store down',
]);

export const cellName = (c: Cell) => `${c.scenario.integration} × ${c.fault.name}`;

/** The environment switch: the whole matrix, or the part that fits a CI run. */
export const FULL = process.env.QONTRACT_RELIABILITY === 'full';

export function cells(
  scenarios: readonly Scenario[],
  faults: readonly Fault[],
  ci: ReadonlySet<string> = CI_CELLS,
): Cell[] {
  return scenarios
    .flatMap((scenario) =>
      faults.filter((f) => f.applies?.(scenario) ?? true).map((fault) => ({ scenario, fault })),
    )
    .filter((c) => FULL || ci.has(cellName(c)));
}

/** Environment of every run: short retry pauses so that a failing request fails in well under a second. */
const FAST = {
  QONTRACT_CLUSTER_RETRY_UNIT_MS: '20',
  QONTRACT_GITLAB_RETRY_UNIT_MS: '5',
  // A hung request is given up after this; the cluster alone is then reported.
  CLUSTER_REQUEST_TIMEOUT_SECS: '5',
};

export interface Summary {
  readonly exit_code: number;
  readonly errors: number;
}

/** The `<integration> finished: ...` record every run ends with. */
export function summaryOf(run: CliRun): Summary {
  const record = run.logs.findLast((l) => l.summary !== undefined);
  expect(record, `no summary line in:\n${run.stderr}`).toBeDefined();
  return record?.summary as Summary;
}

/**
 * Runs one cell: sets the scenario up, injects the fault, runs the
 * integration (wet) and checks the rules the matrix is about.
 */
export async function runCell(cell: Cell, start: Starters) {
  const { scenario: s, fault } = cell;
  const world = await s.setup(start);
  await fault.prepare?.(world, s);
  world.resetLogs();
  await fault.inject(world, s);
  const done = new AbortController();
  const beside = fault.during?.(world, s, done.signal);
  let run: CliRun;
  try {
    run = await runQontractReconcile(['--config', world.kube.configPath, s.integration], {
      ...FAST,
      ...world.env,
    });
  } finally {
    done.abort();
    await beside;
  }
  checkCell(cell, world, run);
  return { world, run };
}

function checkCell(cell: Cell, world: World, run: CliRun): void {
  const { scenario: s, fault } = cell;
  const errors = messages(run, 50).join('\n');
  const summary = summaryOf(run);
  // The summary line and the exit code tell the same story.
  expect(summary.exit_code).toBe(run.code);
  expect(summary.errors > 0, `summary: ${JSON.stringify(summary)}`).toBe(run.code !== 0);
  // A run never crashes (exit 2+) because a service misbehaves: it reports.
  expect(errors).not.toMatch(/ at .*\.ts:\d+/);
  if (fault.outcome === 'converges') {
    expect(run.code, run.stderr).toBe(0);
    s.allReconciled(world);
    return;
  }
  expect(run.code, run.stderr).toBe(1);
  // Zero deletions anywhere once an error exists; where removals are scoped by
  // target, zero in the faulty target (a fault of the whole run: anywhere).
  const deleted = s.deletions(world);
  if (fault.outcome === 'target' && s.scopedRemovals) {
    const faulty = world.faultyPath ?? s.faultyPath ?? new RegExp(s.faulty);
    expect(deleted.filter((d) => faulty.test(d))).toEqual([]);
  } else {
    expect(deleted).toEqual([]);
  }
  if (fault.writesNothing) expect(world.writes()).toEqual([]);
  if (fault.says) expect(errors).toMatch(fault.says);
  if (fault.outcome === 'target') {
    expect(errors).toContain(s.faulty);
    s.healthyReconciled(world);
  }
}
