/**
 * The promotion gate of openshift-saas-deploy (the original's
 * `validate_promotions`): before anything is applied, every target that
 * subscribes to channels must deploy a commit its publishers deployed with
 * success, soaked long enough, with the configuration its promotion names.
 * Messages are the original's, so logs read the same.
 */
import { pyStrRepr } from '@qontract/pycompat';
import type { CodeComponentVersions, TargetPromotion } from './promotions.ts';
import { type PromotionRecordReader, parseCheckIn, promotionKey } from './promotions-state.ts';

const MICROS_PER_DAY = 86_400_000_000;

/** Why a target's promotion is refused, naming where it is. */
export interface PromotionGateError {
  readonly saasFile: string;
  readonly resourceTemplate: string;
  readonly targetName: string | null;
  readonly cluster: string;
  readonly namespace: string;
  readonly targetUid: string;
  readonly commitSha: string;
  /** The subscribed channel the rule failed on; null for rules over all channels. */
  readonly channel: string | null;
  readonly message: string;
}

export interface PromotionGateResult {
  readonly valid: boolean;
  readonly errors: readonly PromotionGateError[];
  /** Info lines upstream logs (a gate passed on the success state only). */
  readonly infos: readonly string[];
}

/**
 * Python `str(timedelta(microseconds=us))`: `[-]D day[s], H:MM:SS[.ffffff]`,
 * days floored so the rest is positive (`-1 day, 23:59:59` for -1 s).
 */
export function pyTimedeltaStr(micros: number): string {
  const days = Math.floor(micros / MICROS_PER_DAY);
  const rest = micros - days * MICROS_PER_DAY;
  const seconds = Math.floor(rest / 1_000_000);
  const fraction = rest - seconds * 1_000_000;
  const hh = Math.floor(seconds / 3600);
  const mm = Math.floor((seconds % 3600) / 60);
  const ss = seconds % 60;
  let s = `${hh}:${String(mm).padStart(2, '0')}:${String(ss).padStart(2, '0')}`;
  if (fraction) s += `.${String(fraction).padStart(6, '0')}`;
  if (days) s = `${days} day${Math.abs(days) === 1 ? '' : 's'}, ${s}`;
  return s;
}

/** Python `str(set_of_str)` with a stable order (Python's is hash order). */
function pySetStr(values: ReadonlySet<string>): string {
  return `{${[...values].sort().map(pyStrRepr).join(', ')}}`;
}

interface Verdict {
  readonly error?: { channel: string | null; message: string };
  readonly infos: string[];
}

async function checkPromotion(
  p: TargetPromotion,
  reader: PromotionRecordReader,
  versions: CodeComponentVersions,
  nowMicros: number,
): Promise<Verdict> {
  const infos: string[] = [];
  if (p.subscribe.length === 0) return { infos };
  const targetId = `[saas_file=${p.saasFile}/target_uid=${p.saasTargetUid}]`;
  const fail = (channel: string | null, message: string): Verdict => ({
    error: { channel, message: `${targetId} ${message}` },
    infos,
  });

  if (versions.blocked.get(p.url)?.has(p.commitSha)) {
    return fail(null, `Commit ${p.commitSha} is blocked!`);
  }
  // A hotfix skips every further rule.
  if (versions.hotfix.get(p.url)?.has(p.commitSha)) return { infos };

  let soakedMicros = 0;
  const soakLog: string[] = [];
  for (const channel of p.subscribe) {
    const configHashes = new Set<string>();
    for (const uid of channel.publisherUids) {
      const record = await reader.getPromotion(channel.name, uid, p.commitSha);
      if (!record || !(record.success || record.has_succeeded_once)) {
        return fail(
          channel.name,
          `Commit ${p.commitSha} was not published with success to channel ${channel.name} ` +
            `(publisher uid: ${uid})`,
        );
      }
      let contribution: number | null = null;
      if (record.check_in) {
        contribution =
          nowMicros -
          parseCheckIn(
            record.check_in,
            `promotion record ${promotionKey(channel.name, uid, p.commitSha)}`,
          );
        soakedMicros += contribution;
      }
      soakLog.push(
        `channel=${channel.name} uid=${uid} check_in=${record.check_in ?? 'None'} ` +
          `contribution=${contribution === null ? 'None' : pyTimedeltaStr(contribution)}`,
      );
      if (record.target_config_hash) configHashes.add(record.target_config_hash);
    }

    // Targets without promotion_data (or publishers without hashes) rely on success alone.
    if (configHashes.size === 0 || p.promotionData.length === 0) {
      infos.push(`${targetId} Promotion data is missing; rely on the success state only`);
      continue;
    }
    // The last data entry of the channel counts; upstream reads every entry as parent-saas data.
    let parentHash: string | null | undefined;
    for (const pd of p.promotionData) {
      if (pd.channel !== channel.name) continue;
      for (const data of pd.data ?? []) parentHash = data.target_config_hash ?? null;
    }
    if (parentHash === undefined) {
      // A hand-written MR may lack it; the publishers succeeded at this commit.
      infos.push(
        `${targetId} Parent Saas config missing on target; rely on the success state only`,
      );
      continue;
    }
    if (parentHash !== null && configHashes.has(parentHash)) continue;
    return fail(
      channel.name,
      'Parent saas target has run with a newer configuration and the same commit (ref). ' +
        'Check if other MR exists for this target, ' +
        `or update ${parentHash ?? 'None'} to any in ${pySetStr(configHashes)} ` +
        `for channel ${channel.name}`,
    );
  }

  if (soakedMicros < p.soakDays * MICROS_PER_DAY) {
    return fail(
      null,
      `SoakDays gate failed for commit ${p.commitSha}. ` +
        `Accumulated=${pyTimedeltaStr(soakedMicros)}, required=${p.soakDays} day(s). ` +
        soakLog.join(' | '),
    );
  }
  return { infos };
}

/**
 * Checks every promotion (null entries are targets without one) against the
 * records of its publishers. Unlike upstream, which stops at the first
 * refused target, every target is checked so one run names all of them; the
 * verdict is the same. Records are read through `reader`; nothing is written.
 */
export async function validatePromotions(
  promotions: readonly (TargetPromotion | null)[],
  options: { reader: PromotionRecordReader; versions: CodeComponentVersions; now?: Date },
): Promise<PromotionGateResult> {
  const nowMicros = (options.now ?? new Date()).getTime() * 1000;
  const errors: PromotionGateError[] = [];
  const infos: string[] = [];
  for (const p of promotions) {
    if (!p) continue;
    const verdict = await checkPromotion(p, options.reader, options.versions, nowMicros);
    infos.push(...verdict.infos);
    if (verdict.error) {
      errors.push({
        saasFile: p.saasFile,
        resourceTemplate: p.resourceTemplate,
        targetName: p.targetName,
        cluster: p.cluster,
        namespace: p.namespace,
        targetUid: p.saasTargetUid,
        commitSha: p.commitSha,
        ...verdict.error,
      });
    }
  }
  return { valid: errors.length === 0, errors, infos };
}
