import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { EmbeddedEngine, ExecutionPhase, GraphqlExecutionResult } from './types.ts';

export interface BundleServerOptions {
  /** 0 picks a free port. Default 0. */
  port?: number;
  /** Default 127.0.0.1: a development server, not for the network. */
  host?: string;
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
 * Serves one engine over HTTP with qontract-server's endpoints (upstream
 * qontract-server `src/server.ts`): `/graphql`, `/graphqlsha/<sha>`, `/sha256`,
 * `/git-commit-info[/<sha>]`, `/git-commit[/<sha>]` and `/healthz`.
 */
export async function startBundleServer(
  engine: EmbeddedEngine,
  options: BundleServerOptions = {},
): Promise<BundleServer> {
  const host = options.host ?? '127.0.0.1';
  const server = createServer((req, res) => {
    handle(engine, req, res).catch((e: unknown) => {
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
  engine: EmbeddedEngine,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const parts = url.pathname.split('/').filter(Boolean);
  const method = req.method ?? 'GET';
  const notFound = () =>
    send(res, 404, 'text/plain; charset=utf-8', `Cannot ${method} ${url.pathname}`);
  const knownSha = (sha: string | undefined) => sha === undefined || sha === engine.sha256;

  const [head, sha, ...rest] = parts;
  if (rest.length > 0) return notFound();
  if (parts.length === 0 && method === 'GET') {
    res.writeHead(302, { location: '/graphql' }).end();
    return;
  }
  if (head === 'graphql' && sha === undefined) return graphql(engine, req, res, url);
  if (head === 'graphqlsha' && sha !== undefined) {
    return knownSha(sha) ? graphql(engine, req, res, url) : notFound();
  }
  if (method !== 'GET') return notFound();
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
  const { result, phase } = await engine.executeWithPhase(request.query, variables, operationName);
  const status = phase === 'execute' ? 200 : 400;
  send(
    res,
    status,
    'application/json; charset=utf-8',
    JSON.stringify(withErrorCodes(result, phase)),
  );
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
