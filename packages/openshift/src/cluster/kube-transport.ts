/**
 * The transport of the kube client: client-node's configuration and TLS, one
 * HTTP request at a time with time-outs and retries, request statistics, and
 * giving a cluster up for the run. Everything above it (discovery, list pages,
 * the verbs) goes through `KubeTransport.request`.
 */
import { createHash } from 'node:crypto';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import type { HttpMethod, KubeConfig, ResponseContext } from '@kubernetes/client-node';
import {
  ClusterTimeoutError,
  ClusterUnreachableError,
  KubeApiError,
  RequestAbortedError,
} from './kube-errors.ts';

type ClientNode = typeof import('@kubernetes/client-node');
let clientNode: Promise<ClientNode> | undefined;
/**
 * @kubernetes/client-node takes about a second to import (all its generated
 * models); it is loaded once a cluster integration's run has sent its query
 * (`warmUpClusterClients`) or on first use, so that `--help`, config errors,
 * a dry-run that exits early and integrations that never talk to clusters do
 * not pay for it.
 */
function loadClientNode(): Promise<ClientNode> {
  clientNode ??= import('@kubernetes/client-node');
  return clientNode;
}

/** Whether the import of client-node has begun (tests). */
export function clientNodeRequested(): boolean {
  return clientNode !== undefined;
}

/** How long the warm-up waits for the run's first query to go out before importing anyway. */
const WARM_UP_WAIT_MS = 1_000;

/**
 * The `warmUp` of every integration that talks to clusters: the import runs
 * while the run waits for app-interface's answer, and the first client finds
 * it loaded. Its failure surfaces at that client's first request.
 *
 * Evaluating client-node holds the thread for about half a second (sources;
 * less from the bundle). Begun when the run starts, it would delay sending the
 * GraphQL query by as much; so it begins once the first POST of the process
 * (the query) has been sent, which undici announces on its diagnostics
 * channel, and the server's work on the answer hides it. Without such a
 * request (an embedded app-interface) it begins after `WARM_UP_WAIT_MS`.
 */
export function warmUpClusterClients(): void {
  if (clientNode) return;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const begin = () => {
    unsubscribe(SENT_CHANNEL, onSent);
    clearTimeout(timer);
    loadClientNode().catch(() => {});
  };
  const onSent = (message: unknown) => {
    const method = (message as { request?: { method?: string } } | undefined)?.request?.method;
    if (method === 'POST') setImmediate(begin);
  };
  subscribe(SENT_CHANNEL, onSent);
  timer = setTimeout(begin, WARM_UP_WAIT_MS);
  // A process with nothing else to do does not stay for the import.
  timer.unref();
}

/** undici (fetch's, and client-node's) publishes here when a request's body is on the wire. */
const SENT_CHANNEL = 'undici:request:bodySent';

/** A short stand-in for a connection's token in keys (caches, kept clients): never the token. */
export function credentialId(connection: ClusterConnection): string {
  return createHash('sha256').update(connection.token).digest('hex').slice(0, 16);
}

/** Everything needed to talk to one cluster as one identity. */
export interface ClusterConnection {
  readonly name: string;
  readonly server: string;
  readonly token: string;
  /** Verify TLS unless the cluster data says otherwise. */
  readonly insecureSkipTLSVerify?: boolean;
  /** Base64 PEM of an extra CA to trust (kubeconfig `certificate-authority-data`). */
  readonly caData?: string;
}

/** A JSON object as the API server returns it; kept raw (no model conversion). */
export type KubeObject = Record<string, unknown> & {
  apiVersion?: string;
  kind?: string;
  metadata?: Record<string, unknown> & { name?: string; namespace?: string };
};

/** Request counting by verb and cluster, for tests, benchmarks and the summary. */
export class RequestStats {
  readonly byVerb = new Map<string, number>();
  readonly byCluster = new Map<string, Map<string, number>>();
  count(cluster: string, verb: string): void {
    this.byVerb.set(verb, (this.byVerb.get(verb) ?? 0) + 1);
    const m = this.byCluster.get(cluster) ?? new Map<string, number>();
    m.set(verb, (m.get(verb) ?? 0) + 1);
    this.byCluster.set(cluster, m);
  }
  get total(): number {
    let n = 0;
    for (const v of this.byVerb.values()) n += v;
    return n;
  }
  get mutating(): number {
    let n = 0;
    for (const [verb, v] of this.byVerb) if (MUTATING_VERBS.has(verb)) n += v;
    return n;
  }
}

