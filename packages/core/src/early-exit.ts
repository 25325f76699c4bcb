import { isDeepStrictEqual } from 'node:util';

export interface DesiredStateDiff {
  readonly diffFound: boolean;
  /** Shard values touched by the difference (empty when no selector matched). */
  readonly affectedShards: readonly string[];
}

/**
 * Compares the early-exit desired state of the comparison bundle with the
 * current one. For each selector (`state.*.shard`), the subtree at the
 * wildcard is compared key by key; a changed or removed entry contributes its
 * shard value from the previous state, a changed or added one from the current.
 */
export function diffDesiredStates(
  previous: unknown,
  current: unknown,
  shardPathSelectors: readonly string[] = [],
): DesiredStateDiff {
  const diffFound = !isDeepStrictEqual(previous, current);
  if (!diffFound) return { diffFound, affectedShards: [] };
  const shards = new Set<string>();
  for (const selector of shardPathSelectors) {
    const parts = selector.split('.');
    const star = parts.indexOf('*');
    if (star < 0) continue;
    const prefix = parts.slice(0, star);
    const suffix = parts.slice(star + 1);
    const prevMap = asRecord(at(previous, prefix));
    const curMap = asRecord(at(current, prefix));
    for (const key of new Set([...Object.keys(prevMap), ...Object.keys(curMap)])) {
      const before = prevMap[key];
      const after = curMap[key];
      if (isDeepStrictEqual(before, after)) continue;
      for (const side of [before, after]) {
        const value = at(side, suffix);
        if (typeof value === 'string' || typeof value === 'number') shards.add(String(value));
      }
    }
  }
  return { diffFound, affectedShards: [...shards].sort() };
}

function at(root: unknown, path: readonly string[]): unknown {
  let cur = root;
  for (const p of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[p];
  }
  return cur;
}

function asRecord(v: unknown): Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v)
    ? (v as Record<string, unknown>)
    : {};
}
