import type { DesiredResource } from './reconcile.ts';

/** A problem found building a desired object: an error of its namespace. */
export interface DesiredError {
  readonly cluster: string;
  readonly namespace: string;
  readonly message: string;
}

/** One cluster's desired objects (in the order they were built) and the problems of its build. */
export interface DesiredCluster {
  readonly objects: readonly DesiredResource[];
  readonly errors: readonly DesiredError[];
}

/**
 * Where a run's desired objects come from. An integration that builds them
 * in one go hands an array (`desiredSourceOf`); the resource pipeline builds
 * them cluster by cluster while the clusters are read, and the engine plans a
 * cluster as soon as its read has ended and its own objects are in.
 */
export interface DesiredSource {
  /**
   * The cluster's objects once every one of them is built (none for a cluster
   * nothing is built for). Rejects when the build as a whole failed.
   */
  ofCluster(cluster: string): Promise<DesiredCluster>;
  /** Every cluster's, once the build has ended. Rejects when it failed. */
  all(): Promise<ReadonlyMap<string, DesiredCluster>>;
  /**
   * Built before the run knew which namespaces it reads (the build overlaps
   * connecting to the clusters): the engine keeps only the objects and errors
   * of namespaces it reads, and drops the rest silently. Otherwise every
   * object is the integration's word, and one in a namespace the run does
   * not manage is an error.
   */
  readonly builtAhead?: boolean;
}

/** What an integration may give the engine as its desired objects. */
export type DesiredInput =
  | readonly DesiredResource[]
  | Promise<readonly DesiredResource[]>
  | DesiredSource;

const NONE: DesiredCluster = { objects: [], errors: [] };

/** The source of desired objects built in one go (their errors registered by the integration). */
export function desiredSourceOf(input: DesiredInput): DesiredSource {
  if (!Array.isArray(input) && !(input instanceof Promise)) return input as DesiredSource;
  const all = Promise.resolve(input as readonly DesiredResource[]).then(
    (list) =>
      new Map(
        [...Map.groupBy(list, (d) => d.cluster)].map(([cluster, objects]) => [
          cluster,
          { objects, errors: [] },
        ]),
      ),
  );
  all.catch(() => {}); // the engine awaits it
  return {
    ofCluster: async (cluster) => (await all).get(cluster) ?? NONE,
    all: () => all,
  };
}

/**
 * The desired objects the run takes from a source, each cluster's build
 * problems registered once, when its objects are first asked for: the one
 * place where a pipeline's objects of namespaces the run does not read are
 * dropped (`builtAhead`).
 */
export class AdmittedDesired {
  readonly #source: DesiredSource;
  readonly #reads: (cluster: string, namespace: string) => boolean;
  readonly #register: (e: DesiredError) => void;
  readonly #clusters = new Map<string, readonly DesiredResource[]>();

  constructor(
    source: DesiredSource,
    reads: (cluster: string, namespace: string) => boolean,
    register: (e: DesiredError) => void,
  ) {
    this.#source = source;
    this.#reads = reads;
    this.#register = register;
  }

  /** One cluster's objects, once built (see `DesiredSource.ofCluster`). */
  async ofCluster(cluster: string): Promise<readonly DesiredResource[]> {
    return this.#admit(cluster, await this.#source.ofCluster(cluster));
  }

  /** Every object, cluster by cluster in build order, once the build has ended. */
  async all(): Promise<readonly DesiredResource[]> {
    const built = await this.#source.all();
    return [...built].flatMap(([cluster, part]) => this.#admit(cluster, part));
  }

  #admit(cluster: string, part: DesiredCluster): readonly DesiredResource[] {
    const known = this.#clusters.get(cluster);
    if (known) return known;
    const keep = this.#source.builtAhead
      ? (x: { cluster: string; namespace: string }) => this.#reads(x.cluster, x.namespace)
      : () => true;
    for (const e of part.errors) if (keep(e)) this.#register(e);
    const objects = part.objects.filter(keep);
    this.#clusters.set(cluster, objects);
    return objects;
  }
}
