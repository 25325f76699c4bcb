import type { RunContext } from '@qontract/core';
import {
  type ImageCheckTarget,
  type ImagePatternsBlockRule,
  imageDigest,
  imageReadersForRun,
  type RepoSources,
  repoSourcesForRun,
  requestPool,
  type SaasFile,
  validateTargetImages,
} from '@qontract/saas';
import type { TargetReaders, TargetWork } from './target.ts';

/**
 * The readers of one run: git through GitHub/GitLab, Vault, the registries;
 * cached per run. Each of the three has its own pool of `concurrency`
 * requests, taken only by requests really made (not by callers the cache
 * serves): the run's targets all start at once and each peer is kept as
 * busy as `--thread-pool-size` allows, never more.
 */
export interface RunReaders {
  /** The readers a saas file's targets use (its own code and image credentials). */
  forSaasFile(saasFile: SaasFile): TargetReaders;
}

function checkTarget(work: TargetWork): ImageCheckTarget {
  return {
    saasFileName: work.saasFile.name,
    resourceTemplateName: work.resourceTemplate.name,
    cluster: work.target.namespace.cluster.name,
    namespace: work.target.namespace.name,
    targetName: work.target.name,
  };
}

export function runReaders(
  ctx: RunContext,
  settings: {
    readonly blockRules: readonly ImagePatternsBlockRule[];
    /** The run's `--thread-pool-size`: requests in flight per peer at most. */
    readonly concurrency: number;
  },
): RunReaders {
  const git = requestPool(settings.concurrency);
  const vault = requestPool(settings.concurrency);
  const registry = imageReadersForRun(ctx, {
    registry: requestPool(settings.concurrency),
    vault,
  });
  const perFile = new Map<string, TargetReaders>();
  return {
    forSaasFile(saasFile) {
      const known = perFile.get(saasFile.name);
      if (known) return known;
      const sources: RepoSources = repoSourcesForRun(ctx, {
        codeAuth: saasFile.authentication?.code ?? null,
        limit: git,
      });
      const imageAuth = () => registry.imageAuth(saasFile);
      const lookup = registry.lookup;
      const readers: TargetReaders = {
        resolveRef: (url, ref) => sources.resolveRef(url, ref),
        getFile: (url, path, sha) => sources.getFile(url, path, sha),
        listFiles: (url, path, sha) => sources.listFiles(url, path, sha),
        readSecret: (ref) => vault(() => ctx.secrets.read(ref)),
        imageDigest: async (registryImg, tag, work) =>
          imageDigest(lookup, {
            registryImg,
            tag,
            imagePatterns: saasFile.imagePatterns,
            auth: await imageAuth(),
            target: checkTarget(work),
          }),
        imageProblems: async (images, work) =>
          validateTargetImages({
            target: checkTarget(work),
            images,
            imagePatterns: saasFile.imagePatterns,
            blockRules: settings.blockRules,
            environmentLabels: work.target.namespace.environment.labels,
            auth: await imageAuth(),
            lookup,
          }),
        info: (line) => ctx.log.info(line),
        warn: (line) => ctx.log.warn(line),
      };
      perFile.set(saasFile.name, readers);
      return readers;
    },
  };
}
