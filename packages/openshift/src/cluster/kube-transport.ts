/**
 * The transport of the kube client: Node's own HTTP client with the cluster's
 * token and TLS settings, one HTTP request at a time with time-outs and
 * retries, request statistics, and giving a cluster up for the run. Everything above it (discovery, list pages,
 * the verbs) goes through `KubeTransport.request`.
 */
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import {
  ClusterTimeoutError,
  ClusterUnreachableError,
  KubeApiError,
  RequestAbortedError,
} from './kube-errors.ts';

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
 * Sends one cluster's requests over Node's own HTTP client (`node:https` with
 * a keep-alive Agent per cluster; see `send`): a bearer token, the cluster's
 * CA or no verification when the cluster data says so, which is all a cluster
 * connection configures. Answers stay raw JSON or bytes.
 *
 * Not @kubernetes/client-node, which carried the transport until issue 41:
 * importing it (its generated models, undici and its WebAssembly parser) was
 * about 40 MiB of a small run's peak RSS of about 140 MiB, for a token header
 * and an Agent's TLS options (docs/benchmarks.md, Start-up). Watch mode still
 * uses its `Watch` (watch-cache.ts), imported only there.
 */
export class KubeTransport {
  readonly connection: ClusterConnection;
  readonly stats: RequestStats;
  readonly #base: string;
  readonly #timeoutMs: number;
  /** The keep-alive connections to the cluster, made at the first request (`#agentOf`). */
  #agent: HttpAgent | undefined;
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
    this.#lender = lender ? (lender.#lender ?? lender) : undefined;
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
    return this.#retrying(options.attempts, () => this.#once(method, path, verb, options));
  }

  /**
   * A GET whose answer's body is read as it comes (a followed pod log): the
   * body once the headers say 2xx, else the usual KubeApiError. Retried as
   * `request` until the headers arrive; the time-out covers the headers only
   * (a followed container writes for as long as it runs). The run's stop
   * signal and giving the cluster up destroy the body, with an error.
   */
  stream(
    path: string,
    verb: string,
    query: RequestOptions['query'] = {},
  ): Promise<IncomingMessage> {
    return this.#retrying(undefined, () => this.#openStream(path, verb, query));
  }

  async #retrying<T>(attemptsOption: number | undefined, once: () => Promise<T>): Promise<T> {
    const attempts = attemptsOption ?? this.#attempts;
    for (let attempt = 1; ; attempt++) {
      this.#throwIfStopped();
      try {
        return await once();
      } catch (e) {
        const retryAfter = transientRetryDelay(e);
        if (retryAfter === undefined || attempt >= attempts) throw e;
        const wait = Math.max(retryAfter, this.#backoffMs * attempt);
        await sleep(wait, undefined, { signal: this.#stopped }).catch(() => {});
      }
    }
  }

  #url(path: string, query: RequestOptions['query']): URL {
    const url = new URL(this.#base + path);
    for (const [k, v] of Object.entries(query ?? {})) {
      if (v !== undefined && v !== '') url.searchParams.set(k, String(v));
    }
    return url;
  }

  async #openStream(
    path: string,
    verb: string,
    query: RequestOptions['query'],
  ): Promise<IncomingMessage> {
    const url = this.#url(path, query);
    const headers = {
      Authorization: `Bearer ${this.connection.token}`,
      'User-Agent': 'qontract-reconcile-ts',
    };
    this.#throwIfStopped();
    this.stats.count(this.connection.name, verb);
    const req = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, {
      method: 'GET',
      headers,
      agent: this.#agentOf(),
      signal: this.#stopped,
    });
    req.on('error', ignoreError);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      req.destroy();
    }, this.#timeoutMs);
    req.end();
    let answer: IncomingMessage;
    try {
      [answer] = (await once(req, 'response')) as [IncomingMessage];
    } catch (e) {
      this.#throwIfStopped();
      if (timedOut) {
        const error = new ClusterTimeoutError(
          this.name,
          `GET ${path} timed out after ${this.#timeoutMs / 1000}s`,
        );
        this.fail(error);
        throw error;
      }
      throw new ClusterUnreachableError(this.connection.name, e);
    } finally {
      clearTimeout(timer);
    }
    const status = answer.statusCode ?? 0;
    if (status >= 200 && status < 300) return answer;
    const { chunks, length } = await readBody(answer);
    const body = Buffer.concat(chunks, length);
    throw apiError(
      this.connection.name,
      { status, headers: answer.headers, body },
      UTF8.decode(body),
    );
  }

  /**
   * Closes the client's keep-alive connections. A loop runs one integration
   * every few minutes in the same process: without this every run's
   * connections (and their TLS state) stay open until the server drops them.
   */
  async close(): Promise<void> {
    // A borrower's connections are its lender's.
    if (this.#lender) return;
    const agent = this.#agent;
    this.#agent = undefined;
    agent?.destroy();
  }

  #throwIfStopped(): void {
    if (this.#runSignal?.aborted) throw new RequestAbortedError(this.name, this.#runSignal.reason);
    if (this.#givenUp.signal.aborted) throw this.#givenUp.signal.reason;
  }

  /**
   * The connections of the lender (or this transport's own): one keep-alive
   * Agent per cluster, so that requests share TCP connections and TLS
   * sessions. Its TLS settings are the cluster's: its CA alone when it has
   * one (as kubeconfig's `certificate-authority-data`), none verified when it
   * says insecure, else the process's trusted CAs.
   */
  #agentOf(): HttpAgent {
    const owner = this.#lender ?? this;
    if (owner.#agent) return owner.#agent;
    const options = { keepAlive: true, timeout: IDLE_SOCKET_MS };
    const c = owner.connection;
    owner.#agent = owner.#base.startsWith('https:')
      ? new HttpsAgent({
          ...options,
          ...(c.caData ? { ca: Buffer.from(c.caData, 'base64') } : {}),
          ...(c.insecureSkipTLSVerify ? { rejectUnauthorized: false } : {}),
        })
      : new HttpAgent(options);
    return owner.#agent;
  }

  async #once(
    method: string,
    path: string,
    verb: string,
    options: RequestOptions,
  ): Promise<unknown> {
    const url = this.#url(path, options.query);
    const headers: Record<string, string> = {
      Authorization: `Bearer ${this.connection.token}`,
      Accept: options.accept ?? 'application/json',
      'User-Agent': 'qontract-reconcile-ts',
      // As `fetch` does: a real API server compresses answers from 128 KiB on, the list pages.
      'Accept-Encoding': 'gzip',
    };
    let body: string | undefined;
    if (options.body !== undefined) {
      body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
      headers['Content-Type'] = options.contentType ?? 'application/json';
      headers['Content-Length'] = String(Buffer.byteLength(body));
    }
    const timeoutMs = options.timeoutMs ?? this.#timeoutMs;
    const timeout = AbortSignal.timeout(timeoutMs);
    this.#throwIfStopped();
    this.stats.count(this.connection.name, verb);
    let response: HttpAnswer;
    try {
      response = await send(
        this.#agentOf(),
        url,
        { method, headers, body, signal: AbortSignal.any([timeout, this.#stopped]) },
        options.raw ? PAGE_BUFFERS : undefined,
      );
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

/**
 * How long an idle connection is kept for the next request (undici's default,
 * which the client had before): a loop's next run, minutes later, opens new
 * ones rather than finding connections the server has dropped.
 */
const IDLE_SOCKET_MS = 4_000;

/**
 * Sends one request over `agent` and reads the whole answer, decompressed
 * (gzip, off the thread on libuv's pool). Node's own client rather than
 * `fetch`, whose WHATWG streams cost about twice the CPU per list page of 500
 * objects (measured: ~1 ms per 440 KB page); a run reads a hundred pages or
 * more. A page's chunks are copied into a buffer lent by `buffers`.
 */
async function send(
  agent: HttpAgent,
  url: URL,
  request: {
    method: string;
    headers: Record<string, string>;
    body: string | undefined;
    signal: AbortSignal;
  },
  buffers?: BodyBuffers,
): Promise<HttpAnswer> {
  const { body, ...options } = request;
  const req = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, { ...options, agent });
  // `once` takes the first error; one more (a socket's, once aborted) must not go unhandled.
  req.on('error', ignoreError);
  req.end(body);
  const [answer] = (await once(req, 'response')) as [IncomingMessage];
  const { chunks, length } = await readBody(answer);
  const bytes =
    chunks.length === 1
      ? chunks[0]!
      : (buffers?.concat(chunks, length) ?? Buffer.concat(chunks, length));
  const status = answer.statusCode ?? 0;
  const encoding = String(answer.headers['content-encoding'] ?? 'identity').toLowerCase();
  if (encoding !== 'gzip') return { status, headers: answer.headers, body: bytes };
  try {
    return { status, headers: answer.headers, body: await gunzipAsync(bytes) };
  } finally {
    buffers?.give(bytes);
  }
}

/**
 * The `error` listener left on a request and its answer: a module-level
 * function, which keeps nothing of the request alive (see `readBody`).
 */
function ignoreError(): void {}

/**
 * The chunks of an answer's body, read with 'data' events (the stream
 * flowing) rather than `for await`, whose iterator reads one chunk at a time
 * and pauses the socket in between: reading 20 lists of 5,000 objects took
 * about a quarter more wall time that way than with undici before; flowing,
 * the same (a micro-benchmark on the loaded machine).
 *
 * Its listeners are removed once the body has ended (an error after that is
 * ignored, as before). Node's https.Agent (24.x) keeps each connection's
 * first request and answer for as long as the connection lives (the socket's
 * TLS-session listener shares a closure with the request's callback): a
 * 'data' listener left on that answer kept its chunks, half a megabyte per
 * list page, which a loop over 20 clusters held as ~37 MiB of ArrayBuffers
 * between runs (a heap snapshot; issue 43).
 */
function readBody(answer: IncomingMessage): Promise<{ chunks: Buffer[]; length: number }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let length = 0;
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      length += chunk.length;
    };
    const onEnd = (error?: Error) => {
      answer.off('data', onData);
      answer.off('end', onEnd);
      answer.off('error', onEnd);
      if (error) reject(error);
      else resolve({ chunks, length });
    };
    answer.on('data', onData);
    answer.on('end', onEnd);
    answer.on('error', onEnd);
    answer.on('error', ignoreError);
  });
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
