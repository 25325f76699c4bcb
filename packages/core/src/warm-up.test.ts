import { describe, expect, it } from 'vitest';
import { startRunWarmUps, warmUpWhenRunStarts } from './warm-up.ts';

describe('run warm-ups', () => {
  it('starts every registered warm-up, once per registration, and a failing one stops none', () => {
    const started: string[] = [];
    const first = () => started.push('first');
    warmUpWhenRunStarts(first);
    warmUpWhenRunStarts(first);
    warmUpWhenRunStarts(() => {
      throw new Error('cannot warm up');
    });
    warmUpWhenRunStarts(() => started.push('last'));
    expect(started).toEqual([]);
    expect(() => startRunWarmUps()).not.toThrow();
    expect(started).toEqual(['first', 'last']);
  });
});
