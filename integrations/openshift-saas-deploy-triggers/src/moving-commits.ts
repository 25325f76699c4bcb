import { errorMessage } from '@qontract/core';
import type { SaasFile, SaasResourceTemplate, SaasTarget } from '@qontract/saas';
import { type TriggerRun, type TriggerSpec, type TriggerType, targetSpec } from './base.ts';

const MOVING_COMMITS_INTEGRATION = 'openshift-saas-deploy-trigger-moving-commits';

/**
 * The moving-commit spec of a target (`TriggerSpecMovingCommit`): keyed by
 * `<saas>/<rt>/<cluster>/<namespace>/<env>/<ref>`, its content the commit sha.
 */
export function movingCommitSpec(
  saasFile: SaasFile,
  rt: SaasResourceTemplate,
  target: SaasTarget,
  sha: string,
  trace: boolean,
): TriggerSpec {
  const { keyPrefix, ...base } = targetSpec(saasFile, rt, target);
  return {
    ...base,
    stateKey: `${keyPrefix}/${target.ref}`,
    stateContent: sha,
    reason: trace ? `${rt.url}/commit/${sha}` : null,
    targetRef: sha,
  };
}

/**
 * `openshift-saas-deploy-trigger-moving-commits`: a target whose ref (a
 * branch) now resolves to another commit. Targets with `upstream` or `images`
 * are left to their triggers, refs that are commit shas never move.
 */
export const movingCommitsTrigger: TriggerType = {
  integration: MOVING_COMMITS_INTEGRATION,
  async diff(saasFile: SaasFile, run: TriggerRun) {
    const specs = await Promise.all(
      saasFile.resourceTemplates.flatMap((rt) =>
        rt.targets.map(async (target) => {
          if (target.upstream || (target.images && target.images.length > 0)) return undefined;
          try {
            const sha = await run.resolveRef(saasFile, rt.url, target.ref);
            if (sha === target.ref) return undefined;
            const spec = movingCommitSpec(saasFile, rt, target, sha, run.includeTriggerTrace);
            return (await run.changedSinceStored(spec)) ? spec : undefined;
          } catch (e) {
            run.ctx.errors.register(
              saasFile.name,
              `Skipping target ${saasFile.name}:${rt.name} - repo: ${rt.url} - ref: ${target.ref}: ${errorMessage(e)}`,
            );
            return undefined;
          }
        }),
      ),
    );
    return specs.filter((s) => s !== undefined);
  },
};
