import { errorMessage, executeActions, type RunContext } from '@qontract/core';
import {
  codeComponentVersions,
  PromotionState,
  promotionChannels,
  publishPromotions as publishPromotionRecords,
  type SaasFile,
  type TargetPromotion,
  targetPromotion,
  validatePromotions,
} from '@qontract/saas';
import type { TargetOutcome, TargetWork } from './target.ts';

/** The run's promotion state, opened when a promotion first needs it (a run without any needs no state store). */
export function lazyPromotionState(ctx: RunContext): () => Promise<PromotionState> {
  let state: Promise<PromotionState> | undefined;
  return () => (state ??= ctx.state().then((store) => new PromotionState(store)));
}

/**
 * The promotions of the targets that were built (a failed target has none:
 * it is neither gated nor published, as in the original), then the gate: a
 * target subscribing to channels deploys only a commit its publishers
 * deployed with success, soaked and with the configuration it names. The
 * gate's messages are registered (and so logged); `valid` false stops the run
 * before anything is applied.
 */
export async function gatePromotions(
  ctx: RunContext,
  state: () => Promise<PromotionState>,
  saasFiles: readonly SaasFile[],
  allSaasFiles: readonly SaasFile[],
  outcomes: readonly (TargetWork & TargetOutcome)[],
): Promise<{ readonly valid: boolean; readonly targets: readonly TargetPromotion[] }> {
  const channels = promotionChannels(allSaasFiles);
  const targets: TargetPromotion[] = [];
  for (const o of outcomes) {
    if (!o.target.promotion || !o.commitSha || o.problems.length > 0) continue;
    try {
      const p = targetPromotion(o.saasFile, o.resourceTemplate, o.target, o.commitSha, channels);
      if (p) targets.push(p);
    } catch (e) {
      ctx.errors.register(`${o.saasFile.name}/${o.resourceTemplate.name}`, errorMessage(e));
    }
  }
  if (!targets.some((t) => t.subscribe.length > 0)) return { valid: true, targets };
  const result = await validatePromotions(targets, {
    reader: await state(),
    versions: codeComponentVersions(saasFiles),
  });
  for (const line of result.infos) ctx.log.info(line);
  for (const e of result.errors)
    ctx.errors.register(`${e.saasFile}/${e.resourceTemplate}`, e.message);
  return { valid: result.valid, targets };
}

/**
 * Records the outcome of the run for every publishing target (the caller
 * calls it only with exactly one saas file, as the original). A side effect
 * of the run: the executor decides dry-run (nothing is recorded) and
 * registers a failure.
 */
export async function publishPromotions(
  ctx: RunContext,
  state: () => Promise<PromotionState>,
  targets: readonly TargetPromotion[],
  success: boolean,
): Promise<void> {
  const publishing = targets.filter((t) => (t.publish ?? []).length > 0);
  if (publishing.length === 0) return;
  await executeActions(ctx, [publishing], {
    name: () => 'publish_promotions',
    sideEffect: true,
    describe: (ts) =>
      `publishing the promotion records of ${ts.length} target(s), success: ${success}`,
    destructive: () => false,
    execute: async () => {
      const written = await publishPromotionRecords(targets, { state: await state(), success });
      for (const w of written) ctx.log.info(w.message);
    },
    failure: (_ts, e) => ({
      scope: 'promotions',
      message: `publishing the promotion records failed: ${errorMessage(e)}`,
    }),
  });
}
