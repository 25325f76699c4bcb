import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import {
  type Config,
  ForbiddenSchemaError,
  type GlobalOptions,
  IntegrationNotFoundError,
  type Logger,
} from '@qontract/core';
import { type DocumentNode, getOperationAST, print } from 'graphql';
import { parseBackendSpec } from './backend.ts';
import { createEmbeddedTransport, type EmbeddedEngineLoader } from './embedded-transport.ts';
import { GqlQueryError } from './errors.ts';
import { IntegrationsSchemasDocument } from './queries/integrations-schemas.generated.ts';
import { createRemoteTransport, describeGraphqlErrors } from './remote-transport.ts';
import { assertResultShape, ResultShapeError, resultShapeOf } from './result-shape.ts';
import type { RetryPolicy } from './retry.ts';
import type { GitCommitInfo, GqlClient, GqlTransport, QueryOptions } from './types.ts';

export interface GqlClientOptions {
  /** Pin to this bundle instead of the current one (`--early-exit-compare-sha` runs). */
  readonly sha?: string | undefined;
  /** Every schema any response reports is also added here (`--dump-schemas` across clients). */
  readonly schemaSink?: Set<string>;
  /** Use this backend instead of the one `[graphql] server` names (tests). */
  readonly transport?: GqlTransport;
  /** Remote backend tuning: the deadline (`QONTRACT_GQL_DEADLINE_SECS`); retries, time-outs, fetch (tests). */
  readonly remote?: {
    readonly retry?: RetryPolicy;
    readonly queryTimeoutMs?: number;
    readonly metadataTimeoutMs?: number;
    readonly deadlineMs?: number;
    readonly fetch?: typeof fetch;
    readonly sleep?: (ms: number) => Promise<void>;
  };
  /** Embedded backend loader (tests). */
  readonly loadEmbeddedEngine?: EmbeddedEngineLoader;
  /** The run's stop signal: a remote query in flight is aborted, not retried (SIGTERM). */
  readonly signal?: AbortSignal | undefined;
}

/**
 * Creates the client of one run: opens the backend `[graphql] server` names
 * (pinned to one bundle), logs the endpoint when `--gql-url-print` is on, and,
 * with `--validate-schemas` and an integration name, loads the integration's
 * schema allow-list from `integrations_v1` (exit 4 when it has none).
 */
export async function createGqlClient(
  config: Config,
  globals: Pick<GlobalOptions, 'validateSchemas' | 'gqlShaUrl' | 'gqlUrlPrint'>,
  integration: string | undefined,
  log: Logger,
  options: GqlClientOptions = {},
): Promise<GqlClient> {
  const transport = options.transport ?? (await openTransport(config, globals, log, options));
  if (globals.gqlUrlPrint) log.info(`using gql endpoint ${transport.endpoint}`);
  const client = new AppInterfaceGqlClient(transport, log, options.schemaSink);
  if (integration !== undefined && globals.validateSchemas) {
    const { integrations } = await client.query(IntegrationsSchemasDocument, undefined, {
      skipValidation: true,
    });
    const entry = integrations?.find((i) => i.name === integration);
    if (!entry || entry.schemas.length === 0) throw new IntegrationNotFoundError(integration);
    client.allowOnly(entry.schemas);
  }
  return client;
}

async function openTransport(
  config: Config,
  globals: Pick<GlobalOptions, 'gqlShaUrl'>,
  log: Logger,
  options: GqlClientOptions,
): Promise<GqlTransport> {
  const spec = parseBackendSpec(config.graphql.server, config.sourcePath);
  if (spec.kind === 'embedded') {
    return createEmbeddedTransport(spec.source, {
      sha: options.sha,
      ...(options.loadEmbeddedEngine ? { load: options.loadEmbeddedEngine } : {}),
    });
  }
  return createRemoteTransport({
    server: spec.url,
    token: config.graphql.token,
    pinToCurrentBundle: globals.gqlShaUrl,
    sha: options.sha,
    log,
    signal: options.signal,
    ...options.remote,
  });
}

const printedDocuments = new WeakMap<DocumentNode, { text: string; operation: string }>();

/** The query text sent and the operation name errors show, computed once per document. */
function printed(document: DocumentNode): { text: string; operation: string } {
  let entry = printedDocuments.get(document);
  if (!entry) {
    entry = {
      text: print(document),
      operation: getOperationAST(document)?.name?.value ?? 'anonymous query',
    };
    printedDocuments.set(document, entry);
  }
  return entry;
}

/** Frozen answers already found to have a shape: a memoizing engine hands out the same object. */
const checkedAnswers = new WeakMap<object, Set<object>>();

function checkedBefore(shape: object, data: object): boolean {
  return checkedAnswers.get(data)?.has(shape) ?? false;
}

/** Remembers a frozen answer that has the shape (a mutable one may change after the check). */
function rememberChecked(shape: object, data: object): void {
  if (!Object.isFrozen(data)) return;
  const shapes = checkedAnswers.get(data) ?? new Set();
  shapes.add(shape);
  checkedAnswers.set(data, shapes);
}

class AppInterfaceGqlClient implements GqlClient {
  readonly #transport: GqlTransport;
  readonly #log: Logger;
  readonly #queried = new Set<string>();
  readonly #sink: Set<string> | undefined;
  #allowed: ReadonlySet<string> | undefined;

  constructor(transport: GqlTransport, log: Logger, sink: Set<string> | undefined) {
    this.#transport = transport;
    this.#log = log;
    this.#sink = sink;
  }

  get endpoint(): string {
    return this.#transport.endpoint;
  }

  get sha(): string | undefined {
    return this.#transport.sha;
  }

  get gitCommit(): GitCommitInfo | null {
    return this.#transport.gitCommit;
  }

  get queriedSchemas(): ReadonlySet<string> {
    return this.#queried;
  }

  allowOnly(schemas: readonly string[]): void {
    this.#allowed = new Set(schemas);
  }

  async query<TResult, TVariables extends Record<string, unknown> = Record<string, never>>(
    document: TypedDocumentNode<TResult, TVariables>,
    variables?: TVariables,
    options?: QueryOptions,
  ): Promise<TResult> {
    const { text, operation } = printed(document);
    const response = await this.#transport.execute(text, variables, operation);
    if (response.errors?.length) {
      throw new GqlQueryError(operation, describeGraphqlErrors(response.errors));
    }
    if (response.data === undefined || response.data === null) {
      throw new GqlQueryError(operation, '`data` field missing from the response');
    }
    const schemas = response.extensions?.schemas ?? [];
    for (const schema of schemas) {
      this.#queried.add(schema);
      this.#sink?.add(schema);
      this.#log.debug(`['schema', '${schema}']`);
    }
    const allowed = this.#allowed;
    if (allowed && !options?.skipValidation) {
      const forbidden = schemas.filter((s) => !allowed.has(s));
      if (forbidden.length) throw new ForbiddenSchemaError(forbidden);
    }
    const shape = resultShapeOf(document);
    if (shape && !checkedBefore(shape, response.data)) {
      try {
        assertResultShape(shape, response.data);
      } catch (e) {
        if (!(e instanceof ResultShapeError)) throw e;
        throw new GqlQueryError(operation, `unexpected data at ${e.message}`);
      }
      rememberChecked(shape, response.data);
    }
    return response.data as TResult;
  }

  close(): Promise<void> {
    return this.#transport.close();
  }
}
