import { hash } from 'node:crypto';
import { setImmediate } from 'node:timers/promises';
import {
  type AppInterfaceSettings,
  appInterfaceSettings,
  type GqlClient,
  gqlClient,
} from '@qontract/app-interface';
import {
  commonOptions,
  EventLoopSlices,
  errorMessage,
  QontractError,
  type RunContext,
} from '@qontract/core';
import {
  appInterfaceBundle,
  type ClusterMap,
  clusterMapForNamespaces,
  type DesiredCluster,
  type DesiredError,
  type DesiredResource,
  type DesiredSource,
  type KubeObject,
  leavesOut,
  type OpenshiftResource,
  reconcileResources,
  runWatchMode,
  type WatchedState,
} from '@qontract/openshift';
import type { LoadedTexts } from '@qontract/openshift/parse-pool';
import { buildOrder, type OrderMemo } from './build-order.ts';
import { DesiredCache } from './desired-cache.ts';
import {
  describeResource,
  fields,
  type NamespaceData,
  type OpenshiftResourceData,
  type Provider,
  type SelectedNamespace,
} from './model.ts';
import { OpenshiftResourcesNamespacesDocument } from './namespaces.generated.ts';
import {
  buildDesired,
  buildDesiredNow,
  DEFAULT_REPO_URL,
  FetchResourceError,
  type TemplateRenderer,
} from './providers/index.ts';
import { checkClusterOptions, type NamespaceFilter, selectNamespaces } from './select.ts';
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
  if (state) await reconcileResources({ ctx, ...state });
}

