import type { ServerResponse } from 'node:http';
import { type ResourceType, resourceKey } from './catalogue.ts';
import type { HandlerContext } from './handler-context.ts';
import type { JsonObject } from './json.ts';
import { queryOf, render } from './resource-query.ts';
import { ApiError, badRequest, tooLargeResourceVersion } from './status.ts';
import {
  matches,
  type ObjectStore,
  type Query,
  restamped,
  type StoredObject,
  type StoreEvent,
} from './store.ts';
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
 * Streams watch events as kube-apiserver's watch cache does:
 * - `resourceVersion` unset or `0`: the current objects as ADDED, then changes;
 *   a version: every change after it, or an `ERROR` event with a 410 Expired
 *   Status when it is older than the kept history (etcd compaction); a version
 *   ahead of the server is accepted as it is: the stream carries the changes
 *   after it, once the server gets there;
 * - `sendInitialEvents=true` (watch-list): the current objects as ADDED whatever
 *   the version, then the `k8s.io/initial-events-end` bookmark (with
 *   `allowWatchBookmarks=true`), then changes; for a version ahead of the server
 *   it first waits for it (`tooLargeResourceVersionWaitMs`, 3 s in the real one)
 *   and, when it does not come, sends an `ERROR` event with the 504
 *   `ResourceVersionTooLarge` Status; `sendInitialEvents=false`: changes only;
 * - a label or field selector is applied to the state before and after each
 *   change: an object entering the selection comes as ADDED, one staying in it
 *   as MODIFIED, and one leaving it as DELETED carrying the state the watcher
 *   last matched, stamped with the resourceVersion of the change (for a resumed
 *   watch's replayed history as well);
 * - `allowWatchBookmarks=true`: BOOKMARK events carrying only the current
 *   resourceVersion, periodically and right before a server-side time-out;
 * - `timeoutSeconds` (or a random 30–60 minutes) ends the stream from the server side;
 * - changes by every client (and the fake's controllers and seeds) are streamed.
 */
export async function startWatch(
  ctx: HandlerContext,
  type: ResourceType,
  apiVersion: string,
): Promise<void> {
  const { cluster, req, res, route, query, watches } = ctx;
  const { store } = cluster;
  const q = queryOf(route, type, query);
  const key = resourceKey(type);
  const asTable = wantsTable(req.headers.accept);
  const includeObject = query.get('includeObject') ?? 'Metadata';
  const bookmarks = query.get('allowWatchBookmarks') === 'true';
  const sendInitialEvents = query.get('sendInitialEvents');
  const since = query.get('resourceVersion') ?? '';
  let requested = 0;
  if (since !== '') {
    requested = Number(since);
    if (!Number.isSafeInteger(requested) || requested < 0) {
      throw badRequest(`invalid resource version: ${since}`);
    }
  }
  const initial = sendInitialEvents === 'true' || (sendInitialEvents === null && requested === 0);
  if (sendInitialEvents === 'true' && requested > store.resourceVersion) {
    const fresh = await untilFresh(store, requested, cluster.tooLargeResourceVersionWaitMs, res);
    if (res.destroyed) return;
    if (!fresh) {
      // The watch cache answers inside the stream, as for every error once the watch is set up.
      const status = tooLargeResourceVersion(requested, store.resourceVersion, 1).toStatus();
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(`${JSON.stringify({ type: 'ERROR', object: status })}\n`);
      return;
    }
  }
  let backlog: { type: string; object: StoredObject }[];
  // Changes up to this version are in the backlog or before the watch's start.
  let from: number;
  if (initial) {
    backlog = store.all(key, q).map((object) => ({ type: 'ADDED', object }));
    from = store.resourceVersion;
  } else if (requested === 0 || requested >= store.resourceVersion) {
    backlog = [];
    from = requested === 0 ? store.resourceVersion : requested;
  } else {
    try {
      backlog = [];
      for (const e of store.eventsSince(requested)) {
        const seen = e.resource === key ? selected(e, q) : undefined;
        if (seen) backlog.push(seen);
      }
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      // The real server answers a compacted revision inside the stream, not with the HTTP status.
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(`${JSON.stringify({ type: 'ERROR', object: error.toStatus() })}\n`);
      return;
    }
    from = store.resourceVersion;
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
          resourceVersion: String(store.resourceVersion),
          ...(annotations ? { annotations } : {}),
        },
      },
    })}\n`;
  for (const e of backlog) res.write(line(e.type, e.object));
  if (sendInitialEvents === 'true' && bookmarks) {
    res.write(bookmark({ 'k8s.io/initial-events-end': 'true' }));
  }
  const unsubscribe = store.subscribe((event) => {
    if (event.resource !== key || event.object.resourceVersion <= from) return;
    const seen = selected(event, q);
    if (seen) res.write(line(seen.type, seen.object));
  });
  const timeoutSeconds = Number(query.get('timeoutSeconds') ?? '0');
  const timeoutMs =
    timeoutSeconds > 0
      ? timeoutSeconds * 1000
      : (MIN_REQUEST_TIMEOUT_S + Math.random() * MIN_REQUEST_TIMEOUT_S) * 1000;
  // A watch started ahead of the server gets no bookmark before the server reaches its version.
  const progress = () => {
    if (bookmarks && store.resourceVersion >= from) res.write(bookmark());
  };
  const timers = [
    setTimeout(() => {
      // The last bookmark lets the client resume from the newest version, not from its last event.
      progress();
      res.end();
    }, timeoutMs),
    ...(bookmarks ? [setInterval(progress, BOOKMARK_INTERVAL_MS)] : []),
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

/**
 * What a watch with this selection sees of a change. Like the watch cache's
 * `convertToWatchEvent`, it decides from the state before and after: entering
 * is ADDED, staying MODIFIED, leaving DELETED with the state the watcher knew
 * (stamped with the change's version), and a change outside it nothing.
 */
function selected(event: StoreEvent, q: Query): { type: string; object: StoredObject } | undefined {
  if (event.type === 'DELETED') return matches(event.object, q) ? event : undefined;
  const now = matches(event.object, q);
  const before = event.type === 'MODIFIED' && (event.previous ? matches(event.previous, q) : now);
  if (now) return { type: before ? 'MODIFIED' : 'ADDED', object: event.object };
  if (!before || !event.previous) return undefined;
  return {
    type: 'DELETED',
    object: restamped(event.previous, event.object.resourceVersion),
  };
}

/**
 * Resolves true once the store reaches `resourceVersion`, false when it has
 * not after `waitMs` or the client went away. Nothing is left behind either way:
 * the subscription and the timer go as soon as it resolves.
 */
export function untilFresh(
  store: ObjectStore,
  resourceVersion: number,
  waitMs: number,
  res: ServerResponse,
): Promise<boolean> {
  if (store.resourceVersion >= resourceVersion) return Promise.resolve(true);
  if (res.destroyed) return Promise.resolve(false);
  return new Promise((resolve) => {
    const done = () => {
      unsubscribe();
      clearTimeout(timer);
      res.off('close', done);
      resolve(store.resourceVersion >= resourceVersion && !res.destroyed);
    };
    const unsubscribe = store.subscribe(() => {
      if (store.resourceVersion >= resourceVersion) done();
    });
    const timer = setTimeout(done, waitMs);
    res.on('close', done);
  });
}
