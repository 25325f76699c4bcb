/**
 * Which merge requests to open and which to close (the original's
 * `Batcher`): from the desired promotions and the open SAPM merge requests,
 * without any I/O.
 */

/** Why an open merge request is closed: the note left on it, as the original words it. */
export const Reason = {
  MISSING_UNBATCHING:
    "Closing this MR because it failed MR check and isn't marked as un-batchable yet.",
  OUTDATED_CONTENT: 'Closing this MR because it has out-dated content.',
  NEW_BATCH: 'Closing this MR in favor of a new batch MR.',
} as const;
export type ReasonName = keyof typeof Reason;

/** Open merge requests hold at most this many content hashes (BATCH_SIZE_LIMIT). */
const BATCH_SIZE_LIMIT = 5;

export interface Promotion {
  readonly contentHashes: ReadonlySet<string>;
  readonly channels: ReadonlySet<string>;
}

/** An open SAPM merge request of the batcher kind, as parsed from its description. */
export interface OpenBatcherMergeRequest<M = unknown> {
  readonly raw: M;
  readonly contentHashes: ReadonlySet<string>;
  readonly channels: ReadonlySet<string>;
  readonly failedMrCheck: boolean;
  readonly isBatchable: boolean;
}

interface Deletion<M = unknown> {
  readonly mr: OpenBatcherMergeRequest<M>;
  readonly reason: ReasonName;
}

export interface Addition {
  readonly contentHashes: Set<string>;
  readonly channels: Set<string>;
  readonly batchable: boolean;
}

export interface Diff<M = unknown> {
  readonly deletions: Deletion<M>[];
  readonly additions: Addition[];
}

const subset = (a: ReadonlySet<string>, b: ReadonlySet<string>) => [...a].every((x) => b.has(x));

/**
 * 1. Unbatching: a batchable MR whose check failed is closed and each of its
 *    promotions gets an MR of its own, never batched again.
 * 2. MRs whose content is no longer desired are closed.
 * 3. Promotions no open MR carries are batched, up to `batchLimit` hashes
 *    per MR; a batchable MR with room is closed and merged into the new batch.
 */
export function reconcileBatches<M>(
  desired: readonly Promotion[],
  open: readonly OpenBatcherMergeRequest<M>[],
  batchLimit: number = BATCH_SIZE_LIMIT,
): Diff<M> {
  const diff: Diff<M> = { deletions: [], additions: [] };

  const unbatchable = new Set<string>();
  const falselyBatchable = new Set<string>();
  let openMrs: OpenBatcherMergeRequest<M>[] = [];
  for (const mr of open) {
    if (!mr.isBatchable) {
      for (const h of mr.contentHashes) unbatchable.add(h);
      openMrs.push(mr);
    } else if (mr.failedMrCheck) {
      for (const h of mr.contentHashes) falselyBatchable.add(h);
      diff.deletions.push({ mr, reason: 'MISSING_UNBATCHING' });
    } else {
      openMrs.push(mr);
    }
  }
  const promotions: Promotion[] = [];
  for (const p of desired) {
    if (subset(p.contentHashes, unbatchable)) {
      promotions.push(p);
    } else if (subset(p.contentHashes, falselyBatchable)) {
      diff.additions.push({
        contentHashes: new Set(p.contentHashes),
        channels: new Set(p.channels),
        batchable: false,
      });
    } else {
      promotions.push(p);
    }
  }

  const allDesired = new Set(promotions.flatMap((p) => [...p.contentHashes]));
  openMrs = openMrs.filter((mr) => {
    if (subset(mr.contentHashes, allDesired)) return true;
    diff.deletions.push({ mr, reason: 'OUTDATED_CONTENT' });
    return false;
  });

  const submitted = new Set(openMrs.flatMap((mr) => [...mr.contentHashes]));
  const unsubmitted = promotions.filter((p) => !subset(p.contentHashes, submitted));
  if (unsubmitted.length === 0) return diff;

  // There is at most one batch with room: it is taken apart into the new batch(es).
  const withRoom = openMrs.find((mr) => mr.isBatchable && mr.contentHashes.size < batchLimit);
  if (withRoom) {
    unsubmitted.push({ contentHashes: withRoom.contentHashes, channels: withRoom.channels });
    diff.deletions.push({ mr: withRoom, reason: 'NEW_BATCH' });
  }
  let batch: Addition = { contentHashes: new Set(), channels: new Set(), batchable: true };
  for (const p of unsubmitted) {
    for (const h of p.contentHashes) batch.contentHashes.add(h);
    for (const c of p.channels) batch.channels.add(c);
    // A batch may end above the limit; it only stops growing.
    if (batch.contentHashes.size >= batchLimit) {
      diff.additions.push(batch);
      batch = { contentHashes: new Set(), channels: new Set(), batchable: true };
    }
  }
  if (batch.contentHashes.size > 0) diff.additions.push(batch);
  return diff;
}
