import { Octokit } from '@octokit/rest';
import { errorMessage, QontractError } from '@qontract/core';
import { z } from 'zod';
import { type RateLimitKind, type RetriedRequest, retryRequests } from './request-retries.ts';

/** Where a client's log lines go: the run logger (or any object with these methods). */
export interface GithubLog {
  debug(message: string): void;
  warn(message: string): void;
}

/** How GitHub clients pace, wait and retry; tests and benchmarks shrink the waits. */
export interface OctokitTuning {
  /**
   * Milliseconds between the starts of two write requests of one client
   * (default 1000).
   * GitHub's REST guidelines ask for a second between writes of one account
   * to stay clear of secondary rate limits; the reconcilers write little, so
   * the pace costs less than a secondary limit would, and it stays on.
   */
  readonly writeIntervalMs?: number | undefined;
  /** How often a rate-limited or failing (5xx, connection) request is retried (default 3). */
  readonly retries?: number | undefined;
  /**
   * How often a failing (5xx, connection) write is retried (default 1). Writes
   * are paced per client, so retrying each of them as often
   * as a read made a GitHub answering 500 to every write hold the run for
   * (1 + 4 + 9 s) per write; rate limits are still waited out `retries` times.
   */
  readonly writeRetries?: number | undefined;
  /**
   * Milliseconds per second of any wait: the `retry-after` and
   * `x-ratelimit-reset` GitHub asks for, and the 1, 4, 9... backoff of
   * server errors (default 1000). Tests set it to a few milliseconds.
   */
  readonly retryUnitMs?: number | undefined;
  /** Rate-limit waits longer than this many seconds fail the request instead (default 900). */
  readonly maxRateLimitWaitSeconds?: number | undefined;
}

export interface OctokitSettings extends OctokitTuning {
  readonly token: string;
  /** `GITHUB_API` (GitHub Enterprise: `https://host/api/v3`); api.github.com when unset. */
  readonly baseUrl?: string | undefined;
  /** The run's signal: an aborted run stops waiting and sending. */
  readonly signal?: AbortSignal | undefined;
  readonly log: GithubLog;
}

const DEFAULT_API = 'https://api.github.com';

/**
 * Parses successful bodies with `JSON.parse`. Octokit parses them with
 * `json-with-bigint`, whose reviver runs for every value: most of a list
 * read's CPU (2,000 lists of 100 users took 1.5 s of the github benchmark's
 * 10). GitHub's REST numbers (ids, counts, sizes) stay below 2^53, where both
 * give the same values. Octokit's parsing is turned off for the request
 * (`parseSuccessResponseBody: false`, its documented option) and redone here
 * as Octokit does it, except for the JSON parser; a caller that turns it off
 * itself gets the stream as asked.
 *
 * Added after the retries, the hook wraps them: it parses the answer left
 * once every retry is done, once. Every hook of a request is bound to the
 * same options object (the token hook ignores options passed on), so the
 * option is set on that object for the hooks below and the request itself.
 */
function parseBodiesWithJsonParse(octokit: Pick<Octokit, 'hook'>): void {
  octokit.hook.wrap('request', async (request, options) => {
    if (options.request?.parseSuccessResponseBody === false) return request(options);
    // A copy: without per-request options, `request` is the client's shared default.
    options.request = { ...options.request, parseSuccessResponseBody: false };
    const response = await request(options);
    response.data = await successBody(response.headers['content-type'], response.data);
    return response;
  });
}

/** What Octokit makes of a successful body (JSON, text, else bytes), with `JSON.parse`. */
async function successBody(contentType: string | undefined, data: unknown): Promise<unknown> {
  // Octokit gives '' without reading a body (204, 205, HEAD): nothing to parse.
  if (data !== null && !(data instanceof ReadableStream)) return data;
  const body = new Response(data);
  if (!contentType) return body.text();
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  if (type === 'application/json' || type === 'application/scim+json') {
    const text = await body.text();
    try {
      return JSON.parse(text);
    } catch {
      return text; // as Octokit: a body that is not JSON is given as text
    }
  }
  const utf8 = /;\s*charset="?utf-8"?/i.test(contentType) && type !== 'application/octet-stream';
  return type.startsWith('text/') || utf8 ? body.text() : body.arrayBuffer();
}

/**
 * An Octokit that waits out GitHub's primary (`x-ratelimit-reset`) and
 * secondary (`retry-after`) rate limits a bounded number of times, logging
 * each wait, retries server errors with backoff, and spaces writes out.
 * Octokit's per-request log lines go to debug: callers report a failed
 * request once, as the error of the object that needed it.
 *
 * @public for clients made outside a run (benchmarks, tools)
 */
