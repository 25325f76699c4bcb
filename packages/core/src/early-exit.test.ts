import { describe, expect, it } from 'vitest';
import { diffDesiredStates } from './early-exit.ts';

describe('diffDesiredStates', () => {
  const state = (clusters: Record<string, string>) => ({
    state: Object.fromEntries(Object.entries(clusters).map(([c, hash]) => [c, { shard: c, hash }])),
  });

  it('finds no difference between equal states', () => {
    expect(diffDesiredStates(state({ a: '1' }), state({ a: '1' }), ['state.*.shard'])).toEqual({
      diffFound: false,
      affectedShards: [],
    });
  });

  it('names the shards whose entries changed, were added or removed', () => {
    const before = state({ a: '1', b: '2', c: '3' });
    const after = state({ a: '1', b: 'changed', d: '4' });
    expect(diffDesiredStates(before, after, ['state.*.shard'])).toEqual({
      diffFound: true,
      affectedShards: ['b', 'c', 'd'],
    });
  });

  it('reports a difference without shards when no selector is given', () => {
    expect(diffDesiredStates({ x: 1 }, { x: 2 })).toEqual({ diffFound: true, affectedShards: [] });
  });
});
