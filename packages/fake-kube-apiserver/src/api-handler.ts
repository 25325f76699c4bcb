import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseYaml } from 'yaml';
import { apiVersionOf, RESOURCE_VERBS, type ResourceType, resourceKey } from './catalogue.ts';
import type { FakeCluster } from './cluster.ts';
import { isObject, type JsonObject } from './json.ts';
import { openApiGroupVersion, openApiIndex } from './openapi.ts';
import { mediaType, type Route } from './route.ts';
import { parseFieldSelector, parseLabelSelector } from './selectors.ts';
import { ApiError, badRequest, methodNotAllowed, pathNotFound } from './status.ts';
import { matches, type Query, type StoredObject } from './store.ts';

const KUBERNETES_VERSION = {
  major: '1',
  minor: '31',
  gitVersion: 'v1.31.0',
  gitCommit: '0000000000000000000000000000000000000000',
  gitTreeState: 'clean',
  buildDate: '2024-08-13T00:00:00Z',
  goVersion: 'go1.22.5',
  compiler: 'gc',
  platform: 'linux/amd64',
};

export interface HandlerContext {
  readonly cluster: FakeCluster;
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly route: Route;
  readonly query: URLSearchParams;
  readonly pathname: string;
  /** Open watch responses, ended when the cluster goes down or the server closes. */
  readonly watches: Set<ServerResponse>;
}

/** What the request log keeps of a handled request beyond its route. */
export interface Outcome {
  readonly status: number;
  readonly kind: string;
  readonly dryRun: boolean;
  readonly fieldManager?: string;
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(body),
    ...headers,
  });
  res.end(body);
}

