/** The fake's page size and our client's: `limit=500` per list request. */
const PAGE_SIZE = 500;

export interface LowerBoundInput {
  /** Objects of each listed kind, per cluster: one cluster-wide paginated list each. */
  readonly listed: ReadonlyMap<string, ReadonlyMap<string, number>>;
  /** Writes the work needs: one per changed object (0 in a dry run). */
  readonly writes: number;
  readonly latencyMs: number;
  /** The run's `--thread-pool-size`. */
  readonly concurrency: number;
}

export interface LowerBound {
  readonly listRequests: number;
  readonly writeRequests: number;
  readonly requests: number;
  /** The longest chain of requests that must follow one another (the pages of one list). */
  readonly longestChain: number;
  readonly ms: number;
}

/**
 * The fewest API round trips the work needs and the time they take at best:
 *
 *   requests = Σ_cluster Σ_kind max(1, ⌈objects / PAGE_SIZE⌉) + writes
 *   ms       = max(requests / concurrency, longest page chain) × latency
 *
 * Pages of one list follow each other (each needs the previous `continue`
 * token), hence the chain term; it only binds when a single list is longer
 * than the rest of the work spread over the pool.
 */
export function lowerBound(input: LowerBoundInput): LowerBound {
  let listRequests = 0;
  let longestChain = input.writes > 0 ? 1 : 0;
  for (const kinds of input.listed.values()) {
    for (const objects of kinds.values()) {
      const pages = Math.max(1, Math.ceil(objects / PAGE_SIZE));
      listRequests += pages;
      longestChain = Math.max(longestChain, pages);
    }
  }
  const requests = listRequests + input.writes;
  const rounds = Math.max(requests / Math.max(1, input.concurrency), longestChain);
  return {
    listRequests,
    writeRequests: input.writes,
    requests,
    longestChain,
    ms: rounds * input.latencyMs,
  };
}
