import { describe, expect, it } from 'vitest';
import { pipelineRunsToDelete } from './cleaner.ts';

const now = new Date('2026-05-10T12:00:00Z');
/** Runs r0 (newest, today) .. r4 (4 days old). */
const runs = [3, 0, 4, 1, 2].map((age) => ({
  metadata: {
    name: `r${age}`,
    creationTimestamp: new Date(now.getTime() - age * 86_400_000 - 1000)
      .toISOString()
      .replace(/\.\d+Z$/, 'Z'),
  },
}));
const names = (list: readonly { metadata: { name: string } }[]) => list.map((r) => r.metadata.name);

// Cases written from the original's get_pipeline_runs_to_delete (cf746b622^).
describe('pipelineRunsToDelete', () => {
  it('keeps the newest `minimum`, deletes the others once older than `days`', () => {
    expect(names(pipelineRunsToDelete(runs, { days: 2, minimum: 1, maximum: null }, now))).toEqual([
      'r2',
      'r3',
      'r4',
    ]);
    expect(names(pipelineRunsToDelete(runs, { days: 2, minimum: 4, maximum: null }, now))).toEqual([
      'r4',
    ]);
  });

  it('deletes all beyond `maximum`, and those within it older than `days`', () => {
    expect(names(pipelineRunsToDelete(runs, { days: 2, minimum: null, maximum: 2 }, now))).toEqual([
      'r2',
      'r3',
      'r4',
    ]);
    expect(names(pipelineRunsToDelete(runs, { days: 1, minimum: null, maximum: 3 }, now))).toEqual([
      'r3',
      'r4',
      'r1',
      'r2',
    ]);
  });

  it('without days deletes everything minimum / maximum do not keep', () => {
    expect(
      names(pipelineRunsToDelete(runs, { days: null, minimum: 2, maximum: null }, now)),
    ).toEqual(['r2', 'r3', 'r4']);
  });
});
