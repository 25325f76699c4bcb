import type { TypedDocumentNode } from '@graphql-typed-document-node/core';

export type { TypedDocumentNode } from '@graphql-typed-document-node/core';

export interface QueryOptions {
  /** Skip the schema allow-list check for this query (resource look-ups, the allow-list query). */
  readonly skipValidation?: boolean;
}

/** The app-interface GraphQL client of one run: one pinned bundle, one allow-list. */
export interface GqlClient {
  query<TResult, TVariables extends Record<string, unknown> = Record<string, never>>(
    document: TypedDocumentNode<TResult, TVariables>,
    variables?: TVariables,
    options?: QueryOptions,
  ): Promise<TResult>;
  /** The URL or `file://` source in use (without credentials). */
  readonly endpoint: string;
  /** The pinned bundle sha, when the backend has one (not with `--no-gql-sha-url`). */
  readonly sha: string | undefined;
  /** The commit the bundle was built from, when known (reconcile-time metrics). */
  readonly gitCommit: GitCommitInfo | null;
  /** Every schema any response of this client reported (`--dump-schemas`). */
  readonly queriedSchemas: ReadonlySet<string>;
  close(): Promise<void>;
}

export interface GitCommitInfo {
  readonly commit: string;
  /** Unix seconds, as a string, as qontract-server returns it. */
  readonly timestamp: string;
}

/** One GraphQL response as qontract-server (or the embedded engine) answers it. */
export interface GraphqlResponse {
  readonly data?: Record<string, unknown> | null | undefined;
  readonly errors?:
    | ReadonlyArray<{ readonly message: string; readonly path?: ReadonlyArray<string | number> }>
    | undefined;
  readonly extensions?: { readonly schemas?: readonly string[] } | undefined;
}

/** What a backend does: send one query text to the pinned bundle. */
export interface GqlTransport {
  readonly endpoint: string;
  readonly sha: string | undefined;
  readonly gitCommit: GitCommitInfo | null;
  /** Resolves with the response; rejects with GqlRequestError when it could not get one. */
  execute(
    query: string,
    variables: Record<string, unknown> | undefined,
    operationName: string,
  ): Promise<GraphqlResponse>;
  close(): Promise<void>;
}
