import { isDeepStrictEqual } from 'node:util';
import { pyFloatRepr, pyJsonDumps } from '@qontract/pycompat';
import {
  breachedSlosByKey,
  codeComponentVersions,
  type SaasFile,
  type SaasResourceTemplate,
  type SaasTarget,
  type SloDetails,
  sloCheckerForRun,
  targetConfigState,
  targetConfigStateModel,
  targetSloKeys,
} from '@qontract/saas';
import { type TriggerRun, type TriggerSpec, type TriggerType, targetSpec } from './base.ts';

const CONFIGS_INTEGRATION = 'openshift-saas-deploy-trigger-configs';

/**
 * The config spec of a target (`TriggerSpecConfig`): keyed by
 * `<saas>/<rt>/<cluster>/<namespace>/<env>[/<target name>]`, its content the
 * target's config state (`targetConfigState`, shared with the promotion hashes).
 */
export function configSpec(
  saasFile: SaasFile,
  rt: SaasResourceTemplate,
  target: SaasTarget,
  trace: { readonly repoUrl: string; readonly bundleCommit: string } | undefined,
): TriggerSpec {
  const { keyPrefix, ...base } = targetSpec(saasFile, rt, target);
  const content = targetConfigState(saasFile, rt, target);
  // Every config change of a target with `promotion.auto` counts as an auto-promotion (as upstream).
  const auto = target.promotion?.auto ? ' [auto-promotion]' : '';
  return {
    ...base,
    stateKey: target.name ? `${keyPrefix}/${target.name}` : keyPrefix,
    stateContent: content,
    reason: trace ? `${trace.repoUrl}/commit/${trace.bundleCommit}${auto}` : null,
    targetRef: target.ref,
    resourceTemplateUrl: rt.url,
    slos: target.slos,
  };
}

/**
 * The original's `remove_none_values`: null members of objects dropped, in
 * nested objects too (not inside lists), so that a field the schema gained
 * since the state was written does not count as a change.
 */
function withoutNulls(value: unknown): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return {};
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (v === null) continue;
    out[k] = v !== null && typeof v === 'object' && !Array.isArray(v) ? withoutNulls(v) : v;
  }
  return out;
}

/** Whether the stored config differs from the desired one (read back as the store holds it). */
export function configChanged(stored: unknown, desired: unknown): boolean {
  // The desired content as JSON would give it back: Python floats become numbers, as `99.0 == 99`.
  const plain: unknown = JSON.parse(pyJsonDumps(desired, { model: targetConfigStateModel }));
  return !isDeepStrictEqual(withoutNulls(stored), withoutNulls(plain));
}

/**
 * Whether a breached SLO of the spec's own namespace holds it back (the
 * original's `has_breached_slos`, with its log lines).
 */
function heldBySlos(
  log: TriggerRun['ctx']['log'],
  spec: TriggerSpec,
  breached: ReadonlyMap<string, readonly SloDetails[]>,
): boolean {
  const keys = targetSloKeys(spec.slos ?? [], spec.namespaceName, spec.clusterName).filter((k) =>
    breached.has(k),
  );
  if (keys.length === 0) return false;
  log.info(`Skipping target from saas file ${spec.saasFileName} due to following breached SLOs.`);
  for (const key of keys) {
    for (const b of breached.get(key) ?? []) {
      log.info(
        `SLO: ${b.slo.name} of document ${b.documentName} is breached. Current value: ${pyFloatRepr(b.currentValue, 'python')} Expected: ${pyFloatRepr(b.slo.SLOTarget, 'python')}`,
      );
    }
  }
  return true;
}

/**
 * The SLO gate (the original's `filter_slo_breached_triggers`): the specs of
 * targets with SLO documents whose ref is not a hotfix version of the code
 * component are checked against Prometheus; those with a breached SLO in
 * their own namespace are not triggered (nor stored). A value that cannot be
 * read fails the run: nothing is triggered.
 */
async function sloGate(
  specs: readonly TriggerSpec[],
  run: TriggerRun,
): Promise<readonly TriggerSpec[]> {
  const { hotfix } = codeComponentVersions(run.saasFiles);
  const toValidate = specs.filter(
    (s) =>
      s.slos && s.slos.length > 0 && !hotfix.get(s.resourceTemplateUrl ?? '')?.has(s.targetRef),
  );
  if (toValidate.length === 0) return specs;
  const breached = await sloCheckerForRun(run.ctx, {
    concurrency: run.threadPoolSize,
  }).breachedSlos(toValidate.flatMap((s) => s.slos ?? []));
  if (breached.length === 0) return specs;
  const byKey = breachedSlosByKey(breached);
  // Only the specs that were validated: a hotfix passes whatever another target's SLOs say.
  const held = new Set(toValidate.filter((s) => heldBySlos(run.ctx.log, s, byKey)));
  return specs.filter((s) => !held.has(s));
}

/**
 * `openshift-saas-deploy-trigger-configs`: a target whose config differs from
 * the one stored when it was last triggered (a new target included), unless
 * one of its SLOs is breached.
 */
export const configsTrigger: TriggerType = {
  integration: CONFIGS_INTEGRATION,
  async diff(saasFile: SaasFile, run: TriggerRun) {
    const trace = run.includeTriggerTrace
      ? { repoUrl: run.settings.repoUrl, bundleCommit: run.bundleCommit }
      : undefined;
    const specs = new Map<string, TriggerSpec>();
    for (const rt of saasFile.resourceTemplates) {
      for (const target of rt.targets) {
        const spec = configSpec(saasFile, rt, target, trace);
        specs.set(spec.stateKey, spec);
      }
    }
    const changed = await Promise.all(
      [...specs.values()].map(async (s) =>
        configChanged(await run.stored(s.stateKey), s.stateContent),
      ),
    );
    return [...specs.values()].filter((_, i) => changed[i]);
  },
  gate: sloGate,
};
