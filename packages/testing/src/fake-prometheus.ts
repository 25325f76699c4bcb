import { type FakeRequest, type FakeResponse, type HttpFake, startHttpFake } from './http-fake.ts';

/*
 * A fake Prometheus query API: `GET|POST /api/v1/query` (instant queries),
 * which is all the SLO gate of the CD family reads.
 *
 * It does not evaluate PromQL: a test sets the answer of each query text it
 * expects (`setVector`, `setScalar`, `setError`); any other query answers an
 * empty vector, as Prometheus does for a selector that matches no series.
 * (Debian packages a real `prometheus`, but a real server would need series
 * scraped or backfilled over the SLO window before an expression such as
 * `sum(rate(x[28d]))` had a value: not practical in a unit or e2e test.)
 *
 * Checked against Prometheus' HTTP API documentation
 * (prometheus.io/docs/prometheus/latest/querying/api/, "Format overview",
 * "Instant queries", "Expression query result formats"):
 * - the envelope `{"status": "success"|"error", "data": ..., "errorType",
 *   "error", "warnings"}`; errors that reach the handler are JSON with 400
 *   (missing or bad parameters: `bad_data`), 422 (the expression cannot be
 *   executed: `execution`) or 503 (timeout or abort: `timeout`/`canceled`);
 * - `query` from the URL or a form-encoded POST body; `time` optional;
 * - `data` is `{"resultType": "vector"|"scalar"|..., "result": ...}`; a vector
 *   is `[{"metric": {...}, "value": [<unix seconds>, "<value>"]}]`, a scalar
 *   `[<unix seconds>, "<value>"]`; sample values are strings, `NaN`, `+Inf`
 *   and `-Inf` included; timestamps are numbers of seconds.
 * - Authentication is not Prometheus' own job in the clusters the original
 *   reads (a proxy in front of it): without the expected Bearer token or
 *   Basic credentials the fake answers 401 `Unauthorized` (text), before the
 *   API is reached, as such a proxy (and Prometheus' own `basic_auth_users`)
 *   does.
 */

type Labels = Readonly<Record<string, string>>;

/** A query's answer: samples of an instant vector, a scalar, or an API error. */
type Answer =
  | { readonly kind: 'vector'; readonly samples: ReadonlyArray<{ metric: Labels; value: number }> }
  | { readonly kind: 'scalar'; readonly value: number }
  | {
      readonly kind: 'error';
      readonly status: 400 | 422 | 503;
      readonly errorType: string;
      readonly error: string;
    };

export interface FakePrometheus extends HttpFake {
  /** The queries asked for (`query` parameter), in order. */
  readonly queries: readonly string[];
  /** The answer of `query`: an instant vector of these samples (none: an empty vector). */
  setVector(query: string, samples: ReadonlyArray<{ metric?: Labels; value: number }>): void;
  /** The answer of `query`: a scalar. */
  setScalar(query: string, value: number): void;
  /** The answer of `query`: Prometheus' error envelope with this status. */
  setError(query: string, status: 400 | 422 | 503, errorType: string, error: string): void;
}

export interface FakePrometheusOptions {
  /** The token a `Authorization: Bearer` header must carry. */
  readonly bearerToken?: string;
  /** The credentials a `Authorization: Basic` header must carry. */
  readonly basic?: { readonly username: string; readonly password: string };
  /** Serve HTTPS with a self-signed certificate. */
  readonly tls?: boolean;
}

/** Go's `strconv.FormatFloat(v, 'f', -1, 64)` as Prometheus writes sample values. */
function sampleValue(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Number.POSITIVE_INFINITY) return '+Inf';
  if (v === Number.NEGATIVE_INFINITY) return '-Inf';
  // Plain decimal, no exponent (toString would give 1e+21).
  return Math.abs(v) >= 1e21 || (v !== 0 && Math.abs(v) < 1e-6)
    ? v.toFixed(20).replace(/0+$/, '').replace(/\.$/, '')
    : String(v);
}

function authorized(req: FakeRequest, options: FakePrometheusOptions): boolean {
  if (options.bearerToken === undefined && options.basic === undefined) return true;
  const header = req.headers.authorization ?? '';
  if (options.bearerToken !== undefined && header === `Bearer ${options.bearerToken}`) return true;
  if (options.basic !== undefined) {
    const expected = Buffer.from(`${options.basic.username}:${options.basic.password}`).toString(
      'base64',
    );
    if (header === `Basic ${expected}`) return true;
  }
  return false;
}

/** Starts a fake Prometheus query API on 127.0.0.1. */
export async function startFakePrometheus(
  options: FakePrometheusOptions = {},
): Promise<FakePrometheus> {
  const answers = new Map<string, Answer>();
  const queries: string[] = [];

  const handle = (req: FakeRequest): FakeResponse => {
    if (!authorized(req, options)) {
      return {
        status: 401,
        body: 'Unauthorized\n',
        headers: { 'Content-Type': 'text/plain; charset=utf-8', 'WWW-Authenticate': 'Basic' },
      };
    }
    if (req.url.pathname !== '/api/v1/query') {
      return {
        status: 404,
        body: '404 page not found\n',
        headers: { 'Content-Type': 'text/plain' },
      };
    }
    if (req.method !== 'GET' && req.method !== 'POST') {
      return {
        status: 405,
        body: 'Method Not Allowed\n',
        headers: { 'Content-Type': 'text/plain' },
      };
    }
    const form = (req.method === 'POST' ? req.body : undefined) as
      | Record<string, string>
      | undefined;
    const query = form?.query ?? req.url.searchParams.get('query') ?? '';
    if (query.trim() === '') {
      return {
        status: 400,
        body: {
          status: 'error',
          errorType: 'bad_data',
          error: 'invalid parameter "query": 1:1: parse error: no expression found in input',
        },
      };
    }
    queries.push(query);
    const time = Number(form?.time ?? req.url.searchParams.get('time') ?? Date.now() / 1000);
    const at = Math.round(time * 1000) / 1000;
    const answer = answers.get(query) ?? { kind: 'vector', samples: [] };
    switch (answer.kind) {
      case 'error':
        return {
          status: answer.status,
          body: { status: 'error', errorType: answer.errorType, error: answer.error },
        };
      case 'scalar':
        return {
          status: 200,
          body: {
            status: 'success',
            data: { resultType: 'scalar', result: [at, sampleValue(answer.value)] },
          },
        };
      case 'vector':
        return {
          status: 200,
          body: {
            status: 'success',
            data: {
              resultType: 'vector',
              result: answer.samples.map((s) => ({
                metric: s.metric,
                value: [at, sampleValue(s.value)],
              })),
            },
          },
        };
    }
  };

  const fake = await startHttpFake({ handle, ...(options.tls ? { tls: true } : {}) });
  return Object.assign(fake, {
    queries,
    setVector(query: string, samples: ReadonlyArray<{ metric?: Labels; value: number }>) {
      answers.set(query, {
        kind: 'vector',
        samples: samples.map((s) => ({ metric: s.metric ?? {}, value: s.value })),
      });
    },
    setScalar(query: string, value: number) {
      answers.set(query, { kind: 'scalar', value });
    },
    setError(query: string, status: 400 | 422 | 503, errorType: string, error: string) {
      answers.set(query, { kind: 'error', status, errorType, error });
    },
  });
}
