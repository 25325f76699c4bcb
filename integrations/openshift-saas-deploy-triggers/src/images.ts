import { errorMessage } from '@qontract/core';
import {
  imageProblem,
  imageReadersForRun,
  type RunImageReaders,
  type SaasFile,
  type SaasResourceTemplate,
  type SaasTarget,
} from '@qontract/saas';
import { type TriggerRun, type TriggerSpec, type TriggerType, targetSpec } from './base.ts';

const IMAGES_INTEGRATION = 'openshift-saas-deploy-trigger-images';

/** `<registry url>/<org>/<name>` of each of a target's `images`. */
function targetImages(target: SaasTarget): string[] {
  return (target.images ?? []).map((i) => `${i.org.instance.url}/${i.org.name}/${i.name}`);
}

/**
 * The container-image spec of a target (`TriggerSpecContainerImage`): keyed
 * by `<saas>/<rt>/<cluster>/<namespace>/<env>/<images sorted, joined by />`,
 * its content the image tag (the commit sha cut to `hash_length`).
 */
export function containerImageSpec(
  saasFile: SaasFile,
  rt: SaasResourceTemplate,
  target: SaasTarget,
  commit: { readonly sha: string; readonly tag: string },
  trace: boolean,
): TriggerSpec {
  const { keyPrefix, ...base } = targetSpec(saasFile, rt, target);
  const images = targetImages(target);
  const sorted = [...images].sort();
  const uris = sorted.map((i) => `${i}:${commit.tag}`).join(', ');
  return {
    ...base,
    stateKey: `${keyPrefix}/${sorted.join('/')}`,
    stateContent: commit.tag,
    reason: trace ? `${rt.url}/commit/${commit.sha} build ${uris}` : null,
    targetRef: commit.sha,
  };
}

/**
 * `openshift-saas-deploy-trigger-images`: a target with `images` whose ref's
 * commit now has its image built (every image of the target is in its
 * registry with the commit's tag) and differs from the stored tag.
 */
const readersOfRun = new WeakMap<TriggerRun, RunImageReaders>();

export const imagesTrigger: TriggerType = {
  integration: IMAGES_INTEGRATION,
  async diff(saasFile: SaasFile, run: TriggerRun) {
    // One registry client and lookup cache per run, shared by its saas files.
    let registry = readersOfRun.get(run);
    if (!registry) {
      registry = imageReadersForRun(run.ctx);
      readersOfRun.set(run, registry);
    }
    const specs = await Promise.all(
      saasFile.resourceTemplates.flatMap((rt) =>
        rt.targets.map(async (target) => {
          if (!target.images || target.images.length === 0) return undefined;
          try {
            const sha = await run.resolveRef(saasFile, rt.url, target.ref);
            const tag = sha.slice(0, rt.hash_length || run.settings.hashLength);
            const auth = await registry.imageAuth(saasFile);
            const prefix = `[${saasFile.name}/${rt.name}] ${target.ref}:`;
            // As upstream's all(): the first image that is not there is logged, the rest not asked.
            for (const image of targetImages(target)) {
              const problem = await imageProblem(registry.lookup, {
                image: `${image}:${tag}`,
                imagePatterns: saasFile.imagePatterns,
                auth,
                prefix,
              });
              if (problem) {
                run.ctx.log.error(problem);
                return undefined;
              }
            }
            const spec = containerImageSpec(
              saasFile,
              rt,
              target,
              { sha, tag },
              run.includeTriggerTrace,
            );
            return (await run.changedSinceStored(spec)) ? spec : undefined;
          } catch (e) {
            // Logged, not registered: the original does not fail the run for it.
            run.ctx.log.error(
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
