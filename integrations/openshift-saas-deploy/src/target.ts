import { errorMessage, QontractError, type SecretRef } from '@qontract/core';
import {
  collectImages,
  type SaasFile,
  type SaasParameters,
  type SaasResourceTemplate,
  type SaasTarget,
  targetParameters,
} from '@qontract/saas';
import {
  annotatePrometheusRules,
  digestsNeeded,
  htmlUrl,
  type ManagedDocument,
  managedDocuments,
  parseDirectoryFiles,
  parseTemplateFile,
  processSaasTemplate,
  withTemplateDefaults,
} from './render.ts';

/** What building a target's desired state reads from outside: git, Vault, the registry. */
export interface TargetReaders {
  /** The commit a branch, tag or sha of the repository names. */
  resolveRef(url: string, ref: string): Promise<string>;
  getFile(url: string, path: string, sha: string): Promise<string>;
  /** The files directly in a directory at the commit. */
  listFiles(
    url: string,
    path: string,
    sha: string,
  ): Promise<readonly { readonly name: string; readonly content: string }[]>;
  readSecret(ref: SecretRef): Promise<string>;
  /**
   * The digests of `REGISTRY_IMG:IMAGE_TAG` (for `REPO_DIGEST` / `IMAGE_DIGEST`);
   * an image outside the patterns or missing throws a message naming it.
   */
  imageDigest(
    registryImage: string,
    tag: string,
    work: TargetWork,
  ): Promise<{ readonly repoDigest: string; readonly imageDigest: string }>;
  /** The image validation problems of a target's images (block rules, patterns, registry). */
  imageProblems(images: ReadonlySet<string>, work: TargetWork): Promise<readonly string[]>;
  info(line: string): void;
  warn(line: string): void;
}

/** One target of the run and the settings its processing needs. */
export interface TargetWork {
  readonly saasFile: SaasFile;
  readonly resourceTemplate: SaasResourceTemplate;
  readonly target: SaasTarget;
  /** The resource template's `hash_length`, else the settings' `hashLength`. */
  readonly hashLength: number;
  readonly useChannelInImageTag: boolean;
}

export interface TargetOutcome {
  /** The documents of managed kinds to deploy (empty for a `delete: true` target or a failure). */
  readonly objects: readonly ManagedDocument[];
  /** The commit the target deploys (undefined when it was not resolved). */
  readonly commitSha?: string;
  /** Problems that fail the target: registered as errors, the target contributes nothing. */
  readonly problems: readonly string[];
}

/** `[saas/rt] <html url>:`, the original's error prefix of a target. */
function errorPrefix(work: TargetWork): string {
  const { saasFile, resourceTemplate: rt, target } = work;
  return `[${saasFile.name}/${rt.name}] ${htmlUrl(rt.url, provider(rt), target.ref, rt.path)}:`;
}

function provider(rt: SaasResourceTemplate): string {
  return rt.provider || 'openshift-template';
}

async function readSecretParameters(
  list: readonly { readonly name: string; readonly secret: SecretRef }[] | null | undefined,
  readers: TargetReaders,
  where: string,
): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const p of list ?? []) {
    try {
      out[p.name] = await readers.readSecret(p.secret);
    } catch (e) {
      // The secret's path and field are named, never a value.
      throw new QontractError(
        `${where} secret parameter ${p.name} (${p.secret.path}, field ${p.secret.field}): ${errorMessage(e)}`,
      );
    }
  }
  return out;
}

/** The target's parameters, lowest precedence first (see packages/saas targetParameters). */
async function parametersOf(
  work: TargetWork,
  readers: TargetReaders,
  adjust: boolean,
  where: string,
): Promise<SaasParameters> {
  const { saasFile, resourceTemplate: rt, target } = work;
  const env = target.namespace.environment;
  return targetParameters(
    {
      environment: env.parameters,
      environmentSecrets: await readSecretParameters(env.secretParameters, readers, where),
      saasFile: saasFile.parameters,
      saasFileSecrets: await readSecretParameters(saasFile.secretParameters, readers, where),
      resourceTemplate: rt.parameters,
      resourceTemplateSecrets: await readSecretParameters(rt.secretParameters, readers, where),
      target: target.parameters,
      targetSecrets: await readSecretParameters(target.secretParameters, readers, where),
    },
    { adjust },
  );
}

