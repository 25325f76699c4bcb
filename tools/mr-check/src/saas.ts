import {
  createEmbeddedTransport,
  createGqlClient,
  type EmbeddedEngineLike,
} from '@qontract/app-interface';
import { configFromObject, silentLogger } from '@qontract/core';
import { changedSaasTargets, loadSaasFiles, type SaasEnvironmentChange } from '@qontract/saas';
import { SAAS_DEPLOY } from './select.ts';

/** One bundle, as the check already holds it. */
export interface LoadedBundle {
  readonly engine: EmbeddedEngineLike;
  readonly source: string;
}

/**
 * The saas files of a bundle exactly as `openshift-saas-deploy` loads them
 * (selectors resolved, templated values rendered), read in-process from the
 * bundle's engine.
 */
async function saasFilesOf(bundle: LoadedBundle) {
  const transport = await createEmbeddedTransport(bundle.source, {
    load: async () => bundle.engine,
  });
  // The config is only the client's frame: the transport above is the backend.
  const gql = await createGqlClient(
    configFromObject({ graphql: { server: bundle.source } }),
    { validateSchemas: false, gqlShaUrl: true, gqlUrlPrint: false },
    undefined,
    silentLogger(),
    { transport },
  );
  try {
    return await loadSaasFiles(gql);
  } finally {
    await gql.close();
  }
}

/** The (saas file, environment) pairs whose targets differ between BASE and HEAD. */
export async function saasChanges(
  base: LoadedBundle,
  head: LoadedBundle,
): Promise<SaasEnvironmentChange[]> {
  const [before, after] = await Promise.all([saasFilesOf(base), saasFilesOf(head)]);
  return changedSaasTargets(before, after);
}

/** The report's name of a pair's dry-run. */
export function saasEntryName(pair: Pick<SaasEnvironmentChange, 'saasFile' | 'environment'>) {
  return `${SAAS_DEPLOY} (${pair.saasFile} / ${pair.environment})`;
}

/** The `qontract-reconcile` integration arguments of a pair's dry-run. */
export function saasDeployArgs(
  pair: Pick<SaasEnvironmentChange, 'saasFile' | 'environment'>,
): string[] {
  return [SAAS_DEPLOY, '--saas-file-name', pair.saasFile, '--env-name', pair.environment];
}
