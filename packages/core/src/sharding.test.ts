import { describe, expect, it } from 'vitest';
import { isInShard, shardConfigFromEnv, shardOf } from './sharding.ts';

describe('sharding', () => {
  // Values computed with Python: int(hashlib.md5(key.encode()).hexdigest(), 16) % shards
  it.each([
    ['saas-qontract-reconcile', 3, 1],
    ['appint-ex-01/default', 2, 1],
    ['cluster-a/ns-1', 7, 0],
    ['', 5, 1],
    ['ünïcode/ns', 4, 2],
    ['appint-ex-02', 10, 2],
  ])('puts %j among %i shards into shard %i, as the original', (key, shards, expected) => {
    expect(shardOf(key, shards)).toBe(expected);
  });

  it('matches the upstream vector: saas-qontract-reconcile is in shard 1 of 3, not in 2', () => {
    expect(isInShard('saas-qontract-reconcile', { shards: 3, shardId: 1 })).toBe(true);
    expect(isInShard('saas-qontract-reconcile', { shards: 3, shardId: 2 })).toBe(false);
  });

  it('puts everything in the single shard', () => {
    expect(isInShard('anything', { shards: 1, shardId: 0 })).toBe(true);
  });

  it('reads SHARDS, SHARD_ID and SHARD_KEY', () => {
    expect(shardConfigFromEnv({})).toEqual({ shards: 1, shardId: 0 });
    expect(shardConfigFromEnv({ SHARDS: '4', SHARD_ID: '3', SHARD_KEY: 'c1' })).toEqual({
      shards: 4,
      shardId: 3,
      shardKey: 'c1',
    });
  });

  it.each([
    [{ SHARDS: 'two' }, /SHARDS must be a whole number/],
    [{ SHARDS: '0' }, /at least 1/],
    [{ SHARDS: '2', SHARD_ID: '2' }, /out of range/],
    [{ SHARD_ID: '-1' }, /SHARD_ID must be a whole number/],
  ])('rejects %j', (env, message) => {
    expect(() => shardConfigFromEnv(env)).toThrow(message);
  });
});
