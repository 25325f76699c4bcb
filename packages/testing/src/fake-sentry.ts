import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

/** One item of an envelope the fake received: its header and its payload (JSON when it parses). */
interface FakeSentryItem {
  readonly type: string;
  readonly payload: unknown;
}

export interface FakeSentry {
  /** A DSN pointing at the fake (project 42, public key `public`). */
  readonly dsn: string;
  /** The raw bodies received (gunzipped), in order: to check that no secret left the process. */
  readonly bodies: readonly string[];
  /** Every envelope item received, in order. */
  readonly items: readonly FakeSentryItem[];
  /** The payloads of the `event` items (errors and messages). */
  events(): Record<string, unknown>[];
  close(): Promise<void>;
}

/**
 * A Sentry ingestion endpoint on 127.0.0.1: takes the envelopes an SDK posts
 * to `/api/<project>/envelope/` (gzip or not) and keeps their items.
 */
export async function startFakeSentry(): Promise<FakeSentry> {
  const bodies: string[] = [];
  const items: FakeSentryItem[] = [];
  const server = createServer(async (req, res) => {
    const body = await readBody(req);
    if (
      req.method === 'POST' &&
      /^\/api\/\d+\/envelope\/?$/.test(new URL(req.url ?? '/', 'http://x').pathname)
    ) {
      bodies.push(body.toString('utf8'));
      items.push(...parseEnvelope(body));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    dsn: `http://public@127.0.0.1:${port}/42`,
    bodies,
    items,
    events: () =>
      items.filter((i) => i.type === 'event').map((i) => i.payload as Record<string, unknown>),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks);
  return req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
}

/**
 * The items of an envelope: a header line, then per item a header line and a
 * payload, `length` bytes long when the header says so, else up to the next newline.
 */
function parseEnvelope(body: Buffer): FakeSentryItem[] {
  const out: FakeSentryItem[] = [];
  let pos = body.indexOf(0x0a);
  if (pos < 0) return out;
  pos++;
  while (pos < body.length) {
    const headerEnd = body.indexOf(0x0a, pos);
    if (headerEnd < 0) break;
    const header = JSON.parse(body.subarray(pos, headerEnd).toString('utf8')) as {
      type: string;
      length?: number;
    };
    const start = headerEnd + 1;
    let end = header.length !== undefined ? start + header.length : body.indexOf(0x0a, start);
    if (end < 0) end = body.length;
    const text = body.subarray(start, end).toString('utf8');
    let payload: unknown = text;
    try {
      payload = JSON.parse(text);
    } catch {
      // An attachment or another item that is not JSON: kept as text.
    }
    out.push({ type: header.type, payload });
    pos = end + 1;
  }
  return out;
}