export function sendError(
  res: ServerResponse,
  error: ApiError,
  headers: Record<string, string> = {},
): void {
  sendJson(res, error.code, JSON.stringify(error.toStatus()), headers);
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function parseBody(text: string, contentType: string): unknown {
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

function dryRunOf(query: URLSearchParams, body: unknown): boolean {
  const values = query.getAll('dryRun');
  if (isObject(body) && Array.isArray(body.dryRun)) values.push(...body.dryRun.map(String));
  for (const v of values)
    if (v !== 'All') throw badRequest(`Invalid value: "${v}": supported values: "All"`);
  return values.length > 0;
}

/** Re-labels an object served at another version of the same CRD (no conversion needed here). */
function render(stored: StoredObject, apiVersion: string): string {
  if (stored.json.startsWith(`{"apiVersion":${JSON.stringify(apiVersion)}`)) return stored.json;
  const obj = JSON.parse(stored.json) as JsonObject;
  return JSON.stringify({ ...obj, apiVersion });
}

function wantsTable(accept: string | undefined): boolean {
  return accept?.includes('as=Table') === true;
}

function age(timestamp: unknown): string {
  const since = typeof timestamp === 'string' ? Date.now() - Date.parse(timestamp) : 0;
  const s = Math.max(0, Math.floor(since / 1000));
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 120) return `${m}m`;
  const h = Math.floor(m / 60);
  return h < 48 ? `${h}h` : `${Math.floor(h / 24)}d`;
}

const COLUMNS = [
  {
    name: 'Name',
    type: 'string',
    format: 'name',
    description: 'Name must be unique within a namespace.',
    priority: 0,
  },
  {
    name: 'Age',
    type: 'string',
    format: '',
    description:
      'CreationTimestamp is a timestamp representing the server time when this object was created.',
    priority: 0,
  },
];

function tableRow(obj: JsonObject, includeObject: string): JsonObject {
  const metadata = isObject(obj.metadata) ? obj.metadata : {};
  const row: JsonObject = { cells: [metadata.name, age(metadata.creationTimestamp)] };
  if (includeObject === 'Object') row.object = obj;
  else if (includeObject !== 'None') {
    const { managedFields: _m, ...rest } = metadata;
    row.object = { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: rest };
  }
  return row;
}

function table(objects: JsonObject[], listMeta: JsonObject, includeObject: string): string {
  return JSON.stringify({
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: listMeta,
    columnDefinitions: COLUMNS,
    rows: objects.map((o) => tableRow(o, includeObject)),
  });
}

function discoveryResources(cluster: FakeCluster, group: string, version: string): JsonObject[] {
  const out: JsonObject[] = [];
  for (const t of cluster.types()) {
    if (t.group !== group || !t.versions.includes(version)) continue;
    let verbs: readonly string[] = RESOURCE_VERBS;
    if (t.virtual === 'projectrequest') verbs = ['create', 'list'];
    if (t.virtual === 'project') verbs = ['create', 'delete', 'get', 'list'];
    out.push({
      name: t.plural,
      singularName: t.singular,
      namespaced: t.namespaced,
      kind: t.kind,
      verbs,
      ...(t.shortNames.length > 0 ? { shortNames: t.shortNames } : {}),
    });
    if (t.statusSubresource) {
      out.push({
        name: `${t.plural}/status`,
        singularName: '',
        namespaced: t.namespaced,
        kind: t.kind,
        verbs: ['get', 'patch', 'update'],
      });
    }
  }
  return out;
}

function groupVersions(cluster: FakeCluster): Map<string, string[]> {
  const groups = new Map<string, string[]>();
  for (const t of cluster.types()) {
    if (t.group === '') continue;
    const versions = groups.get(t.group) ?? [];
    for (const v of t.versions) if (!versions.includes(v)) versions.push(v);
    groups.set(t.group, versions);
  }
  return groups;
}

function apiGroup(name: string, versions: readonly string[]): JsonObject {
  const list = versions.map((v) => ({ groupVersion: `${name}/${v}`, version: v }));
  return { name, versions: list, preferredVersion: list[0] };
}

/** `/version`, `/api`, `/apis`, their groups and versions, health checks. */
export function handleDiscovery(ctx: HandlerContext): void {
  const { cluster, res, route, pathname } = ctx;
  if (pathname === '/version' || pathname === '/version/') {
    sendJson(res, 200, JSON.stringify(KUBERNETES_VERSION));
    return;
  }
  if (pathname === '/healthz' || pathname === '/readyz' || pathname === '/livez') {
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    res.end('ok');
    return;
  }
  if (pathname === '/openapi/v3' || pathname === '/openapi/v3/') {
    sendJson(res, 200, openApiIndex(cluster));
    return;
  }
  if (pathname.startsWith('/openapi/v3/')) {
    const doc = openApiGroupVersion(cluster, pathname.slice('/openapi/v3/'.length));
    if (doc === undefined) throw pathNotFound();
    sendJson(res, 200, doc);
    return;
  }
  if (route.area !== 'discovery') throw pathNotFound();
  const host = ctx.req.headers.host ?? '127.0.0.1';
  if (pathname.startsWith('/api/') || pathname === '/api') {
    if (route.version === '') {
      sendJson(
        res,
        200,
        JSON.stringify({
          kind: 'APIVersions',
          versions: ['v1'],
          serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: host }],
        }),
      );
      return;
    }
    if (route.version !== 'v1') throw pathNotFound();
    sendJson(
      res,
      200,
      JSON.stringify({
        kind: 'APIResourceList',
        groupVersion: 'v1',
        resources: discoveryResources(cluster, '', 'v1'),
      }),
    );
    return;
  }
  const groups = groupVersions(cluster);
  if (route.group === '') {
    sendJson(
      res,
      200,
      JSON.stringify({
        kind: 'APIGroupList',
        apiVersion: 'v1',
        groups: [...groups].map(([name, versions]) => apiGroup(name, versions)),
      }),
    );
    return;
  }
  const versions = groups.get(route.group);
  if (!versions) throw pathNotFound();
  if (route.version === '') {
    sendJson(
      res,
      200,
      JSON.stringify({ kind: 'APIGroup', apiVersion: 'v1', ...apiGroup(route.group, versions) }),
    );
    return;
  }
  if (!versions.includes(route.version)) throw pathNotFound();
  sendJson(
    res,
    200,
    JSON.stringify({
      kind: 'APIResourceList',
      apiVersion: 'v1',
      groupVersion: `${route.group}/${route.version}`,
      resources: discoveryResources(cluster, route.group, route.version),
    }),
  );
}

