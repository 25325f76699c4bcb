import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { type ClusterFault, FaultSpecError, faultFromJson, parseFaultSpec } from './fault-spec.ts';
import type { FaultRule } from './faults.ts';
import type { FakeKubeApiServer, RequestFilter, RequestLogEntry } from './server.ts';

/** The faults added through the command and the control endpoint, as given. */
export class FaultBook {
  readonly #fake: FakeKubeApiServer;
  readonly #added: Array<{ cluster: string; rule: FaultRule }> = [];
  readonly #down = new Set<string>();

  constructor(fake: FakeKubeApiServer) {
    this.#fake = fake;
  }

  /** Adds the rule to its cluster, or to every cluster when it names none. */
  add(fault: ClusterFault): void {
    const targets = fault.cluster === undefined ? [...this.#fake.clusters.keys()] : [fault.cluster];
    for (const cluster of targets) this.#fake.cluster(cluster); // unknown names fail before any is added
    for (const cluster of targets) {
      this.#fake.faults.set(cluster, fault.rule);
      this.#added.push({ cluster, rule: fault.rule });
    }
  }

  clear(cluster?: string): void {
    if (cluster !== undefined) this.#fake.cluster(cluster);
    this.#fake.faults.clear(cluster);
    for (let i = this.#added.length - 1; i >= 0; i--) {
      if (cluster === undefined || this.#added[i]?.cluster === cluster) this.#added.splice(i, 1);
    }
  }

  /** Rules in the order they apply (a rule with `times` may have lapsed already). */
  list(cluster?: string): Array<{ cluster: string } & FaultRule> {
    return this.#added
      .filter((f) => cluster === undefined || f.cluster === cluster)
      .map((f) => ({ cluster: f.cluster, ...f.rule }));
  }

  async down(cluster: string): Promise<void> {
    await this.#fake.faults.down(cluster);
    this.#down.add(cluster);
  }

  async up(cluster: string): Promise<void> {
    await this.#fake.faults.up(cluster);
    this.#down.delete(cluster);
  }

  isDown(cluster: string): boolean {
    return this.#down.has(cluster);
  }
}

export interface ControlServer {
  /** `http://127.0.0.1:<port>/_control` */
  readonly url: string;
  readonly token: string;
  close(): Promise<void>;
}

const MAX_BODY = 16 * 2 ** 20;
const FILTER_KEYS = ['cluster', 'verb', 'kind', 'namespace', 'name', 'resource'] as const;

class HttpError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

/**
 * The run-time control of the command: faults, clusters down and up, seeding
 * and the request log, over plain HTTP on 127.0.0.1. Every request needs
 * `Authorization: Bearer <token>`: the port is reachable by every local user
 * and by web pages in a local browser.
 */
export async function startControlServer(
  fake: FakeKubeApiServer,
  book: FaultBook,
  options: { port?: number; token?: string } = {},
): Promise<ControlServer> {
  const token = options.token ?? randomBytes(18).toString('base64url');
  const expected = Buffer.from(`Bearer ${token}`);
  const authorized = (req: IncomingMessage) => {
    const given = Buffer.from(req.headers.authorization ?? '');
    return given.length === expected.length && timingSafeEqual(given, expected);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      const status = error instanceof HttpError ? error.status : 500;
      const message = error instanceof Error ? error.message : String(error);
      send(res, status, { error: message });
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const parts = url.pathname.split('/').filter((p) => p !== '');
    if (parts[0] !== '_control') throw new HttpError(404, `no such path ${url.pathname}`);
    if (!authorized(req)) throw new HttpError(401, 'missing or wrong Authorization: Bearer token');
    const method = req.method ?? 'GET';
    const [, area, name, action] = parts;
    const route = `${method} ${area ?? ''}${name !== undefined ? '/:name' : ''}${action !== undefined ? `/${action}` : ''}`;
    const cluster = url.searchParams.get('cluster') ?? undefined;
    switch (route) {
      case 'GET ':
        return send(res, 200, { endpoints: ENDPOINTS });
      case 'GET clusters':
        return send(
          res,
          200,
          [...fake.clusters.values()].map((c) => ({
            name: c.name,
            url: c.url,
            token: c.token,
            openshift: c.openshift,
            up: !book.isDown(c.name),
          })),
        );
      case 'POST clusters/:name/down':
        await book.down(known(name!));
        return send(res, 200, { cluster: name, up: false });
      case 'POST clusters/:name/up':
        await book.up(known(name!));
        return send(res, 200, { cluster: name, up: true });
      case 'POST clusters/:name/seed': {
        const text = await body(req);
        try {
          fake.seed(known(name!), text);
        } catch (e) {
          throw new HttpError(400, (e as Error).message);
        }
        return send(res, 200, { cluster: name, seeded: true });
      }
      case 'GET faults':
        return send(res, 200, book.list(cluster));
      case 'POST faults': {
        const faults = parseFaults(await body(req));
        for (const f of faults) if (f.cluster !== undefined) known(f.cluster);
        for (const f of faults) book.add(f);
        return send(res, 201, book.list());
      }
      case 'DELETE faults':
        book.clear(cluster === undefined ? undefined : known(cluster));
        return send(res, 200, book.list());
      case 'GET requests':
        return sendRequests(res, url.searchParams);
      case 'DELETE requests':
        fake.resetLog();
        return send(res, 200, { cleared: true });
      default:
        throw new HttpError(404, `no such control request: ${method} ${url.pathname}`);
    }
  }

  function known(name: string): string {
    if (!fake.clusters.has(name)) throw new HttpError(404, `no fake cluster named ${name}`);
    return name;
  }

  function sendRequests(res: ServerResponse, query: URLSearchParams): void {
    const filter: Record<string, string> = {};
    for (const key of FILTER_KEYS) {
      const v = query.get(key);
      if (v !== null) filter[key] = v;
    }
    let entries: RequestLogEntry[] = fake.requests(filter as RequestFilter);
    const status = query.get('status');
    if (status !== null) entries = entries.filter((e) => String(e.status) === status);
    const last = query.get('last');
    if (last !== null) {
      const n = Number(last);
      if (!Number.isInteger(n) || n < 0) throw new HttpError(400, 'last must be a whole number');
      entries = n === 0 ? [] : entries.slice(-n);
    }
    if (query.get('format') === 'text') {
      res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
      res.end(
        entries
          .map((e) => `${e.cluster}\t${e.status}\t${e.verb}\t${e.method}\t${e.path}\n`)
          .join(''),
      );
      return;
    }
    send(res, 200, entries);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}/_control`,
    token,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** One JSON fault, a JSON array of them, or `key=value,...` specs one per line. */
function parseFaults(text: string): ClusterFault[] {
  try {
    const trimmed = text.trim();
    if (trimmed.startsWith('[')) {
      const value: unknown = JSON.parse(trimmed);
      if (!Array.isArray(value)) throw new FaultSpecError('expected an array of faults');
      return value.map(faultFromJson);
    }
    if (trimmed.startsWith('{')) return [parseFaultSpec(trimmed)];
    const lines = trimmed.split('\n').filter((l) => l.trim() !== '');
    if (lines.length === 0) throw new FaultSpecError('no fault given');
    return lines.map(parseFaultSpec);
  } catch (e) {
    throw new HttpError(400, (e as Error).message);
  }
}

function body(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        reject(new HttpError(413, 'request body too large'));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, status: number, value: unknown): void {
  const text = `${JSON.stringify(value, null, 2)}\n`;
  res.writeHead(status, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(text),
  });
  res.end(text);
}

const ENDPOINTS = [
  'GET    /_control/clusters                 clusters: url, token, up',
  'POST   /_control/clusters/NAME/down       refuse connections, reset open ones',
  'POST   /_control/clusters/NAME/up         listen again',
  'POST   /_control/clusters/NAME/seed       store objects (YAML or JSON body)',
  'GET    /_control/faults[?cluster=NAME]    fault rules added, in the order they apply',
  'POST   /_control/faults                   add: {"cluster":..,"verb":..,"status":..} or [..] or key=value,... lines',
  'DELETE /_control/faults[?cluster=NAME]    remove the rules of one cluster or all',
  'GET    /_control/requests[?cluster=&verb=&resource=&kind=&namespace=&name=&status=&last=N&format=text]',
  'DELETE /_control/requests                 empty the request log',
];