/** What the engine reconciles for the bundle `ctx` reads; undefined when no namespace is selected. */
async function preparePipeline(
  ctx: RunContext,
  opts: PipelineOptions,
  config: PipelineConfig,
): Promise<WatchedState | undefined> {
  const gql = await ctx.client(gqlClient);
  const filter: NamespaceFilter = {
    isInShard: ctx.isInShard,
    clusterNames: opts.clusterName,
    excludeClusters: opts.excludeCluster,
    namespaceName: opts.namespaceName,
    providers: config.providers,
  };
  const answer = namespacesOf(ctx, gql, config);
  const settings = appInterfaceSettings(gql);
  const buildOptions = (
    resolved: AppInterfaceSettings,
    loaded: LoadedTexts | undefined,
    rememberOrder: boolean,
  ): DesiredOptions => ({
    repoUrl: resolved.repoUrl || DEFAULT_REPO_URL,
    concurrency: opts.threadPoolSize,
    bundleSha: gql.sha,
    loaded,
    rememberOrder,
  });
  const state = (
    clusters: ClusterMap,
    specs: WatchedState['specs'],
    desired: WatchedState['desired'],
  ): WatchedState => ({
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
  const clusterMapOf = (selected: readonly SelectedNamespace[]) =>
    clusterMapForNamespaces(
      ctx,
      selected.map((s) => ({
        cluster: s.namespace.cluster,
        clusterAdmin: s.namespace.clusterAdmin,
      })),
      { internal: opts.internal, concurrency: opts.threadPoolSize },
    );
  const nothingToDo = () => {
    ctx.log.info('no namespace has resources for this integration; nothing to do');
    return undefined;
  };

  const [{ namespaces, kept: answerKept }, resolved] = await Promise.all([
    answer.fetch(),
    settings,
  ]);
  const selected = selectNamespaces(namespaces, filter);
  if (selected.length === 0) return nothingToDo();
  // Built cluster by cluster, in the order the clusters are read: a wet run applies a
  // cluster's changes once its read has ended and its own objects are built.
  const buildable = clusterByCluster(readableNamespaces(selected, ctx.integration, opts.internal));
  // Started first: the files load on worker threads while the clusters are discovered and read.
  // The answer of the previous run: its files were built then (the broken few fail here again).
  const loaded = answer.reused ? undefined : await loadResourceFiles(ctx, buildable, config);
  // The objects are built while the clusters are connected to (a warm run's builds are cache
  // lookups that would otherwise wait for every /version answer). Which namespaces the run
  // reads is known once the clusters are: only theirs are kept, with their errors.
  const connecting = clusterMapOf(selected);
  connecting.catch(() => {}); // awaited below
  // A turn of the event loop first: the clusters' first requests go out before the build
  // takes the thread.
  await setImmediate();
  const stop = new AbortController();
  const parts = new Map(
    [...new Set(buildable.map((sel) => sel.namespace.cluster.name))].map((cluster) => [
      cluster,
      Promise.withResolvers<BuiltDesired>(),
    ]),
  );
  const building = desiredResources(ctx, buildable, config, {
    ...buildOptions(resolved, loaded, answerKept),
    stop: stop.signal,
    onCluster: (cluster, part) => parts.get(cluster)?.resolve(part),
  });
  building.catch((e: unknown) => {
    for (const part of parts.values()) part.reject(e); // those built already stay so
  });
  for (const part of parts.values()) part.promise.catch(() => {}); // awaited below
  try {
    const clusters = await connecting;
    const { specs, errors } = specsForNamespaces(selected, clusters, config.overrideManagedTypes);
    for (const e of errors) ctx.errors.register(e.scope, e.message);
    // Not awaited: the engine reads the clusters while the resources are rendered and parsed,
    // and takes each cluster's objects (and errors) once they are built.
    const source: DesiredSource = {
      builtAhead: true,
      ofCluster: (cluster) => parts.get(cluster)?.promise ?? NOTHING,
      all: async () => {
        await building;
        return new Map(
          await Promise.all(
            [...parts].map(async ([cluster, part]) => [cluster, await part.promise] as const),
          ),
        );
      },
    };
    return state(clusters, specs, source);
  } catch (e) {
    // The build ends with this run: a looping process's next run starts with the cache free.
    stop.abort();
    await building.catch(() => {});
    throw e;
  }
}

/** More threads than this only cost memory: each has a heap of its own. */
const MAX_LOAD_THREADS = 16;

/**
 * Starts loading the resource files no earlier run of this process built an
 * object from, on worker threads when there are many (a cold run of a large
 * app-interface) and the machine has cores to spare; `QONTRACT_PARSE_THREADS`
 * sets the number of threads (0: none). Templates are rendered, and their
 * output loaded, on the run's own thread.
 */
async function loadResourceFiles(
  ctx: RunContext,
  selected: readonly SelectedNamespace[],
  config: PipelineConfig,
): Promise<LoadedTexts | undefined> {
  const given = ctx.loop.tuning.parseThreads;
  if (given === 0) return undefined;
  const cache = cacheOf(ctx, config);
  const texts = new Set<string>();
  for (const sel of selected) {
    for (const r of sel.openshiftResources) {
      const f = fields(r);
      const plain =
        f.provider === 'resource' ||
        (f.provider === 'prometheus-rule' && (f.type ?? 'resource') === 'resource');
      const content = f.path?.content;
      if (plain && content && !cache?.knows(content)) texts.add(content);
    }
  }
  if (texts.size === 0) return undefined;
  // Imported here: the pool's module is its workers' code too (a chunk of its own in the bundle).
  const pool = await import('@qontract/openshift/parse-pool');
  const threads =
    given !== undefined
      ? Math.min(Number(given), MAX_LOAD_THREADS)
      : texts.size >= pool.MIN_FILES_FOR_WORKERS
        ? pool.defaultLoadThreads()
        : 0;
  if (threads === 0) return undefined;
  ctx.log.debug(`loading ${texts.size} resource files on ${threads} worker thread(s)`);
  return pool.loadInWorkers(texts, threads);
}

/** The namespaces answer of a loop's last run of a pipeline, with the bundle it came from. */
interface LastAnswer {
  last?: { readonly key: string; readonly namespaces: readonly NamespaceData[] };
}

/**
 * The namespaces and their resources. The answer for one bundle never changes,
 * so a run pinned to the bundle of the previous run (loop mode, unchanged
 * app-interface) reuses its decoded answer instead of downloading, decoding and
 * checking the largest query again. Never when the bundle is not known (no
 * `--gql-sha-url`) or the queried schemas are to be dumped. `reused` is known
 * at once; `fetch()` sends the query when the answer is not reused.
 */
function namespacesOf(
  ctx: RunContext,
  gql: GqlClient,
  config: PipelineConfig,
): {
  reused: boolean;
  fetch: () => Promise<{ namespaces: readonly NamespaceData[]; kept: boolean }>;
} {
  const answers =
    gql.sha !== undefined && !ctx.globals.dumpSchemas && ctx.loop.tuning.desiredCache
      ? ctx.loop.cache<LastAnswer>(`pipeline:answer:${config.identity}`, () => ({}))
      : undefined;
  // The schema check of the query depends on the integration and on --validate-schemas.
  const key = `${gql.sha}\u0000${ctx.integration}\u0000${ctx.globals.validateSchemas}`;
  const last = answers?.last;
  if (last?.key === key) {
    const namespaces = last.namespaces;
    return {
      reused: true,
      fetch: async () => ({ namespaces, kept: true }),
    };
  }
  const fetch = async () => {
    const { namespaces } = await gql.query(OpenshiftResourcesNamespacesDocument);
    if (answers) answers.last = { key, namespaces: namespaces ?? [] };
    return { namespaces: namespaces ?? [], kept: answers !== undefined };
  };
  return { reused: false, fetch };
}

interface DesiredOptions {
  readonly repoUrl: string;
  readonly concurrency: number;
  readonly bundleSha: string | undefined;
  /** Resource files loading on worker threads (closed when the build ends). */
  readonly loaded: LoadedTexts | undefined;
  /** The answer is kept for the next run: so is the order of its items. */
  readonly rememberOrder: boolean;
  /** Stops the build after the objects under way (the run failed before it needed them). */
  readonly stop?: AbortSignal;
  /**
   * Called once every object of a cluster is built, with those objects (in
   * the build's order) and their errors; for every cluster of the namespaces
   * built for, before the build ends.
   */
  readonly onCluster?: (cluster: string, built: BuiltDesired) => void;
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

/** The desired objects of a cluster nothing was built for. */
const NOTHING: Promise<DesiredCluster> = Promise.resolve({ objects: [], errors: [] });

/**
 * The namespaces grouped by cluster, the clusters in the order they first
 * come (the order the engine reads them in), each cluster's namespaces in
 * their order.
 */
function clusterByCluster(selected: readonly SelectedNamespace[]): SelectedNamespace[] {
  return [...Map.groupBy(selected, (sel) => sel.namespace.cluster.name).values()].flat();
}

/** What the build made, with its errors: they count only for the namespaces the run reads. */
interface BuiltDesired {
  readonly objects: DesiredResource[];
  readonly errors: readonly DesiredError[];
}

async function desiredResources(
  ctx: RunContext,
  namespaces: readonly SelectedNamespace[],
  config: PipelineConfig,
  { repoUrl, concurrency, bundleSha, loaded, rememberOrder, stop, onCluster }: DesiredOptions,
): Promise<BuiltDesired> {
  const render = config.render(ctx);
  // QONTRACT_DESIRED_CACHE=off builds everything on every run (a comparison, a suspicion).
  const cache = (cacheOf(ctx, config) ?? new DesiredCache()).beginRun();
  const pc = {
    integration: config.identity,
    integrationVersion: config.version,
    secrets: ctx.secrets,
    render,
    repoUrl,
    cache,
    bundleSha,
    loaded,
  };
  const items = namespaces.flatMap((sel) => sel.openshiftResources.map((r) => [sel, r] as const));
  // Stable order whatever the concurrency did, so plans and logs are reproducible.
  const order = buildOrder(
    items,
    rememberOrder
      ? ctx.loop.cache<OrderMemo>(`pipeline:order:${config.identity}`, () => ({}))
      : undefined,
  );
  const built: Array<DesiredResource | undefined> = new Array(items.length);
  const errors: Array<BuiltDesired['errors'][number]> = [];
  const clusterOf = (i: number) => items[i]![0].namespace.cluster.name;
  /** Per cluster: its items in the build's order, how many are left, its errors. */
  const clusters = new Map(
    namespaces.map((sel) => [
      sel.namespace.cluster.name,
      { order: [] as number[], left: 0, errors: [] as Array<BuiltDesired['errors'][number]> },
    ]),
  );
  if (onCluster) {
    for (const i of order) {
      const c = clusters.get(clusterOf(i))!;
      c.order.push(i);
      c.left++;
    }
  }
  const clusterBuilt = (cluster: string) => {
    const c = clusters.get(cluster)!;
    clusters.delete(cluster);
    const objects: DesiredResource[] = [];
    for (const i of c.order) {
      const d = built[i];
      if (d) objects.push(d);
    }
    onCluster?.(cluster, { objects, errors: c.errors });
  };
  if (onCluster) {
    for (const [cluster, c] of clusters) if (c.left === 0) clusterBuilt(cluster);
  }
  try {
    await buildAll();
  } finally {
    loaded?.close();
    cache.end();
  }
  // A stopped build: what it made of the clusters it had not finished.
  if (onCluster) for (const cluster of [...clusters.keys()]) clusterBuilt(cluster);
  ctx.log.debug(
    `desired objects: ${cache.hits.objects} from earlier runs, ${cache.misses.objects} built; ` +
      `templates: ${cache.hits.templates} from earlier runs, ${cache.misses.templates} rendered`,
  );
  if (loaded) {
    ctx.log.debug(
      `resource files: ${loaded.counts.loaded} loaded on worker threads, ${loaded.counts.left} here`,
    );
  }
  const objects: DesiredResource[] = [];
  for (const i of order) {
    const d = built[i];
    if (d) objects.push(d);
  }
  return { objects, errors };

  /**
   * At most `concurrency` builds at a time (templates and Vault secrets wait
   * on lookups). Runners take the next resource in turn instead of a queued
   * task per resource: a large run builds tens of thousands of plain files,
   * and a promise chain of its own for each cost more than building most of them.
   */
  async function buildAll(): Promise<void> {
    let next = 0;
    // Most builds of a warm run are cache hits that never wait: the clusters' lists, started
    // before, are sent and read between slices of them.
    const slices = new EventLoopSlices();
    const runner = async (): Promise<void> => {
      while (next < items.length && !stop?.aborted) {
        const i = next++;
        const [sel, r] = items[i]!;
        const now = buildOneNow(sel, r);
        built[i] = now === LATER ? await buildOne(sel, r) : now;
        const c = onCluster ? clusters.get(sel.namespace.cluster.name) : undefined;
        if (c && --c.left === 0) clusterBuilt(sel.namespace.cluster.name);
        const pause = slices.due();
        if (pause) await pause;
      }
    };
    const runners = Math.max(1, Math.min(concurrency, items.length));
    await Promise.all(Array.from({ length: runners }, runner));
  }

  /** The object of a plain resource file, built here and now; LATER where it must be awaited. */
  function buildOneNow(
    sel: SelectedNamespace,
    r: OpenshiftResourceData,
  ): DesiredResource | undefined | typeof LATER {
    try {
      const resource = buildDesiredNow(r, pc);
      return resource ? desiredOf(sel, r, resource) : LATER;
    } catch (e) {
      failed(sel, r, e);
      return undefined;
    }
  }

  async function buildOne(
    sel: SelectedNamespace,
    r: OpenshiftResourceData,
  ): Promise<DesiredResource | undefined> {
    try {
      return desiredOf(sel, r, await buildDesired(sel, r, pc));
    } catch (e) {
      failed(sel, r, e);
      return undefined;
    }
  }

  function desiredOf(
    sel: SelectedNamespace,
    r: OpenshiftResourceData,
    resource: OpenshiftResource,
  ): DesiredResource {
    return {
      cluster: sel.namespace.cluster.name,
      namespace: sel.namespace.name,
      resource,
      privileged: Boolean(sel.namespace.clusterAdmin),
      source: describeResource(r),
    };
  }

  function failed(sel: SelectedNamespace, r: OpenshiftResourceData, e: unknown): void {
    const cluster = sel.namespace.cluster.name;
    // Upstream aborts the run on template errors; reporting every broken
    // resource at once and failing (exit 1, no deletions) tells the author more.
    const message =
      e instanceof FetchResourceError || e instanceof QontractError ? e.message : errorMessage(e);
    // Some refusals (an invalid name) only say what the object is: add its file.
    const source = describeResource(r);
    const named = message.includes(source) ? message : `${message} (${source})`;
    const error = {
      cluster,
      namespace: sel.namespace.name,
      message: `[${cluster}/${sel.namespace.name}] ${named}`,
    };
    errors.push(error);
    clusters.get(cluster)?.errors.push(error);
  }
}

/** What `buildOneNow` says of an object whose build must be awaited. */
const LATER = Symbol('later');

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
        content_sha: contentSha(r),
      })),
    });
    byCluster.set(cluster, items);
  }
  const state: Record<string, { shard: string; hash: string }> = {};
  for (const [cluster, items] of [...byCluster].sort(([a], [b]) => a.localeCompare(b))) {
    state[cluster] = {
      shard: cluster,
      hash: hash('sha256', JSON.stringify(items)),
    };
  }
  return { state };
}

/**
 * Digests of frozen resource entries: an answer shared by several readers
 * (the merge-request check decides the early exit of the whole family from
 * one memoized answer per bundle) is digested once. A mutable entry may
 * change, so it is digested every time.
 */
const contentShas = new WeakMap<object, string>();

function contentSha(r: object): string {
  const known = contentShas.get(r);
  if (known !== undefined) return known;
  const sha = hash('md5', JSON.stringify(r));
  if (Object.isFrozen(r)) contentShas.set(r, sha);
  return sha;
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
