import { ErrorRegistry } from '@qontract/core';
import type { Registry } from 'prom-client';
import { Gauge } from 'prom-client';
import type { OpenshiftResource } from '../resource/openshift-resource.ts';
import type { InventoryItemView } from './plan.ts';

/** The kind is not managed in this namespace (the original raises KeyError). */
export class ResourceTypeNotInitializedError extends Error {}
/** `managedResourceNames` restricts the kind and this name is not listed. */
export class ResourceNotManagedError extends Error {}
/** The same (cluster, namespace, kind, name) is desired twice. */
export class ResourceKeyExistsError extends Error {}

interface Item {
  readonly current: Map<string, OpenshiftResource>;
  readonly desired: Map<string, OpenshiftResource>;
  readonly useAdminToken: Map<string, boolean>;
  /** Where each desired entry came from (app-interface paths), for duplicate reports. */
  readonly sources: Map<string, string>;
  readonly managedNames: readonly string[] | undefined;
}

/**
 * The original's ResourceInventory: cluster → namespace → resource type, each
 * with the desired and the current objects by name. Errors go to the run's
 * ErrorRegistry (a cluster-wide error makes the engine skip that cluster; any
 * error switches deletions off).
 */
export class ResourceInventory {
  readonly errors: ErrorRegistry;
  readonly #clusters = new Map<string, Map<string, Map<string, Item>>>();

  constructor(errors: ErrorRegistry = new ErrorRegistry()) {
    this.errors = errors;
  }

  /** Registers a managed kind; a second registration keeps the first one's managed names. */
  initializeResourceType(
    cluster: string,
    namespace: string,
    type: string,
    managedNames?: readonly string[],
  ): void {
    const namespaces = this.#clusters.get(cluster) ?? new Map<string, Map<string, Item>>();
    this.#clusters.set(cluster, namespaces);
    const types = namespaces.get(namespace) ?? new Map<string, Item>();
    namespaces.set(namespace, types);
    if (!types.has(type)) {
      types.set(type, {
        current: new Map(),
        desired: new Map(),
        useAdminToken: new Map(),
        sources: new Map(),
        managedNames,
      });
    }
  }

  isClusterPresent(cluster: string): boolean {
    return this.#clusters.has(cluster);
  }

  /**
   * Adds a desired object under its kind: `Kind.group` when that form is
   * registered for the namespace, else the bare kind (the long form wins).
   */
  addDesiredResource(
    cluster: string,
    namespace: string,
    resource: OpenshiftResource,
    options: { privileged?: boolean; source?: string } = {},
  ): void {
    const types = this.#clusters.get(cluster)?.get(namespace);
    const long = resource.kindAndGroup;
    const type = types?.has(long) ? long : String(resource.kind);
    this.addDesired(cluster, namespace, type, String(resource.name), resource, options);
  }

  addDesired(
    cluster: string,
    namespace: string,
    type: string,
    name: string,
    resource: OpenshiftResource,
    options: { privileged?: boolean; source?: string } = {},
  ): void {
    const item = this.#item(cluster, namespace, type);
    if (item.managedNames !== undefined && !item.managedNames.includes(name)) {
      throw new ResourceNotManagedError(name);
    }
    if (item.desired.has(name)) {
      const first = item.sources.get(name);
      const sources = [first, options.source].filter(Boolean);
      throw new ResourceKeyExistsError(
        `${type}/${name} is desired twice${sources.length ? ` (${sources.join(' and ')})` : ''}`,
      );
    }
    item.desired.set(name, resource);
    item.useAdminToken.set(name, options.privileged ?? false);
    if (options.source) item.sources.set(name, options.source);
  }

  addCurrent(
    cluster: string,
    namespace: string,
    type: string,
    name: string,
    resource: OpenshiftResource,
  ): void {
    this.#item(cluster, namespace, type).current.set(name, resource);
  }

  getDesired(
    cluster: string,
    namespace: string,
    type: string,
    name: string,
  ): OpenshiftResource | undefined {
    return this.#clusters.get(cluster)?.get(namespace)?.get(type)?.desired.get(name);
  }

  getCurrent(
    cluster: string,
    namespace: string,
    type: string,
    name: string,
  ): OpenshiftResource | undefined {
    return this.#clusters.get(cluster)?.get(namespace)?.get(type)?.current.get(name);
  }

  managedNames(cluster: string, namespace: string, type: string): readonly string[] | undefined {
    return this.#clusters.get(cluster)?.get(namespace)?.get(type)?.managedNames;
  }

  /** Every (cluster, namespace, type) in insertion order. */
  *items(): IterableIterator<InventoryItemView> {
    for (const [cluster, namespaces] of this.#clusters) {
      for (const [namespace, types] of namespaces) {
        for (const [kind, item] of types) {
          yield {
            cluster,
            namespace,
            kind,
            current: item.current,
            desired: item.desired,
            useAdminToken: item.useAdminToken,
          };
        }
      }
    }
  }

  registerError(message: string, cluster?: string): void {
    this.errors.register(cluster ?? 'inventory', message, cluster ? { clusterWide: true } : {});
  }

  /** With a cluster: that cluster's cluster-wide errors only; without: any error of the run. */
  hasErrorRegistered(cluster?: string): boolean {
    return cluster === undefined ? this.errors.hasErrors : this.errors.hasClusterError(cluster);
  }

  /** `qontract_reconcile_openshift_resource_inventory{integration, cluster, namespace, kind, state}`. */
  publishMetrics(registry: Registry, integration: string): void {
    const name = 'qontract_reconcile_openshift_resource_inventory';
    const gauge =
      (registry.getSingleMetric(name) as Gauge | undefined) ??
      new Gauge({
        name,
        help: 'Inventory of resources managed by an openshift integration',
        labelNames: ['integration', 'cluster', 'namespace', 'kind', 'state'],
        registers: [registry],
      });
    for (const item of this.items()) {
      const labels = {
        integration: integration.replaceAll('_', '-'),
        cluster: item.cluster,
        namespace: item.namespace,
        kind: item.kind,
      };
      gauge.set({ ...labels, state: 'current' }, item.current.size);
      gauge.set({ ...labels, state: 'desired' }, item.desired.size);
    }
  }

  #item(cluster: string, namespace: string, type: string): Item {
    const item = this.#clusters.get(cluster)?.get(namespace)?.get(type);
    if (!item)
      throw new ResourceTypeNotInitializedError(
        `${type} is not a managed resource type in ${cluster}/${namespace}`,
      );
    return item;
  }
}
