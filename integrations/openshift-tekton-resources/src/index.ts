import { getResource, gqlClient } from '@qontract/app-interface';
import { type CurrentStateSpec, defineEngineIntegration } from '@qontract/openshift';
import { desiredTektonObjects, MANAGED_TYPES, type TektonObject } from './desired.ts';
import { activeProviders, selectProviders, type TektonProvider } from './providers.ts';
import { OpenshiftTektonResourcesDocument } from './tekton-resources.generated.ts';
import { renderProviderTemplates } from './templates.ts';

/** The original's module constants: the `qontract.integration` annotation and its version. */
export const QONTRACT_INTEGRATION = 'openshift-tekton-resources';
export const QONTRACT_INTEGRATION_VERSION = '0.1.0';

/** What a run manages: the providers' namespaces and every object desired in them. */
interface TektonRun {
  readonly providers: readonly TektonProvider[];
  readonly objects: readonly TektonObject[];
  /** `--saas-file-name`: only that saas file's objects are read (and may be deleted). */
  readonly narrowed: boolean;
}

export const openshiftTektonResources = defineEngineIntegration({
  name: QONTRACT_INTEGRATION,
  version: QONTRACT_INTEGRATION_VERSION,
  description: 'Manages custom resources for Tekton based deployments.',
  options: { saasFileName: { type: 'string', describe: 'saas-file to act on.' } },
  load: async (ctx, opts): Promise<TektonRun> => {
    const gql = await ctx.client(gqlClient);
    const data = await gql.query(OpenshiftTektonResourcesDocument);
    const providers = activeProviders(
      selectProviders(data, { saasFileName: opts.saasFileName, isInShard: ctx.isInShard }),
    );
    // Every template is rendered (and every object built) before the clusters are
    // read: a bad template or provider stops the run with nothing applied, as upstream.
    const rendered = await renderProviderTemplates(
      providers,
      async (path) => (await getResource(gql, path)).content,
    );
    const objects = desiredTektonObjects(providers, rendered);
    return { providers, objects, narrowed: opts.saasFileName !== undefined };
  },
  targets: { namespaces: (run) => run.providers.map((p) => p.namespace) },
  nothingToDo: 'No saas files found to be processed',
  specs: currentStateSpecs,
  desired: (run, { clusters }) => ({ objects: run.objects.filter((o) => clusters.has(o.cluster)) }),
});

/**
 * The Pipelines and Tasks of each provider namespace (the original's
 * `override_managed_types=["Pipeline", "Task"]`), once per namespace; with
 * `--saas-file-name` only the names desired for it, so that the other saas
 * files' objects are neither read nor deleted.
 */
export function currentStateSpecs(run: TektonRun): CurrentStateSpec[] {
  const specs = new Map<string, CurrentStateSpec>();
  for (const { namespace } of run.providers) {
    for (const kind of MANAGED_TYPES) {
      const key = `${namespace.cluster.name}/${namespace.name}/${kind}`;
      const names = run.objects
        .filter(
          (o) =>
            o.kind === kind &&
            o.cluster === namespace.cluster.name &&
            o.namespace === namespace.name,
        )
        .map((o) => o.body.metadata.name);
      specs.set(key, {
        cluster: namespace.cluster.name,
        namespace: namespace.name,
        kind,
        privileged: Boolean(namespace.clusterAdmin),
        ...(run.narrowed ? { resourceNames: [...new Set(names)] } : {}),
      });
    }
  }
  return [...specs.values()];
}
