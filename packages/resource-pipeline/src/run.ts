import { setImmediate } from 'node:timers/promises';
import { appInterfaceSettings, gqlClient } from '@qontract/app-interface';
import { commonOptions, type RunContext } from '@qontract/core';
import {
  appInterfaceBundle,
  clusterMapForNamespaces,
  type KubeObject,
  leavesOut,
  reconcileResources,
  runWatchMode,
  type WatchedState,
} from '@qontract/openshift';
import type { LoadedTexts } from '@qontract/openshift/parse-pool';
import type { OrderMemo } from './build-order.ts';
import { DesiredBuild } from './desired-build.ts';
import { DesiredCache } from './desired-cache.ts';
import type { Provider, SelectedNamespace } from './model.ts';
import { namespacesOf } from './namespaces-answer.ts';
import { DEFAULT_REPO_URL, type TemplateRenderer } from './providers/index.ts';
import { loadResourceFiles } from './resource-files.ts';
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
  /** Objects kept between runs of this process; default: one cache per `identity`. */
  readonly cache?: DesiredCache;
}

/**
 * The desired cache of a pipeline variant in the run's loop (its runs reuse
 * what earlier runs built); undefined with `QONTRACT_DESIRED_CACHE=off` or
 * `QONTRACT_LOOP_CACHES=off`.
 */
function cacheOf(ctx: RunContext, config: PipelineConfig): DesiredCache | undefined {
  if (!ctx.loop.tuning.desiredCache) return undefined;
  if (config.cache) return config.cache;
  return ctx.loop.cache(`pipeline:desired:${config.identity}`, () => new DesiredCache());
}

/** The CLI options of the pipeline's integrations. */
export const pipelineOptions = {
  threadPoolSize: commonOptions.threadPoolSize(10),
  internal: commonOptions.internal(),
  clusterName: commonOptions.clusterName(),
  excludeCluster: commonOptions.excludeCluster(),
  namespaceName: commonOptions.namespaceName(),
  watch: commonOptions.watch(),
  watchResyncSeconds: commonOptions.watchResyncSeconds(),
} as const;

/** The options of -vault-secrets, -routes and -prometheus-rules: no `--exclude-cluster`. */
export const siblingPipelineOptions = {
  threadPoolSize: pipelineOptions.threadPoolSize,
  internal: pipelineOptions.internal,
  clusterName: pipelineOptions.clusterName,
  namespaceName: pipelineOptions.namespaceName,
  watch: pipelineOptions.watch,
  watchResyncSeconds: pipelineOptions.watchResyncSeconds,
} as const;

export interface PipelineOptions {
  threadPoolSize: number;
  internal: boolean | undefined;
  clusterName: string[];
  excludeCluster: string[];
  namespaceName: string | undefined;
  /** Watch mode (`--watch`): see `runWatchMode`. */
  watch?: boolean;
  watchResyncSeconds?: number;
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
  if (opts.watch) {
    await runWatchMode({
      ctx,
      prepare: (runCtx) => preparePipeline(runCtx, opts, config),
      resyncSeconds: opts.watchResyncSeconds ?? 600,
      bundle: await appInterfaceBundle(ctx),
    });
    return;
  }
  const state = await preparePipeline(ctx, opts, config);
  if (!state) return;
  try {
    await reconcileResources({ ctx, ...state });
  } catch (e) {
    // The run failed before it needed every object: the build ends with it.
    await state.desired.stop();
    throw e;
  }
}

/** What the engine reconciles, its desired objects a build under way. */
type PipelineState = WatchedState & { readonly desired: DesiredBuild };

/**
 * What the engine reconciles for the bundle `ctx` reads; undefined when no
 * namespace is selected. The objects are built while the clusters are
 * connected to and read: the engine takes each cluster's once they are built.
 */
