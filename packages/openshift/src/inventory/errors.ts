/** Errors of the ResourceInventory, named after the original's exceptions. */

/** The cluster, namespace or kind was never initialised (the original raises KeyError). */
export class ResourceTypeNotInitializedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ResourceTypeNotInitializedError';
  }
}

/** The kind has a managed-names list and this name is not in it. */
export class ResourceNotManagedError extends Error {
  readonly resourceType: string;
  readonly resourceName: string;
  constructor(resourceType: string, resourceName: string) {
    super(`${resourceType}/${resourceName} is not in the managed resource names`);
    this.name = 'ResourceNotManagedError';
    this.resourceType = resourceType;
    this.resourceName = resourceName;
  }
}

/** The same cluster/namespace/kind/name is desired twice; both sources are named. */
export class ResourceKeyExistsError extends Error {
  readonly resourceType: string;
  readonly resourceName: string;
  /** Where the first and the second desired entry came from (app-interface paths), when known. */
  readonly sources: readonly string[];
  constructor(resourceType: string, resourceName: string, sources: readonly string[]) {
    super(
      `${resourceType}/${resourceName} is desired twice${sources.length ? ` (${sources.join(' and ')})` : ''}`,
    );
    this.name = 'ResourceKeyExistsError';
    this.resourceType = resourceType;
    this.resourceName = resourceName;
    this.sources = sources;
  }
}