const MUTATING_VERBS = new Set(['create', 'update', 'patch', 'apply', 'delete']);

/** How the requests of one client are sent: statistics, time-outs, retries, stop signal. */
export interface TransportOptions {
  readonly stats?: RequestStats;
  /**
   * Per-request time-out, default 60 s (kube-apiserver's own `--request-timeout`:
   * no answer takes longer). A request that times out is not retried; the
   * cluster is given up for the run (see `fail`).
   */
  readonly timeoutMs?: number;
  /** Attempts for transient failures (reset connections, 429, 5xx). */
  readonly attempts?: number;
  /** Base backoff between attempts; linear, as the original's retry helper. */
  readonly backoffMs?: number;
  /**
   * The run's stop signal: once aborted, requests in flight and retry waits
   * are aborted and no new request is sent (RequestAbortedError).
   */
  readonly signal?: AbortSignal | undefined;
}

export interface RequestOptions {
  readonly query?: Record<string, string | number | boolean | undefined>;
  readonly body?: unknown;
  readonly contentType?: string;
  readonly timeoutMs?: number;
  readonly attempts?: number;
  /** Return undefined on 404 instead of throwing. */
  readonly allowNotFound?: boolean;
  /** The Accept header (default `application/json`). */
  readonly accept?: string;
  /**
   * Return a successful answer's body as bytes, not parsed. The bytes may be
   * lent by `PAGE_BUFFERS`: the caller reads them at once, keeps no reference
   * and gives them back.
   */
  readonly raw?: boolean;
}

/**
 * Sends one cluster's requests. Authentication, TLS and the HTTP transport
 * come from @kubernetes/client-node (KubeConfig, its request context and the
 * undici dispatcher it configures; see `send`); answers stay raw JSON or bytes.
 */
