/**
 * The SAPM merge requests as text: the desired promotions (one per channel
 * combination), the title and the description whose data block carries the
 * state (the original's `DesiredState`, `Renderer` and `MRParser`). The data
 * block's separator, keys and version are the original's, so the merge
 * requests either implementation opened are read by the other.
 */
import { createHash } from 'node:crypto';
import type { OpenBatcherMergeRequest, Promotion } from './batcher.ts';
import { combinedContentHash, type Subscriber } from './inventory.ts';

/** The original's QONTRACT_INTEGRATION_VERSION, written into and checked in every description. */
const SAPM_VERSION = '2.3.0';
export const SAPM_LABEL = 'SAPM';
/** SAPM plus the approval label of the change-type priority `progressive-delivery`. */
export const SAPM_MR_LABELS = [SAPM_LABEL, 'bot/approved: progressive-delivery'] as const;

export const PROMOTION_DATA_SEPARATOR =
  '**SAPM Data - DO NOT MANUALLY CHANGE ANYTHING BELOW THIS LINE**';
const CONTENT_HASHES = 'content_hashes';
const CHANNELS_REF = 'channels';
const IS_BATCHABLE = 'is_batchable';
const VERSION_REF = 'sapm_version';
const MR_KIND_REF = 'kind';
const KIND_BATCHER = 'batcher';
const KIND_SCHEDULER = 'scheduler';

const INTRO = `
Auto-promotion opened by app-interface's saas-auto-promotions-manager (SAPM) for the subscribers of the channel(s) named below.

Please leave this merge request as it is: SAPM manages it, and a manual change may block the promotion.

SAPM reads the data below to manage its merge requests.
`;

export interface DesiredState {
  readonly promotions: Promotion[];
  readonly subscribersByContentHash: Map<string, Subscriber[]>;
}

/** One promotion per channel combination (`a,b`, in the subscriber's order) of the subscribers with a diff. */
export function desiredState(subscribers: readonly Subscriber[]): DesiredState {
  const byCombo = new Map<string, Subscriber[]>();
  for (const s of subscribers) {
    const combo = s.channels.map((c) => c.name).join(',');
    byCombo.set(combo, [...(byCombo.get(combo) ?? []), s]);
  }
  const subscribersByContentHash = new Map<string, Subscriber[]>();
  const promotions: Promotion[] = [];
  for (const [combo, subs] of byCombo) {
    const hash = combinedContentHash(subs);
    subscribersByContentHash.set(hash, subs);
    promotions.push({ contentHashes: new Set([hash]), channels: new Set([combo]) });
  }
  return { promotions, subscribersByContentHash };
}

/** `[SAPM] auto-promotion ID <sha256 of the channels mod 10^8> - batch size: N` */
export function renderTitle(channels: string, batchSize: number): string {
  const id = BigInt(`0x${createHash('sha256').update(channels, 'utf8').digest('hex')}`) % 10n ** 8n;
  return `[SAPM] auto-promotion ID ${id} - batch size: ${batchSize}`;
}

export function renderDescription(
  contentHashes: string,
  channels: string,
  isBatchable: boolean,
): string {
  return `
${INTRO}

${PROMOTION_DATA_SEPARATOR}

${CHANNELS_REF}: ${channels}

${CONTENT_HASHES}: ${contentHashes}

${IS_BATCHABLE}: ${isBatchable ? 'True' : 'False'}

${MR_KIND_REF}: ${KIND_BATCHER}

${VERSION_REF}: ${SAPM_VERSION}

This merge request is approved automatically.

/lgtm
        `;
}

/** An open merge request as the parser needs it. */
export interface ParsableMergeRequest {
  readonly description: string;
  readonly hasConflicts: boolean;
  readonly webUrl: string;
}

export interface ParsedMergeRequests<M> {
  readonly open: OpenBatcherMergeRequest<M>[];
  /** Merge requests to close, the original's note and log line for each. */
  readonly close: Array<{ mr: M; comment: string; log: string }>;
}

