import { setTimeout as delay } from 'node:timers/promises';
import {
  createRequesterFn,
  type FormattedResponse,
  getMatchingRateLimiter,
  type RateLimiters,
  type RequesterType,
  type RequestOptions,
  type ResourceOptions,
} from '@gitbeaker/requester-utils';
import { type Dispatcher, fetch } from 'undici';

/** How the requester treats one request: time-out, retries, the run's stop signal. */
export interface RequestPolicy {
  /** Each attempt is abandoned after this long (the original: 120 s). */
  readonly timeoutMs: number;
  /** Retries after a 429 (any method) or a 5xx / network error (idempotent methods). */
  readonly retries: number;
  /** The first wait when GitLab names none; doubled per retry up to `maxBackoffMs`. */
  readonly backoffMs: number;
  readonly maxBackoffMs: number;
  readonly dispatcher: Dispatcher;
  readonly signal?: AbortSignal | undefined;
  readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  readonly onRetry?: (retry: RetryNotice) => void;
  /** Told about each HTTP request sent, retries included (the request counter). */
  readonly onRequest?: () => void;
}

export interface RetryNotice {
  readonly method: string;
  readonly endpoint: string;
  /** The HTTP status, or the network error's message. */
  readonly cause: number | string;
  readonly waitMs: number;
  /** 1 for the first retry. */
  readonly retry: number;
}

/** GitLab answered with an error status. Carries no request headers (the token stays out). */
export class GitlabHttpError extends Error {
  readonly status: number;
  readonly method: string;
  readonly endpoint: string;
  /** GitLab's `message` / `error`, or the text of the answer. */
  readonly description: string;
  constructor(method: string, endpoint: string, status: number, description: string) {
    super(`${method} ${endpoint}: ${status}${description ? ` ${description}` : ''}`);
    this.name = 'GitlabHttpError';
    this.status = status;
    this.method = method;
    this.endpoint = endpoint;
    this.description = description;
  }
}

/** No answer: time-out, connection or TLS failure, or the run was stopped. */
export class GitlabTransportError extends Error {
  constructor(method: string, endpoint: string, reason: string) {
    super(`${method} ${endpoint}: ${reason}`);
    this.name = 'GitlabTransportError';
  }
}

export const defaultSleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  delay(ms, undefined, signal ? { signal } : undefined);