export class KubeTransport {
  readonly connection: ClusterConnection;
  readonly stats: RequestStats;
  readonly #config: Promise<{
    kc: KubeConfig;
    lib: ClientNode;
    http: InstanceType<ClientNode['IsomorphicFetchHttpLibrary']>;
  }>;
  readonly #base: string;
  readonly #timeoutMs: number;
  #auth:
    | Promise<{
        headers: Record<string, string>;
        dispatcher: ReturnType<InstanceType<ClientNode['RequestContext']>['getDispatcher']>;
      }>
    | undefined;
  readonly #attempts: number;
  readonly #backoffMs: number;
  /** Aborted (with the reason) when the cluster is given up for the run. */
  readonly #givenUp = new AbortController();
  readonly #runSignal: AbortSignal | undefined;
  /** Aborted when no request of this client may wait any longer: the run stopped or the cluster was given up. */
  readonly #stopped: AbortSignal;
  /** The transport whose connections this one uses (`lender`); it owns and closes them. */
  readonly #lender: KubeTransport | undefined;

  /**
   * `lender`: a transport of an earlier run whose connections (keep-alive
   * sockets, TLS sessions) this one uses; giving up or closing this one
   * leaves them alone.
   */
  constructor(
    connection: ClusterConnection,
    options: TransportOptions = {},
    lender?: KubeTransport,
  ) {
    this.connection = connection;
    this.stats = options.stats ?? new RequestStats();
    this.#timeoutMs = options.timeoutMs ?? 60_000;
    this.#attempts = options.attempts ?? 5;
    this.#backoffMs = options.backoffMs ?? 1_000;
    this.#runSignal = options.signal;
    this.#stopped = options.signal
      ? AbortSignal.any([options.signal, this.#givenUp.signal])
      : this.#givenUp.signal;
    this.#base = connection.server.replace(/\/+$/, '');
    if (lender) {
      this.#config = lender.#config;
      this.#lender = lender.#lender ?? lender;
      return;
    }
    const kubeconfigOptions = {
      clusters: [
        {
          name: connection.name,
          server: this.#base,
          skipTLSVerify: Boolean(connection.insecureSkipTLSVerify),
          ...(connection.caData ? { caData: connection.caData } : {}),
        },
      ],
      users: [{ name: 'qontract-reconcile', token: connection.token }],
      contexts: [{ name: connection.name, cluster: connection.name, user: 'qontract-reconcile' }],
      currentContext: connection.name,
    };
    this.#config = loadClientNode().then((lib) => {
      const kc = new lib.KubeConfig();
      kc.loadFromOptions(kubeconfigOptions);
      return { kc, lib, http: new lib.IsomorphicFetchHttpLibrary() };
    });
    // Surfaces on first request, not as an unhandled rejection.
    this.#config.catch(() => {});
  }

  get name(): string {
    return this.connection.name;
  }

  /** Why the cluster was given up in this run, or undefined while it is usable. */
  get failure(): Error | undefined {
    const signal = this.#givenUp.signal;
    return signal.aborted ? (signal.reason as Error) : undefined;
  }

  /**
   * Gives the cluster up for the rest of the run: requests in flight are
   * aborted and every later one fails at once with `reason`. The first reason
   * stays.
   */
  fail(reason: Error): void {
    if (!this.#givenUp.signal.aborted) this.#givenUp.abort(reason);
  }

  /**
   * Gives the cluster up (a ClusterTimeoutError saying `what` timed out) unless
   * the returned function is called within `ms`.
   */
  deadline(ms: number, what: string): () => void {
    const timer = setTimeout(
      () => this.fail(new ClusterTimeoutError(this.name, `${what} timed out after ${ms / 1000}s`)),
      ms,
    );
    return () => clearTimeout(timer);
  }

  /** One HTTP request with retries for transient failures; returns the parsed JSON body. */
  async request(
    method: string,
    path: string,
    verb: string,
    options: RequestOptions = {},
  ): Promise<unknown> {
    const attempts = options.attempts ?? this.#attempts;
    for (let attempt = 1; ; attempt++) {
      this.#throwIfStopped();
      try {
        return await this.#once(method, path, verb, options);
      } catch (e) {
        const retryAfter = transientRetryDelay(e);
        if (retryAfter === undefined || attempt >= attempts) throw e;
        const wait = Math.max(retryAfter, this.#backoffMs * attempt);
        await sleep(wait, undefined, { signal: this.#stopped }).catch(() => {});
      }
    }
  }

  /**
   * Closes the client's keep-alive connections. A loop runs one integration
   * every few minutes in the same process: without this every run's
   * connections (and their TLS state) stay open until the server drops them.
   */
  async close(): Promise<void> {
    // A borrower's connections are its lender's.
    if (this.#lender) return;
    const auth = this.#auth;
    this.#auth = undefined;
    const dispatcher = (await auth?.catch(() => undefined))?.dispatcher as
      | { close?: () => Promise<void> }
      | undefined;
    await dispatcher?.close?.();
  }

  #throwIfStopped(): void {
    if (this.#runSignal?.aborted) throw new RequestAbortedError(this.name, this.#runSignal.reason);
    if (this.#givenUp.signal.aborted) throw this.#givenUp.signal.reason;
  }

  /**
   * client-node's `applySecurityAuthentication` builds a new undici Agent on
   * every call (2.0.1), which would open a new TCP connection and TLS session
   * per request. The first call's dispatcher and headers are kept and reused,
   * so requests share keep-alive connections.
   */
  async #authenticate(ctx: InstanceType<ClientNode['RequestContext']>): Promise<void> {
    const owner = this.#lender ?? this;
    owner.#auth ??= (async () => {
      const { kc, lib } = await owner.#config;
      const probe = new lib.RequestContext(owner.#base, 'GET' as HttpMethod);
      await kc.applySecurityAuthentication(probe);
      return { headers: { ...probe.getHeaders() }, dispatcher: probe.getDispatcher() };
    })();
    const { headers, dispatcher } = await owner.#auth;
    for (const [k, v] of Object.entries(headers)) ctx.setHeaderParam(k, v);
    if (dispatcher) ctx.setDispatcher(dispatcher);
  }

  async #once(
    method: string,
    path: string,
    verb: string,
    options: RequestOptions,
  ): Promise<unknown> {
    const url = new URL(this.#base + path);
    for (const [k, v] of Object.entries(options.query ?? {})) {
      if (v !== undefined && v !== '') url.searchParams.set(k, String(v));
    }
    const { lib, http } = await this.#config;
    const ctx = new lib.RequestContext(url.toString(), method as HttpMethod);
    await this.#authenticate(ctx);
    ctx.setHeaderParam('Accept', options.accept ?? 'application/json');
    ctx.setHeaderParam('User-Agent', 'qontract-reconcile-ts');
    if (options.body !== undefined) {
      ctx.setHeaderParam('Content-Type', options.contentType ?? 'application/json');
      ctx.setBody(typeof options.body === 'string' ? options.body : JSON.stringify(options.body));
    }
    const timeoutMs = options.timeoutMs ?? this.#timeoutMs;
    const timeout = AbortSignal.timeout(timeoutMs);
    ctx.setSignal(AbortSignal.any([timeout, this.#stopped]));
    this.#throwIfStopped();
    this.stats.count(this.connection.name, verb);
    let response: HttpAnswer;
    try {
      response = await send(ctx, http, options.raw ? PAGE_BUFFERS : undefined);
    } catch (e) {
      this.#throwIfStopped();
      if (timeout.aborted) {
        const error = new ClusterTimeoutError(
          this.name,
          `${method} ${path} timed out after ${timeoutMs / 1000}s`,
        );
        this.fail(error);
        throw error;
      }
      throw new ClusterUnreachableError(this.connection.name, e);
    }
    if (response.status === 404 && options.allowNotFound) return undefined;
    const ok = response.status >= 200 && response.status < 300;
    if (ok && options.raw) return response.body;
    // As undici's `text()`: UTF-8, a byte order mark dropped.
    const text = UTF8.decode(response.body);
    PAGE_BUFFERS.give(response.body);
    if (ok) return text ? JSON.parse(text) : {};
    throw apiError(this.connection.name, response, text);
  }
}

const UTF8 = new TextDecoder();
const gunzipAsync = promisify(gunzip);

/** What `#once` needs of an answer: its status, headers (lower-case names) and body bytes. */
interface HttpAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: Buffer;
}

/** The subset of undici's Dispatcher (client-node's Agent) that `send` uses. */
interface RequestDispatcher {
  request(options: {
    origin: string;
    path: string;
    method: string;
    headers: Record<string, string>;
    body?: string;
    signal?: AbortSignal;
  }): Promise<{
    statusCode: number;
    headers: Record<string, string | string[] | undefined>;
    body: AsyncIterable<Buffer>;
  }>;
}

/**
 * Sends `ctx` over the dispatcher client-node configured for the cluster (its
 * TLS settings, CA and proxy) with undici's `request` API. client-node's own
 * HTTP library is undici's `fetch`, whose WHATWG streams cost about twice the
 * CPU per list page of 500 objects (measured: ~1 ms per 440 KB page); a run
 * reads a hundred pages or more. Where client-node configured no dispatcher
 * (a server whose certificate the system's CAs sign), its library is used as is.
 *
 * Like `fetch`, it asks for gzip and decompresses (off the thread, on libuv's
 * pool): a real API server compresses answers over 128 KiB, the list pages.
 */
async function send(
  ctx: InstanceType<ClientNode['RequestContext']>,
  http: InstanceType<ClientNode['IsomorphicFetchHttpLibrary']>,
  buffers?: BodyBuffers,
): Promise<HttpAnswer> {
  const dispatcher = ctx.getDispatcher() as RequestDispatcher | undefined;
  if (!dispatcher) {
    const response = await http.send(ctx).toPromise();
    return {
      status: response.httpStatusCode,
      headers: response.headers,
      body: await bodyBytes(response.body),
    };
  }
  const url = new URL(ctx.getUrl());
  const body = ctx.getBody();
  const answer = await dispatcher.request({
    origin: url.origin,
    path: url.pathname + url.search,
    method: ctx.getHttpMethod(),
    headers: { ...ctx.getHeaders(), 'accept-encoding': 'gzip' },
    ...(typeof body === 'string' ? { body } : {}),
    signal: ctx.getSignal(),
  });
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of answer.body) {
    chunks.push(chunk);
    length += chunk.length;
  }
  const bytes =
    chunks.length === 1
      ? chunks[0]!
      : (buffers?.concat(chunks, length) ?? Buffer.concat(chunks, length));
  const encoding = String(answer.headers['content-encoding'] ?? 'identity').toLowerCase();
  if (encoding !== 'gzip')
    return { status: answer.statusCode, headers: answer.headers, body: bytes };
  try {
    return { status: answer.statusCode, headers: answer.headers, body: await gunzipAsync(bytes) };
  } finally {
    buffers?.give(bytes);
  }
}

/**
 * Buffers for the bodies of list pages, lent to one page at a time and used
 * again by the next. A page of 500 objects is about half a megabyte in many
 * chunks; a fresh buffer for each (100 pages per run at 50,000 objects) is
 * memory the allocator maps and the kernel faults in every time, and external
 * memory that hurries the collector. A buffer is lent to one reader, which
 * keeps no reference to it (`readListPage` copies what it keeps) and gives it
 * back; bodies over `MAX_POOLED_BYTES` get a buffer of their own.
 */
class BodyBuffers {
  static readonly MAX_POOLED_BYTES = 8 * 1024 * 1024;
  static readonly MAX_FREE = 4;
  readonly #free: Buffer[] = [];
  /** The pool's own buffers, lent or free: the views lent out point into them. */
  readonly #lent = new WeakMap<Buffer, Buffer>();

  /** `chunks` (`length` bytes in all) copied into one buffer, lent. */
  concat(chunks: readonly Buffer[], length: number): Buffer {
    if (length > BodyBuffers.MAX_POOLED_BYTES) return Buffer.concat(chunks, length);
    let i = this.#free.findIndex((b) => b.length >= length);
    const whole =
      i >= 0
        ? this.#free.splice(i, 1)[0]!
        : Buffer.allocUnsafeSlow(Math.max(512 * 1024, 2 ** Math.ceil(Math.log2(length))));
    i = 0;
    for (const chunk of chunks) i += chunk.copy(whole, i);
    const view = whole.subarray(0, length);
    this.#lent.set(view, whole);
    return view;
  }

  /** Takes back a view `concat` lent; anything else is left to the collector. */
  give(view: Buffer): void {
    const whole = this.#lent.get(view);
    if (!whole) return;
    this.#lent.delete(view);
    if (this.#free.length < BodyBuffers.MAX_FREE) this.#free.push(whole);
  }
}

/** The pool of the list pages read raw (`raw: true`): their reader gives them back here. */
export const PAGE_BUFFERS = new BodyBuffers();

/** A response's body as bytes (undici's Response has no `buffer()`, which client-node's `binary()` calls). */
async function bodyBytes(body: ResponseContext['body']): Promise<Buffer> {
  const stream = body.stream();
  if (!stream) return Buffer.from(await body.text());
  const chunks: Uint8Array[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks.length === 1
    ? Buffer.from(chunks[0]!.buffer, chunks[0]!.byteOffset, chunks[0]!.byteLength)
    : Buffer.concat(chunks);
}

function apiError(cluster: string, response: HttpAnswer, text: string): KubeApiError {
  let status: { message?: string; reason?: string; details?: unknown } = {};
  try {
    status = JSON.parse(text) as typeof status;
  } catch {
    // not a Status body (a proxy error page, say)
  }
  const error = new KubeApiError(
    cluster,
    response.status,
    status.reason ?? String(response.status),
    status.message ?? (text.slice(0, 200) || `HTTP ${response.status}`),
    status.details,
  );
  const retryAfter = response.headers['retry-after'];
  if (retryAfter) Object.assign(error, { retryAfterMs: Number(String(retryAfter)) * 1000 });
  return error;
}

/**
 * The retry policy of every request (lists, gets, writes, the reachability
 * check): milliseconds to wait before retrying `e`, or undefined when it is not
 * transient. A refused connection is not retried (as client-go): nothing
 * listens there, and waiting would only delay the run for a cluster that is down.
 */
function transientRetryDelay(e: unknown): number | undefined {
  if (e instanceof ClusterUnreachableError) {
    return networkErrorCode(e.cause) === 'ECONNREFUSED' ? undefined : 0;
  }
  if (e instanceof KubeApiError && (e.status === 429 || e.status >= 500)) {
    return (e as KubeApiError & { retryAfterMs?: number }).retryAfterMs ?? 0;
  }
  return undefined;
}

/** The system error code (`ECONNREFUSED`, `ECONNRESET`, ...) somewhere in the cause chain. */
function networkErrorCode(e: unknown): string | undefined {
  for (let c = e, depth = 0; c && depth < 5; depth++) {
    const code = (c as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    c = (c as { cause?: unknown }).cause;
  }
  return undefined;
}
