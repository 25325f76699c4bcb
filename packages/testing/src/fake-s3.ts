/// <reference path="./s3rver.d.ts" />
import { mkdtemp, rm } from 'node:fs/promises';
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type InFlightCounts, InFlightGauge } from '@qontract/fake-kube-apiserver';
import S3rver from 's3rver';

/** One request as the fake S3 answered it. */
interface S3Request {
  readonly method: string;
  /** `/<bucket>/<key>`: path-style addressing. */
  readonly path: string;
  readonly status: number;
}

export interface FakeS3 {
  /** `http://127.0.0.1:<port>`; use path-style addressing. */
  readonly endpoint: string;
  readonly region: string;
  /** s3rver only accepts these when it checks signatures. */
  readonly credentials: { readonly accessKeyId: string; readonly secretAccessKey: string };
  /** Every request answered so far, in order (what a benchmark counts at this peer). */
  readonly requestLog: readonly S3Request[];
  /** Added before every request is handled (a remote bucket's round trip). */
  latencyMs: number;
  /** Requests in flight (latency included), as the other fakes count them. */
  readonly inFlight: InFlightCounts;
  close(): Promise<void>;
}

/**
 * An S3 server (s3rver) on 127.0.0.1 and a random port, storing into a fresh
 * temporary directory that is removed on close; with a request log and an
 * injected latency like the other fakes.
 */
export async function startFakeS3(options: { buckets?: readonly string[] } = {}): Promise<FakeS3> {
  const directory = await mkdtemp(join(tmpdir(), 'fake-s3-'));
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    vhostBuckets: false,
    configureBuckets: (options.buckets ?? []).map((name) => ({ name })),
  });
  const address = await server.run();
  const log: S3Request[] = [];
  const inFlight = new InFlightGauge();
  const fake = {
    endpoint: `http://127.0.0.1:${address.port}`,
    region: 'us-east-1',
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    requestLog: log,
    latencyMs: 0,
    inFlight,
    async close() {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
  // s3rver has no hook before its routes: its Node server's request listener
  // is wrapped instead, so the latency and the log see every request.
  const http = server.httpServer;
  const [handle] = http.listeners('request') as RequestListener[];
  if (!handle) throw new Error('s3rver serves no request listener');
  http.removeAllListeners('request');
  http.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
    inFlight.track(res);
    res.once('finish', () =>
      log.push({ method: req.method ?? 'GET', path, status: res.statusCode }),
    );
    if (fake.latencyMs > 0) setTimeout(() => handle(req, res), fake.latencyMs);
    else handle(req, res);
  });
  return fake;
}
