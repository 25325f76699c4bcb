/**
 * The kube client: one cluster's REST verbs over its transport
 * (kube-transport.ts: requests, retries, time-outs, statistics), discovery
 * (kube-discovery.ts) and list pages (kube-list.ts).
 */
import type { Readable } from 'node:stream';
import { type ApiResource, type ApiResourceCatalog, resourcePath } from './api-resources.ts';
import { discoverApiResources } from './kube-discovery.ts';
import { type GetOptions, type ListOptions, ListReader } from './kube-list.ts';
import {
  type ClusterConnection,
  type KubeObject,
  KubeTransport,
  type RequestOptions,
  type RequestStats,
  type TransportOptions,
} from './kube-transport.ts';

export {
  ClusterTimeoutError,
  ClusterUnreachableError,
  KubeApiError,
  RequestAbortedError,
} from './kube-errors.ts';
export {
  type ClusterConnection,
  credentialId,
  type KubeObject,
  RequestStats,
} from './kube-transport.ts';

export type PatchType = 'merge' | 'json' | 'strategic';
const PATCH_CONTENT_TYPE: Record<PatchType, string> = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  strategic: 'application/strategic-merge-patch+json',
};

export interface KubeClientOptions extends TransportOptions {
  /** Page size of list requests. */
  readonly pageSize?: number;
}

/**
 * A raw REST client for one cluster, over Node's own HTTP client (see
 * kube-transport.ts): responses stay raw JSON, because the typed models of a
 * generated client drop unknown fields and turn timestamps into Dates, which
 * would break the original's three-way comparison.
 */
export class KubeClient {
  readonly connection: ClusterConnection;
  readonly stats: RequestStats;
  readonly #transport: KubeTransport;
  readonly #lists: ListReader;