/**
 * The desired documents of one target, as the original's
 * `populate_desired_state_saas_file`: resolve the ref to a commit, fetch at
 * that commit, process (template or directory), keep the managed kinds,
 * annotate PrometheusRule rules and validate the images. Any failure fails
 * only this target, with a message naming the saas file, resource template
 * and where the template lives.
 */
export async function desiredForTarget(
  work: TargetWork,
  readers: TargetReaders,
): Promise<TargetOutcome> {
  const { saasFile, resourceTemplate: rt, target } = work;
  if (target.delete) return { objects: [], problems: [] };
  const prefix = errorPrefix(work);
  const where = `${target.namespace.cluster.name}/${target.namespace.name}`;
  let commitSha: string | undefined;
  try {
    commitSha = await readers.resolveRef(rt.url, target.ref);
    let documents: unknown[];
    switch (provider(rt)) {
      case 'openshift-template': {
        const parameters = withTemplateDefaults(
          await parametersOf(work, readers, true, prefix),
          {
            commitSha,
            hashLength: work.hashLength,
            useChannelInImageTag: work.useChannelInImageTag,
          },
          prefix,
        );
        const text = await readers.getFile(rt.url, rt.path, commitSha);
        const template = parseTemplateFile(text, `${prefix} the template`);
        const needed = digestsNeeded(template, parameters);
        if (needed.repoDigest || needed.imageDigest) {
          const registryImage = parameters.REGISTRY_IMG;
          if (typeof registryImage !== 'string' || registryImage === '') {
            throw new QontractError(
              `${prefix} error generating REPO_DIGEST. Is REGISTRY_IMG missing?`,
            );
          }
          const tag = String(parameters.IMAGE_TAG);
          const digest = await readers.imageDigest(registryImage, tag, work).catch((e: unknown) => {
            throw new QontractError(
              `${prefix} error get image for ${registryImage}:${tag}: ${errorMessage(e)}`,
            );
          });
          if (needed.repoDigest) parameters.REPO_DIGEST = digest.repoDigest;
          if (needed.imageDigest) parameters.IMAGE_DIGEST = digest.imageDigest;
        }
        documents = processSaasTemplate(template, parameters, prefix);
        break;
      }
      case 'directory': {
        const files = await readers.listFiles(rt.url, rt.path, commitSha);
        documents = parseDirectoryFiles(files, prefix);
        break;
      }
      case 'helm':
        // The original shells out to git and the helm binary; see the README.
        throw new QontractError(
          `${prefix} the helm provider is not supported by this port (no helm binary is run)`,
        );
      default:
        throw new QontractError(`${prefix} unknown provider: ${rt.provider}`);
    }
    const objects = managedDocuments(documents, saasFile.managedResourceTypes, where, (l) =>
      readers.info(l),
    );
    annotatePrometheusRules(objects, htmlUrl(rt.url, provider(rt), target.ref, rt.path), (l) =>
      readers.warn(l),
    );
    const images = new Set<string>();
    for (const o of objects) for (const i of collectImages(o)) images.add(i);
    if (images.size > 0) {
      const problems = await readers.imageProblems(images, work);
      if (problems.length > 0) return { objects: [], commitSha, problems };
    }
    return { objects, commitSha, problems: [] };
  } catch (e) {
    const message = errorMessage(e);
    return {
      objects: [],
      ...(commitSha ? { commitSha } : {}),
      problems: [message.startsWith(prefix) ? message : `${prefix} ${message}`],
    };
  }
}
