import { setTimeout as sleep } from 'node:timers/promises';
import type { Octokit } from '@octokit/rest';

/** GitHub's two kinds of rate limit: the quota of the token, and the abuse guard. */
export type RateLimitKind = 'primary' | 'secondary';

/** A request as the hook sees it. */
export type RateLimitedRequest = Parameters<Octokit['request']['endpoint']['parse']>[0] & {
  readonly method: string;
  readonly url: string;
};

export interface RateLimitSettings {
  /** Milliseconds between the starts of two writes of the client. */
  readonly writeIntervalMs: number;
  /** Milliseconds per second GitHub asks to wait. */
  readonly unitMs: number;
  readonly signal?: AbortSignal | undefined;
  /** Whether to wait `retryAfter` seconds and retry (it logs why either way). */
  readonly onLimit: (
    kind: RateLimitKind,
    retryAfter: number,
    options: RateLimitedRequest,
    retryCount: number,
  ) => boolean;
}

const READ_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD']);

/**
 * Waits out GitHub's rate limits and spaces a client's writes, as
 * `@octokit/plugin-throttling` does (same detection, same waits), without
 * its two Bottleneck schedules per request: they cost the github benchmark a
 * third of its CPU and about 20 ms per round trip (Bottleneck yields to a
 * timer at every step), and capped each client at 10 requests in flight
 * whatever `--thread-pool-size` allowed. Reads are not queued here: callers
 * bound their concurrency (`--thread-pool-size`). Added after the retry
 * plugin, the hook wraps it: a rate-limited answer, which that plugin does
 * not retry, comes here.
 */
export function waitOutRateLimits(octokit: Pick<Octokit, 'hook'>, settings: RateLimitSettings) {
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
    for (let retryCount = 0; ; retryCount++) {
      if (!READ_METHODS.has(options.method)) await writeStart();
      try {
        return await request(options);
      } catch (error) {
        const limit = rateLimitOf(error);
        if (!limit || !settings.onLimit(limit.kind, limit.retryAfter, options, retryCount)) {
          throw error;
        }
        await sleep(limit.retryAfter * settings.unitMs, undefined, { signal });
      }
    }
  });
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
