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

export class RetryableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RetryableError';
  }
}

export async function withRetries<T>(
  policy: RetryPolicy,
  attempt: () => Promise<T>,
  onRetry: (error: RetryableError, attemptNumber: number, waitMs: number) => void,
  sleep: (ms: number) => Promise<void> = defaultSleep,
): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (e) {
      if (!(e instanceof RetryableError) || n >= policy.attempts) throw e;
      const waitMs = policy.delayMs * n;
      onRetry(e, n, waitMs);
      await sleep(waitMs);
    }
  }
}

function defaultSleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
