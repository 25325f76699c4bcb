import {
  namespaceKey,
  type SaasFile,
  type SaasNamespace,
  type SaasResourceTemplate,
  type SaasTarget,
} from '@qontract/saas';
import type { ManagedDocument } from './render.ts';
import type { TargetWork } from './target.ts';

/**
 * The saas file settings that apply to the run: taken from the saas file
 * only when the run deploys exactly one (its own pipeline); with several
 * (an MR check, a full run) every one is off, as the original.
 */
export interface RunFeatures {
  readonly takeover: boolean;
  readonly compare: boolean;
  readonly publishJobLogs: boolean;
  readonly clusterAdmin: boolean;
  readonly validatePlannedData: boolean;
  readonly useChannelInImageTag: boolean;
}

export function runFeatures(saasFiles: readonly SaasFile[]): RunFeatures {
  if (saasFiles.length !== 1) {
    return {
      takeover: false,
      // The original skips the compare here (its feature reads false with several
      // saas files), re-applying everything in a wet run: we compare.
      compare: true,
      publishJobLogs: false,
      clusterAdmin: false,
      validatePlannedData: false,
      useChannelInImageTag: false,
    };
  }
  const sf = saasFiles[0]!;
  return {
    takeover: sf.takeover ?? false,
    compare: sf.compare ?? true,
    publishJobLogs: sf.publishJobLogs ?? false,
    clusterAdmin: sf.clusterAdmin ?? false,
    validatePlannedData: sf.validatePlannedData ?? true,
    useChannelInImageTag: sf.use_channel_in_image_tag ?? false,
  };
}

/** A namespace the run reads, with the kinds (and names) its saas file manages there. */
export interface ScopeNamespace {
  readonly namespace: SaasNamespace;
  readonly managedTypes: readonly string[];
  readonly managedResourceNames: SaasFile['managedResourceNames'];
}

/**
 * The work of a run: one item per target that is not disabled (a disabled
 * target is ignored completely: it is not read, so never cleaned up), and the
 * namespaces to read, one per target.
 */
export function runScope(
  saasFiles: readonly SaasFile[],
  options: { readonly hashLength: number; readonly useChannelInImageTag: boolean },
): { readonly work: TargetWork[]; readonly namespaces: ScopeNamespace[] } {
  const work: TargetWork[] = [];
  const namespaces: ScopeNamespace[] = [];
  for (const saasFile of saasFiles) {
    for (const resourceTemplate of saasFile.resourceTemplates) {
      for (const target of resourceTemplate.targets) {
        if (target.disable) continue;
        work.push({
          saasFile,
          resourceTemplate,
          target,
          hashLength: resourceTemplate.hash_length ?? options.hashLength,
          useChannelInImageTag: options.useChannelInImageTag,
        });
        namespaces.push({
          namespace: target.namespace,
          managedTypes: saasFile.managedResourceTypes,
          managedResourceNames: saasFile.managedResourceNames,
        });
      }
    }
  }
  return { work, namespaces };
}

/** The kinds to read per (cluster, namespace): the union of the saas files deploying there. */
export function currentStateSpecs(
  namespaces: readonly ScopeNamespace[],
  privileged: boolean,
): {
  cluster: string;
  namespace: string;
  kind: string;
  privileged: boolean;
  resourceNames?: readonly string[];
}[] {
  const seen = new Map<string, ReturnType<typeof currentStateSpecs>[number]>();
  for (const ns of namespaces) {
    for (const kind of ns.managedTypes) {
      const key = `${namespaceKey(ns.namespace)}/${kind}`;
      if (seen.has(key)) continue;
      const names = (ns.managedResourceNames ?? []).filter((m) => m.resource === kind).at(-1);
      seen.set(key, {
        cluster: ns.namespace.cluster.name,
        namespace: ns.namespace.name,
        kind,
        privileged,
        ...(names ? { resourceNames: names.resourceNames } : {}),
      });
    }
  }
  return [...seen.values()];
}

/** One object the run deploys, with where it came from. */
export interface SaasDesiredObject {
  readonly saasFile: string;
  readonly resourceTemplate: string;
  readonly cluster: string;
  readonly namespace: string;
  readonly kind: string;
  readonly name: string;
  readonly body: ManagedDocument;
}

/**
 * Gathers the objects of every target: a name outside the saas file's
 * `managedResourceNames` is skipped (an info line, not an error); the same
 * object twice in a namespace is the original's "Duplicate resources" error
 * and the second is left out.
 */
export function gatherDesired(
  outcomes: readonly {
    readonly saasFile: SaasFile;
    readonly resourceTemplate: SaasResourceTemplate;
    readonly target: SaasTarget;
    readonly objects: readonly ManagedDocument[];
  }[],
  info: (line: string) => void,
): {
  readonly objects: SaasDesiredObject[];
  readonly problems: { scope: string; message: string }[];
} {
  const objects: SaasDesiredObject[] = [];
  const problems: { scope: string; message: string }[] = [];
  const seen = new Set<string>();
  for (const { saasFile, resourceTemplate, target, objects: docs } of outcomes) {
    const cluster = target.namespace.cluster.name;
    const namespace = target.namespace.name;
    for (const body of docs) {
      const name = typeof body.metadata?.name === 'string' ? body.metadata.name : '';
      const where = `[${cluster}/${namespace}]`;
      const tail = `saas file name: ${saasFile.name}, resource template name: ${resourceTemplate.name}.`;
      const names = saasFile.managedResourceNames?.filter((m) => m.resource === body.kind).at(-1);
      if (names && !names.resourceNames.includes(name)) {
        info(`${where} desired item not managed, skipping: ${body.kind}/${name}. ${tail}`);
        continue;
      }
      const key = `${cluster}/${namespace}/${body.kind}/${name}`;
      if (seen.has(key)) {
        problems.push({
          scope: `${cluster}/${namespace}`,
          message: `${where} Duplicate resources in your deployment template detected. The following is defined multiple times in your deployment template: ${body.kind}/${name}. ${tail}`,
        });
        continue;
      }
      seen.add(key);
      objects.push({
        saasFile: saasFile.name,
        resourceTemplate: resourceTemplate.name,
        cluster,
        namespace,
        kind: body.kind,
        name,
        body,
      });
    }
  }
  return { objects, problems };
}