export function createOctokit(settings: OctokitSettings): Octokit {
  const retries = settings.retries ?? 3;
  const unit = settings.retryUnitMs ?? 1000;
  const baseUrl = (settings.baseUrl || DEFAULT_API).replace(/\/+$/, '');
  const maxWait = settings.maxRateLimitWaitSeconds ?? 900;
  const { log } = settings;

  const octokit = new Octokit({
    auth: settings.token,
    baseUrl,
    request: settings.signal ? { signal: settings.signal } : {},
    log: {
      debug: (message: string) => log.debug(message),
      info: (message: string) => log.debug(message),
      warn: (message: string) => log.warn(message),
      error: (message: string) => log.debug(message),
    },
  });
  // Each client waits and paces on its own: organisations have their own
  // tokens and quotas, so one org's writes must not queue behind another's.
  retryRequests(octokit, {
    retries,
    writeRetries: settings.writeRetries ?? 1,
    writeIntervalMs: settings.writeIntervalMs ?? 1000,
    unitMs: unit,
    signal: settings.signal,
    onLimit: (kind: RateLimitKind, retryAfter, options, retryCount): boolean => {
      const request = `${options.method} ${requestUrl(octokit, options)}`;
      // An aborted run starts no wait: it is ending.
      if (settings.signal?.aborted) return false;
      if (retryAfter > maxWait) {
        log.warn(
          `GitHub ${kind} rate limit on ${request}: giving up, GitHub asks to wait ${retryAfter} s (more than ${maxWait} s)`,
        );
        return false;
      }
      if (retryCount >= retries) {
        log.warn(
          `GitHub ${kind} rate limit on ${request}: giving up after ${retryCount} retries (GitHub asks to wait ${retryAfter} s)`,
        );
        return false;
      }
      log.warn(
        `GitHub ${kind} rate limit on ${request}: waiting ${(retryAfter * unit) / 1000} s before retry ${retryCount + 1} of ${retries}`,
      );
      return true;
    },
  });
  // Added after the retries, this hook wraps them: it sees the error left once every retry is spent.
  octokit.hook.error('request', (error) => {
    throw networkFailure(error, baseUrl) ?? error;
  });
  parseBodiesWithJsonParse(octokit);
  return octokit;
}

/**
 * What a failed GitHub request says in an error: `GitHub answered <status>`
 * and GitHub's message when it answered, else the error's own message (a
 * network failure says `could not reach GitHub at <url>: ...`).
 */
export function githubErrorMessage(e: unknown): string {
  const status = (e as { status?: unknown }).status;
  const data = (e as { response?: { data?: unknown } }).response?.data;
  if (typeof status !== 'number' || data === undefined) return errorMessage(e);
  const message =
    data !== null &&
    typeof data === 'object' &&
    typeof (data as { message?: unknown }).message === 'string'
      ? (data as { message: string }).message
      : '';
  return `GitHub answered ${status}${message ? ` ${message}` : ''}`;
}

/**
 * Octokit reports a request that got no answer (refused, reset, DNS) as a
 * RequestError with status 500 and no response, which reads as if GitHub had
 * answered 500; this says what happened instead.
 */
function networkFailure(error: unknown, baseUrl: string): QontractError | undefined {
  const e = error as { name?: unknown; status?: unknown; response?: unknown; message?: unknown };
  if (e?.name !== 'HttpError' || e.status !== 500 || e.response !== undefined) return undefined;
  return new QontractError(`could not reach GitHub at ${shown(baseUrl)}: ${String(e.message)}`, {
    cause: error,
  });
}

/** A URL as errors show it: without user information. */
function shown(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    return u.toString().replace(/\/+$/, '');
  } catch {
    return url;
  }
}

/** The request's full URL (the route with its parameters filled in); never carries the token. */
function requestUrl(octokit: Pick<Octokit, 'request'>, options: RetriedRequest): string {
  try {
    return octokit.request.endpoint.parse(options).url;
  } catch {
    return options.url;
  }
}

const EnvNumber = z.coerce.number().int().nonnegative();

/**
 * The tuning of the run's GitHub clients from the environment:
 * `QONTRACT_GITHUB_WRITE_INTERVAL_MS`, `QONTRACT_GITHUB_RETRIES`,
 * `QONTRACT_GITHUB_WRITE_RETRIES`, `QONTRACT_GITHUB_RETRY_UNIT_MS` (tests and benchmarks set them; production
 * keeps the defaults).
 */
export function tuningFromEnv(vars: Readonly<Record<string, string | undefined>>): OctokitTuning {
  const read = (name: string): number | undefined => {
    const raw = vars[name];
    if (raw === undefined || raw === '') return undefined;
    const parsed = EnvNumber.safeParse(raw);
    if (!parsed.success) {
      throw new QontractError(`${name} must be a whole number of at least 0, not '${raw}'`);
    }
    return parsed.data;
  };
  return {
    writeIntervalMs: read('QONTRACT_GITHUB_WRITE_INTERVAL_MS'),
    retries: read('QONTRACT_GITHUB_RETRIES'),
    writeRetries: read('QONTRACT_GITHUB_WRITE_RETRIES'),
    retryUnitMs: read('QONTRACT_GITHUB_RETRY_UNIT_MS'),
  };
}
