/** Errors of the resource model, named after the original's exceptions. */

const CONSTRUCT_ERROR_PREFIX = 'error constructing openshift resource: ';

/** A resource body that cannot become an OpenshiftResource (bad name, containers, shape). */
export class ConstructResourceError extends Error {
  constructor(message: string) {
    super(`${CONSTRUCT_ERROR_PREFIX}${message}`);
    this.name = 'ConstructResourceError';
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
