import type { ServerResponse } from 'node:http';

/** What a fake counts of its concurrent requests (read by tests and the benchmark). */
export interface InFlightCounts {
  /** Requests received and not yet answered. */
  readonly current: number;
  /** The most requests in flight at once since the start (or the last `reset`). */
  readonly max: number;
  /** Requests received since the start (or the last `reset`). */
  readonly started: number;
  /** Milliseconds with at least one request in flight. */
  readonly busyMs: number;
  /** The sum of every request's time in flight: `requestMs ÷ busyMs` is the mean concurrency while busy. */
  readonly requestMs: number;
  /** Starts counting anew (requests in flight stay counted as in flight). */
  reset(): void;
}

/**
 * Counts a fake's requests in flight, from the moment a request arrives to
 * the moment its response is closed (answered, dropped or hung up), so a
 * test can assert how concurrent a client really is without timing it.
 */
export class InFlightGauge implements InFlightCounts {
  current = 0;
  max = 0;
  started = 0;
  busyMs = 0;
  requestMs = 0;
  private since = performance.now();

  /** Counts `res` as in flight until it closes. */
  track(res: ServerResponse): void {
    this.advance();
    this.current += 1;
    this.started += 1;
    this.max = Math.max(this.max, this.current);
    res.once('close', () => {
      this.advance();
      this.current -= 1;
    });
  }

  reset(): void {
    this.advance();
    this.max = this.current;
    this.started = 0;
    this.busyMs = 0;
    this.requestMs = 0;
  }

  private advance(): void {
    const now = performance.now();
    const elapsed = now - this.since;
    this.since = now;
    if (this.current > 0) this.busyMs += elapsed;
    this.requestMs += elapsed * this.current;
  }
}
