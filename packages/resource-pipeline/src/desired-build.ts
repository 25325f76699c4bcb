import { EventLoopSlices, errorMessage, type Logger, QontractError } from '@qontract/core';
import type {
  DesiredCluster,
  DesiredError,
  DesiredResource,
  DesiredSource,
  OpenshiftResource,
} from '@qontract/openshift';
import { type BuildItem, buildOrder, type OrderMemo } from './build-order.ts';
import { describeResource, type OpenshiftResourceData, type SelectedNamespace } from './model.ts';
import {
  buildDesired,
  buildDesiredNow,
  FetchResourceError,
  type ProviderContext,
} from './providers/index.ts';

export interface DesiredBuildSettings {
  /**
   * The namespaces to build, cluster by cluster in the order the engine reads
   * the clusters: the objects are built in this order, so each cluster's are
   * in as early as they can be.
   */
  readonly namespaces: readonly SelectedNamespace[];
  /** What the providers build with; the build ends its cache run and closes `loaded`. */
  readonly providers: ProviderContext;
  /** Objects built at a time (templates and Vault secrets wait on lookups). */
  readonly concurrency: number;
  /** Where a loop keeps the build order of its last run (same answer, same order). */
  readonly order?: OrderMemo | undefined;
  /** The run's: once aborted, the build ends after the objects under way. */
  readonly signal: AbortSignal;
  readonly log: Pick<Logger, 'debug'>;
}

/** One cluster's part of the build: its items in build order, and how many are still building. */
interface ClusterPart {
  readonly items: number[];
  left: number;
}

/** What building one item made: its object, or the error of its namespace, or nothing. */
type Outcome = DesiredResource | DesiredError | undefined;

const NONE: DesiredCluster = { objects: [], errors: [] };

/**
 * The desired objects of a pipeline run as the engine takes them: building
 * starts when the build is created, while the run connects to and reads the
 * clusters, and each cluster's objects and errors are handed over as soon as
 * every one of them is built (a wet run applies that cluster without waiting
 * for the others). Each cluster's objects and errors are in build order (by
 * namespace and source, whatever the concurrency did), the clusters too.
 *
 * Built before the run knew which namespaces it reads (`builtAhead`): the
 * engine keeps only the objects and errors of those.
 *
 * A broken resource is an error of its namespace; the build as a whole fails
 * only when something else went wrong, or when the run was stopped before it
 * ended (`signal`, `stop()`): `ofCluster` of every cluster not built by then,
 * and `all()`, reject with that failure.
 */
export class DesiredBuild implements DesiredSource {
  readonly builtAhead = true;
  readonly #items: readonly BuildItem[];
  /** By item index: what building it made. */
  readonly #outcomes: Outcome[];
  /** Every cluster built for, in build order. */
  readonly #clusters: readonly string[];
  /** The clusters still building. */
  readonly #unfinished = new Map<string, ClusterPart>();
  readonly #built = new Map<string, DesiredCluster>();
  /** Those asked for before they were built. */
  readonly #waiting = new Map<string, PromiseWithResolvers<DesiredCluster>>();
  readonly #stop = new AbortController();
  /** The run's signal. */
  readonly #signal: AbortSignal;
  #failure: { readonly error: unknown } | undefined;
  /** Resolves when the build has ended, whatever happened (never rejects: see #failure). */
  readonly #ended: Promise<void>;

