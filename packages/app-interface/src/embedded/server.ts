import {
  createServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
  STATUS_CODES,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { type BundleDiff, diffBundles } from './bundle-diff.ts';
import type { EmbeddedEngine, ExecutionPhase, GraphqlExecutionResult } from './types.ts';

export interface BundleServerOptions {
  /** 0 picks a free port. Default 0. */
  port?: number;
  /** Default 127.0.0.1: a development server, not for the network. */
  host?: string;
  /**
   * Keep each answer per bundle, query and variables, as qontract-server's
   * response cache does: a bundle never changes, so the same request gets
   * the same answer. For servers asked the same big queries by many
   * clients (an MR check's integrations). Default off.
   */
  cache?: boolean;
}

export interface BundleServer {
  readonly url: string;
  readonly host: string;
  readonly port: number;
  readonly server: Server;
  close(): Promise<void>;
}

/** express.json()'s default body limit, which qontract-server keeps. */
const BODY_LIMIT = 100 * 1024;

class HttpError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

/**
 * An answer as sent: its UTF-8 bytes, made once. A kept answer (the namespaces
 * answer of a large app-interface is tens of megabytes) is then sent again
 * without encoding its text for each client.
 */
interface GraphqlAnswer {
  readonly status: number;
  readonly body: Buffer;
}

/** The bundles one server holds, by sha; `current` is what `/sha256` and `/graphql` answer. */
interface ServedBundles {
  readonly current: EmbeddedEngine;
  readonly bySha: ReadonlyMap<string, EmbeddedEngine>;
  /** Answers by sha and request, when caching. */
  readonly answers: Map<string, Promise<GraphqlAnswer>> | null;
}

/**
 * Serves engines over HTTP with qontract-server's endpoints (upstream
 * qontract-server `src/server.ts`): `/graphql`, `/graphqlsha/<sha>`, `/sha256`,
 * `/git-commit-info[/<sha>]`, `/git-commit[/<sha>]`, `/diff/<base>/<head>` and
 * `/healthz`. Given several engines, like qontract-server after loading
 * several bundles, every one is reachable by its sha and the last one is the
 * current bundle.
 */
export async function startBundleServer(
  engines: EmbeddedEngine | readonly EmbeddedEngine[],
  options: BundleServerOptions = {},
): Promise<BundleServer> {
  const list = Array.isArray(engines) ? engines : [engines as EmbeddedEngine];
  const current = list.at(-1);
  if (!current) throw new Error('startBundleServer: no bundle to serve');
  const served: ServedBundles = {
    current,
    bySha: new Map(list.map((e) => [e.sha256, e])),
    answers: options.cache ? new Map() : null,
  };
  const host = options.host ?? '127.0.0.1';
  const server = createServer((req, res) => {
    handle(served, req, res).catch((e: unknown) => {
      const status = e instanceof HttpError ? e.status : 500;
      if (!res.headersSent) finalHandlerPage(res, status, STATUS_CODES[status] ?? 'Error');
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${urlHost}:${port}`,
    host,
    port,
    server,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}

/*
 * Routing and answers as qontract-server's Express 5 app gives them (its
 * image runs with NODE_ENV=production): routes match case-insensitively
 * with an optional trailing slash and decoded parameters; plain-text answers
 * go out as Express's `res.send(string)` sends them, text/html; and whatever
 * no route takes gets Express's final handler page, "Cannot <METHOD>
 * <path>" in a small HTML document. Only `/graphql` and `/graphqlsha/<sha>`
 * are matched exactly, as the server rewrites and dispatches those itself.
 */
const HTML = 'text/html; charset=utf-8';
const JSON_TYPE = 'application/json; charset=utf-8';

async function handle(
  served: ServedBundles,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const rawUrl = req.url ?? '/';
  const query = rawUrl.indexOf('?');
  const pathname = query < 0 ? rawUrl : rawUrl.slice(0, query);
  const url = new URL(rawUrl, 'http://localhost');
  const method = req.method ?? 'GET';

  if (pathname === '/graphql') return graphql(served.current, req, res, url, served.answers);
  const pinned = /^\/graphqlsha\/([^/?]+)/.exec(rawUrl);
  const pinnedEngine = pinned ? served.bySha.get(pinned[1]!) : undefined;
  if (pinnedEngine) return graphql(pinnedEngine, req, res, url, served.answers);

  const notFound = () => finalHandlerPage(res, 404, `Cannot ${method} ${encodeUrl(pathname)}`);
  if (method !== 'GET' && method !== 'HEAD') return notFound();
  const segments = pathname.replace(/\/$/, '').split('/').slice(1);
  let parts: string[];
  try {
    parts = segments.map((p, i) => (i === 0 ? p.toLowerCase() : decodeURIComponent(p)));
  } catch {
    return finalHandlerPage(res, 400, 'Bad Request');
  }
  // An empty segment (`//`) matches no route.
  if (pathname !== '/' && parts.some((p) => p === '')) return notFound();
  const [route, sha, ...rest] = parts;
  const bundleNotFound = (s: string) => send(res, 404, HTML, `Bundle ${s} not found`);

  if (pathname === '/') {
    const body = 'Found. Redirecting to /graphql';
    res.writeHead(302, {
      location: '/graphql',
      'content-type': 'text/plain; charset=utf-8',
      'content-length': Buffer.byteLength(body),
    });
    res.end(body);
    return;
  }
  if (route === 'diff' && sha !== undefined && rest.length > 0)
    return diff(served, parts.slice(1), res);
  if (rest.length > 0) return notFound();
  switch (route) {
    case 'healthz':
      return sha === undefined ? send(res, 200, null, '') : notFound();
    case 'sha256':
      return sha === undefined ? send(res, 200, HTML, served.current.sha256) : notFound();
    case 'git-commit-info': {
      const engine = sha === undefined ? served.current : served.bySha.get(sha);
      if (!engine) return bundleNotFound(sha!);
      const info = engine.gitCommit
        ? { commit: engine.gitCommit.commit, timestamp: engine.gitCommit.timestamp }
        : {};
      return send(res, 200, JSON_TYPE, JSON.stringify(info));
    }
    case 'git-commit': {
      const engine = sha === undefined ? served.current : served.bySha.get(sha);
      if (!engine) return bundleNotFound(sha!);
      // res.send(undefined) of a bundle without a commit: an empty body, no type.
      const commit = engine.gitCommit?.commit;
      return commit === undefined ? send(res, 200, null, '') : send(res, 200, HTML, commit);
    }
    default:
      return notFound();
  }
}

/**
 * `/diff/<base>/<head>` (every changed data file and resource) and
 * `/diff/<base>/<head>/<datafile|resourcefile>[/<path>]` (one file), with
 * qontract-server's answers and error texts. `parts` are decoded segments.
 */
async function diff(
  served: ServedBundles,
  parts: readonly string[],
  res: ServerResponse,
): Promise<void> {
  const [baseSha, headSha, filetype, ...path] = parts as [string, string, ...string[]];
  const base = served.bySha.get(baseSha)?.bundle;
  if (!base) return send(res, 404, HTML, `Bundle ${baseSha} not found`);
  const head = served.bySha.get(headSha)?.bundle;
  if (!head) return send(res, 404, HTML, `Bundle ${headSha} not found`);
  const json = (body: unknown) => send(res, 200, JSON_TYPE, JSON.stringify(body));
  if (filetype === undefined) return json(diffBundles(base, head) satisfies BundleDiff);
  // The file path is optional in the route: without one it is "/".
  const filepath = `/${path.join('/')}`;
  switch (filetype) {
    case 'datafile': {
      const oldData = base.data[filepath];
      const newData = head.data[filepath];
      if (!oldData && !newData) return send(res, 404, HTML, 'datafile not found');
      return json({
        datafilepath: filepath,
        datafileschema: (newData ?? oldData)?.$schema,
        ...(oldData ? { old: { ...oldData, path: filepath } } : {}),
        ...(newData ? { new: { ...newData, path: filepath } } : {}),
      });
    }
    case 'resourcefile': {
      const oldRes = base.resources[filepath];
      const newRes = head.resources[filepath];
      if (!oldRes && !newRes) return send(res, 404, HTML, 'resourcefile not found');
      return json({
        resourcepath: filepath,
        ...(oldRes ? { old: { ...oldRes, path: filepath } } : {}),
        ...(newRes ? { new: { ...newRes, path: filepath } } : {}),
      });
    }
    default:
      return send(res, 400, HTML, `unknown filetype ${filetype}`);
  }
}

/**
 * Express's final handler (the `finalhandler` package): the answer to a
 * request no route took, or to an error before any route (a body that is
 * not JSON, one too large), in production mode: the status text only.
 */
function finalHandlerPage(res: ServerResponse, status: number, message: string): void {
  const text = escapeHtml(message).replaceAll('\n', '<br>').replaceAll('  ', ' &nbsp;');
  const body = `<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>Error</title>\n</head>\n<body>\n<pre>${text}</pre>\n</body>\n</html>\n`;
  res.writeHead(status, {
    'content-security-policy': "default-src 'none'",
    'x-content-type-options': 'nosniff',
    'content-type': HTML,
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
}

const HTML_ESCAPES: Record<string, string> = {
  '"': '&quot;',
  '&': '&amp;',
  "'": '&#39;',
  '<': '&lt;',
  '>': '&gt;',
};

function escapeHtml(text: string): string {
  return text.replace(/["&'<>]/g, (c) => HTML_ESCAPES[c]!);
}

/**
 * The request path as the final handler prints it: characters a URL may not
 * hold are percent-encoded, existing `%XX` escapes are kept.
 */
function encodeUrl(path: string): string {
  return path.replace(
    /(?:[^\x21\x23-\x3B\x3D\x3F-\x5F\x61-\x7A\x7C\x7E]|%(?![0-9A-Fa-f]{2}))+/g,
    (run) => encodeURI(run),
  );
}

interface GraphqlRequest {
  query?: unknown;
  variables?: unknown;
  operationName?: unknown;
}

async function graphql(
  engine: EmbeddedEngine,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  answers: ServedBundles['answers'] = null,
): Promise<void> {
  let request: GraphqlRequest;
  if (req.method === 'POST') {
    const body = await readBody(req);
    try {
      // express.json() is strict: only an object or an array, else 400 before Apollo.
      if (body.trim() !== '' && !/^\s*[[{]/.test(body)) throw new SyntaxError('not strict JSON');
      request = JSON.parse(body || '{}') as GraphqlRequest;
    } catch {
      return finalHandlerPage(res, 400, 'Bad Request');
    }
  } else if (req.method === 'GET') {
    const variables = url.searchParams.get('variables');
    try {
      request = {
        query: url.searchParams.get('query') ?? undefined,
        variables: variables ? JSON.parse(variables) : undefined,
        operationName: url.searchParams.get('operationName') ?? undefined,
      };
    } catch {
      return sendErrors(res, 400, 'variables are not valid JSON');
    }
  } else {
    return send(res, 405, 'text/plain; charset=utf-8', 'only GET and POST are supported');
  }
  if (
    typeof request !== 'object' ||
    request === null ||
    typeof request.query !== 'string' ||
    !request.query
  ) {
    return sendErrors(res, 400, 'GraphQL operations must contain a non-empty `query`.');
  }
  const variables =
    typeof request.variables === 'object' && request.variables !== null
      ? (request.variables as Record<string, unknown>)
      : null;
  const operationName = typeof request.operationName === 'string' ? request.operationName : null;
  const answer = async () => {
    const { result, phase } = await engine.executeWithPhase(
      request.query as string,
      variables,
      operationName,
    );
    return {
      status: phase === 'execute' ? 200 : 400,
      body: Buffer.from(JSON.stringify(withErrorCodes(result, phase))),
    };
  };
  let pending: Promise<GraphqlAnswer>;
  if (answers) {
    const key = JSON.stringify([engine.sha256, request.query, variables, operationName]);
    const cached = answers.get(key);
    pending = cached ?? answer();
    if (!cached) {
      answers.set(key, pending);
      pending.catch(() => answers.delete(key));
    }
  } else {
    pending = answer();
  }
  const { status, body } = await pending;
  send(res, status, 'application/json; charset=utf-8', body);
}

const ERROR_CODE: Record<ExecutionPhase, string> = {
  parse: 'GRAPHQL_PARSE_FAILED',
  validate: 'GRAPHQL_VALIDATION_FAILED',
  request: 'BAD_USER_INPUT',
  execute: 'INTERNAL_SERVER_ERROR',
};

/** Apollo Server gives every error an `extensions.code`; resolver errors without one get INTERNAL_SERVER_ERROR. */
function withErrorCodes(
  result: GraphqlExecutionResult,
  phase: ExecutionPhase,
): GraphqlExecutionResult {
  if (!result.errors) return result;
  return {
    ...result,
    errors: result.errors.map((e) =>
      typeof e.extensions?.code === 'string'
        ? e
        : { ...e, extensions: { ...e.extensions, code: ERROR_CODE[phase] } },
    ),
  };
}

function sendErrors(res: ServerResponse, status: number, message: string): void {
  send(res, status, 'application/json; charset=utf-8', JSON.stringify({ errors: [{ message }] }));
}

/** `contentType` null: no content type, as Express's `res.send()` of nothing. */
function send(
  res: ServerResponse,
  status: number,
  contentType: string | null,
  body: string | Buffer,
): void {
  res.writeHead(status, {
    ...(contentType ? { 'content-type': contentType } : {}),
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
}

/**
 * The body, or 413 once all of it is read. Leaving a for-await loop early
 * destroys the request and with it the socket, so a keep-alive client's next
 * request on that connection failed; express.json() likewise reads the rest of
 * an oversize body (discarding it) before it answers 413.
 */
async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buf = chunk as Buffer;
    size += buf.length;
    if (size <= BODY_LIMIT) chunks.push(buf);
  }
  if (size > BODY_LIMIT) throw new HttpError(413, 'request entity too large');
  return Buffer.concat(chunks).toString('utf8');
}
