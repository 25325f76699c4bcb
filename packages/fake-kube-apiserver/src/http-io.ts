import type { IncomingMessage, ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';
import { parse as parseYaml } from 'yaml';
import { isObject } from './json.ts';
import { type ApiError, badRequest } from './status.ts';

/** Answers that may be sent gzipped (the server compresses and the client accepts gzip). */
const gzipAccepted = new WeakSet<ServerResponse>();

/**
 * kube-apiserver's response compression (APIResponseCompression, on by
 * default): an answer of 128 KiB or more is gzipped when the request's
 * `Accept-Encoding` names gzip, and says so in `Content-Encoding`.
 */
export const GZIP_THRESHOLD_BYTES = 128 * 1024;

export function allowCompression(req: IncomingMessage, res: ServerResponse): void {
  const accepted = String(req.headers['accept-encoding'] ?? '')
    .split(',')
    .some((part) => part.split(';')[0]?.trim().toLowerCase() === 'gzip');
  if (accepted) gzipAccepted.add(res);
}

/** Whether an answer of `length` bytes to `res` goes out gzipped. */
export function willCompress(res: ServerResponse, length: number): boolean {
  return gzipAccepted.has(res) && length >= GZIP_THRESHOLD_BYTES;
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: string | Buffer,
  headers: Record<string, string> = {},
): void {
  let bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  const encoding: Record<string, string> = {};
  if (willCompress(res, bytes.length)) {
    bytes = gzipSync(bytes);
    encoding['Content-Encoding'] = 'gzip';
    encoding.Vary = 'Accept-Encoding';
  }
  res.writeHead(status, {
    'Content-Type': 'application/json',
    'Content-Length': bytes.length,
    ...encoding,
    ...headers,
  });
  res.end(bytes);
}

export function sendError(
  res: ServerResponse,
  error: ApiError,
  headers: Record<string, string> = {},
): void {
  sendJson(res, error.code, JSON.stringify(error.toStatus()), headers);
}

export async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** JSON, or YAML for apply patches (JSON is YAML too). */
export function parseBody(text: string, contentType: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    if (contentType === 'application/apply-patch+yaml' || contentType === 'application/yaml') {
      return parseYaml(text) as unknown;
    }
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw badRequest(
      `error decoding request body: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

/** The real server's fallback field manager: the User-Agent up to its first slash. */
export function fieldManagerOf(query: URLSearchParams, userAgent: string | undefined): string {
  const explicit = query.get('fieldManager');
  if (explicit) return explicit;
  return (userAgent ?? '').split('/')[0]?.slice(0, 128) ?? '';
}

/** `dryRun=All` from the query (or a DeleteOptions body); any other value is refused as the real server does. */
export function dryRunOf(query: URLSearchParams, body: unknown): boolean {
  const values = query.getAll('dryRun');
  if (isObject(body) && Array.isArray(body.dryRun)) values.push(...body.dryRun.map(String));
  for (const v of values)
    if (v !== 'All') throw badRequest(`Invalid value: "${v}": supported values: "All"`);
  return values.length > 0;
}
