import { gqlClient } from '@qontract/app-interface';
import {
  type AnyIntegration,
  commonOptions,
  defineIntegration,
  flagOf,
  type OptionSpec,
  QontractError,
} from '@qontract/core';
import {
  clusterMapForNamespaces,
  type DesiredResource,
  OpenshiftResource,
  reconcileResources,
} from '@qontract/openshift';
import { desiredDeployments, refsToResolve, UPSTREAM_DEFAULT } from './desired.ts';
import { resolveImageTags } from './github.ts';
import { IntegrationsManagerDocument } from './integrations-manager.generated.ts';

// The renderer, which tools/generator also uses to write openshift/.
export {
  type ChartValues,
  type OpenshiftTemplate,
  processTemplate,
  renderTemplate,
} from './render.ts';
export { ONE_SHARD } from './sharding.ts';

/** The original's module constants: the `qontract.integration` annotation and its version. */
const QONTRACT_INTEGRATION = 'integrations-manager';
const QONTRACT_INTEGRATION_VERSION = '0.1.0';
/** What the manager owns in its namespaces (the original's managed types override). */
const MANAGED_KINDS = ['Deployment', 'StatefulSet', 'CronJob', 'Service'] as const;

/** `ENV=REF ...` (repeatable, or whitespace-separated from the env variable) → by environment. */
export function parseImageTagFromRef(values: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const item of values.flatMap((v) => v.split(/\s+/)).filter(Boolean)) {
    const parts = item.split('=');
    if (parts.length !== 2 || !parts[0] || !parts[1]) {
      throw new QontractError(
        `--image-tag-from-ref: '${item}' must be ENVIRONMENT=REF (exactly one '=', both sides set)`,
      );
    }
    out.set(parts[0], parts[1]);
  }
  return out;
}

/**
 * The flags an integration's CLI takes (`--cluster-name`, ...), for the
 * sharding checks; undefined for an integration this CLI does not implement.
 */
function flagsOf(
  integrations: readonly AnyIntegration[],
): (name: string) => ReadonlySet<string> | undefined {
  const byName = new Map(
    integrations.map((i) => [
      i.name,
      new Set(
        Object.entries(i.options as Record<string, OptionSpec>)
          .filter(([, s]) => s.type !== 'argument')
          .map(([k, s]) => `--${flagOf(k, s)}`),
      ),
    ]),
  );
  // The original checks these against its own CLI and refuses the ones it does not hold
  // (another language's). An integration not in this CLI is the original's in a mixed
  // fleet (terraform-resources, ...): its pods run the original's image, whose CLI takes
  // the strategy's argument, so it is not checked against ours.
  return (name) => byName.get(name);
}

/**
 * The integrations-manager of the umbrella CLI; `known` lists the CLI's
 * integrations (the registry, which holds the manager itself, so it is read
 * lazily at run time).
 */
export function integrationsManager(known: () => readonly AnyIntegration[]) {
  return defineIntegration({
    name: 'integrations-manager',
    version: QONTRACT_INTEGRATION_VERSION,
    description: 'Manages Qontract Reconcile integrations.',
    options: {
      environmentName: {
        type: 'string',
        env: 'ENVIRONMENT_NAME',
        describe: 'deploy only the managed entries of namespaces in this environment',
      },
      threadPoolSize: commonOptions.threadPoolSize(10),
      internal: commonOptions.internal(),
      imageTagFromRef: {
        type: 'list',
        alias: 'r',
        env: 'INTEGRATIONS_MANAGER_IMAGE_TAG_FROM_REF',
        describe: 'ENV=REF: IMAGE_TAG of environment ENV is the commit sha of REF (repeatable)',
      },
      upstream: {
        type: 'string',
        alias: 'u',
        env: 'INTEGRATIONS_MANAGER_UPSTREAM',
        describe: 'manage only integrations with this upstream (and only objects it deployed)',
      },
      image: {
        type: 'string',
        alias: 'i',
        env: 'INTEGRATIONS_MANAGER_IMAGE',
        describe: 'the IMAGE parameter of every deployment',
      },
    },
    run: async (ctx, opts) => {
      const imageTagFromRef = parseImageTagFromRef(opts.imageTagFromRef);
      const gql = await ctx.client(gqlClient);
      const data = await gql.query(IntegrationsManagerDocument);
      const selection = {
        environmentName: opts.environmentName || undefined,
        upstream: opts.upstream || undefined,
        image: opts.image || undefined,
        imageTagFromRef,
      };
      const refs = refsToResolve(data, selection);
      const desired = desiredDeployments(data, {
        ...selection,
        imageTags: refs.length > 0 ? await resolveImageTags(ctx, refs) : new Map(),
        flagsOf: flagsOf(known()),
        env: ctx.env.vars,
      });
      for (const p of desired.problems) ctx.errors.register(p.scope, p.message);
      if (desired.namespaces.length === 0) {
        ctx.log.info('no integration is managed in this environment; nothing to do');
        return;
      }
      const clusters = await clusterMapForNamespaces(
        ctx,
        desired.namespaces.map((ns) => ({ cluster: ns.cluster })),
        { internal: opts.internal, concurrency: opts.threadPoolSize },
      );
      const caller = opts.upstream || UPSTREAM_DEFAULT;
      const resources: DesiredResource[] = desired.namespaces.flatMap((ns) =>
        ns.objects.map((body) => ({
          cluster: ns.cluster.name,
          namespace: ns.name,
          source: ns.path,
          resource: new OpenshiftResource(
            body,
            QONTRACT_INTEGRATION,
            QONTRACT_INTEGRATION_VERSION,
            {
              callerName: caller,
              errorDetails: ns.path,
            },
          ),
        })),
      );
      await reconcileResources({
        ctx,
        integration: QONTRACT_INTEGRATION,
        integrationVersion: QONTRACT_INTEGRATION_VERSION,
        clusters,
        specs: desired.namespaces.flatMap((ns) =>
          MANAGED_KINDS.map((kind) => ({
            cluster: ns.cluster.name,
            namespace: ns.name,
            kind,
            privileged: false,
          })),
        ),
        desired: resources,
        takeOver: false,
        // Several managers (one per upstream) share a namespace: each sees only its own objects,
        // and leaves alone a name another one holds (the namespace's Service, an integration
        // moving between them), where the original's would apply over it on every run.
        caller: opts.upstream || undefined,
        leaveOtherCallers: true,
        concurrency: opts.threadPoolSize,
      });
    },
  });
}
