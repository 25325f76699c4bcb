import type { ResourceType } from './catalogue.ts';
import type { FakeCluster } from './cluster.ts';
import type { JsonObject } from './json.ts';
import { isPods } from './pod-logs.ts';

/**
 * Aggregated discovery (`apidiscovery.k8s.io/v2`), which client-go asks for
 * first on `/api` and `/apis`: every group, version and resource in one
 * document, so kubectl needs two discovery requests instead of one per
 * group-version.
 */

export const AGGREGATED_CONTENT_TYPE =
  'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';

export function wantsAggregated(accept: string | undefined): boolean {
  const parts = accept?.split(',') ?? [];
  return parts.some(
    (part) =>
      part.includes('g=apidiscovery.k8s.io') &&
      part.includes('v=v2;') &&
      part.includes('as=APIGroupDiscoveryList'),
  );
}

function verbsOf(type: ResourceType): readonly string[] {
  if (type.virtual === 'projectrequest') return ['create', 'list'];
  if (type.virtual === 'project') return ['create', 'delete', 'get', 'list'];
  return ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
}

function resource(type: ResourceType, version: string): JsonObject {
  const responseKind = { group: type.group, version, kind: type.kind };
  return {
    resource: type.plural,
    responseKind,
    scope: type.namespaced ? 'Namespaced' : 'Cluster',
    singularResource: type.singular,
    verbs: verbsOf(type),
    ...(type.shortNames.length > 0 ? { shortNames: type.shortNames } : {}),
    ...(type.categories ? { categories: type.categories } : {}),
    ...(type.statusSubresource
      ? {
          subresources: [
            { subresource: 'status', responseKind, verbs: ['get', 'patch', 'update'] },
            ...(isPods(type) ? [{ subresource: 'log', responseKind, verbs: ['get'] }] : []),
          ],
        }
      : {}),
  };
}

/** The document for `/api` (`core`: the legacy group) or `/apis` (every named group). */
export function aggregatedDiscovery(cluster: FakeCluster, core: boolean): string {
  const groups = new Map<string, Map<string, JsonObject[]>>();
  for (const type of cluster.types()) {
    if ((type.group === '') !== core) continue;
    const versions = groups.get(type.group) ?? new Map<string, JsonObject[]>();
    for (const version of type.versions) {
      versions.set(version, [...(versions.get(version) ?? []), resource(type, version)]);
    }
    groups.set(type.group, versions);
  }
  return JSON.stringify({
    kind: 'APIGroupDiscoveryList',
    apiVersion: 'apidiscovery.k8s.io/v2',
    metadata: {},
    items: [...groups].map(([name, versions]) => ({
      metadata: name === '' ? {} : { name },
      versions: [...versions].map(([version, resources]) => ({
        version,
        resources,
        freshness: 'Current',
      })),
    })),
  });
}
