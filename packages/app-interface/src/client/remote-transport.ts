import type { Logger, SecretRedactor } from '@qontract/core';
import { ClientError, GraphQLClient } from 'graphql-request';
import { DEFAULT_GQL_DEADLINE_MS, GQL_DEADLINE_VARIABLE, GqlDeadline } from './deadline.ts';
import { GqlBackendError, GqlQueryError } from './errors.ts';
import {
  credentialsRedactor,
  describeMalformed,
  describeStatus,
  type HttpAnswer,
  isRetryableStatus,
  retryAfterMs,
} from './http-answer.ts';
import { DEFAULT_RETRY_POLICY, RetryableError, type RetryPolicy, withRetries } from './retry.ts';
import type { GitCommitInfo, GqlTransport, GraphqlResponse } from './types.ts';

export interface RemoteTransportOptions {
  /** `[graphql] server`, e.g. `https://app-interface.example.com/graphql`. */
  readonly server: string;
  /** `[graphql] token`, sent verbatim as `Authorization` (it is stored as `Basic ...`). */
  readonly token?: string | undefined;
  /** `--gql-sha-url`: pin the run to the bundle `/sha256` names. */
  readonly pinToCurrentBundle: boolean;
  /** Pin to this bundle instead (early-exit comparison runs). */
  readonly sha?: string | undefined;
  readonly log: Logger;
  readonly retry?: RetryPolicy;
  /** Per GraphQL request; the original uses 30 s. */
  readonly queryTimeoutMs?: number;
  /** Per `/sha256` and `/git-commit-info` request; the original uses 60 s. */
  readonly metadataTimeoutMs?: number;
  /** All requests of this transport and the waits between attempts together (`GqlDeadline`). */
  readonly deadlineMs?: number;
  readonly fetch?: typeof fetch;
  readonly sleep?: (ms: number) => Promise<void>;
  /** The run's stop signal: aborts requests in flight and retry waits (SIGTERM). */
  readonly signal?: AbortSignal | undefined;
}

/**
 * The qontract-server backend: resolves the current bundle once (`GET
 * /sha256`), then sends every query to `/graphqlsha/<sha>` so the whole run
 * sees one snapshot, as the original does.
 */