/** The value of the first `key: value` line, or '' when there is none. */
function fieldValue(key: string, data: string): string {
  const line = data.split('\n').find((l) => l.startsWith(`${key}: `));
  return line === undefined ? '' : line.slice(key.length + 2);
}

/**
 * The open batcher merge requests among the SAPM-labelled ones; any whose
 * data block is broken, of another version, conflicting or a duplicate is to
 * be closed with the original's note. `failedCheck` tells whether its last
 * pipeline failed (asked only for the merge requests that are kept).
 */
export async function parseMergeRequests<M extends ParsableMergeRequest>(
  mrs: readonly M[],
  failedCheck: (mr: M) => Promise<boolean>,
): Promise<ParsedMergeRequests<M>> {
  const result: ParsedMergeRequests<M> = { open: [], close: [] };
  const close = (mr: M, what: string, comment: string) =>
    result.close.push({ mr, comment, log: `${what}. Closing ${mr.webUrl}` });
  const batchers: Array<{ mr: M; data: string }> = [];
  for (const mr of mrs) {
    const parts = mr.description.split(PROMOTION_DATA_SEPARATOR);
    if (parts.length !== 2) {
      close(
        mr,
        'Bad data separator format',
        'Closing this MR because of bad data separator format.',
      );
      continue;
    }
    const data = parts[1] as string;
    const version = fieldValue(VERSION_REF, data);
    if (!version) {
      close(
        mr,
        `Bad ${VERSION_REF} format`,
        `Closing this MR because of bad ${VERSION_REF} format.`,
      );
      continue;
    }
    if (version !== SAPM_VERSION) {
      close(
        mr,
        `Old MR version detected: ${version}`,
        `Closing this MR because it has an outdated SAPM version ${version}.`,
      );
      continue;
    }
    const kind = fieldValue(MR_KIND_REF, data);
    if (kind !== KIND_BATCHER && kind !== KIND_SCHEDULER) {
      close(
        mr,
        `Bad ${MR_KIND_REF} format`,
        `Closing this MR because of bad ${MR_KIND_REF} format.`,
      );
      continue;
    }
    // Scheduler merge requests are recognised and left alone, as the original does.
    if (kind === KIND_BATCHER) batchers.push({ mr, data });
  }

  const seen = new Set<string>();
  for (const { mr, data } of batchers) {
    if (mr.hasConflicts) {
      close(mr, 'Merge-conflict detected', 'Closing this MR because of a merge-conflict.');
      continue;
    }
    const hashes = fieldValue(CONTENT_HASHES, data);
    if (!hashes) {
      close(
        mr,
        `Bad ${CONTENT_HASHES} format`,
        `Closing this MR because of bad ${CONTENT_HASHES} format.`,
      );
      continue;
    }
    const channels = fieldValue(CHANNELS_REF, data);
    if (!channels) {
      close(
        mr,
        `Bad ${CHANNELS_REF} format`,
        `Closing this MR because of bad ${CHANNELS_REF} format.`,
      );
      continue;
    }
    const key = `${channels}\0${hashes}`;
    if (seen.has(key)) {
      close(
        mr,
        'Duplicate MR detected',
        'Closing this MR because there is already another MR open with identical content.',
      );
      continue;
    }
    seen.add(key);
    const batchable = fieldValue(IS_BATCHABLE, data);
    if (batchable !== 'True' && batchable !== 'False') {
      close(
        mr,
        `Bad ${IS_BATCHABLE} format`,
        `Closing this MR because of bad ${IS_BATCHABLE} format.`,
      );
      continue;
    }
    result.open.push({
      raw: mr,
      contentHashes: new Set(hashes.split(',')),
      channels: new Set(channels.split(',')),
      failedMrCheck: await failedCheck(mr),
      isBatchable: batchable === 'True',
    });
  }
  return result;
}
