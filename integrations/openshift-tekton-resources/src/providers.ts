import { QontractError } from '@qontract/core';
import type { OpenshiftTektonResourcesQuery } from './tekton-resources.generated.ts';

type RawProvider = NonNullable<OpenshiftTektonResourcesQuery['pipelines_providers']>[number];
export type TektonSaasFile = NonNullable<OpenshiftTektonResourcesQuery['saas_files']>[number];
/** A Task or Pipeline template: a Jinja2 resource, its `variables` (JSON text) and its type. */
export type ObjectTemplate = RawProvider['defaults']['taskTemplates'][number];
export type DeployResources = NonNullable<TektonSaasFile['deployResources']>;
type ProviderNamespace = RawProvider['namespace'];

/** The original's `OpenshiftTektonResourcesBadConfigError`: bad provider data stops the run. */
export class OpenshiftTektonResourcesBadConfigError extends QontractError {}

/** A Tekton pipelines provider with its defaults filled in and the saas files that use it. */
export interface TektonProvider {
  readonly name: string;
  readonly namespace: ProviderNamespace;
  readonly taskTemplates: readonly ObjectTemplate[];
  readonly pipelineTemplate: ObjectTemplate;
  /** The provider's (or its defaults') deploy resources; null: the built-in defaults. */
  readonly deployResources: DeployResources | null;
  readonly saasFiles: readonly TektonSaasFile[];
}

/**
 * The Tekton providers this run manages (the original's `fetch_tkn_providers`):
 * those used by the saas files (only `saasFileName`'s when given), in this
 * shard (sharded by provider name), each with the saas files using it in
 * query order. A field the provider leaves empty comes from its defaults, as
 * the original's `get_pipelines_providers` merges them.
 */
export function selectProviders(
  data: OpenshiftTektonResourcesQuery,
  options: { readonly saasFileName?: string | undefined; isInShard(key: string): boolean },
): TektonProvider[] {
  const allSaasFiles = data.saas_files ?? [];
  const saasFiles =
    options.saasFileName === undefined
      ? allSaasFiles
      : allSaasFiles.filter((sf) => sf.name === options.saasFileName).slice(0, 1);
  if (saasFiles.length === 0) return [];

  const byName = new Map<string, RawProvider>();
  const duplicates = new Set<string>();
  for (const provider of data.pipelines_providers ?? []) {
    if (provider.provider !== 'tekton') continue;
    if (byName.has(provider.name)) duplicates.add(provider.name);
    else byName.set(provider.name, provider);
  }
  if (duplicates.size > 0) {
    throw new OpenshiftTektonResourcesBadConfigError(
      `There are duplicates in tekton providers names: ${[...duplicates].join(', ')}`,
    );
  }

  const used = new Map<string, TektonSaasFile[]>();
  for (const sf of saasFiles) {
    const name = sf.pipelinesProvider.name;
    if (!byName.has(name)) {
      // The original fails here with a KeyError; say which saas file and provider.
      throw new OpenshiftTektonResourcesBadConfigError(
        `saas file ${sf.name} (${sf.path}) uses pipelines provider ${name}, which is not a tekton provider`,
      );
    }
    used.set(name, [...(used.get(name) ?? []), sf]);
  }
  return [...used]
    .filter(([name]) => options.isInShard(name))
    .map(([name, files]) => withDefaults(byName.get(name)!, files));
}

function withDefaults(p: RawProvider, saasFiles: TektonSaasFile[]): TektonProvider {
  // Python's `not pp[k]`: an empty list counts as unset too.
  const taskTemplates = p.taskTemplates?.length ? p.taskTemplates : p.defaults.taskTemplates;
  const pipelineTemplates = p.pipelineTemplates ?? p.defaults.pipelineTemplates;
  return {
    name: p.name,
    namespace: p.namespace,
    taskTemplates,
    pipelineTemplate: pipelineTemplates.openshiftSaasDeploy,
    deployResources: p.deployResources ?? p.defaults.deployResources ?? null,
    saasFiles,
  };
}

/** The providers whose namespace is not being deleted: only those get objects and are read. */
export function activeProviders(providers: readonly TektonProvider[]): TektonProvider[] {
  return providers.filter((p) => !p.namespace.delete);
}
