import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Socket } from 'node:net';
import {
  type InFlightCounts,
  InFlightGauge,
  servingCertificate,
} from '@qontract/fake-kube-apiserver';

/** One request as a fake saw it, with the status it answered (0: dropped or hung). */
interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly query: string;
  readonly status: number;
}

/** A request handed to a fake's handler: the JSON (or form) body already parsed. */
export interface FakeRequest {
  readonly method: string;
  readonly url: URL;
  readonly headers: IncomingHttpHeaders;
  /** The parsed JSON body, the fields of a form body, or `undefined` when empty. */
  readonly body: unknown;
}

/** What a handler answers; `body` is sent as JSON unless it is a string or bytes. */
export interface FakeResponse {
  readonly status: number;
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * One fault rule of an HTTP fake. The first rule that matches a request and
 * fails decides its answer; latency of every matching rule adds up (the same
 * model as the fake API server's `FaultRule`, for REST paths instead of verbs).
 */
export interface HttpFaultRule {
  /** Only requests with this method (`GET`, `PUT`, ...). */
  readonly method?: string;
  /** Only requests whose path matches (a string matches as a substring). */
  readonly path?: string | RegExp;
  /** Added before the request is handled. */
  readonly latencyMs?: number;
  /** Share of matching requests that fail (0..1); 1 when `status`, `drop` or `hang` is set. */
  readonly errorRate?: number;
  /** Status of the injected failure. */
  readonly status?: number;
  /** Body of the injected failure (default `{ message: 'injected fault' }`). */
  readonly body?: unknown;
  /** Headers of the injected failure (`Retry-After`, rate-limit headers, ...). */
  readonly headers?: Readonly<Record<string, string>>;
  /** The connection is reset instead of answered. */
  readonly drop?: boolean;
  /** The request is never answered (until the client gives up or the fake closes). */
  readonly hang?: boolean;
  /** Apply to this many matching requests, then lapse. Unlimited when absent. */
  readonly times?: number;
}

type FaultDecision =
  | { readonly kind: 'pass'; readonly latencyMs: number }
  | { readonly kind: 'drop' | 'hang'; readonly latencyMs: number }
  | { readonly kind: 'fail'; readonly latencyMs: number; readonly response: FakeResponse };

/** The fault rules of one fake; `random` is injectable so error rates can be exact. */
export class HttpFaults {
  private rules: Array<{ rule: HttpFaultRule; remaining: number }> = [];
  private readonly random: () => number;

  constructor(random: () => number = Math.random) {
    this.random = random;
  }

  add(rule: HttpFaultRule): void {
    this.rules.push({ rule, remaining: rule.times ?? Number.POSITIVE_INFINITY });
  }

  clear(): void {
    this.rules = [];
  }

  decide(method: string, path: string): FaultDecision {
    let latencyMs = 0;
    for (const active of this.rules) {
      const { rule } = active;
      if (active.remaining <= 0) continue;
      if (rule.method !== undefined && rule.method !== method) continue;
      if (rule.path !== undefined && !matches(rule.path, path)) continue;
      latencyMs += rule.latencyMs ?? 0;
      const failing = rule.status !== undefined || rule.drop === true || rule.hang === true;
      if (!failing) {
        active.remaining -= 1;
        continue;
      }
      if (this.random() >= (rule.errorRate ?? 1)) continue;
      active.remaining -= 1;
      if (rule.drop) return { kind: 'drop', latencyMs };
      if (rule.hang) return { kind: 'hang', latencyMs };
      return {
        kind: 'fail',
        latencyMs,
        response: {
          status: rule.status ?? 500,
          body: rule.body ?? { message: 'injected fault' },
          ...(rule.headers ? { headers: rule.headers } : {}),
        },
      };
    }
    return { kind: 'pass', latencyMs };
  }
}

function matches(pattern: string | RegExp, path: string): boolean {
  return typeof pattern === 'string' ? path.includes(pattern) : pattern.test(path);
}

export interface HttpFake {
  /** `http://127.0.0.1:PORT`, or `https://127.0.0.1:PORT` when started with `tls`. */
  readonly url: string;
  /** The self-signed certificate (PEM) the fake serves with `tls`; clients may trust it as CA. */
  readonly certificate?: string;
  /** Every request answered (or dropped) so far, in order. */
  readonly requestLog: readonly RecordedRequest[];
  /** The requests that could change something (every method but GET, HEAD and OPTIONS). */
  mutatingRequests(): RecordedRequest[];
  /** Requests in flight: how concurrent the clients really were. */
  readonly inFlight: InFlightCounts;
  readonly faults: HttpFaults;
  /** Latency added to every request (on top of fault latency). */
  latencyMs: number;
  close(): Promise<void>;
}

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * The HTTP side every fake REST service shares: 127.0.0.1 on a random port,
 * JSON and form bodies parsed, latency and fault injection, a request log,
 * and a close() that ends hung connections too. The fake itself only maps
 * requests to responses.
 */
export async function startHttpFake(options: {
  readonly handle: (req: FakeRequest) => FakeResponse | Promise<FakeResponse>;
  readonly latencyMs?: number;
  readonly random?: () => number;
  /**
   * Serve HTTPS: `true` with a self-signed certificate for 127.0.0.1 (to test
   * clients that skip verification), or with the given key and certificate
   * (one a private CA signed: see makePrivateCa).
   */
  readonly tls?: boolean | { readonly key: string; readonly cert: string };
  /** A fixed port (the demo's fakes); a free one when absent. */
  readonly port?: number;
}): Promise<HttpFake> {
  const log: RecordedRequest[] = [];
  const faults = new HttpFaults(options.random);
  const sockets = new Set<Socket>();
  const state = { latencyMs: options.latencyMs ?? 0 };
  const inFlight = new InFlightGauge();

  const listener = async (req: IncomingMessage, res: ServerResponse) => {
    inFlight.track(res);
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const method = req.method ?? 'GET';
    const record = (status: number) =>
      log.push({ method, path: url.pathname, query: url.search, status });
    const raw = await readBody(req);
    const decision = faults.decide(method, url.pathname);
    const wait = state.latencyMs + decision.latencyMs;
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    if (decision.kind === 'drop') {
      record(0);
      req.socket.destroy();
      return;
    }
    if (decision.kind === 'hang') {
      record(0);
      return;
    }
    let response: FakeResponse;
    if (decision.kind === 'fail') {
      response = decision.response;
    } else {
      try {
        response = await options.handle({
          method,
          url,
          headers: req.headers,
          body: parseBody(raw, req.headers['content-type']),
        });
      } catch (e) {
        response = { status: 500, body: { message: `fake failed: ${String(e)}` } };
      }
    }
    record(response.status);
    send(res, response);
  };
  const certificate =
    typeof options.tls === 'object'
      ? options.tls
      : options.tls
        ? await servingCertificate()
        : undefined;
  const server = certificate
    ? createHttpsServer({ key: certificate.key, cert: certificate.cert }, listener)
    : createServer(listener);
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) =>
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve()),
  );
  const { port } = server.address() as { port: number };
  return {
    url: `${certificate ? 'https' : 'http'}://127.0.0.1:${port}`,
    ...(certificate ? { certificate: certificate.cert } : {}),
    requestLog: log,
    mutatingRequests: () => log.filter((r) => !READ_METHODS.has(r.method)),
    inFlight,
    faults,
    get latencyMs() {
      return state.latencyMs;
    },
    set latencyMs(ms: number) {
      state.latencyMs = ms;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

function send(res: ServerResponse, response: FakeResponse): void {
  // Bytes (an archive, a blob) go out as they are.
  if (response.body instanceof Uint8Array) {
    const headers: Record<string, string> = { ...response.headers };
    if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) {
      headers['Content-Type'] = 'application/octet-stream';
    }
    res.writeHead(response.status, headers).end(response.body);
    return;
  }
  const text =
    response.body === undefined
      ? ''
      : typeof response.body === 'string'
        ? response.body
        : JSON.stringify(response.body);
  const headers: Record<string, string> = { ...response.headers };
  if (text !== '' && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) {
    headers['Content-Type'] = 'application/json; charset=utf-8';
  }
  res.writeHead(response.status, headers).end(text);
}

async function readBody(req: AsyncIterable<Buffer>): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

function parseBody(raw: string, contentType: string | undefined): unknown {
  if (raw === '') return undefined;
  if (contentType?.includes('application/x-www-form-urlencoded')) {
    return Object.fromEntries(new URLSearchParams(raw));
  }
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
}
