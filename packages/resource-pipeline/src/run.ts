import { createHash } from 'node:crypto';
import { appInterfaceSettings, gqlClient } from '@qontract/app-interface';
import { commonOptions, errorMessage, QontractError, type RunContext } from '@qontract/core';
import {
  clusterMapForNamespaces,
  type DesiredResource,
  type KubeObject,
  reconcileResources,
} from '@qontract/openshift';
import pLimit from 'p-limit';
import { describeResource, fields, type Provider, type SelectedNamespace } from './model.ts';
import { OpenshiftResourcesNamespacesDocument } from './namespaces.generated.ts';
import {
  buildDesired,
  DEFAULT_REPO_URL,
  FetchResourceError,
  type TemplateRenderer,
} from './providers.ts';
import { checkClusterOptions, selectNamespaces } from './select.ts';
import { specsForNamespaces } from './specs.ts';

/** One variant of the pipeline (openshift-resources, -vault-secrets, -routes, -prometheus-rules). */
export interface PipelineConfig {
  /** The `qontract.integration` annotation value (`openshift_resources` for the main one). */
  readonly identity: string;
  readonly version: string;
  readonly providers: readonly Provider[];
  /** Managed kinds instead of the namespaces' `managedResourceTypes`. */
  readonly overrideManagedTypes?: readonly string[];
  /** Renders templates; the integration wires the sandboxed engine with its helpers. */
  readonly render: (ctx: RunContext) => TemplateRenderer;
}

/** The CLI options of the pipeline's integrations. */
export const pipelineOptions = {
  threadPoolSize: commonOptions.threadPoolSize(10),
  internal: commonOptions.internal(),
  clusterName: commonOptions.clusterName(),
  excludeCluster: commonOptions.excludeCluster(),
  namespaceName: commonOptions.namespaceName(),
} as const;

/** The options of -vault-secrets, -routes and -prometheus-rules: no `--exclude-cluster`. */
export const siblingPipelineOptions = {
  threadPoolSize: pipelineOptions.threadPoolSize,
  internal: pipelineOptions.internal,
  clusterName: pipelineOptions.clusterName,
  namespaceName: pipelineOptions.namespaceName,
} as const;

export interface PipelineOptions {
  threadPoolSize: number;
  internal: boolean | undefined;
  clusterName: string[];
  excludeCluster: string[];
  namespaceName: string | undefined;
}

/** Objects managed by the Argo CD operator are invisible to the pipeline, as upstream. */
const managedByArgoCd = (item: KubeObject) =>
  (item.metadata?.labels as Record<string, string> | undefined)?.['app.kubernetes.io/part-of'] ===
  'argocd';

/**
 * The openshift-resources run (upstream `reconcile/openshift_resources_base.py`
 * `run()`): select namespaces, build every desired object with its provider (a
 * broken resource is an error of its namespace, the others go on), then the
 * shared engine reconciles the managed kinds with the original's rules.
 */
export async function runOpenshiftResourcesPipeline(
  ctx: RunContext,
  opts: PipelineOptions,
  config: PipelineConfig,
): Promise<void> {
  checkClusterOptions({
    clusterNames: opts.clusterName,
    excludeClusters: opts.excludeCluster,
    dryRun: ctx.dryRun,
  });
  const gql = await ctx.client(gqlClient);
  const [{ namespaces }, settings] = await Promise.all([
    gql.query(OpenshiftResourcesNamespacesDocument),
    appInterfaceSettings(gql),
  ]);
  const selected = selectNamespaces(namespaces ?? [], {
    isInShard: ctx.isInShard,
    clusterNames: opts.clusterName,
    excludeClusters: opts.excludeCluster,
    namespaceName: opts.namespaceName,
    providers: config.providers,
  });
  if (selected.length === 0) {
    ctx.log.info('no namespace has resources for this integration; nothing to do');
    return;
  }
  const clusters = await clusterMapForNamespaces(
    ctx,
    selected.map((s) => ({ cluster: s.namespace.cluster, clusterAdmin: s.namespace.clusterAdmin })),
    { internal: opts.internal, concurrency: opts.threadPoolSize },
  );
  const {
    specs,
    namespaces: kept,
    errors,
  } = specsForNamespaces(selected, clusters, config.overrideManagedTypes);
  for (const e of errors) ctx.errors.register(e.scope, e.message);

  // Not awaited: the engine reads the clusters while the resources are rendered and parsed.
  const desired = desiredResources(
    ctx,
    kept,
    config,
    settings.repoUrl || DEFAULT_REPO_URL,
    opts.threadPoolSize,
  );
  await reconcileResources({
    ctx,
    integration: config.identity,
    integrationVersion: config.version,
    clusters,
    specs,
    desired,
    takeOver: false,
    concurrency: opts.threadPoolSize,
    skipCurrent: managedByArgoCd,
    warnUnusedTypes: true,
  });
}

