import { setTimeout as sleep } from 'node:timers/promises';
import type { Octokit } from '@octokit/rest';

/** GitHub's two kinds of rate limit: the quota of the token, and the abuse guard. */
export type RateLimitKind = 'primary' | 'secondary';

/** A request as the hook sees it. */
export type RetriedRequest = Parameters<Octokit['request']['endpoint']['parse']>[0] & {
  readonly method: string;
  readonly url: string;
};

export interface RetrySettings {
  /** How often a failing (5xx, connection) read is retried. */
  readonly retries: number;
  /** How often a failing write is retried. */
  readonly writeRetries: number;
  /** Milliseconds between the starts of two writes of the client. */
  readonly writeIntervalMs: number;
  /** Milliseconds per second of every wait (GitHub's, and the 1, 4, 9 s backoff). */
  readonly unitMs: number;
  readonly signal?: AbortSignal | undefined;
  /** Whether to wait `retryAfter` seconds and retry a rate-limited request (it logs why). */
  readonly onLimit: (
    kind: RateLimitKind,
    retryAfter: number,
    options: RetriedRequest,
    retryCount: number,
  ) => boolean;
}

/** Statuses a retry cannot fix; 403 and 429 are rate limits when GitHub says so. */
const DO_NOT_RETRY: ReadonlySet<number> = new Set([400, 401, 403, 404, 410, 422, 429, 451]);
const READ_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD']);

/**
 * Retries and waits of a client's requests, by the rules of Octokit's retry
 * and throttling plugins (which it replaces): a rate-limited answer waits as
 * long as GitHub asks, while `onLimit` agrees; a server error or a lost
 * connection is retried after 1, 4, 9... seconds, `retries` times for a read
 * and `writeRetries` for a write (writes are paced, so retrying each as
 * often made a GitHub failing every write hold the run 14 s per write); the
 * starts of a client's writes are `writeIntervalMs` apart.
 *
 * Why not the plugins: each schedules every request through Bottleneck, whose
 * every step yields to a timer. In the github benchmark (1,100 reads) they
 * took a third of the run's CPU and a quarter of its wall time, and the
 * throttling plugin capped each client at 10 requests in flight whatever
 * `--thread-pool-size` allowed. Reads are not queued here: callers bound
 * their concurrency.
 */
export function retryRequests(octokit: Pick<Octokit, 'hook'>, settings: RetrySettings): void {
  const { signal } = settings;
  let lastWrite: Promise<void> = Promise.resolve();
  let nextWriteAt = 0;
  // Each write waits for the one before it to start, then for the interval.
  const writeStart = (): Promise<void> => {
    const start = lastWrite.then(async () => {
      const wait = nextWriteAt - Date.now();
      if (wait > 0) await sleep(wait, undefined, { signal });
      nextWriteAt = Date.now() + settings.writeIntervalMs;
    });
    lastWrite = start.catch(() => {});
    return start;
  };
  octokit.hook.wrap('request', async (request, options) => {
    const write = !READ_METHODS.has(options.method);
    const retries = write ? settings.writeRetries : settings.retries;
    let limited = 0;
    let failed = 0;
    for (;;) {
      if (write) await writeStart();
      try {
        return await request(options);
      } catch (error) {
        const limit = rateLimitOf(error);
        if (limit) {
          if (!settings.onLimit(limit.kind, limit.retryAfter, options, limited++)) throw error;
          await sleep(limit.retryAfter * settings.unitMs, undefined, { signal });
        } else if (failed < retries && retriable(error)) {
          failed++;
          await sleep(failed * failed * settings.unitMs, undefined, { signal });
        } else {
          throw error;
        }
      }
    }
  });
}

/**
 * A failure a retry may fix: an answer with a status not in `DO_NOT_RETRY`,
 * or no answer at all (Octokit's RequestError with status 500). An aborted
 * request is not one (Octokit throws the AbortError itself).
 */
function retriable(error: unknown): boolean {
  const e = error as { status?: unknown; request?: unknown };
  return (
    e.request !== undefined &&
    typeof e.status === 'number' &&
    e.status >= 400 &&
    !DO_NOT_RETRY.has(e.status)
  );
}

/**
 * The rate limit a 403 or 429 answer reports, and the seconds GitHub asks
 * to wait: a secondary limit says so in its message (`retry-after`, else 60
 * s); a primary one has no requests left until `x-ratelimit-reset` (plus a
 * second, to retry after it).
 */
function rateLimitOf(error: unknown): { kind: RateLimitKind; retryAfter: number } | undefined {
  const e = error as {
    status?: unknown;
    message?: unknown;
    response?: { headers?: Record<string, string | undefined> };
  };
  if (e.status !== 403 && e.status !== 429) return undefined;
  const headers = e.response?.headers ?? {};
  if (/\bsecondary rate\b/i.test(String(e.message))) {
    return { kind: 'secondary', retryAfter: Number(headers['retry-after']) || 60 };
  }
  if (headers['x-ratelimit-remaining'] === '0') {
    const resetMs = Math.trunc(Number(headers['x-ratelimit-reset']) || 0) * 1000;
    return {
      kind: 'primary',
      retryAfter: Math.max(Math.ceil((resetMs - Date.now()) / 1000) + 1, 0),
    };
  }
  return undefined;
}
