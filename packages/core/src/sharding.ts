import { createHash } from 'node:crypto';

/** The runtime shard this process is, from `SHARDS` / `SHARD_ID` (legacy sharding). */
export interface ShardConfig {
  readonly shards: number;
  readonly shardId: number;
  /** `SHARD_KEY` of key-based shards; only used as a metrics label. */
  readonly shardKey?: string;
}

export const SINGLE_SHARD: ShardConfig = { shards: 1, shardId: 0 };

/**
 * The original's membership rule: `int(md5(key).hexdigest(), 16) % SHARDS == SHARD_ID`.
 * The md5 digest is read as one unsigned 128-bit integer, so Python and this
 * port put every key in the same shard and can run side by side.
 */
export function isInShard(key: string, shard: ShardConfig): boolean {
  if (shard.shards <= 1) return true;
  return shardOf(key, shard.shards) === shard.shardId;
}

/** The shard id (0-based) that owns `key` among `shards` shards. */
export function shardOf(key: string, shards: number): number {
  if (shards <= 1) return 0;
  const digest = createHash('md5').update(key, 'utf8').digest('hex');
  return Number(BigInt(`0x${digest}`) % BigInt(shards));
}

/** Reads `SHARDS`, `SHARD_ID`, `SHARD_KEY`; rejects values the original would not accept. */
export function shardConfigFromEnv(env: Readonly<Record<string, string | undefined>>): ShardConfig {
  const shards = parseNonNegativeInt(env.SHARDS ?? '1', 'SHARDS');
  const shardId = parseNonNegativeInt(env.SHARD_ID ?? '0', 'SHARD_ID');
  if (shards < 1) throw new Error(`SHARDS must be at least 1, got ${shards}`);
  if (shardId >= shards)
    throw new Error(`SHARD_ID ${shardId} is out of range for SHARDS=${shards}`);
  return { shards, shardId, ...(env.SHARD_KEY ? { shardKey: env.SHARD_KEY } : {}) };
}

function parseNonNegativeInt(value: string, name: string): number {
  if (!/^\s*\d+\s*$/.test(value)) throw new Error(`${name} must be a whole number, got '${value}'`);
  return Number.parseInt(value, 10);
}
