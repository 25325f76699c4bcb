import type { Logger } from '@qontract/core';
import { ClientError, GraphQLClient } from 'graphql-request';
import { GqlBackendError, GqlQueryError } from './errors.ts';
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
  readonly fetch?: typeof fetch;
  readonly sleep?: (ms: number) => Promise<void>;
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
  const log = options.log;

  const getText = (path: string, what: string): Promise<{ status: number; body: string }> =>
    withRetries(
      retry,
      async () => {
        const url = new URL(path, serverUrl.origin);
        let response: Response;
        try {
          response = await baseFetch(url, {
            headers,
            signal: AbortSignal.timeout(options.metadataTimeoutMs ?? 60_000),
          });
        } catch (e) {
          throw new RetryableError(connectionProblem(e, withoutCredentials(url)), { cause: e });
        }
        const body = await response.text();
        if (response.status >= 500) {
          throw new RetryableError(`HTTP ${response.status} from ${withoutCredentials(url)}`);
        }
        return { status: response.status, body };
      },
      (e, n, waitMs) =>
        log.warn(
          `${what} failed (attempt ${n}/${retry.attempts}), retrying in ${waitMs / 1000}s: ${e.message}`,
        ),
      options.sleep,
    );

  let sha = options.sha;
  if (sha === undefined && options.pinToCurrentBundle) {
    const { status, body } = await getText('/sha256', 'reading the bundle sha').catch(
      (e: unknown) => {
        throw new GqlBackendError(
          `cannot read the current bundle sha from ${display}: ${messageOf(e)}`,
        );
      },
    );
    if (status !== 200) {
      throw new GqlBackendError(
        `cannot read the current bundle sha from ${display}: HTTP ${status}`,
      );
    }
    sha = body.trim();
    if (!/^[0-9a-f]{64}$/i.test(sha)) {
      throw new GqlBackendError(`${display}/sha256 did not return a bundle sha`);
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
    const { status, body } = await getText(
      `/git-commit-info/${bundleSha}`,
      'reading git commit info',
    );
    if (status !== 200) throw new Error(`HTTP ${status}`);
    const info = JSON.parse(body) as { commit?: unknown; timestamp?: unknown };
    if (typeof info.commit !== 'string') return null;
    return { commit: info.commit, timestamp: String(info.timestamp ?? '') };
  }

  // The path is replaced, not appended to: `/graphql` disappears, as upstream.
  const queryUrl = sha === undefined ? serverUrl : new URL(`/graphqlsha/${sha}`, serverUrl.origin);
  const endpoint = withoutCredentials(queryUrl);
  const queryTimeoutMs = options.queryTimeoutMs ?? 30_000;
  const client = new GraphQLClient(queryUrl.toString(), {
    headers,
    errorPolicy: 'all',
    fetch: (input: string | URL | Request, init?: RequestInit) =>
      baseFetch(input, {
        ...init,
        signal: init?.signal
          ? AbortSignal.any([init.signal, AbortSignal.timeout(queryTimeoutMs)])
          : AbortSignal.timeout(queryTimeoutMs),
      }),
  });

  async function sendOnce(
    query: string,
    variables: Record<string, unknown> | undefined,
  ): Promise<GraphqlResponse> {
    let response: Awaited<ReturnType<typeof client.rawRequest>>;
    try {
      response = await client.rawRequest(query, variables);
    } catch (e) {
      if (e instanceof ClientError) {
        const status = e.response.status;
        const first = e.response.errors?.[0]?.message;
        const message = `HTTP ${status} from ${endpoint}${first ? `: ${first}` : ''}`;
        // A 4xx is a bad query (parse/validation) or a bad token: retrying cannot help.
        if (status >= 500 || status === 408 || status === 429) throw new RetryableError(message);
        throw new Error(message);
      }
      throw new RetryableError(connectionProblem(e, endpoint, queryTimeoutMs), { cause: e });
    }
    const result: GraphqlResponse = {
      data: response.data as Record<string, unknown> | null | undefined,
      errors: response.errors,
      extensions: response.extensions as GraphqlResponse['extensions'],
    };
    // The original retries a response with `errors` or without `data` like a lost connection.
    if (result.errors?.length) throw new RetryableError(describeGraphqlErrors(result.errors));
    if (result.data === undefined || result.data === null) {
      throw new RetryableError('`data` field missing from the response');
    }
    return result;
  }

  return {
    endpoint,
    sha,
    gitCommit,
    async execute(query, variables, operationName) {
      try {
        return await withRetries(
          retry,
          () => sendOnce(query, variables),
          (e, n, waitMs) =>
            log.warn(
              `GraphQL query ${operationName} failed (attempt ${n}/${retry.attempts}), retrying in ${waitMs / 1000}s: ${e.message}`,
            ),
          options.sleep,
        );
      } catch (e) {
        throw new GqlQueryError(operationName, messageOf(e));
      }
    },
    async close() {},
  };
}

export function describeGraphqlErrors(errors: NonNullable<GraphqlResponse['errors']>): string {
  const first = errors[0];
  if (!first) return 'the response has errors';
  const where = first.path?.length ? ` (at ${first.path.join('.')})` : '';
  const more = errors.length > 1 ? ` and ${errors.length - 1} more error(s)` : '';
  return `\`errors\` returned with the response: ${first.message}${where}${more}`;
}

function parseServerUrl(server: string): URL {
  try {
    return new URL(server);
  } catch {
    throw new GqlBackendError('[graphql] server is not a valid URL');
  }
}

/** A URL as shown in logs and errors: user info (a `user:password@`) is dropped. */
export function withoutCredentials(url: URL): string {
  const copy = new URL(url);
  copy.username = '';
  copy.password = '';
  return copy.toString().replace(/\/$/, '');
}

function connectionProblem(error: unknown, where: string, timeoutMs?: number): string {
  const e = error as { name?: string; cause?: { code?: string; message?: string } };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') {
    return `no response from ${where}${timeoutMs ? ` within ${timeoutMs / 1000}s` : ''}`;
  }
  const reason = e?.cause?.code ?? e?.cause?.message ?? messageOf(error);
  return `could not connect to GraphQL server at ${where} (${reason})`;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
