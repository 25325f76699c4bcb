/** Errors of the resource model, named after the original's exceptions. */

export const CONSTRUCT_ERROR_PREFIX = 'error constructing openshift resource: ';

/** A resource body that cannot become an OpenshiftResource (bad name, containers, shape). */
export class ConstructResourceError extends Error {
  constructor(message: string) {
    super(`${CONSTRUCT_ERROR_PREFIX}${message}`);
    this.name = 'ConstructResourceError';
  }
}

/** The same name is desired twice for one cluster/namespace/kind. */
export class ResourceKeyExistsError extends Error {
  readonly resourceName: string;
  constructor(resourceName: string, message = resourceName) {
    super(message);
    this.name = 'ResourceKeyExistsError';
    this.resourceName = resourceName;
  }
}

/** The name is not in the kind's managed names list. */
export class ResourceNotManagedError extends Error {
  readonly resourceName: string;
  constructor(resourceName: string) {
    super(resourceName);
    this.name = 'ResourceNotManagedError';
    this.resourceName = resourceName;
  }
}

/** A failure the original reports as a Python exception (KeyError, TypeError, ...) at a given stage. */
export class ResourceDataError extends Error {
  readonly pythonError: string;
  constructor(pythonError: string, message: string) {
    super(`${pythonError}: ${message}`);
    this.name = 'ResourceDataError';
    this.pythonError = pythonError;
  }
}

/** The original's `KeyError` on a missing ResourceInventory entry. */
export class InventoryKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InventoryKeyError';
  }
}
