import { GqlBackendError } from './errors.ts';

/**
 * How long a run may wait for the GraphQL server, all its requests and the
 * waits between their attempts together. Per-attempt time-outs alone let a
 * server that accepts connections and never answers hold a run for attempts ×
 * time-out (5 × 60 s on `/sha256`); the original gives one query at most
 * 5 × 30 s plus 10 s of back-off, so the default is a little above that.
 */
export const DEFAULT_GQL_DEADLINE_MS = 180_000;

export const GQL_DEADLINE_VARIABLE = 'QONTRACT_GQL_DEADLINE_SECS';

/** `QONTRACT_GQL_DEADLINE_SECS` in milliseconds; the default when unset. */
export function gqlDeadlineFromEnv(vars: Readonly<Record<string, string | undefined>>): number {
  const raw = vars[GQL_DEADLINE_VARIABLE];
  if (raw === undefined || raw.trim() === '') return DEFAULT_GQL_DEADLINE_MS;
  const seconds = Number(raw);
  if (!Number.isFinite(seconds) || seconds <= 0) {
    throw new GqlBackendError(
      `${GQL_DEADLINE_VARIABLE} must be a number of seconds greater than 0, not '${raw}'`,
    );
  }
  return seconds * 1000;
}

/**
 * The GraphQL deadline of one client. Time counts only while at least one of
 * its requests (or a wait before a retry) is pending, so an integration that
 * queries again after minutes of cluster work is not cut short; concurrent
 * requests count once. When the time is up, `signal` aborts with the
 * deadline's error and every later request fails at once.
 */
export class GqlDeadline {
  readonly #controller = new AbortController();
  readonly #budgetMs: number;
  readonly #expired: () => Error;
  #spentMs = 0;
  #pending = 0;
  #since = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(budgetMs: number, expired: () => Error) {
    this.#budgetMs = budgetMs;
    this.#expired = expired;
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  async within<T>(work: () => Promise<T>): Promise<T> {
    this.#controller.signal.throwIfAborted();
    if (this.#pending++ === 0) {
      this.#since = performance.now();
      this.#timer = setTimeout(
        () => this.#controller.abort(this.#expired()),
        this.#budgetMs - this.#spentMs,
      );
    }
    try {
      return await work();
    } finally {
      if (--this.#pending === 0) {
        clearTimeout(this.#timer);
        this.#spentMs += performance.now() - this.#since;
      }
    }
  }
}
