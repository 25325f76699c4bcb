import {
  commonOptions,
  defineIntegration,
  type InferOptions,
  type IntegrationDefinition,
  type OptionSpecs,
  type RunContext,
} from '@qontract/core';
import type { ClusterInfo, NamespaceClusterInfo } from '../cluster/cluster-map.ts';
import { clusterMapForClusters, clusterMapForNamespaces } from '../cluster/for-run.ts';
import { appInterfaceBundle } from './bundle-source.ts';
import { type DesiredBody, toDesiredResources } from './desired.ts';
import type { CurrentStateSpec } from './fetch.ts';
import { reconcileResources } from './reconcile.ts';
import { runWatchMode, type WatchedState } from './watch-mode.ts';

/** The options every engine-based integration has, as upstream's `threaded` and `internal` decorators. */
const engineOptions = {
  threadPoolSize: commonOptions.threadPoolSize(10),
  internal: commonOptions.internal(),
  watch: commonOptions.watch(),
  watchResyncSeconds: commonOptions.watchResyncSeconds(),
} as const;
type EngineOptions<O extends OptionSpecs> = InferOptions<typeof engineOptions & O>;

/** A problem found while building the desired state: registered as an error (no deletions). */
interface DesiredProblem {
  readonly scope: string;
  readonly message: string;
}

/** What `desired` may use besides the loaded data. */
interface DesiredEnvironment<O extends OptionSpecs> {
  /** The clusters of the run with a working client: desired objects elsewhere are left out. */
  readonly clusters: ReadonlySet<string>;
  readonly opts: EngineOptions<O>;
  readonly isInShard: (key: string) => boolean;
  /** The run's date (expired roles and the like). */
  readonly today: Date;
}

/**
 * An integration whose run is the engine's: load from app-interface → the
 * run's targets (namespaces or clusters) → cluster clients → pure desired
 * state → `reconcileResources`. The package says its identity, its query and
 * its pure desired state; the run rules are the engine's and core's.
 */
export interface EngineIntegrationDefinition<O extends OptionSpecs, D> {
  /** CLI name. */
  readonly name: string;
  readonly description: string;
  /** The original's `QONTRACT_INTEGRATION_VERSION`, written into annotations. */
  readonly version: string;
  /** The `qontract.integration` annotation (the original's module constant); the CLI name by default. */
  readonly identity?: string;
  /** Options beyond `--thread-pool-size` and `--internal/--external`. */
  readonly options?: O;
  /** Reads app-interface: what the run manages (the managed part, in this shard). */
  readonly load: (ctx: RunContext, opts: EngineOptions<O>) => Promise<D>;
  /** The run's targets: the namespaces it reconciles, or the clusters for cluster-scoped kinds. */
  readonly targets:
    | { readonly namespaces: (data: D) => readonly NamespaceClusterInfo[] }
    | { readonly clusters: (data: D) => readonly ClusterInfo[] };
  /** Logged (debug) when there is no target: nothing to do is not an error. */
  readonly nothingToDo: string;
  /** The managed kinds of each namespace or cluster: what is read and may be deleted. */
  readonly specs: (data: D) => CurrentStateSpec[];
  /** The desired objects (pure), and the problems found building them. */
  readonly desired: (
    data: D,
    env: DesiredEnvironment<O>,
  ) => { readonly objects: readonly DesiredBody[]; readonly problems?: readonly DesiredProblem[] };
  /** Delete unannotated objects of the managed kinds (default: no). */
  readonly takeOver?: (opts: EngineOptions<O>) => boolean;
}

export function defineEngineIntegration<
  const O extends OptionSpecs = Record<never, never>,
  D = unknown,
>(definition: EngineIntegrationDefinition<O, D>): IntegrationDefinition<typeof engineOptions & O> {
  const identity = definition.identity ?? definition.name;
  return defineIntegration({
    name: definition.name,
    version: definition.version,
    description: definition.description,
    options: { ...engineOptions, ...(definition.options as O) },
    run: async (ctx, opts) => {
      const prepare = async (runCtx: RunContext): Promise<WatchedState | undefined> => {
        const data = await definition.load(runCtx, opts);
        const targets = definition.targets;
        const settings = { internal: opts.internal, concurrency: opts.threadPoolSize };
        const namespaces = 'namespaces' in targets ? targets.namespaces(data) : undefined;
        const clusterList = 'clusters' in targets ? targets.clusters(data) : undefined;
        if ((namespaces ?? clusterList ?? []).length === 0) {
          runCtx.log.debug(definition.nothingToDo);
          return undefined;
        }
        const clusters = namespaces
          ? await clusterMapForNamespaces(runCtx, namespaces, settings)
          : await clusterMapForClusters(runCtx, clusterList ?? [], settings);
        const { objects, problems = [] } = definition.desired(data, {
          clusters: new Set(clusters.clusters()),
          opts,
          isInShard: runCtx.isInShard,
          today: new Date(),
        });
        for (const problem of problems) runCtx.errors.register(problem.scope, problem.message);
        return {
          integration: identity,
          integrationVersion: definition.version,
          clusters,
          specs: definition.specs(data),
          desired: toDesiredResources(runCtx, objects, identity, definition.version),
          takeOver: definition.takeOver?.(opts) ?? false,
          concurrency: opts.threadPoolSize,
        };
      };
      if (opts.watch) {
        await runWatchMode({
          ctx,
          prepare,
          resyncSeconds: opts.watchResyncSeconds,
          bundle: await appInterfaceBundle(ctx),
        });
        return;
      }
      const state = await prepare(ctx);
      if (state) await reconcileResources({ ctx, ...state });
    },
  });
}
