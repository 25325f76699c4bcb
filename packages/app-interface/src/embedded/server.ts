import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
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

/** The bundles one server holds, by sha; `current` is what `/sha256` and `/graphql` answer. */
interface ServedBundles {
  readonly current: EmbeddedEngine;
  readonly bySha: ReadonlyMap<string, EmbeddedEngine>;
  /** Answers by sha and request, when caching. */
  readonly answers: Map<string, Promise<{ status: number; body: string }>> | null;
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
      const message = e instanceof Error ? e.message : String(e);
      if (!res.headersSent) send(res, status, 'text/plain; charset=utf-8', message);
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

async function handle(
  served: ServedBundles,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const parts = url.pathname.split('/').filter(Boolean);
  const method = req.method ?? 'GET';
  const notFound = () =>
    send(res, 404, 'text/plain; charset=utf-8', `Cannot ${method} ${url.pathname}`);
  const engineFor = (sha: string | undefined) =>
    sha === undefined ? served.current : served.bySha.get(sha);
  const knownSha = (sha: string | undefined) => engineFor(sha) !== undefined;

  const [head, sha, ...rest] = parts;
  if (head === 'diff' && method === 'GET') return diff(served, parts.slice(1), res);
  if (rest.length > 0) return notFound();
  if (parts.length === 0 && method === 'GET') {
    res.writeHead(302, { location: '/graphql' }).end();
    return;
  }
  if (head === 'graphql' && sha === undefined) {
    return graphql(served.current, req, res, url, served.answers);
  }
  if (head === 'graphqlsha' && sha !== undefined) {
    const engine = engineFor(sha);
    return engine ? graphql(engine, req, res, url, served.answers) : notFound();
  }
  if (method !== 'GET') return notFound();
  const engine = engineFor(sha) ?? served.current;
  switch (head) {
    case 'healthz':
      return sha === undefined ? send(res, 200, 'text/plain; charset=utf-8', '') : notFound();
    case 'sha256':
      return sha === undefined
        ? send(res, 200, 'text/plain; charset=utf-8', engine.sha256)
        : notFound();
    case 'git-commit-info': {
      if (!knownSha(sha)) return notFound();
      const info = engine.gitCommit
        ? { commit: engine.gitCommit.commit, timestamp: engine.gitCommit.timestamp }
        : {};
      return send(res, 200, 'application/json; charset=utf-8', JSON.stringify(info));
    }
    case 'git-commit':
      if (!knownSha(sha)) {
        return send(res, 404, 'text/plain; charset=utf-8', `Bundle ${sha} not found`);
      }
      return send(res, 200, 'text/plain; charset=utf-8', engine.gitCommit?.commit ?? '');
    default:
      return notFound();
  }
}

/**
 * `/diff/<base>/<head>` (every changed data file and resource) and
 * `/diff/<base>/<head>/<datafile|resourcefile>/<path>` (one file), with
 * qontract-server's answers and 404 texts.
 */
async function diff(
  served: ServedBundles,
  parts: readonly string[],
  res: ServerResponse,
): Promise<void> {
  const [baseSha, headSha, filetype, ...path] = parts;
  const text = 'text/plain; charset=utf-8';
  if (baseSha === undefined || headSha === undefined || (filetype !== undefined && !path.length)) {
    return send(res, 404, text, `Cannot GET /diff/${parts.join('/')}`);
  }
  const base = served.bySha.get(baseSha)?.bundle;
  if (!base) return send(res, 404, text, `Bundle ${baseSha} not found`);
  const head = served.bySha.get(headSha)?.bundle;
  if (!head) return send(res, 404, text, `Bundle ${headSha} not found`);
  const json = (body: unknown) =>
    send(res, 200, 'application/json; charset=utf-8', JSON.stringify(body));
  if (filetype === undefined) return json(diffBundles(base, head) satisfies BundleDiff);
  const filepath = `/${path.join('/')}`;
  switch (filetype) {
    case 'datafile': {
      const oldData = base.data[filepath];
      const newData = head.data[filepath];
      if (!oldData && !newData) return send(res, 404, text, 'datafile not found');
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
      if (!oldRes && !newRes) return send(res, 404, text, 'resourcefile not found');
      return json({
        resourcepath: filepath,
        ...(oldRes ? { old: { ...oldRes, path: filepath } } : {}),
        ...(newRes ? { new: { ...newRes, path: filepath } } : {}),
      });
    }
    default:
      return send(res, 400, text, `unknown filetype ${filetype}`);
  }
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
      request = JSON.parse(body || '{}') as GraphqlRequest;
    } catch {
      return sendErrors(res, 400, 'the request body is not valid JSON');
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
      body: JSON.stringify(withErrorCodes(result, phase)),
    };
  };
  let pending: Promise<{ status: number; body: string }>;
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

function send(res: ServerResponse, status: number, contentType: string, body: string): void {
  res.writeHead(status, {
    'content-type': contentType,
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buf = chunk as Buffer;
    size += buf.length;
    if (size > BODY_LIMIT) throw new HttpError(413, 'request entity too large');
    chunks.push(buf);
  }
  return Buffer.concat(chunks).toString('utf8');
}