function queryOf(route: Route, type: ResourceType, params: URLSearchParams): Query {
  const labels = parseLabelSelector(params.get('labelSelector'));
  const fields = parseFieldSelector(params.get('fieldSelector'));
  return {
    ...(type.namespaced && route.namespace !== '' ? { namespace: route.namespace } : {}),
    ...(labels ? { labels } : {}),
    ...(fields ? { fields } : {}),
  };
}

/** CRUD, patch, apply and watch on one resource path. */
export async function handleResource(ctx: HandlerContext): Promise<Outcome> {
  const { cluster, req, res, route, query } = ctx;
  const type = cluster.findType(route.group, route.version, route.plural);
  if (!type) throw pathNotFound();
  if (route.subresource !== '' && !(route.subresource === 'status' && type.statusSubresource)) {
    throw pathNotFound();
  }
  if (type.namespaced && route.namespace === '' && route.name !== '') throw pathNotFound();
  const subresource = route.subresource === '' ? undefined : route.subresource;
  const apiVersion = apiVersionOf(type.group, route.version);
  const namespace = type.namespaced ? route.namespace : '';
  const contentType = mediaType(req.headers['content-type']);
  const accept = req.headers.accept;
  const kind = type.kind;
  const reply = (status: number, obj: JsonObject) => {
    const out =
      wantsTable(accept) && obj.kind === kind
        ? table([obj], {}, query.get('includeObject') ?? 'Metadata')
        : JSON.stringify(obj);
    sendJson(res, status, out);
  };

  switch (route.verb) {
    case 'get': {
      reply(200, cluster.get(type, namespace, route.name));
      return { status: 200, kind, dryRun: false };
    }
    case 'list': {
      listResponse(ctx, type, apiVersion);
      return { status: 200, kind, dryRun: false };
    }
    case 'watch': {
      if (type.virtual) throw methodNotAllowed();
      startWatch(ctx, type, apiVersion);
      return { status: 200, kind, dryRun: false };
    }
    default:
      break;
  }

  const body = parseBody(await readBody(req), contentType);
  const fieldManager = fieldManagerOf(query, req.headers['user-agent']);
  const dryRun = dryRunOf(
    query,
    route.verb === 'delete' || route.verb === 'deletecollection' ? body : undefined,
  );
  const options = { dryRun, fieldManager };
  const needObject = () => {
    if (!isObject(body)) throw badRequest("Object 'Kind' is missing in request body");
    return body;
  };
  switch (route.verb) {
    case 'create': {
      if (route.name !== '') throw methodNotAllowed();
      const created = cluster.create(type, route.version, namespace, needObject(), options);
      reply(201, created);
      return { status: 201, kind, dryRun, fieldManager };
    }
    case 'update': {
      if (type.virtual) throw methodNotAllowed();
      reply(
        200,
        cluster.update(
          type,
          route.version,
          namespace,
          route.name,
          needObject(),
          options,
          subresource,
        ),
      );
      return { status: 200, kind, dryRun, fieldManager };
    }
    case 'patch': {
      if (type.virtual) throw methodNotAllowed();
      reply(
        200,
        cluster.patch(
          type,
          route.version,
          namespace,
          route.name,
          contentType,
          body,
          options,
          subresource,
        ),
      );
      return { status: 200, kind, dryRun, fieldManager };
    }
    case 'apply': {
      if (type.virtual) throw methodNotAllowed();
      if (!query.get('fieldManager')) {
        throw new ApiError(
          422,
          'Invalid',
          'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
        );
      }
      const force = query.get('force') === 'true';
      const existed = type.namespaced
        ? cluster.store.get(resourceKey(type), namespace, route.name) !== undefined
        : cluster.store.get(resourceKey(type), '', route.name) !== undefined;
      const result = cluster.apply(
        type,
        route.version,
        namespace,
        route.name,
        needObject(),
        { ...options, force },
        subresource,
      );
      const status = existed ? 200 : 201;
      reply(status, result);
      return { status, kind, dryRun, fieldManager };
    }
    case 'delete': {
      const opts = isObject(body) ? body : {};
      const pre = isObject(opts.preconditions) ? opts.preconditions : undefined;
      const policy =
        query.get('propagationPolicy') ??
        (typeof opts.propagationPolicy === 'string' ? opts.propagationPolicy : undefined) ??
        (opts.orphanDependents === true ? 'Orphan' : undefined);
      const result = cluster.delete(type, namespace, route.name, {
        dryRun,
        ...(policy ? { propagationPolicy: policy } : {}),
        ...(pre
          ? {
              preconditions: {
                ...(typeof pre.uid === 'string' ? { uid: pre.uid } : {}),
                ...(typeof pre.resourceVersion === 'string'
                  ? { resourceVersion: pre.resourceVersion }
                  : {}),
              },
            }
          : {}),
      });
      sendJson(res, 200, JSON.stringify(result));
      return { status: 200, kind, dryRun };
    }
    case 'deletecollection': {
      if (type.virtual) throw methodNotAllowed();
      const q = queryOf(route, type, query);
      const names = cluster.store.all(resourceKey(type), q).map((o) => o.name);
      const opts = isObject(body) ? body : {};
      const policy =
        query.get('propagationPolicy') ??
        (typeof opts.propagationPolicy === 'string' ? opts.propagationPolicy : undefined);
      cluster.deleteCollection(type, namespace, names, {
        dryRun,
        ...(policy ? { propagationPolicy: policy } : {}),
      });
      sendJson(
        res,
        200,
        JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success' }),
      );
      return { status: 200, kind, dryRun };
    }
    default:
      throw methodNotAllowed();
  }
}

