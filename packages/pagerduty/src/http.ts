import { setTimeout as delay } from 'node:timers/promises';
import type { z } from 'zod';

/*
 * Why Node's fetch with zod instead of `@pagerduty/pdjs`: pdjs (last release
 * 2.2.4) brings the cross-fetch polyfill, types every answer as `any`, waits a
 * fixed 20 s on a 429 whatever PagerDuty's `ratelimit-reset` says, never
 * retries a 5xx, and cannot abort a request. We call four GET endpoints; a
 * small loop over the platform's fetch does exactly what we need (bounded
 * waits from the rate-limit headers, retries of 5xx and lost connections, the
 * run's AbortSignal) and zod checks every answer where it enters. Generic retry
 * wrappers (undici's RetryAgent) only know `Retry-After`, not `ratelimit-reset`.
 */

/** PagerDuty's REST API v2. */
export const DEFAULT_PAGERDUTY_API_URL = 'https://api.pagerduty.com';

/** How hard a client tries before it gives up on a request. */
export interface PagerDutyRetryPolicy {
  /** Total attempts per request, the first one included. */
  readonly attempts: number;
  /** Wait before retry n (without a server hint) is n × backoffMs. */
  readonly backoffMs: number;
  /** No wait, whatever the server asks for, is longer than this. */
  readonly maxWaitMs: number;
  /** One attempt is abandoned (and retried) after this long. */
  readonly timeoutMs: number;
}

const DEFAULT_RETRY_POLICY: PagerDutyRetryPolicy = {
  attempts: 5,
  backoffMs: 1000,
  maxWaitMs: 60_000,
  timeoutMs: 30_000,
};

/** What a client needs besides its token; tests replace `fetch` and `sleep`. */
export interface PagerDutyHttpOptions {
  readonly baseUrl: string;
  readonly token: string;
  /** The run's stop signal: aborts requests in flight and retry waits. */
  readonly signal?: AbortSignal | undefined;
  readonly retry?: Partial<PagerDutyRetryPolicy> | undefined;
  readonly fetch?: typeof fetch | undefined;
  /** Waits `ms`; rejects when `signal` aborts. */
  readonly sleep?: ((ms: number, signal?: AbortSignal) => Promise<void>) | undefined;
  /** Told about each retry (the caller logs it). */
  readonly onRetry?: ((message: string) => void) | undefined;
}

/** A request PagerDuty refused or answered in a shape we do not understand. The caller names the target. */
export class PagerDutyRequestError extends Error {
  /** HTTP status; 0 when no answer came. */
  readonly status: number;
  constructor(message: string, status: number, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PagerDutyRequestError';
    this.status = status;
  }
}

/** GET requests against one PagerDuty account, with its token. */
export class PagerDutyHttp {
  readonly #options: PagerDutyHttpOptions;
  readonly #policy: PagerDutyRetryPolicy;
  readonly #fetch: typeof fetch;
  readonly #sleep: (ms: number, signal?: AbortSignal) => Promise<void>;

  constructor(options: PagerDutyHttpOptions) {
    this.#options = options;
    this.#policy = { ...DEFAULT_RETRY_POLICY, ...options.retry };
    this.#fetch = options.fetch ?? fetch;
    this.#sleep = options.sleep ?? ((ms, signal) => delay(ms, undefined, { signal }));
  }

