import { isDeepStrictEqual } from 'node:util';
import { pyJsonDumps } from '@qontract/pycompat';
import {
  type SaasFile,
  type SaasResourceTemplate,
  type SaasTarget,
  targetConfigState,
  targetConfigStateModel,
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
 * `openshift-saas-deploy-trigger-configs`: a target whose config differs from
 * the one stored when it was last triggered (a new target included).
 * Upstream skips targets whose SLOs are breached; this port does not read
 * SLOs (see the README).
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
};
