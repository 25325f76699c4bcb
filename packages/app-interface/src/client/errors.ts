import { QontractError } from '@qontract/core';

/**
 * A query failed: the server could not be reached, answered with an error, or
 * returned data that does not match the query. Names the operation; never
 * carries the token or the response data.
 */
export class GqlQueryError extends QontractError {
  readonly operation: string;
  constructor(operation: string, message: string, options?: { cause?: unknown }) {
    super(`GraphQL query ${operation} failed: ${message}`, options);
    this.operation = operation;
  }
}

/** The backend could not be set up (bad `[graphql] server`, `/sha256` unreachable, bad bundle). */
export class GqlBackendError extends QontractError {}