async function preparePipeline(
  ctx: RunContext,
  opts: PipelineOptions,
  config: PipelineConfig,
): Promise<PipelineState | undefined> {
  const gql = await ctx.client(gqlClient);
  const answer = namespacesOf(ctx, gql, config.identity);
  const [{ namespaces, kept }, settings] = await Promise.all([
    answer.fetch(),
    appInterfaceSettings(gql),
  ]);
  const selected = selectNamespaces(namespaces, {
    isInShard: ctx.isInShard,
    clusterNames: opts.clusterName,
    excludeClusters: opts.excludeCluster,
    namespaceName: opts.namespaceName,
    providers: config.providers,
  });
  if (selected.length === 0) {
    ctx.log.info('no namespace has resources for this integration; nothing to do');
    return undefined;
  }
  const buildable = clusterByCluster(readableNamespaces(selected, ctx.integration, opts.internal));
  // Started first: the files load on worker threads while the clusters are discovered and read.
  // The answer of the previous run: its files were built then (the broken few fail here again).
  const loaded = answer.reused
    ? undefined
    : await loadResourceFiles(ctx, buildable, cacheOf(ctx, config));
  const connecting = clusterMapForNamespaces(
    ctx,
    selected.map((s) => ({ cluster: s.namespace.cluster, clusterAdmin: s.namespace.clusterAdmin })),
    { internal: opts.internal, concurrency: opts.threadPoolSize },
  );
  connecting.catch(() => {}); // awaited below, once the build has started
  // A turn of the event loop first: the clusters' first requests go out before the build
  // takes the thread. A warm run's builds are then cache lookups that fill the round trips
  // to the clusters instead of waiting for them.
  await setImmediate();
  const desired = startBuild(ctx, opts, config, {
    namespaces: buildable,
    loaded,
    repoUrl: settings.repoUrl || DEFAULT_REPO_URL,
    bundleSha: gql.sha,
    rememberOrder: kept,
  });
  try {
    const clusters = await connecting;
    const { specs, errors } = specsForNamespaces(selected, clusters, config.overrideManagedTypes);
    for (const e of errors) ctx.errors.register(e.scope, e.message);
    return {
      integration: config.identity,
      integrationVersion: config.version,
      clusters,
      specs,
      desired,
      takeOver: false,
      concurrency: opts.threadPoolSize,
      skipCurrent: managedByArgoCd,
      warnUnusedTypes: true,
    };
  } catch (e) {
    // The build ends with this run: a looping process's next run starts with the cache free.
    await desired.stop();
    throw e;
  }
}

/**
 * Starts building the namespaces' desired objects (in this order) with the
 * run's secrets, renderer and the loop's desired cache.
 */
function startBuild(
  ctx: RunContext,
  opts: PipelineOptions,
  config: PipelineConfig,
  o: {
    readonly namespaces: readonly SelectedNamespace[];
    readonly loaded: LoadedTexts | undefined;
    readonly repoUrl: string;
    readonly bundleSha: string | undefined;
    /** The answer is kept for the next run: so is the order of its items. */
    readonly rememberOrder: boolean;
  },
): DesiredBuild {
  // QONTRACT_DESIRED_CACHE=off builds everything on every run (a comparison, a suspicion).
  const cache = (cacheOf(ctx, config) ?? new DesiredCache()).beginRun();
  return new DesiredBuild({
    namespaces: o.namespaces,
    providers: {
      integration: config.identity,
      integrationVersion: config.version,
      secrets: ctx.secrets,
      render: config.render(ctx),
      repoUrl: o.repoUrl,
      cache,
      bundleSha: o.bundleSha,
      loaded: o.loaded,
    },
    concurrency: opts.threadPoolSize,
    order: o.rememberOrder
      ? ctx.loop.cache<OrderMemo>(`pipeline:order:${config.identity}`, () => ({}))
      : undefined,
    signal: ctx.signal,
    log: ctx.log,
  });
}

/**
 * The selected namespaces but those of a cluster the cluster map leaves out
 * (the integration disabled on it, `--internal`/`--external`): no namespace
 * of such a cluster is read, so its objects are not built (nor its Vault
 * secrets read). Left out only when every namespace's copy of the cluster
 * says so: the map takes one of them, and a namespace it reads must have its
 * objects.
 */
function readableNamespaces(
  selected: readonly SelectedNamespace[],
  integration: string,
  internal: boolean | undefined,
): SelectedNamespace[] {
  const out = new Map<string, boolean>();
  for (const { namespace } of selected) {
    const name = namespace.cluster.name;
    out.set(
      name,
      (out.get(name) ?? true) && leavesOut(namespace.cluster, { integration, internal }),
    );
  }
  return selected.filter((s) => !out.get(s.namespace.cluster.name));
}

/**
 * The namespaces grouped by cluster, the clusters in the order they first
 * come (the order the engine reads them in), each cluster's namespaces in
 * their order: built in this order, each cluster's objects are in as early
 * as they can be.
 */
function clusterByCluster(selected: readonly SelectedNamespace[]): SelectedNamespace[] {
  return [...Map.groupBy(selected, (sel) => sel.namespace.cluster.name).values()].flat();
}
