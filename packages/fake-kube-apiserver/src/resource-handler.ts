import { apiVersionOf, type ResourceType, resourceKey } from './catalogue.ts';
import type { HandlerContext, Outcome } from './handler-context.ts';
import {
  dryRunOf,
  fieldManagerOf,
  parseBody,
  readBody,
  sendJson,
  willCompress,
} from './http-io.ts';
import { isObject, type JsonObject } from './json.ts';
import { handlePodLog, isPods } from './pod-logs.ts';
import { queryOf, render } from './resource-query.ts';
import { mediaType } from './route.ts';
import {
  ApiError,
  badRequest,
  methodNotAllowed,
  pathNotFound,
  tooLargeResourceVersion,
} from './status.ts';
import { table, wantsTable } from './table.ts';
import { startWatch, untilFresh } from './watch.ts';

const COMMA = Buffer.from(',');
const OPEN = Buffer.from('{');
const CLOSE = Buffer.from(']}');

/** CRUD, patch, apply and watch on one resource path. */

export async function handleResource(ctx: HandlerContext): Promise<Outcome> {
  const { cluster, req, res, route, query } = ctx;
  const type = cluster.findType(route.group, route.version, route.plural);
  if (!type) throw pathNotFound();
  if (isPods(type) && route.subresource === 'log') {
    return handlePodLog(ctx);
  }
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
      await untilListable(ctx);
      if (res.destroyed) return { status: 0, kind, dryRun: false };
      listResponse(ctx, type, apiVersion);
      return { status: 200, kind, dryRun: false };
    }
    case 'watch': {
      if (type.virtual) throw methodNotAllowed();
      await startWatch(ctx, type, apiVersion);
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

/**
 * A list asking for a resourceVersion the cluster has not reached. The watch
 * cache serves `NotOlderThan` (the default match) and waits for the version
 * before its 504; a list it hands to etcd (`Exact`, or a `limit` with a
 * version other than 0) gets the 504 at once. Versions the cluster has reached
 * are served with the current state, as `NotOlderThan` allows.
 */
async function untilListable(ctx: HandlerContext): Promise<void> {
  const { cluster, query, res } = ctx;
  const text = query.get('resourceVersion') ?? '';
  const requested = Number(text);
  if (text === '' || !Number.isSafeInteger(requested) || requested <= cluster.store.resourceVersion)
    return;
  const limit = Number.parseInt(query.get('limit') ?? '', 10);
  if (query.get('resourceVersionMatch') === 'Exact' || limit > 0) {
    throw tooLargeResourceVersion(requested, cluster.store.resourceVersion, 0);
  }
  const fresh = await untilFresh(
    cluster.store,
    requested,
    cluster.tooLargeResourceVersionWaitMs,
    res,
  );
  if (!fresh && !res.destroyed) {
    throw tooLargeResourceVersion(requested, cluster.store.resourceVersion, 1);
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
    const objects = page.items.map(
      (o) => JSON.parse(render(o, apiVersion).toString('utf8')) as JsonObject,
    );
    sendJson(
      res,
      200,
      table(objects, metadata, query.get('includeObject') ?? 'Metadata', type.kind),
    );
    return;
  }
  // Items are concatenated as stored: no parse, no re-encode. Typed lists of
  // built-in kinds carry no apiVersion/kind on their items (the real server's
  // do not either); custom resources keep them.
  const head = JSON.stringify({ kind: listKind, apiVersion, metadata });
  const parts: Buffer[] = [Buffer.from(`${head.slice(0, -1)},"items":[`)];
  let length = parts[0]?.length ?? 0;
  page.items.forEach((o, i) => {
    if (i > 0) parts.push(COMMA);
    if (type.builtin && o.apiVersion === apiVersion && o.typeMetaLength > 0) {
      parts.push(OPEN, o.bytes.subarray(o.typeMetaLength));
    } else parts.push(render(o, apiVersion));
  });
  parts.push(CLOSE);
  for (const part of parts.slice(1)) length += part.length;
  if (willCompress(res, length)) {
    sendJson(res, 200, Buffer.concat(parts, length));
    return;
  }
  // Written part by part under one cork: the kernel gets them in one writev, no copy here.
  res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': length });
  res.cork();
  for (const part of parts) res.write(part);
  res.uncork();
  res.end();
}
