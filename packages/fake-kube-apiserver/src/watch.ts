import { type ResourceType, resourceKey } from './catalogue.ts';
import type { HandlerContext } from './handler-context.ts';
import type { JsonObject } from './json.ts';
import { queryOf, render } from './resource-query.ts';
import { ApiError, badRequest } from './status.ts';
import { matches, type StoredObject } from './store.ts';
import { table, wantsTable } from './table.ts';

const EVENT_END = Buffer.from('}\n');

/**
 * Streams watch events: existing objects as ADDED (or the kept events after a
 * given resourceVersion), then every change until the client goes away or
 * `timeoutSeconds` pass.
 */
export function startWatch(ctx: HandlerContext, type: ResourceType, apiVersion: string): void {
  const { cluster, req, res, route, query, watches } = ctx;
  const q = queryOf(route, type, query);
  const key = resourceKey(type);
  const asTable = wantsTable(req.headers.accept);
  const includeObject = query.get('includeObject') ?? 'Metadata';
  const since = query.get('resourceVersion') ?? '';
  let backlog: StoredObject[] | { type: string; object: StoredObject }[];
  let initial = false;
  if (since === '' || since === '0') {
    backlog = cluster.store.all(key, q);
    initial = true;
  } else {
    const rv = Number(since);
    if (!Number.isFinite(rv)) throw badRequest(`invalid resource version: ${since}`);
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
  if (initial) for (const o of backlog as StoredObject[]) res.write(line('ADDED', o));
  else
    for (const e of backlog as { type: string; object: StoredObject }[])
      res.write(line(e.type, e.object));
  if (query.get('sendInitialEvents') === 'true' && query.get('allowWatchBookmarks') === 'true') {
    const bookmark = {
      kind: type.kind,
      apiVersion,
      metadata: {
        resourceVersion: String(cluster.store.resourceVersion),
        annotations: { 'k8s.io/initial-events-end': 'true' },
      },
    };
    res.write(`${JSON.stringify({ type: 'BOOKMARK', object: bookmark })}\n`);
  }
  const unsubscribe = cluster.store.subscribe((event) => {
    if (event.resource !== key || !matches(event.object, q)) return;
    res.write(line(event.type, event.object));
  });
  const timeout = Number(query.get('timeoutSeconds') ?? '0');
  const timer = timeout > 0 ? setTimeout(() => res.end(), timeout * 1000) : undefined;
  timer?.unref();
  const stop = () => {
    unsubscribe();
    if (timer) clearTimeout(timer);
    watches.delete(res);
  };
  res.on('close', stop);
  req.on('close', stop);
}
