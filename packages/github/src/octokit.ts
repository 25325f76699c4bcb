import { retry } from '@octokit/plugin-retry';
import { throttling } from '@octokit/plugin-throttling';
import { Octokit } from '@octokit/rest';
import { QontractError } from '@qontract/core';
import Bottleneck from 'bottleneck';
import { z } from 'zod';

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
/** Statuses a retry cannot fix; 403 and 429 are the throttling plugin's (rate limits). */
const DO_NOT_RETRY = [400, 401, 403, 404, 410, 422, 429, 451];

const RateLimitedOctokit = Octokit.plugin(retry, throttling);

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
  const maxWait = settings.maxRateLimitWaitSeconds ?? 900;
  const { log } = settings;

  const onLimit =
    (kind: 'primary' | 'secondary') =>
    (
      retryAfter: number,
      options: RequestOptions,
      octokit: Pick<Octokit, 'request'>,
      retryCount: number,
    ): boolean => {
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
    };

  return new RateLimitedOctokit({
    auth: settings.token,
    baseUrl: (settings.baseUrl || DEFAULT_API).replace(/\/+$/, ''),
    request: settings.signal ? { signal: settings.signal } : {},
    log: {
      debug: (message: string) => log.debug(message),
      info: (message: string) => log.debug(message),
      warn: (message: string) => log.warn(message),
      error: (message: string) => log.debug(message),
    },
    retry: { retries, retryAfterBaseValue: unit, doNotRetry: DO_NOT_RETRY },
    throttle: {
      // One limiter set per client: organisations have their own tokens and
      // quotas, so one org's writes must not queue behind another's.
      id: `github-client-${++clients}`,
      Bottleneck,
      write: new Bottleneck.Group({ maxConcurrent: 1, minTime: settings.writeIntervalMs ?? 1000 }),
      retryAfterBaseValue: unit,
      fallbackSecondaryRateRetryAfter: 60,
      onRateLimit: onLimit('primary'),
      onSecondaryRateLimit: onLimit('secondary'),
    },
  });
}

let clients = 0;

type RequestOptions = Parameters<Octokit['request']['endpoint']['parse']>[0] & {
  readonly method: string;
  readonly url: string;
};

/** The request's full URL (the route with its parameters filled in); never carries the token. */
function requestUrl(octokit: Pick<Octokit, 'request'>, options: RequestOptions): string {
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
 * `QONTRACT_GITHUB_RETRY_UNIT_MS` (tests and benchmarks set them; production
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
    retryUnitMs: read('QONTRACT_GITHUB_RETRY_UNIT_MS'),
  };
}
