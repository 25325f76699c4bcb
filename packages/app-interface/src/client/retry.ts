/**
 * The original's retry policy (`reconcile.utils.retry`): a fixed number of
 * attempts with a linear back-off (1 s, 2 s, 3 s, ...). Small enough that a
 * library's exponential defaults would only need to be configured away.
 */
export interface RetryPolicy {
  /** Total attempts, the first one included. */
  readonly attempts: number;
  /** Wait before retry n is n × delayMs. */
  readonly delayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { attempts: 5, delayMs: 1000 };

/** A server's `Retry-After` is honoured up to this; a longer one would stall the whole run. */
const MAX_RETRY_AFTER_MS = 60_000;

/**
 * A failure the next attempt may not see: no connection, a time-out, a 5xx,
 * a 408 or a 429. Everything else is thrown as is and not retried.
 */
export class RetryableError extends Error {
  /** The wait the server asked for (`Retry-After`), if any. */
  readonly retryAfterMs: number | undefined;
  constructor(message: string, options?: { cause?: unknown; retryAfterMs?: number | undefined }) {
    super(message, options);
    this.name = 'RetryableError';
    this.retryAfterMs = options?.retryAfterMs;
  }
}

/** The last retryable failure, once the attempts are used up; its message says how many. */
class RetriesExhaustedError extends Error {
  constructor(last: RetryableError, attempts: number) {
    super(attempts > 1 ? `${last.message} (gave up after ${attempts} attempts)` : last.message, {
      cause: last,
    });
    this.name = 'RetriesExhaustedError';
  }
}

export async function withRetries<T>(
  policy: RetryPolicy,
  attempt: () => Promise<T>,
  onRetry: (error: RetryableError, attemptNumber: number, waitMs: number) => void,
  sleep: (ms: number) => Promise<void> = defaultSleep,
  signal?: AbortSignal,
): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (e) {
      // A stopped run (SIGTERM) is not a failure to retry: its requests were aborted on purpose.
      signal?.throwIfAborted();
      if (!(e instanceof RetryableError)) throw e;
      if (n >= policy.attempts) throw new RetriesExhaustedError(e, n);
      const waitMs = Math.max(
        policy.delayMs * n,
        Math.min(e.retryAfterMs ?? 0, MAX_RETRY_AFTER_MS),
      );
      onRetry(e, n, waitMs);
      await abortable(sleep(waitMs), signal);
    }
  }
}

/** The wait, cut short by the run's stop signal. */
function abortable(wait: Promise<void>, signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return wait;
  signal.throwIfAborted();
  return new Promise((resolve, reject) => {
    const stop = () => reject(signal.reason);
    signal.addEventListener('abort', stop, { once: true });
    wait.then(
      () => {
        signal.removeEventListener('abort', stop);
        resolve();
      },
      (e: unknown) => {
        signal.removeEventListener('abort', stop);
        reject(e);
      },
    );
  });
}

function defaultSleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