export async function createRemoteTransport(
  options: RemoteTransportOptions,
): Promise<GqlTransport> {
  const serverUrl = parseServerUrl(options.server);
  const display = withoutCredentials(serverUrl);
  const retry = options.retry ?? DEFAULT_RETRY_POLICY;
  const baseFetch = options.fetch ?? globalThis.fetch;
  const headers: Record<string, string> = options.token ? { Authorization: options.token } : {};
  const redactor = credentialsRedactor(options.token, serverUrl);
  const log = options.log;
  const metadataTimeoutMs = options.metadataTimeoutMs ?? 60_000;
  const runSignal = options.signal;
  const deadlineMs = options.deadlineMs ?? DEFAULT_GQL_DEADLINE_MS;
  const deadline = new GqlDeadline(
    deadlineMs,
    () =>
      new GqlBackendError(
        `the GraphQL server at ${display} did not answer within ${deadlineMs / 1000}s, the deadline for all GraphQL requests of a run (${GQL_DEADLINE_VARIABLE})`,
      ),
  );
  // What stops a request or a wait: the run's stop signal, or the deadline.
  const signal = runSignal ? AbortSignal.any([runSignal, deadline.signal]) : deadline.signal;

  /** One GET, retried while the answer may change; any other answer is returned. */
  const get = (path: string, what: string): Promise<HttpAnswer> =>
    deadline.within(() =>
      withRetries(
        retry,
        async () => {
          const url = new URL(path, serverUrl.origin);
          const answer = await fetchAnswer(baseFetch, url, { headers, signal }, metadataTimeoutMs);
          if (isRetryableStatus(answer.status)) {
            throw new RetryableError(describeStatus(answer, redactor), {
              retryAfterMs: retryAfterMs(answer),
            });
          }
          return answer;
        },
        (e, n, waitMs) =>
          log.warn(
            `${what} failed (attempt ${n}/${retry.attempts}), retrying in ${waitMs / 1000}s: ${e.message}`,
          ),
        options.sleep,
        signal,
      ),
    );

  let sha = options.sha;
  if (sha === undefined && options.pinToCurrentBundle) {
    const cannot = `cannot read the current bundle sha from ${display}`;
    const answer = await get('/sha256', 'reading the bundle sha').catch((e: unknown) => {
      // The deadline's error names the server and the deadline already.
      if (deadline.signal.aborted) throw deadline.signal.reason;
      throw new GqlBackendError(`${cannot}: ${messageOf(e)}`);
    });
    if (answer.status !== 200) {
      throw new GqlBackendError(`${cannot}: ${describeStatus(answer, redactor)}`);
    }
    sha = answer.body.trim();
    if (!/^[0-9a-f]{64}$/i.test(sha)) {
      throw new GqlBackendError(
        `${cannot}: ${describeMalformed(answer, ', not a bundle sha', redactor)}`,
      );
    }
  }

  let gitCommit: GitCommitInfo | null = null;
  if (sha !== undefined) {
    gitCommit = await readGitCommitInfo(sha).catch((e: unknown) => {
      // Only reconcile-time metrics need it; the run itself does not.
      log.debug(`no git commit info for bundle ${sha}: ${messageOf(e)}`);
      return null;
    });
  }

  async function readGitCommitInfo(bundleSha: string): Promise<GitCommitInfo | null> {
    const answer = await get(`/git-commit-info/${bundleSha}`, 'reading git commit info');
    if (answer.status !== 200) throw new Error(describeStatus(answer, redactor));
    let info: { commit?: unknown; timestamp?: unknown };
    try {
      info = JSON.parse(answer.body) as typeof info;
    } catch {
      throw new Error(describeMalformed(answer, ' with invalid JSON', redactor));
    }
    if (typeof info?.commit !== 'string') return null;
    return { commit: info.commit, timestamp: String(info.timestamp ?? '') };
  }

  // The path is replaced, not appended to: `/graphql` disappears, as upstream.
  const queryUrl = sha === undefined ? serverUrl : new URL(`/graphqlsha/${sha}`, serverUrl.origin);
  const endpoint = withoutCredentials(queryUrl);
  const queryTimeoutMs = options.queryTimeoutMs ?? 30_000;

  /**
   * One POST. The answer is captured on its way into graphql-request, which
   * builds the request and parses the response, so that a failure can say
   * what came back; a fresh client per call keeps concurrent queries apart.
   */
  async function sendOnce(
    query: string,
    variables: Record<string, unknown> | undefined,
  ): Promise<GraphqlResponse> {
    let answer: HttpAnswer | undefined;
    const client = new GraphQLClient(queryUrl.toString(), {
      headers,
      errorPolicy: 'all',
      fetch: async (input: string | URL | Request, init?: RequestInit) => {
        answer = await fetchAnswer(
          baseFetch,
          input,
          { ...init, signal: init?.signal ? AbortSignal.any([init.signal, signal]) : signal },
          queryTimeoutMs,
          endpoint,
        );
        return readResponse(answer.body, {
          status: answer.status,
          headers: answer.contentType ? { 'content-type': answer.contentType } : {},
        });
      },
    });
    let response: Awaited<ReturnType<typeof client.rawRequest>>;
    try {
      response = await client.rawRequest(query, variables);
    } catch (e) {
      if (answer === undefined) throw e; // no answer: fetchAnswer's RetryableError
      if (e instanceof ClientError) {
        const first = e.response.errors?.[0]?.message;
        const message = first
          ? `HTTP ${answer.status} from ${endpoint}: ${redactor.redact(first)}`
          : describeStatus(answer, redactor);
        // A 4xx is a bad query (parse/validation) or a bad token: retrying cannot help.
        if (isRetryableStatus(answer.status)) {
          throw new RetryableError(message, { retryAfterMs: retryAfterMs(answer) });
        }
        throw new Error(message);
      }
      // A 2xx graphql-request could not parse: a login page, a proxy's page, a cut body.
      throw new Error(notAGraphqlResponse(answer, redactor));
    }
    const result: GraphqlResponse = {
      data: response.data as Record<string, unknown> | null | undefined,
      errors: response.errors,
      extensions: response.extensions as GraphqlResponse['extensions'],
    };
    // Unlike the original, which retries these like a lost connection: the
    // pinned bundle answers the same query the same way, so a retry only
    // delays the error by ten seconds.
    if (result.errors?.length) throw new Error(describeGraphqlErrors(result.errors, endpoint));
    if ((result.data === undefined || result.data === null) && answer !== undefined) {
      throw new Error(describeMalformed(answer, ' without `data` or `errors`', redactor));
    }
    return result;
  }

  return {
    endpoint,
    sha,
    gitCommit,
    async execute(query, variables, operationName) {
      try {
        return await deadline.within(() =>
          withRetries(
            retry,
            () => sendOnce(query, variables),
            (e, n, waitMs) =>
              log.warn(
                `GraphQL query ${operationName} failed (attempt ${n}/${retry.attempts}), retrying in ${waitMs / 1000}s: ${e.message}`,
              ),
            options.sleep,
            signal,
          ),
        );
      } catch (e) {
        if (runSignal?.aborted) throw runSignal.reason;
        throw new GqlQueryError(operationName, messageOf(e));
      }
    },
    async close() {},
  };
}