async function desiredResources(
  ctx: RunContext,
  namespaces: readonly SelectedNamespace[],
  config: PipelineConfig,
  repoUrl: string,
  concurrency: number,
): Promise<DesiredResource[]> {
  const render = config.render(ctx);
  const pc = {
    integration: config.identity,
    integrationVersion: config.version,
    secrets: ctx.secrets,
    render,
    repoUrl,
  };
  const limit = pLimit(Math.max(1, concurrency));
  const out: DesiredResource[] = [];
  await Promise.all(
    namespaces.flatMap((sel) =>
      sel.openshiftResources.map((r) =>
        limit(async () => {
          const cluster = sel.namespace.cluster.name;
          const where = `[${cluster}/${sel.namespace.name}]`;
          try {
            const resource = await buildDesired(sel, r, pc);
            out.push({
              cluster,
              namespace: sel.namespace.name,
              resource,
              privileged: Boolean(sel.namespace.clusterAdmin),
              source: describeResource(r),
            });
          } catch (e) {
            // Upstream aborts the run on template errors; reporting every broken
            // resource at once and failing (exit 1, no deletions) tells the author more.
            const message =
              e instanceof FetchResourceError || e instanceof QontractError
                ? e.message
                : errorMessage(e);
            ctx.errors.register(`${cluster}/${sel.namespace.name}`, `${where} ${message}`);
          }
        }),
      ),
    ),
  );
  // Stable order whatever the concurrency did, so plans and logs are reproducible.
  return out.sort((a, b) =>
    `${a.cluster}/${a.namespace}/${a.source}`.localeCompare(
      `${b.cluster}/${b.namespace}/${b.source}`,
    ),
  );
}

/**
 * The early-exit desired state (upstream
 * `reconcile/openshift_resources_base.py` `early_exit_desired_state()`): per
 * cluster, a hash of its selected namespaces and the content of their
 * resources. Equal states → the MR check exits early; the changed clusters are
 * the shards of a sharded dry-run.
 */
export async function earlyExitDesiredState(
  ctx: RunContext,
  opts: PipelineOptions,
  config: Pick<PipelineConfig, 'providers'>,
): Promise<unknown> {
  const gql = await ctx.client(gqlClient);
  const { namespaces } = await gql.query(OpenshiftResourcesNamespacesDocument);
  const selected = selectNamespaces(namespaces ?? [], {
    isInShard: () => true,
    clusterNames: opts.clusterName,
    excludeClusters: opts.excludeCluster,
    namespaceName: opts.namespaceName,
    providers: config.providers,
  });
  const byCluster = new Map<string, unknown[]>();
  for (const sel of selected) {
    const cluster = sel.namespace.cluster.name;
    const { sharedResources: _shared, openshiftResources: _own, ...ns } = sel.namespace;
    const items = byCluster.get(cluster) ?? [];
    items.push({
      namespace: ns,
      resources: sel.openshiftResources.map((r) => ({
        id: `${cluster}/${sel.namespace.name}/${fields(r).provider}/${describeResource(r)}`,
        content_sha: createHash('md5').update(JSON.stringify(r)).digest('hex'),
      })),
    });
    byCluster.set(cluster, items);
  }
  const state: Record<string, { shard: string; hash: string }> = {};
  for (const [cluster, items] of [...byCluster].sort(([a], [b]) => a.localeCompare(b))) {
    state[cluster] = {
      shard: cluster,
      hash: createHash('sha256').update(JSON.stringify(items)).digest('hex'),
    };
  }
  return { state };
}

/** The sharded dry-run of the pipeline: one run per changed cluster, accepted for at most two. */
export const pipelineShardedDryRun = {
  shardPathSelectors: ['state.*.shard'],
  optionsForShard: <O extends { clusterName: string[] }>(o: O, shard: string): O => ({
    ...o,
    clusterName: [shard],
  }),
  review: (shards: readonly string[]) => shards.length <= 2,
};