  /** `GET path?query`, the answer checked against `schema`. */
  async get<T>(
    path: string,
    query: Readonly<Record<string, string>>,
    schema: z.ZodType<T>,
  ): Promise<T> {
    const url = new URL(this.#options.baseUrl.replace(/\/+$/, '') + path);
    for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
    // The request as errors show it: method and path, never the host's credentials or headers.
    const what = `GET ${path}`;
    const { attempts } = this.#policy;
    const runSignal = this.#options.signal;
    for (let attempt = 1; ; attempt++) {
      runSignal?.throwIfAborted();
      let answer: Response | undefined;
      let problem = '';
      try {
        const timeout = AbortSignal.timeout(this.#policy.timeoutMs);
        answer = await this.#fetch(url, {
          headers: {
            Authorization: `Token token=${this.#options.token}`,
            Accept: 'application/vnd.pagerduty+json;version=2',
          },
          signal: runSignal ? AbortSignal.any([runSignal, timeout]) : timeout,
        });
      } catch (e) {
        if (runSignal?.aborted) throw runSignal.reason;
        problem = `no answer: ${connectionProblem(e, this.#policy.timeoutMs)}`;
      }
      if (answer !== undefined) {
        const text = await answer.text().catch(() => '');
        // A body cut short by the stop signal is the stop, not a bad answer.
        runSignal?.throwIfAborted();
        if (answer.ok) return parseAnswer(text, schema, what);
        problem = `HTTP ${answer.status}${pagerDutyError(text)}`;
        if (!isRetryable(answer.status) || attempt >= attempts) {
          throw new PagerDutyRequestError(
            `${what}: ${problem}${attempt > 1 ? ` (after ${attempt} attempts)` : ''}`,
            answer.status,
          );
        }
      } else if (attempt >= attempts) {
        throw new PagerDutyRequestError(`${what}: ${problem} (after ${attempt} attempts)`, 0);
      }
      const waitMs = Math.min(
        serverWaitMs(answer) ?? this.#policy.backoffMs * attempt,
        this.#policy.maxWaitMs,
      );
      this.#options.onRetry?.(
        `${what}: ${problem}, retrying in ${waitMs / 1000}s (attempt ${attempt}/${attempts})`,
      );
      try {
        await this.#sleep(waitMs, runSignal);
      } catch (e) {
        throw runSignal?.aborted ? runSignal.reason : e;
      }
    }
  }
}

/** Rate limits (429) and server trouble (5xx, 408) may pass; anything else will not. */
function isRetryable(status: number): boolean {
  return status === 429 || status === 408 || status >= 500;
}

/**
 * The wait the server asked for: PagerDuty's `ratelimit-reset` (seconds until
 * the limit resets), else `Retry-After` (seconds or an HTTP date).
 */
function serverWaitMs(answer: Response | undefined): number | undefined {
  if (answer === undefined) return undefined;
  const reset = Number(answer.headers.get('ratelimit-reset') ?? Number.NaN);
  if (Number.isFinite(reset) && reset >= 0) return reset * 1000;
  const retryAfter = answer.headers.get('retry-after')?.trim();
  if (!retryAfter) return undefined;
  if (/^\d+(\.\d+)?$/.test(retryAfter)) return Number(retryAfter) * 1000;
  const date = Date.parse(retryAfter);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

function parseAnswer<T>(text: string, schema: z.ZodType<T>, what: string): T {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new PagerDutyRequestError(`${what}: the answer is not JSON: ${excerpt(text)}`, 200);
  }
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    const issues = parsed.error.issues
      .slice(0, 3)
      .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
      .join('; ');
    throw new PagerDutyRequestError(`${what}: unexpected answer (${issues})`, 200);
  }
  return parsed.data;
}

/** `: <message> (code <n>)` from PagerDuty's `{error: {message, code, errors}}`, or an excerpt. */
function pagerDutyError(text: string): string {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return text.trim() ? `: ${excerpt(text)}` : '';
  }
  const error = (body as { error?: unknown } | null)?.error;
  if (error === null || typeof error !== 'object') return text.trim() ? `: ${excerpt(text)}` : '';
  const { message, code, errors } = error as {
    message?: unknown;
    code?: unknown;
    errors?: unknown;
  };
  const details =
    Array.isArray(errors) && errors.length ? ` [${errors.map(String).join('; ')}]` : '';
  const codePart = typeof code === 'number' || typeof code === 'string' ? ` (code ${code})` : '';
  return `: ${typeof message === 'string' ? message : 'error'}${details}${codePart}`;
}

function excerpt(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return JSON.stringify(flat.length > 200 ? `${flat.slice(0, 200)}…` : flat);
}

function connectionProblem(e: unknown, timeoutMs: number): string {
  if (e instanceof Error && (e.name === 'TimeoutError' || e.name === 'AbortError')) {
    return `timed out after ${timeoutMs / 1000}s`;
  }
  const cause =
    e instanceof Error ? (e.cause as { code?: unknown; message?: unknown } | undefined) : undefined;
  if (typeof cause?.code === 'string') return cause.code;
  if (typeof cause?.message === 'string') return cause.message;
  return e instanceof Error ? e.message : String(e);
}