function listResponse(ctx: HandlerContext, type: ResourceType, apiVersion: string): void {
  const { cluster, res, route, query, req } = ctx;
  const q = queryOf(route, type, query);
  const limitText = query.get('limit');
  const limit = limitText ? Number.parseInt(limitText, 10) : undefined;
  const token = query.get('continue') ?? undefined;
  const listKind = `${type.kind}List`;
  if (type.virtual === 'project') {
    const projects = cluster.store
      .all(resourceKey({ group: '', plural: 'namespaces' }), q.labels ? { labels: q.labels } : {})
      .map((ns) => cluster.project(JSON.parse(ns.json) as JsonObject));
    const metadata = { resourceVersion: String(cluster.store.resourceVersion) };
    sendJson(
      res,
      200,
      wantsTable(req.headers.accept)
        ? table(projects, metadata, 'Metadata')
        : JSON.stringify({ kind: 'ProjectList', apiVersion, metadata, items: projects }),
    );
    return;
  }
  if (type.virtual) throw methodNotAllowed();
  const page = cluster.store.list(resourceKey(type), q, limit, token);
  const metadata: JsonObject = { resourceVersion: String(page.resourceVersion) };
  if (page.continueToken) metadata.continue = page.continueToken;
  if (page.remainingItemCount !== undefined) metadata.remainingItemCount = page.remainingItemCount;
  if (wantsTable(req.headers.accept)) {
    const objects = page.items.map((o) => JSON.parse(render(o, apiVersion)) as JsonObject);
    sendJson(res, 200, table(objects, metadata, query.get('includeObject') ?? 'Metadata'));
    return;
  }
  // Items are concatenated as stored: no parse, no re-encode. Typed lists of
  // built-in kinds carry no apiVersion/kind on their items (the real server's
  // do not either); custom resources keep them.
  const typeMeta = `{"apiVersion":${JSON.stringify(apiVersion)},"kind":${JSON.stringify(type.kind)},`;
  const items = page.items
    .map((o) => {
      const json = render(o, apiVersion);
      return type.builtin && json.startsWith(typeMeta) ? `{${json.slice(typeMeta.length)}` : json;
    })
    .join(',');
  const head = JSON.stringify({ kind: listKind, apiVersion, metadata });
  sendJson(res, 200, `${head.slice(0, -1)},"items":[${items}]}`);
}

function startWatch(ctx: HandlerContext, type: ResourceType, apiVersion: string): void {
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
  const line = (eventType: string, stored: StoredObject) => {
    const json = render(stored, apiVersion);
    const object = asTable
      ? table(
          [JSON.parse(json) as JsonObject],
          { resourceVersion: String(stored.resourceVersion) },
          includeObject,
        )
      : json;
    return `{"type":"${eventType}","object":${object}}\n`;
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

export { ApiError };