const IDEMPOTENT: ReadonlySet<string> = new Set(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS']);
const TRANSIENT: ReadonlySet<number> = new Set([500, 502, 503, 504]);

/**
 * gitbeaker's requester for our policy. gitbeaker itself builds every request
 * (URL, `PRIVATE-TOKEN`, query and JSON body) and follows pagination (`all()`
 * walks the `Link: rel="next"` headers); we rely on that and on its client-side
 * rate limiters (`rateLimits`, applied below through `getMatchingRateLimiter`).
 * Its own request handler is replaced because it retries only 429 and 502, ten
 * times within a quarter second, ignoring `Retry-After`; it has no per-attempt
 * time-out (`queryTimeout` spans a whole paginated listing); and its errors
 * carry the request, headers and token included. Here: 429 (any method) and
 * 5xx / network errors (idempotent methods) are retried, waiting what
 * `Retry-After` (or `RateLimit-Reset`) says, else an exponential backoff; each
 * attempt has a time-out and ends when the run is stopped; errors carry the
 * method, the endpoint, the status and GitLab's message only.
 */
export function createRequester(
  policy: RequestPolicy,
): (resourceOptions: ResourceOptions) => RequesterType {
  return createRequesterFn(
    async (_resource, requestOptions) => requestOptions,
    (endpoint, options) => send(policy, endpoint, (options ?? {}) as HandlerOptions),
  );
}

type HandlerOptions = RequestOptions & { readonly rateLimiters?: RateLimiters };

async function send(
  policy: RequestPolicy,
  endpoint: string,
  options: HandlerOptions,
): Promise<FormattedResponse> {
  const method = (options.method ?? 'GET').toUpperCase();
  const prefix = options.prefixUrl ?? '';
  const url = new URL(endpoint, prefix.endsWith('/') ? prefix : `${prefix}/`);
  url.search = options.searchParams ?? '';
  const rateLimit = getMatchingRateLimiter(endpoint, options.rateLimiters, method);
  const retryable = IDEMPOTENT.has(method);
  for (let attempt = 0; ; attempt += 1) {
    const canRetry = attempt < policy.retries;
    await rateLimit();
    const timeout = AbortSignal.timeout(policy.timeoutMs);
    const signals = [timeout, policy.signal, options.signal].filter(
      (s): s is AbortSignal => s !== undefined,
    );
    let response: Awaited<ReturnType<typeof fetch>>;
    policy.onRequest?.();
    try {
      response = await fetch(url, {
        method,
        headers: options.headers ?? {},
        ...(typeof options.body === 'string' ? { body: options.body } : {}),
        signal: AbortSignal.any(signals),
        dispatcher: policy.dispatcher,
      });
    } catch (e) {
      if (policy.signal?.aborted || options.signal?.aborted) {
        throw new GitlabTransportError(method, endpoint, 'aborted: the run is stopping');
      }
      const reason = timeout.aborted
        ? `no answer within ${policy.timeoutMs / 1000} s`
        : networkReason(e);
      // A refused connection means nothing listens there (GitLab down, a wrong URL): retrying
      // only holds the run for minutes, so it is given up at once, as the cluster client does.
      if (!retryable || !canRetry || refused(e)) {
        throw new GitlabTransportError(method, endpoint, reason);
      }
      await wait(policy, method, endpoint, reason, backoff(policy, attempt), attempt);
      continue;
    }
    if (response.ok) return parse(response, options.asStream === true);
    const again = response.status === 429 || (retryable && TRANSIENT.has(response.status));
    if (!again || !canRetry) throw await httpError(method, endpoint, response);
    await response.body?.cancel();
    const waitMs = retryAfter(response.headers) ?? backoff(policy, attempt);
    await wait(policy, method, endpoint, response.status, waitMs, attempt);
  }
}

async function wait(
  policy: RequestPolicy,
  method: string,
  endpoint: string,
  cause: number | string,
  waitMs: number,
  attempt: number,
): Promise<void> {
  policy.onRetry?.({ method, endpoint, cause, waitMs, retry: attempt + 1 });
  try {
    await policy.sleep(waitMs, policy.signal);
  } catch {
    throw new GitlabTransportError(method, endpoint, 'aborted: the run is stopping');
  }
}

function backoff(policy: RequestPolicy, attempt: number): number {
  return Math.min(policy.backoffMs * 2 ** attempt, policy.maxBackoffMs);
}

/** `Retry-After` (seconds or an HTTP date), else GitLab's `RateLimit-Reset` (epoch seconds). */
function retryAfter(
  headers: { get(name: string): string | null },
  now = Date.now(),
): number | undefined {
  const value = headers.get('retry-after')?.trim();
  if (value) {
    if (/^\d+$/.test(value)) return Number(value) * 1000;
    const date = Date.parse(value);
    if (!Number.isNaN(date)) return Math.max(date - now, 0);
  }
  const reset = headers.get('ratelimit-reset')?.trim();
  if (reset && /^\d+$/.test(reset)) return Math.max(Number(reset) * 1000 - now, 0);
  return undefined;
}

function refused(e: unknown): boolean {
  const cause = e instanceof Error && e.cause instanceof Error ? e.cause : e;
  return (cause as { code?: unknown } | undefined)?.code === 'ECONNREFUSED';
}

function networkReason(e: unknown): string {
  // undici reports "fetch failed" and puts the reason (ECONNREFUSED, a TLS error) in `cause`.
  const cause = e instanceof Error && e.cause instanceof Error ? e.cause : e;
  return cause instanceof Error ? cause.message : String(cause);
}

async function parse(
  response: Awaited<ReturnType<typeof fetch>>,
  asStream: boolean,
): Promise<FormattedResponse> {
  const headers = Object.fromEntries(response.headers.entries());
  const { status } = response;
  if (asStream) return { body: response.body as ReadableStream, headers, status };
  if (status === 204) {
    await response.body?.cancel();
    return { body: null, headers, status };
  }
  const type = (response.headers.get('content-type') ?? '').split(';')[0]?.trim() ?? '';
  if (type === 'application/json') {
    const text = await response.text();
    return {
      body: text === '' ? {} : (JSON.parse(text) as FormattedResponse['body']),
      headers,
      status,
    };
  }
  if (type.startsWith('text/')) return { body: await response.text(), headers, status };
  return { body: await response.blob(), headers, status };
}

async function httpError(
  method: string,
  endpoint: string,
  response: Awaited<ReturnType<typeof fetch>>,
): Promise<GitlabHttpError> {
  const text = await response.text().catch(() => '');
  let description = text.trim();
  if ((response.headers.get('content-type') ?? '').includes('application/json')) {
    try {
      const body = JSON.parse(text) as { error?: unknown; message?: unknown } | null;
      const detail = body?.error ?? body?.message ?? '';
      description = typeof detail === 'string' ? detail : JSON.stringify(detail);
    } catch {
      // not JSON after all: keep the text
    }
  }
  if (description.length > 300) description = `${description.slice(0, 300)}…`;
  return new GitlabHttpError(method, endpoint, response.status, description);
}
