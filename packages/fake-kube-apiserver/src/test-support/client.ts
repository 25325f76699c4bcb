import { request as httpsRequest } from 'node:https';
import type { ClusterHandle } from '../server.ts';

export interface Reply {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON shapes
  readonly body: any;
}

export interface CallOptions {
  readonly body?: unknown;
  readonly contentType?: string;
  readonly token?: string | null;
  readonly headers?: Record<string, string>;
}

/** One HTTPS request to a fake cluster, trusting its self-signed certificate. */
export function call(
  cluster: ClusterHandle,
  method: string,
  path: string,
  options: CallOptions = {},
): Promise<Reply> {
  const url = new URL(path, cluster.url);
  const payload =
    options.body === undefined
      ? undefined
      : typeof options.body === 'string'
        ? options.body
        : JSON.stringify(options.body);
  const headers: Record<string, string> = { Accept: 'application/json', ...options.headers };
  const token = options.token === undefined ? cluster.token : options.token;
  if (token !== null) headers.Authorization = `Bearer ${token}`;
  if (payload !== undefined) {
    headers['Content-Type'] = options.contentType ?? 'application/json';
    headers['Content-Length'] = String(Buffer.byteLength(payload));
  }
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      url,
      { method, headers, ca: cluster.caCertificate, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown;
          try {
            body = text === '' ? undefined : JSON.parse(text);
          } catch {
            body = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

/** Reads watch events until `count` arrived, then closes the stream. */
export function watchEvents(
  cluster: ClusterHandle,
  path: string,
  count: number,
  onOpen?: () => void,
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON shapes
): Promise<any[]> {
  const url = new URL(path, cluster.url);
  return new Promise((resolve, reject) => {
    // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON shapes
    const events: any[] = [];
    const req = httpsRequest(
      url,
      {
        headers: { Authorization: `Bearer ${cluster.token}` },
        ca: cluster.caCertificate,
        agent: false,
      },
      (res) => {
        let buffer = '';
        onOpen?.();
        res.on('data', (chunk: Buffer) => {
          buffer += chunk.toString('utf8');
          let index = buffer.indexOf('\n');
          while (index >= 0) {
            events.push(JSON.parse(buffer.slice(0, index)));
            buffer = buffer.slice(index + 1);
            index = buffer.indexOf('\n');
          }
          if (events.length >= count) {
            req.destroy();
            resolve(events);
          }
        });
        res.on('end', () => resolve(events));
      },
    );
    req.on('error', (error) => {
      if (events.length >= count) return;
      reject(error);
    });
    req.end();
  });
}

/**
 * Polling options for `vi.waitUntil` and `expect.poll`: rollouts and namespace finalisation are
 * asynchronous, and vitest's default of 1 s is too tight on a loaded machine.
 */
export const SETTLED = { timeout: 10_000, interval: 10 } as const;
