import type { ServerResponse } from 'node:http';
import { type ResourceType, resourceKey } from './catalogue.ts';
import type { HandlerContext } from './handler-context.ts';
import type { JsonObject } from './json.ts';
import { queryOf, render } from './resource-query.ts';
import { ApiError, badRequest } from './status.ts';
import { matches, type StoredObject } from './store.ts';
import { table, wantsTable } from './table.ts';

const EVENT_END = Buffer.from('}\n');

/**
 * How often an idle watch that asked for bookmarks gets one. kube-apiserver's
 * watch cache sends them about once a minute (`bookmarkFrequency`); tests see
 * them sooner through the bookmark sent right before a server-side time-out.
 */
const BOOKMARK_INTERVAL_MS = 60_000;

/**
 * Without `timeoutSeconds` kube-apiserver ends a watch after a random time in
 * [minRequestTimeout, 2 × minRequestTimeout] (1800 s by default), so that
 * watches spread over the servers behind a load balancer.
 */
const MIN_REQUEST_TIMEOUT_S = 1800;

/**
 * Streams watch events as kube-apiserver does:
 * - `resourceVersion` unset or `0`: the current objects as ADDED, then changes;
 *   a version: every change after it, or an `ERROR` event with a 410 Expired
 *   Status when it is older than the kept history (etcd compaction); a version
 *   ahead of the server is refused with 504 `ResourceVersionTooLarge`;
 * - `allowWatchBookmarks=true`: BOOKMARK events carrying only the current
 *   resourceVersion, periodically and right before a server-side time-out, and
 *   the `k8s.io/initial-events-end` bookmark with `sendInitialEvents=true`;
 * - `timeoutSeconds` (or a random 30–60 minutes) ends the stream from the server side;
 * - changes by every client (and the fake's controllers and seeds) are streamed.
 */
export function startWatch(ctx: HandlerContext, type: ResourceType, apiVersion: string): void {
  const { cluster, req, res, route, query, watches } = ctx;
  const q = queryOf(route, type, query);
  const key = resourceKey(type);
  const asTable = wantsTable(req.headers.accept);
  const includeObject = query.get('includeObject') ?? 'Metadata';
  const bookmarks = query.get('allowWatchBookmarks') === 'true';
  const since = query.get('resourceVersion') ?? '';
  let backlog: StoredObject[] | { type: string; object: StoredObject }[];
  let initial = false;
  if (since === '' || since === '0') {
    backlog = cluster.store.all(key, q);
    initial = true;
  } else {
    const rv = Number(since);
    if (!Number.isSafeInteger(rv) || rv < 0) throw badRequest(`invalid resource version: ${since}`);
    if (rv > cluster.store.resourceVersion) throw tooLarge(rv, cluster.store.resourceVersion);
    try {
      backlog = cluster.store
        .eventsSince(rv)
        .filter((e) => e.resource === key && matches(e.object, q));
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      // The real server answers a compacted revision inside the stream, not with the HTTP status.
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(`${JSON.stringify({ type: 'ERROR', object: error.toStatus() })}\n`);
      return;
    }
  }
  res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
  res.flushHeaders();
  watches.add(res);
  const line = (eventType: string, stored: StoredObject): Buffer => {
    const bytes = render(stored, apiVersion);
    const object = asTable
      ? Buffer.from(
          table(
            [JSON.parse(bytes.toString('utf8')) as JsonObject],
            { resourceVersion: String(stored.resourceVersion) },
            includeObject,
          ),
        )
      : bytes;
    return Buffer.concat([Buffer.from(`{"type":"${eventType}","object":`), object, EVENT_END]);
  };
  const bookmark = (annotations?: Record<string, string>) =>
    `${JSON.stringify({
      type: 'BOOKMARK',
      object: {
        kind: type.kind,
        apiVersion,
        metadata: {
          resourceVersion: String(cluster.store.resourceVersion),
          ...(annotations ? { annotations } : {}),
        },
      },
    })}\n`;
  if (initial) for (const o of backlog as StoredObject[]) res.write(line('ADDED', o));
  else
    for (const e of backlog as { type: string; object: StoredObject }[])
      res.write(line(e.type, e.object));
  if (query.get('sendInitialEvents') === 'true' && bookmarks) {
    res.write(bookmark({ 'k8s.io/initial-events-end': 'true' }));
  }
  const unsubscribe = cluster.store.subscribe((event) => {
    if (event.resource !== key || !matches(event.object, q)) return;
    res.write(line(event.type, event.object));
  });
  const requested = Number(query.get('timeoutSeconds') ?? '0');
  const timeoutMs =
    requested > 0
      ? requested * 1000
      : (MIN_REQUEST_TIMEOUT_S + Math.random() * MIN_REQUEST_TIMEOUT_S) * 1000;
  const timers = [
    setTimeout(() => {
      // The last bookmark lets the client resume from the newest version, not from its last event.
      if (bookmarks) res.write(bookmark());
      res.end();
    }, timeoutMs),
    ...(bookmarks ? [setInterval(() => res.write(bookmark()), BOOKMARK_INTERVAL_MS)] : []),
  ];
  for (const t of timers) t.unref();
  const stop = () => {
    unsubscribe();
    for (const t of timers) clearTimeout(t);
    watches.delete(res as ServerResponse);
  };
  res.on('close', stop);
  req.on('close', stop);
}

/** What the watch cache answers for a version it has not reached (after its 3 s wait). */
function tooLarge(rv: number, current: number): ApiError {
  return new ApiError(504, 'Timeout', `Too large resource version: ${rv}, current: ${current}`, {
    causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
    retryAfterSeconds: 1,
  });
}