  /** `lender`: see `borrow`. */
  constructor(connection: ClusterConnection, options: KubeClientOptions = {}, lender?: KubeClient) {
    this.#transport = new KubeTransport(
      connection,
      options,
      lender ? lender.#transport : undefined,
    );
    this.#lists = new ListReader(this.#transport, options.pageSize ?? 500);
    this.connection = connection;
    this.stats = this.#transport.stats;
  }

  get name(): string {
    return this.connection.name;
  }

  /**
   * A client for another run over this one's connections (keep-alive sockets,
   * TLS sessions): an operator keeps one client per cluster between its
   * periods and each period borrows it with its own stop signal, time-outs and
   * statistics. Giving up or closing the borrower leaves the lender's
   * connections alone.
   */
  borrow(options: KubeClientOptions = {}): KubeClient {
    return new KubeClient(this.connection, options, this);
  }

  /** Why the cluster was given up in this run, or undefined while it is usable. */
  get failure(): Error | undefined {
    return this.#transport.failure;
  }

  /**
   * Gives the cluster up for the rest of the run: requests in flight are
   * aborted and every later one fails at once with `reason`. The first reason
   * stays.
   */
  fail(reason: Error): void {
    this.#transport.fail(reason);
  }

  /**
   * Gives the cluster up (a ClusterTimeoutError saying `what` timed out) unless
   * the returned function is called within `ms`.
   */
  deadline(ms: number, what: string): () => void {
    return this.#transport.deadline(ms, what);
  }

  /**
   * `GET /version`, the reachability check (`oc version --request-timeout=5`:
   * `timeoutMs` per attempt). Retried like every other request, so one 503 or
   * 429 does not make a cluster unreachable for the whole run.
   */
  async version(timeoutMs = 5_000): Promise<Record<string, unknown>> {
    const answer = await this.#transport.request('GET', '/version', 'get', { timeoutMs });
    return answer as Record<string, unknown>;
  }

  /** The cluster's API resources (kube-discovery.ts). */
  discover(): Promise<ApiResourceCatalog> {
    return discoverApiResources(this.#transport);
  }

  /** All objects of `r` (in `namespace`, or cluster-wide), page by page: see `ListReader.list`. */
  list(r: ApiResource, namespace?: string, options: ListOptions = {}): Promise<KubeObject[]> {
    return this.#lists.list(r, namespace, options);
  }

  /** One object of `r`, or undefined when there is none: see `ListReader.get`. */
  get(
    r: ApiResource,
    namespace: string | undefined,
    name: string,
    options: GetOptions = {},
  ): Promise<KubeObject | undefined> {
    return this.#lists.get(r, namespace, name, options);
  }

  /**
   * Server-side apply: `PATCH` with `application/apply-patch+yaml`. A string
   * payload is sent as is (JSON is YAML), so the bytes are exactly the
   * serialisation the caller chose.
   */
  async apply(
    r: ApiResource,
    namespace: string | undefined,
    name: string,
    payload: KubeObject | string,
    options: { fieldManager: string; force?: boolean; dryRun?: boolean },
  ): Promise<KubeObject> {
    return (await this.#transport.request('PATCH', resourcePath(r, namespace, name), 'apply', {
      body: payload,
      contentType: 'application/apply-patch+yaml',
      query: {
        fieldManager: options.fieldManager,
        force: options.force ?? true,
        dryRun: options.dryRun ? 'All' : undefined,
      },
    })) as KubeObject;
  }

  async create(
    r: ApiResource,
    namespace: string | undefined,
    payload: KubeObject | string,
    options: { fieldManager?: string; dryRun?: boolean } = {},
  ): Promise<KubeObject> {
    return (await this.#transport.request('POST', resourcePath(r, namespace), 'create', {
      body: payload,
      query: { fieldManager: options.fieldManager, dryRun: options.dryRun ? 'All' : undefined },
      // A create is not idempotent: no blind retries.
      attempts: 1,
    })) as KubeObject;
  }

  async replace(
    r: ApiResource,
    namespace: string | undefined,
    name: string,
    payload: KubeObject | string,
    options: { fieldManager?: string; dryRun?: boolean } = {},
  ): Promise<KubeObject> {
    return (await this.#transport.request('PUT', resourcePath(r, namespace, name), 'update', {
      body: payload,
      query: { fieldManager: options.fieldManager, dryRun: options.dryRun ? 'All' : undefined },
    })) as KubeObject;
  }

  async patch(
    r: ApiResource,
    namespace: string | undefined,
    name: string,
    patch: unknown,
    type: PatchType,
    options: { fieldManager?: string; dryRun?: boolean } = {},
  ): Promise<KubeObject> {
    return (await this.#transport.request('PATCH', resourcePath(r, namespace, name), 'patch', {
      body: patch,
      contentType: PATCH_CONTENT_TYPE[type],
      query: { fieldManager: options.fieldManager, dryRun: options.dryRun ? 'All' : undefined },
    })) as KubeObject;
  }

  /** Deletes an object; false when it did not exist. */
  async delete(
    r: ApiResource,
    namespace: string | undefined,
    name: string,
    options: { propagationPolicy?: 'Foreground' | 'Background' | 'Orphan'; dryRun?: boolean } = {},
  ): Promise<boolean> {
    const result = await this.#transport.request(
      'DELETE',
      resourcePath(r, namespace, name),
      'delete',
      {
        allowNotFound: true,
        query: {
          propagationPolicy: options.propagationPolicy,
          dryRun: options.dryRun ? 'All' : undefined,
        },
      },
    );
    return result !== undefined;
  }

  /** One HTTP request with retries for transient failures; returns the parsed JSON body. */
  request(
    method: string,
    path: string,
    verb: string,
    options: RequestOptions = {},
  ): Promise<unknown> {
    return this.#transport.request(method, path, verb, options);
  }

  /**
   * A container's log (`pods/log`) as it is written, with `follow` until the
   * container ends: the answer's body, to be read to its end (see
   * `KubeTransport.stream`).
   */
  podLog(
    namespace: string,
    pod: string,
    container: string,
    options: { follow?: boolean } = {},
  ): Promise<Readable> {
    const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(pod)}/log`;
    return this.#transport.stream(path, 'get', {
      container,
      follow: options.follow ? 'true' : undefined,
    });
  }

  /**
   * Closes the client's keep-alive connections. A loop runs one integration
   * every few minutes in the same process: without this every run's
   * connections (and their TLS state) stay open until the server drops them.
   */
  close(): Promise<void> {
    return this.#transport.close();
  }
}
