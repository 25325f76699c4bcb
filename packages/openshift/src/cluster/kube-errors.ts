/** How a request to a cluster fails: the errors the kube client throws and callers tell apart. */

/** The API server refused a request; `status`/`reason` come from its Status body. */
export class KubeApiError extends Error {
  readonly status: number;
  readonly reason: string;
  readonly cluster: string;
  readonly details: unknown;
  constructor(cluster: string, status: number, reason: string, message: string, details?: unknown) {
    super(`[${cluster}]: ${message}`);
    this.name = 'KubeApiError';
    this.cluster = cluster;
    this.status = status;
    this.reason = reason;
    this.details = details;
  }
}

/** The cluster could not be reached at all (connection refused, reset, timeout). */
export class ClusterUnreachableError extends Error {
  readonly cluster: string;
  constructor(cluster: string, cause: unknown) {
    super(`[${cluster}]: ${describeNetworkError(cause)}`, { cause });
    this.name = 'ClusterUnreachableError';
    this.cluster = cluster;
  }
}

/**
 * A request, or the whole read of a cluster, did not finish in time. The
 * client gives the cluster up for the rest of the run: requests in flight are
 * aborted and new ones fail at once with this error.
 */
export class ClusterTimeoutError extends Error {
  readonly cluster: string;
  constructor(cluster: string, what: string) {
    super(`[${cluster}] ${what}; the cluster is skipped for the rest of the run`);
    this.name = 'ClusterTimeoutError';
    this.cluster = cluster;
  }
}

/**
 * The run was stopped (SIGTERM/SIGINT, the run's signal) before or while a
 * request waited. Not the cluster's fault: callers let it end the run instead
 * of registering it as that cluster's error.
 */
export class RequestAbortedError extends Error {
  readonly cluster: string;
  constructor(cluster: string, reason: unknown) {
    super(
      `[${cluster}]: request aborted: ${reason instanceof Error ? reason.message : String(reason)}`,
    );
    this.name = 'RequestAbortedError';
    this.cluster = cluster;
  }
}

function describeNetworkError(e: unknown): string {
  if (e instanceof Error) {
    const cause = (e as Error & { cause?: { code?: string; message?: string } }).cause;
    if (e.name === 'TimeoutError' || e.name === 'AbortError') return 'request timed out';
    if (cause?.code) return `${cause.code}: ${cause.message ?? e.message}`;
    return e.message;
  }
  return String(e);
}
