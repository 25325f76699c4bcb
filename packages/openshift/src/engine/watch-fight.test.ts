import { describe, expect, it } from 'vitest';
import { FightRecord } from './watch-fight.ts';

const POLICY = { threshold: 3, windowMs: 60_000, backoffMs: 1_000, maxBackoffMs: 5_000 };

describe('FightRecord: the fight accounting of one watched object', () => {
  it('counts each fix in turn: fixes in the window, reported once per fight, the backoff', () => {
    // [fixed at (ms), fixes in the window, report, backoffUntil after it]
    const table: Array<[number, number, boolean, number]> = [
      [0, 1, false, 0],
      [10, 2, false, 0],
      // the threshold: a fight, reported, the first wait
      [20, 3, true, 1_020],
      // every further fix doubles the wait, and is not reported again
      [30, 4, false, 2_030],
      [40, 5, false, 4_040],
      // up to the maximum
      [50, 6, false, 5_050],
      [60, 7, false, 5_060],
      // the window slides (the fixes at 0 and 10 no longer count): the fight goes on
      [60_015, 6, false, 65_015],
      // a quiet window ends the fight: the count starts over (the old wait is long past)
      [200_000, 1, false, 65_015],
      [200_010, 2, false, 65_015],
      // the next fight is reported again, its wait starts from the first
      [200_020, 3, true, 201_020],
      [200_030, 4, false, 202_030],
    ];
    const record = new FightRecord(POLICY);
    const seen = table.map(([at]) => {
      const { fixes, report } = record.fixed(at);
      return [at, fixes, report, record.backoffUntil];
    });
    expect(seen).toEqual(table);
  });
});
