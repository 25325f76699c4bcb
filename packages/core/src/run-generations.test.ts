import { describe, expect, it } from 'vitest';
import { RunGenerations } from './run-generations.ts';

describe('RunGenerations', () => {
  it('drops once the last run under way ends, what no run since the last drop used', () => {
    const runs = new RunGenerations();
    const used = new Map<string, number>();
    const drops: number[] = [];
    const drop = (epoch: number) => {
      drops.push(epoch);
      for (const [k, run] of used) if (run < epoch) used.delete(k);
    };
    const one = runs.begin();
    used.set('a', one);
    used.set('b', one);
    runs.end(one, drop);
    expect(drops).toEqual([1]);
    expect([...used.keys()]).toEqual(['a', 'b']);

    // Two runs overlap: the first to end drops nothing; the second keeps what either used.
    const two = runs.begin();
    const three = runs.begin();
    used.set('a', two);
    runs.end(two, drop);
    expect(drops).toEqual([1]);
    used.set('c', three);
    runs.end(three, drop);
    expect(drops).toEqual([1, 2]);
    expect([...used.keys()].sort()).toEqual(['a', 'c']);

    // Ending a run twice does nothing.
    runs.end(three, drop);
    expect(drops).toEqual([1, 2]);
  });
});
