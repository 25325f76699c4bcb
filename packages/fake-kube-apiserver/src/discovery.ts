import {
  AGGREGATED_CONTENT_TYPE,
  aggregatedDiscovery,
  wantsAggregated,
} from './aggregated-discovery.ts';
import { RESOURCE_VERBS } from './catalogue.ts';
import type { FakeCluster } from './cluster.ts';
import type { HandlerContext } from './handler-context.ts';
import { sendJson } from './http-io.ts';
import type { JsonObject } from './json.ts';
import { openApiGroupVersion, openApiIndex } from './openapi.ts';
import { isPods } from './pod-logs.ts';
import { pathNotFound } from './status.ts';

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
      ...(t.categories ? { categories: t.categories } : {}),
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
    if (isPods(t)) {
      out.push({
        name: 'pods/log',
        singularName: '',
        namespaced: true,
        kind: 'Pod',
        verbs: ['get'],
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
  const isRoot = pathname.replace(/\/$/, '') === '/api' || pathname.replace(/\/$/, '') === '/apis';
  if (isRoot && wantsAggregated(ctx.req.headers.accept)) {
    sendJson(
      res,
      200,
      aggregatedDiscovery(cluster, pathname.startsWith('/api/') || pathname === '/api'),
      {
        'Content-Type': AGGREGATED_CONTENT_TYPE,
      },
    );
    return;
  }
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
