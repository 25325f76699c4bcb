import type { Verb } from './route.ts';

/** One fault rule of a cluster; the first rule whose verb matches a request applies to it. */
export interface FaultRule {
  /** Only requests of this verb; all requests when absent. */
  readonly verb?: Verb;
  /** Only requests for this resource (plural, e.g. `secrets`). */
  readonly resource?: string;
  /** Only requests in this namespace. */
  readonly namespace?: string;
  /** Only requests for the object of this name (a get, an apply, a delete). */
  readonly name?: string;
  /**
   * Only list requests that carry a `continue` token (true) or none (false):
   * `{ verb: 'list', continued: true, status: 410 }` is a token that expired
   * between two pages, as etcd compaction makes it on a real server.
   */
  readonly continued?: boolean;
  /** Added before the request is handled (on top of the server-wide latency). */
  readonly latencyMs?: number;
  /** Share of matching requests that fail (0..1); defaults to 1 when `status`, `drop` or `hang` is set. */
  readonly errorRate?: number;
  /** Status of the injected failure: 500, 503, 429, ... */
  readonly status?: number;
  /** Seconds sent in `Retry-After` (and in the Status details) with the failure. */
  readonly retryAfter?: number;
  /** The failure is a reset connection instead of an HTTP answer. */
  readonly drop?: boolean;
  /** The request is never answered: the connection stays open until the client gives up. */
  readonly hang?: boolean;
  /** Apply to this many matching requests, then lapse. Unlimited when absent. */
  readonly times?: number;
}

export type FaultDecision =
  | { readonly action: 'pass'; readonly latencyMs: number }
  | { readonly action: 'drop'; readonly latencyMs: number }
  | { readonly action: 'hang'; readonly latencyMs: number }
  | {
      readonly action: 'fail';
      readonly latencyMs: number;
      readonly status: number;
      readonly retryAfter?: number;
    };

interface ActiveRule {
  rule: FaultRule;
  remaining: number;
}

/** Fault rules per cluster; `random` is injectable so tests can make error rates exact. */
export class FaultInjector {
  private readonly rules = new Map<string, ActiveRule[]>();
  private readonly random: () => number;

  constructor(random: () => number = Math.random) {
    this.random = random;
  }

  add(cluster: string, rule: FaultRule): void {
    const list = this.rules.get(cluster) ?? [];
    list.push({ rule, remaining: rule.times ?? Number.POSITIVE_INFINITY });
    this.rules.set(cluster, list);
  }

  clear(cluster?: string): void {
    if (cluster === undefined) this.rules.clear();
    else this.rules.delete(cluster);
  }

  decide(
    cluster: string,
    verb: Verb,
    target: { resource?: string; namespace?: string; name?: string; continued?: boolean } = {},
  ): FaultDecision {
    const list = this.rules.get(cluster);
    if (!list) return { action: 'pass', latencyMs: 0 };
    let latencyMs = 0;
    for (const active of list) {
      const { rule } = active;
      if (active.remaining <= 0 || (rule.verb !== undefined && rule.verb !== verb)) continue;
      if (rule.resource !== undefined && rule.resource !== target.resource) continue;
      if (rule.namespace !== undefined && rule.namespace !== target.namespace) continue;
      if (rule.name !== undefined && rule.name !== target.name) continue;
      if (rule.continued !== undefined && rule.continued !== (target.continued ?? false)) continue;
      latencyMs += rule.latencyMs ?? 0;
      const failing = rule.status !== undefined || rule.drop === true || rule.hang === true;
      if (!failing) {
        this.consume(active);
        continue;
      }
      const rate = rule.errorRate ?? 1;
      if (this.random() >= rate) continue;
      this.consume(active);
      if (rule.drop) return { action: 'drop', latencyMs };
      if (rule.hang) return { action: 'hang', latencyMs };
      return {
        action: 'fail',
        latencyMs,
        status: rule.status ?? 500,
        ...(rule.retryAfter !== undefined ? { retryAfter: rule.retryAfter } : {}),
      };
    }
    return { action: 'pass', latencyMs };
  }

  private consume(active: ActiveRule): void {
    active.remaining -= 1;
  }
}

const REASONS: Record<number, [string, string]> = {
  400: ['BadRequest', 'the server rejected our request for an unknown reason'],
  401: ['Unauthorized', 'Unauthorized'],
  403: ['Forbidden', 'forbidden: injected fault'],
  404: ['NotFound', 'the server could not find the requested resource'],
  409: ['Conflict', 'the server reported a conflict'],
  410: ['Expired', 'the resource version is too old'],
  422: ['Invalid', 'the server rejected our request due to an error in our request'],
  429: [
    'TooManyRequests',
    'the server has received too many requests and has asked us to try again later',
  ],
  500: ['InternalError', 'Internal error occurred: injected fault'],
  503: ['ServiceUnavailable', 'the server is currently unable to handle the request'],
  504: [
    'Timeout',
    'the server was unable to return a response in the time allotted, but may still be processing the request',
  ],
};

export function faultStatus(status: number, retryAfter?: number): Record<string, unknown> {
  const [reason, message] = REASONS[status] ?? ['InternalError', `injected fault ${status}`];
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason,
    ...(retryAfter !== undefined ? { details: { retryAfterSeconds: retryAfter } } : {}),
    code: status,
  };
}