  constructor(settings: DesiredBuildSettings) {
    this.#signal = settings.signal;
    this.#items = settings.namespaces.flatMap((sel) =>
      sel.openshiftResources.map((r) => [sel, r] as const),
    );
    this.#outcomes = new Array(this.#items.length);
    for (const i of buildOrder(this.#items, settings.order)) {
      const cluster = clusterOf(this.#items[i]!);
      const part = this.#unfinished.get(cluster) ?? { items: [], left: 0 };
      part.items.push(i);
      part.left++;
      this.#unfinished.set(cluster, part);
    }
    this.#clusters = [...this.#unfinished.keys()];
    this.#ended = this.#run(settings);
  }

  /** The cluster's objects and errors, once every one of them is built (see `DesiredSource`). */
  ofCluster(cluster: string): Promise<DesiredCluster> {
    const built = this.#built.get(cluster);
    if (built) return Promise.resolve(built);
    if (!this.#unfinished.has(cluster)) return Promise.resolve(NONE);
    if (this.#failure) return Promise.reject(this.#failure.error);
    let waiting = this.#waiting.get(cluster);
    if (!waiting) {
      waiting = Promise.withResolvers();
      this.#waiting.set(cluster, waiting);
    }
    return waiting.promise;
  }

  /** Every cluster's objects and errors, clusters in build order, once the build has ended. */
  async all(): Promise<ReadonlyMap<string, DesiredCluster>> {
    await this.#ended;
    if (this.#failure) throw this.#failure.error;
    return new Map(this.#clusters.map((cluster) => [cluster, this.#built.get(cluster)!]));
  }

  /**
   * Ends the build after the objects under way (the run failed before it
   * needed the rest) and waits for that: a looping process's next run then
   * starts with the desired cache free.
   */
  async stop(): Promise<void> {
    this.#stop.abort(
      new QontractError('the desired objects were not all built: the run stopped first'),
    );
    await this.#ended;
  }

  async #run({ providers, concurrency, log }: DesiredBuildSettings): Promise<void> {
    try {
      try {
        await this.#buildAll(providers, concurrency);
      } finally {
        providers.loaded?.close();
        providers.cache?.end();
      }
      // Stopped: the clusters it had not finished are refused, never handed over in part.
      const stopped = this.#stopped();
      if (stopped && this.#unfinished.size > 0) throw stopped.reason;
    } catch (e) {
      this.#fail(e);
    }
    const { cache, loaded } = providers;
    if (cache) {
      log.debug(
        `desired objects: ${cache.hits.objects} from earlier runs, ${cache.misses.objects} built; ` +
          `templates: ${cache.hits.templates} from earlier runs, ${cache.misses.templates} rendered`,
      );
    }
    if (loaded) {
      log.debug(
        `resource files: ${loaded.counts.loaded} loaded on worker threads, ${loaded.counts.left} here`,
      );
    }
  }

  /**
   * At most `concurrency` builds at a time. Runners take the next item in
   * turn instead of a queued task per item: a large run builds tens of
   * thousands of plain files, and a promise chain of its own for each cost
   * more than building most of them.
   */
  async #buildAll(pc: ProviderContext, concurrency: number): Promise<void> {
    let next = 0;
    // Most builds of a warm run are cache hits that never wait: the clusters' lists, started
    // before, are sent and read between slices of them.
    const slices = new EventLoopSlices();
    const runner = async (): Promise<void> => {
      while (next < this.#items.length && !this.#stopped()) {
        const i = next++;
        const item = this.#items[i]!;
        const now = buildNow(item, pc);
        this.#outcomes[i] = now === LATER ? await build(item, pc) : now;
        const cluster = clusterOf(item);
        const part = this.#unfinished.get(cluster)!;
        if (--part.left === 0) this.#finish(cluster, part);
        const pause = slices.due();
        if (pause) await pause;
      }
    };
    const runners = Math.max(1, Math.min(concurrency, this.#items.length));
    await Promise.all(Array.from({ length: runners }, runner));
  }

  #finish(cluster: string, part: ClusterPart): void {
    const objects: DesiredResource[] = [];
    const errors: DesiredError[] = [];
    for (const i of part.items) {
      const outcome = this.#outcomes[i];
      if (outcome === undefined) continue;
      if ('resource' in outcome) objects.push(outcome);
      else errors.push(outcome);
    }
    const built: DesiredCluster = { objects, errors };
    this.#unfinished.delete(cluster);
    this.#built.set(cluster, built);
    this.#waiting.get(cluster)?.resolve(built);
    this.#waiting.delete(cluster);
  }

  /**
   * The signal that stopped the build, if one did. (Not `AbortSignal.any`:
   * the run's signal may be a loop's, which would keep every run's build.)
   */
  #stopped(): AbortSignal | undefined {
    if (this.#signal.aborted) return this.#signal;
    return this.#stop.signal.aborted ? this.#stop.signal : undefined;
  }

  #fail(error: unknown): void {
    this.#failure = { error };
    for (const waiting of this.#waiting.values()) waiting.reject(error);
    this.#waiting.clear();
  }
}

const clusterOf = ([sel]: BuildItem): string => sel.namespace.cluster.name;

/** What `buildNow` says of an object whose build must be awaited. */
const LATER = Symbol('later');

/** The object of a plain resource file, built here and now; LATER where it must be awaited. */
function buildNow([sel, r]: BuildItem, pc: ProviderContext): Outcome | typeof LATER {
  try {
    const resource = buildDesiredNow(r, pc);
    return resource ? desiredOf(sel, r, resource) : LATER;
  } catch (e) {
    return failed(sel, r, e);
  }
}

async function build([sel, r]: BuildItem, pc: ProviderContext): Promise<Outcome> {
  try {
    return desiredOf(sel, r, await buildDesired(sel, r, pc));
  } catch (e) {
    return failed(sel, r, e);
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

/** A resource that could not be built: an error of its namespace (the others go on). */
function failed(sel: SelectedNamespace, r: OpenshiftResourceData, e: unknown): DesiredError {
  const cluster = sel.namespace.cluster.name;
  // Upstream aborts the run on template errors; reporting every broken
  // resource at once and failing (exit 1, no deletions) tells the author more.
  const message =
    e instanceof FetchResourceError || e instanceof QontractError ? e.message : errorMessage(e);
  // Some refusals (an invalid name) only say what the object is: add its file.
  const source = describeResource(r);
  const named = message.includes(source) ? message : `${message} (${source})`;
  return {
    cluster,
    namespace: sel.namespace.name,
    message: `[${cluster}/${sel.namespace.name}] ${named}`,
  };
}
