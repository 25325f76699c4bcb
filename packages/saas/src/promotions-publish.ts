/**
 * Publishing promotion results after a deployment (the original's
 * `publish_promotions`): every target with `publish` channels records, per
 * channel, whether its commit deployed, for the gate of its subscribers and
 * for saas-auto-promotions-manager.
 */
import type { TargetPromotion } from './promotions.ts';
import {
  type PromotionRecord,
  type PromotionRecordReader,
  type PromotionState,
  promotionKey,
  pyUtcDatetimeStr,
} from './promotions-state.ts';

/** One record to write. */
export interface PromotionPublication {
  readonly channel: string;
  readonly targetUid: string;
  readonly commitSha: string;
  /** The state key, relative to the integration's prefix. */
  readonly key: string;
  readonly record: PromotionRecord;
  /** Upstream's log line for it. */
  readonly message: string;
}

/**
 * The record after a deployment, given the one before: `has_succeeded_once`
 * sticks once true; the check-in (soak start) is now, unless this and the
 * previous deployment both succeeded, so redeploying the same commit does not
 * restart the soak.
 */
export function nextPromotionRecord(
  previous: PromotionRecord | undefined,
  input: { success: boolean; saasFile: string; targetConfigHash: string; now: Date },
): PromotionRecord {
  const keepCheckIn = input.success && previous?.check_in && previous.success;
  return {
    success: input.success,
    target_config_hash: input.targetConfigHash,
    saas_file: input.saasFile,
    check_in: keepCheckIn ? (previous.check_in as string) : pyUtcDatetimeStr(input.now),
    has_succeeded_once: input.success || previous?.has_succeeded_once === true,
  };
}

/**
 * What publishing writes after a run with outcome `success`: one record per
 * publishing target and channel, built on the record already there (read
 * through `reader`, cached reads allowed as upstream).
 */
export async function planPromotionPublications(
  promotions: readonly (TargetPromotion | null)[],
  options: { reader: PromotionRecordReader; success: boolean; now?: Date },
): Promise<PromotionPublication[]> {
  const now = options.now ?? new Date();
  const out: PromotionPublication[] = [];
  for (const p of promotions) {
    if (!p) continue;
    for (const channel of p.publish ?? []) {
      const previous = await options.reader.getPromotion(channel, p.saasTargetUid, p.commitSha, {
        useCache: true,
      });
      out.push({
        channel,
        targetUid: p.saasTargetUid,
        commitSha: p.commitSha,
        key: promotionKey(channel, p.saasTargetUid, p.commitSha),
        record: nextPromotionRecord(previous, {
          success: options.success,
          saasFile: p.saasFile,
          targetConfigHash: p.targetConfigHash,
          now,
        }),
        message:
          `Commit ${p.commitSha} was published with success ` +
          `${options.success ? 'True' : 'False'} to channel ${channel}`,
      });
    }
  }
  return out;
}

/**
 * Plans and writes the records (upstream does this only outside dry-run and
 * when exactly one saas file is in the run; the caller decides). Returns
 * what was written, in order.
 */
export async function publishPromotions(
  promotions: readonly (TargetPromotion | null)[],
  options: { state: PromotionState; success: boolean; now?: Date },
): Promise<PromotionPublication[]> {
  const publications = await planPromotionPublications(promotions, {
    reader: options.state,
    success: options.success,
    ...(options.now ? { now: options.now } : {}),
  });
  for (const pub of publications) {
    await options.state.publishPromotion(pub.channel, pub.targetUid, pub.commitSha, pub.record);
  }
  return publications;
}