/**
 * Sends one request and reads the whole answer. Failing to get one (no
 * connection, a time-out, a connection cut while the body arrives) is a
 * RetryableError; any answer, whatever its status, is returned.
 */
async function fetchAnswer(
  baseFetch: typeof fetch,
  input: string | URL | Request,
  init: RequestInit,
  timeoutMs: number,
  shownUrl?: string,
): Promise<HttpAnswer> {
  const url = shownUrl ?? withoutCredentials(new URL(input instanceof Request ? input.url : input));
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = init.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
  let response: Response;
  try {
    response = await baseFetch(input, { ...init, signal });
  } catch (e) {
    throw new RetryableError(connectionProblem(e, url, timeoutMs), { cause: e });
  }
  let body: string;
  try {
    body = await bodyText(response);
  } catch (e) {
    throw new RetryableError(
      `the answer from ${url} (HTTP ${response.status}) was cut off: ${reasonOf(e, timeoutMs)}`,
      { cause: e },
    );
  }
  return {
    url,
    status: response.status,
    contentType: response.headers.get('content-type'),
    body,
    retryAfter: response.headers.get('retry-after'),
  };
}

/**
 * The body as `text()` reads it (UTF-8, a byte order mark dropped), decoded
 * chunk by chunk as it arrives. `text()` keeps every chunk until the end, then
 * copies them into one buffer and decodes that: for the namespaces answer of
 * a large app-interface (tens of megabytes) about a third more CPU, all of it
 * after the last byte, and the buffer besides the text at the peak.
 */
async function bodyText(response: Response): Promise<string> {
  if (!response.body) return '';
  const decoder = new TextDecoder();
  let text = '';
  for await (const chunk of response.body) text += decoder.decode(chunk, { stream: true });
  return text + decoder.decode();
}

/** Why a 2xx body graphql-request could not parse is not a GraphQL response. */
function notAGraphqlResponse(answer: HttpAnswer, redactor: SecretRedactor): string {
  if (!/json|graphql/i.test(answer.contentType ?? '')) {
    return describeMalformed(answer, ', not a GraphQL response', redactor);
  }
  try {
    JSON.parse(answer.body);
  } catch (e) {
    // V8 quotes the start of the body in some of these; it goes through the redactor too.
    const reason = redactor.redact(messageOf(e)).slice(0, 120);
    return describeMalformed(answer, ` with invalid JSON (${reason})`, redactor);
  }
  return describeMalformed(answer, ', not a GraphQL response', redactor);
}

/** The first of a response's `errors`; `from` names the server that answered them. */
export function describeGraphqlErrors(
  errors: NonNullable<GraphqlResponse['errors']>,
  from?: string,
): string {
  const source = from ? ` from ${from}` : '';
  const first = errors[0];
  if (!first) return `the response${source} has errors`;
  const where = first.path?.length ? ` (at ${first.path.join('.')})` : '';
  const more = errors.length > 1 ? ` and ${errors.length - 1} more error(s)` : '';
  return `\`errors\` returned with the response${source}: ${first.message}${where}${more}`;
}

function parseServerUrl(server: string): URL {
  try {
    return new URL(server);
  } catch {
    throw new GqlBackendError('[graphql] server is not a valid URL');
  }
}

/** A URL as shown in logs and errors: user info (a `user:password@`) is dropped. */
function withoutCredentials(url: URL): string {
  const copy = new URL(url);
  copy.username = '';
  copy.password = '';
  return copy.toString().replace(/\/$/, '');
}

function connectionProblem(error: unknown, where: string, timeoutMs?: number): string {
  if (isTimeout(error)) {
    return `no response from ${where}${timeoutMs ? ` within ${timeoutMs / 1000}s` : ''}`;
  }
  return `could not connect to GraphQL server at ${where} (${reasonOf(error)})`;
}

function isTimeout(error: unknown): boolean {
  const name = (error as { name?: string } | null)?.name;
  return name === 'TimeoutError' || name === 'AbortError';
}

/** `ECONNREFUSED`, `other side closed`, ...: the system's reason, not undici's wrapper. */
function reasonOf(error: unknown, timeoutMs?: number): string {
  if (isTimeout(error)) return `no more data within ${(timeoutMs ?? 0) / 1000}s`;
  const cause = (error as { cause?: { code?: string; message?: string } } | null)?.cause;
  return cause?.code ?? cause?.message ?? messageOf(error);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * A response whose body was read already (to say what came back when it is
 * not an answer): `text()` returns that text. graphql-request reads only
 * `text()`; a `new Response(text)` would encode the text again and stream it
 * back, which for the namespaces answer of a large app-interface (tens of
 * megabytes) is a copy, a concatenation and a decode more.
 */
function readResponse(text: string, init: ResponseInit): Response {
  return Object.assign(new Response(null, init), {
    text: async () => text,
    json: async () => JSON.parse(text) as unknown,
  });
}
