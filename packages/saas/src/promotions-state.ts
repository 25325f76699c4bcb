/**
 * Promotion records in the state store (the original's `PromotionState`):
 * `promotions_v2/<channel>/<publisher uid>/<commit sha>` under
 * `state/openshift-saas-deploy/`, shared with the original and with
 * saas-auto-promotions-manager, so keys, fields and text are the original's.
 */
import { QontractError, type StateStore } from '@qontract/core';
import { z } from 'zod';

/** One publisher's result for one commit on one channel, as stored. */
export interface PromotionRecord {
  readonly success: boolean;
  readonly target_config_hash: string | null;
  readonly saas_file: string | null;
  /** When the commit started soaking: Python `str(datetime)` with an offset. */
  readonly check_in: string | null;
  /** Once true it stays true for the commit (later failures keep it). */
  readonly has_succeeded_once: boolean | null;
}

// Upstream's model forbids unknown fields; only `success` is required.
const promotionRecordSchema = z
  .object({
    success: z.boolean(),
    target_config_hash: z.string().nullish(),
    saas_file: z.string().nullish(),
    check_in: z.string().nullish(),
    has_succeeded_once: z.boolean().nullish(),
  })
  .strict();

/** The state key of a record, relative to the integration's state prefix. */
export function promotionKey(channel: string, targetUid: string, commitSha: string): string {
  return `promotions_v2/${channel}/${targetUid}/${commitSha}`;
}

/** Reads promotion records; what the promotion gate and publishing need of the state. */
export interface PromotionRecordReader {
  /**
   * The record, or undefined when there is none. With `useCache` a record
   * this reader already read is not read again.
   */
  getPromotion(
    channel: string,
    targetUid: string,
    commitSha: string,
    options?: { useCache?: boolean },
  ): Promise<PromotionRecord | undefined>;
}

/** Promotion records over a state store of the integration `openshift-saas-deploy`. */
export class PromotionState implements PromotionRecordReader {
  readonly #store: StateStore;
  // Like upstream: every record read is remembered, missing ones are not.
  readonly #cache = new Map<string, PromotionRecord>();

  constructor(store: StateStore) {
    this.#store = store;
  }

  async getPromotion(
    channel: string,
    targetUid: string,
    commitSha: string,
    options: { useCache?: boolean } = {},
  ): Promise<PromotionRecord | undefined> {
    const key = promotionKey(channel, targetUid, commitSha);
    if (options.useCache) {
      const cached = this.#cache.get(key);
      if (cached) return cached;
    }
    const data = await this.#store.get<unknown>(key, null);
    // Upstream treats any falsy value (null, {}, "", 0, false) as no record.
    if (!data || (typeof data === 'object' && Object.keys(data).length === 0)) return undefined;
    const parsed = promotionRecordSchema.safeParse(data);
    if (!parsed.success) {
      throw new QontractError(
        `promotion record ${key} is invalid: ${parsed.error.issues
          .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
          .join('; ')}`,
      );
    }
    const d = parsed.data;
    const record: PromotionRecord = {
      success: d.success,
      target_config_hash: d.target_config_hash ?? null,
      saas_file: d.saas_file ?? null,
      check_in: d.check_in ?? null,
      has_succeeded_once: d.has_succeeded_once ?? null,
    };
    this.#cache.set(key, record);
    return record;
  }

  /** Writes (overwrites) a record: every field, null ones included, as upstream. */
  async publishPromotion(
    channel: string,
    targetUid: string,
    commitSha: string,
    record: PromotionRecord,
  ): Promise<void> {
    await this.#store.add(
      promotionKey(channel, targetUid, commitSha),
      {
        success: record.success,
        target_config_hash: record.target_config_hash,
        saas_file: record.saas_file,
        check_in: record.check_in,
        has_succeeded_once: record.has_succeeded_once,
      },
      { force: true },
    );
  }
}

const MICROS_PER_SECOND = 1_000_000;

function pad(n: number, width = 2): string {
  return String(n).padStart(width, '0');
}

/**
 * Python `str(datetime.now(UTC))`: `YYYY-MM-DD HH:MM:SS[.ffffff]+00:00`, the
 * fraction left out when it is zero. The check-in format of promotion records.
 */
export function pyUtcDatetimeStr(date: Date): string {
  const ms = date.getUTCMilliseconds();
  return (
    `${date.getUTCFullYear()}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())} ` +
    `${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())}` +
    `${ms === 0 ? '' : `.${pad(ms * 1000, 6)}`}+00:00`
  );
}

// What Python 3.11's datetime.fromisoformat reads in practice: a date, a
// separator, a time with optional fraction, and an offset (`Z` or ±HH[:MM[:SS]]).
const ISO_DATETIME =
  /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2})(?::(\d{2})(?::(\d{2})(?:[.,](\d+))?)?)?(Z|[+-]\d{2}(?::?\d{2}(?::?\d{2}(?:\.\d{1,6})?)?)?)?$/;

/**
 * Microseconds since the epoch of a check-in. A check-in without an offset
 * cannot be compared with the aware clock (upstream fails with a TypeError),
 * so it is a QontractError naming `where`.
 */
export function parseCheckIn(text: string, where: string): number {
  const m = ISO_DATETIME.exec(text);
  if (!m) throw new QontractError(`${where}: check_in '${text}' is not an ISO datetime`);
  const [, y, mo, d, h, mi = '0', s = '0', frac = '', tz] = m;
  if (!tz) throw new QontractError(`${where}: check_in '${text}' has no time zone`);
  let offsetMicros = 0;
  if (tz !== 'Z') {
    const sign = tz.startsWith('-') ? -1 : 1;
    const digits = tz.slice(1).replace(/:/g, '');
    const [whole, fraction = ''] = digits.split('.');
    const oh = Number(whole?.slice(0, 2) ?? 0);
    const om = Number(whole?.slice(2, 4) || 0);
    const os = Number(whole?.slice(4, 6) || 0);
    offsetMicros =
      sign *
      ((oh * 3600 + om * 60 + os) * MICROS_PER_SECOND + Number(fraction.padEnd(6, '0') || 0));
  }
  const ms = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s));
  const back = new Date(ms);
  // Date.UTC rolls 13/32/25:61 over; Python rejects them.
  if (
    back.getUTCMonth() !== Number(mo) - 1 ||
    back.getUTCDate() !== Number(d) ||
    back.getUTCHours() !== Number(h) ||
    back.getUTCMinutes() !== Number(mi) ||
    back.getUTCSeconds() !== Number(s)
  ) {
    throw new QontractError(`${where}: check_in '${text}' is not a valid datetime`);
  }
  // Python keeps microseconds and drops further digits.
  const micros = Number(frac.slice(0, 6).padEnd(6, '0'));
  return ms * 1000 + micros - offsetMicros;
}
