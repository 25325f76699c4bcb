/**
 * The original's `ResourceInventory` (upstream `reconcile/utils/openshift_resource.py`):
 * cluster → namespace → resource type, each with the desired and the current objects by name,
 * the names to handle with the admin token, and an optional managed-names list. It throws; the
 * engine turns what it throws into errors of the run.
 */
import type { OpenshiftResource } from '../resource/openshift-resource.ts';
import {
  ResourceKeyExistsError,
  ResourceNotManagedError,
  ResourceTypeNotInitializedError,
} from './errors.ts';

/** One (cluster, namespace, kind) of the inventory with both sides by name, in insertion order. */
export interface InventoryItem {
  readonly cluster: string;
  readonly namespace: string;
  readonly kind: string;
  readonly current: ReadonlyMap<string, OpenshiftResource>;
  readonly desired: ReadonlyMap<string, OpenshiftResource>;
  /** Names to apply/delete with the cluster-admin token. */
  readonly useAdminToken: ReadonlyMap<string, boolean>;
}

/** Sizes for the `qontract_reconcile_openshift_resource_inventory` gauge. */
export interface InventoryCount {
  readonly cluster: string;
  readonly namespace: string;
  readonly kind: string;
  readonly state: 'current' | 'desired';
  readonly count: number;
}

export interface AddDesiredOptions {
  /** Apply with the cluster-admin token. */
  privileged?: boolean;
  /** Where the body came from (app-interface path), named when the same object is desired twice. */
  source?: string;
}

interface StoredEntry {
  readonly current: Map<string, OpenshiftResource>;
  readonly desired: Map<string, OpenshiftResource>;
  readonly useAdminToken: Map<string, boolean>;
  /** `undefined` when every name of the kind is managed. */
  readonly managedNames: readonly string[] | undefined;
  readonly sources: Map<string, string>;
}

/** Every entry of one cluster (namespace → kind → entry): opaque outside the inventory. */
export type ClusterEntries = ReadonlyMap<string, ReadonlyMap<string, unknown>> & {
  readonly __clusterEntries: never;
};

export class ResourceInventory {
  readonly #clusters = new Map<string, Map<string, Map<string, StoredEntry>>>();

  /** Registers a managed kind; a second registration keeps the first one's managed names. */
  initializeResourceType(
    cluster: string,
    namespace: string,
    type: string,
    managedNames?: readonly string[],
  ): void {
    let namespaces = this.#clusters.get(cluster);
    if (!namespaces) {
      namespaces = new Map();
      this.#clusters.set(cluster, namespaces);
    }
    let types = namespaces.get(namespace);
    if (!types) {
      types = new Map();
      namespaces.set(namespace, types);
    }
    if (!types.has(type)) {
      types.set(type, {
        current: new Map(),
        desired: new Map(),
        useAdminToken: new Map(),
        managedNames: managedNames === undefined ? undefined : [...managedNames],
        sources: new Map(),
      });
    }
  }

  isClusterPresent(cluster: string): boolean {
    return this.#clusters.has(cluster);
  }

  /**
   * Adds a desired object under `Kind.group` when that form is registered for the namespace, else
   * under the bare kind (so the long form wins when both are). Returns false, adding nothing, for
   * a cluster that was never initialised (the original logs "Cluster {c} not initialized in
   * ResourceInventory"; the caller logs it here). An unknown namespace or kind throws
   * `ResourceTypeNotInitializedError`.
   */
  addDesiredResource(
    cluster: string,
    namespace: string,
    resource: OpenshiftResource,
    options: AddDesiredOptions = {},
  ): boolean {
    const namespaces = this.#clusters.get(cluster);
    if (!namespaces) return false;
    const types = namespaces.get(namespace);
    if (!types)
      throw new ResourceTypeNotInitializedError(
        `namespace ${namespace} is not initialized in cluster ${cluster}`,
      );
    const longKind = resource.kindAndGroup;
    const type = types.has(longKind) ? longKind : String(resource.kind);
    this.#addDesired(cluster, namespace, type, String(resource.name), resource, options);
    return true;
  }

  /** Managed names are checked first, then duplicates (reported with both sources). */
  #addDesired(
    cluster: string,
    namespace: string,
    type: string,
    name: string,
    resource: OpenshiftResource,
    options: AddDesiredOptions,
  ): void {
    const entry = this.#entry(cluster, namespace, type);
    if (entry.managedNames !== undefined && !entry.managedNames.includes(name)) {
      throw new ResourceNotManagedError(type, name);
    }
    if (entry.desired.has(name)) {
      const sources = [entry.sources.get(name), options.source].filter((s): s is string =>
        Boolean(s),
      );
      throw new ResourceKeyExistsError(type, name, sources);
    }
    entry.desired.set(name, resource);
    entry.useAdminToken.set(name, options.privileged ?? false);
    if (options.source) entry.sources.set(name, options.source);
  }

  /** Stores (or replaces) what the cluster has. */
  addCurrent(
    cluster: string,
    namespace: string,
    type: string,
    name: string,
    resource: OpenshiftResource,
  ): void {
    this.#entry(cluster, namespace, type).current.set(name, resource);
  }

  /** The entries of `cluster`, to hand to `adoptCluster` of a later inventory. */
  clusterEntries(cluster: string): ClusterEntries | undefined {
    return this.#clusters.get(cluster) as ClusterEntries | undefined;
  }

  /**
   * Takes the entries of an initialised cluster from another inventory, in
   * place of its own: both sides of every kind, as that inventory holds them.
   * The caller vouches that they are what this inventory would have been given
   * (the same managed kinds, desired and current objects).
   */
  adoptCluster(cluster: string, entries: ClusterEntries): void {
    if (!this.#clusters.has(cluster)) {
      throw new ResourceTypeNotInitializedError(`cluster ${cluster} is not initialized`);
    }
    this.#clusters.set(cluster, entries as unknown as Map<string, Map<string, StoredEntry>>);
  }

  /** The clusters, in the order they were initialised. */
  clusters(): string[] {
    return [...this.#clusters.keys()];
  }

  /** Every (cluster, namespace, kind) with its entry, in insertion order; of one cluster when given. */
  *items(only?: string): IterableIterator<InventoryItem> {
    for (const [cluster, namespaces] of this.#clusters) {
      if (only !== undefined && cluster !== only) continue;
      for (const [namespace, types] of namespaces) {
        for (const [kind, entry] of types) {
          yield {
            cluster,
            namespace,
            kind,
            current: entry.current,
            desired: entry.desired,
            useAdminToken: entry.useAdminToken,
          };
        }
      }
    }
  }

  /** Rows for the inventory gauge (`len(data[state])` per cluster/namespace/kind/state). */
  counts(): InventoryCount[] {
    const rows: InventoryCount[] = [];
    for (const { cluster, namespace, kind, current, desired } of this.items()) {
      rows.push({ cluster, namespace, kind, state: 'current', count: current.size });
      rows.push({ cluster, namespace, kind, state: 'desired', count: desired.size });
    }
    return rows;
  }

  #entry(cluster: string, namespace: string, type: string): StoredEntry {
    const entry = this.#clusters.get(cluster)?.get(namespace)?.get(type);
    if (!entry) {
      throw new ResourceTypeNotInitializedError(
        `${type} is not a managed resource type in ${cluster}/${namespace}`,
      );
    }
    return entry;
  }
}
