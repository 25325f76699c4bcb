import { setTimeout as delay } from 'node:timers/promises';
import { z } from 'zod';

/*
 * Prometheus' instant-query API (`GET /api/v1/query`), all the SLO gate reads.
 * Node's fetch with zod rather than a client library: the maintained JS
 * clients of Prometheus (prometheus-query) bring axios and their own types for
 * one GET; we need an Authorization header, a timeout, a retry of lost
 * connections (the original's `max_retries=3`) and the answer checked where it
 * enters.
 */

/** Prometheus' `[<unix seconds>, "<value>"]`; the value a string (`NaN`, `+Inf` included). */
const sample = z.tuple([z.number(), z.string()]);

const instantAnswer = z.discriminatedUnion('status', [
  z.object({
    status: z.literal('success'),
    data: z.discriminatedUnion('resultType', [
      z.object({
        resultType: z.literal('vector'),
        result: z.array(z.object({ metric: z.record(z.string(), z.string()), value: sample })),
      }),
      z.object({ resultType: z.literal('scalar'), result: sample }),
      z.object({ resultType: z.literal('string'), result: sample }),
      z.object({ resultType: z.literal('matrix'), result: z.array(z.unknown()) }),
    ]),
  }),
  z.object({ status: z.literal('error'), errorType: z.string(), error: z.string() }),
]);

/** The `data` of a successful instant query. */
export type InstantQueryData = Extract<
  z.infer<typeof instantAnswer>,
  { status: 'success' }
>['data'];

/** How the client authenticates: the cluster's token, or `prometheusAccess`' user and password. */
export type PrometheusAuth =
  | { readonly bearerToken: string }
  | { readonly username: string; readonly password: string }
  | null;

/** No answer came (connection refused or reset, DNS): the original's `ConnectionError`. */
export class PrometheusConnectionError extends Error {
  override readonly name = 'PrometheusConnectionError';
}

/** An answer that is not a result: an HTTP error, Prometheus' error envelope, or an unknown shape. */
class PrometheusAnswerError extends Error {
  override readonly name = 'PrometheusAnswerError';
}

export interface PrometheusClientOptions {
  /** The server's URL (`prometheusUrl` or `prometheusAccess.url`); a path prefix is kept. */
  readonly url: string;
  readonly auth: PrometheusAuth;
  /** One attempt is abandoned after this long (the original's read timeout, 30 s). */
  readonly timeoutMs?: number;
  /** Retries of a request that got no answer (the original's 3). */
  readonly retries?: number;
  readonly signal?: AbortSignal;
}

/** Instant queries against one Prometheus server. */
export class PrometheusClient {
  readonly #options: PrometheusClientOptions;

  constructor(options: PrometheusClientOptions) {
    this.#options = options;
  }

  /** `query` evaluated now. Errors name the server's host, never its credentials. */
  async instantQuery(query: string): Promise<InstantQueryData> {
    const { auth, signal } = this.#options;
    const url = new URL(`${this.#options.url.replace(/\/+$/, '')}/api/v1/query`);
    url.searchParams.set('query', query);
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (auth && 'bearerToken' in auth) headers.Authorization = `Bearer ${auth.bearerToken}`;
    if (auth && 'username' in auth) {
      headers.Authorization = `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}`;
    }
    const timeoutMs = this.#options.timeoutMs ?? 30_000;
    const retries = this.#options.retries ?? 3;
    let answer: Response | undefined;
    for (let attempt = 0; answer === undefined; attempt++) {
      const timeout = AbortSignal.timeout(timeoutMs);
      try {
        answer = await fetch(url, {
          headers,
          signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
        });
      } catch (e) {
        signal?.throwIfAborted();
        if (timeout.aborted) {
          throw new PrometheusAnswerError(`${url.host}: no answer within ${timeoutMs / 1000}s`);
        }
        if (attempt >= retries) {
          throw new PrometheusConnectionError(`${url.host}: ${connectionProblem(e)}`);
        }
        await delay(100 * 2 ** attempt, undefined, signal ? { signal } : {});
      }
    }
    const text = await answer.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new PrometheusAnswerError(
        `${url.host}: HTTP ${answer.status}: ${JSON.stringify(text.trim().slice(0, 200))}`,
      );
    }
    const parsed = instantAnswer.safeParse(body);
    if (!parsed.success) {
      throw new PrometheusAnswerError(`${url.host}: HTTP ${answer.status}: unexpected answer`);
    }
    if (parsed.data.status === 'error') {
      throw new PrometheusAnswerError(
        `${url.host}: HTTP ${answer.status}: ${parsed.data.errorType}: ${parsed.data.error}`,
      );
    }
    if (!answer.ok) throw new PrometheusAnswerError(`${url.host}: HTTP ${answer.status}`);
    return parsed.data.data;
  }
}

function connectionProblem(e: unknown): string {
  const cause = e instanceof Error ? (e.cause as { code?: unknown } | undefined) : undefined;
  if (typeof cause?.code === 'string') return cause.code;
  return e instanceof Error ? e.message : String(e);
}
