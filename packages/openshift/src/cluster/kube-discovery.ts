/**
 * What a cluster serves: its API resources, from aggregated discovery
 * (Kubernetes 1.30+: `/api` and `/apis` as APIGroupDiscoveryList, two
 * requests) when the server offers it, else from legacy discovery (`/api/v1`,
 * `/apis`, one request per group).
 */
import { type ApiResource, ApiResourceCatalog } from './api-resources.ts';
import type { KubeTransport } from './kube-transport.ts';

/** The cluster's API resources (`KubeClient.discover`). */
export async function discoverApiResources(transport: KubeTransport): Promise<ApiResourceCatalog> {
  const [core, groups] = await Promise.all([
    transport.request('GET', '/api', 'discovery', { accept: AGGREGATED_DISCOVERY }),
    transport.request('GET', '/apis', 'discovery', { accept: AGGREGATED_DISCOVERY }),
  ]);
  if (isAggregated(core) && isAggregated(groups)) {
    return new ApiResourceCatalog([...fromAggregated(core), ...fromAggregated(groups)]);
  }
  return legacyDiscovery(transport, groups as { groups?: DiscoveryGroup[] });
}

async function legacyDiscovery(
  transport: KubeTransport,
  apis: { groups?: DiscoveryGroup[] },
): Promise<ApiResourceCatalog> {
  const core = (await transport.request('GET', '/api/v1', 'discovery')) as DiscoveryResourceList;
  const resources: ApiResource[] = fromResourceList('', 'v1', core);
  const lists = await Promise.all(
    (apis.groups ?? []).map(async (g) => {
      const version = g.preferredVersion?.version ?? g.versions?.[0]?.version;
      if (!version) return [];
      const list = (await transport.request('GET', `/apis/${g.name}/${version}`, 'discovery', {
        allowNotFound: true,
      })) as DiscoveryResourceList | undefined;
      return list ? fromResourceList(g.name, version, list) : [];
    }),
  );
  for (const l of lists) resources.push(...l);
  return new ApiResourceCatalog(resources);
}

interface DiscoveryResourceList {
  resources?: Array<{ name: string; kind: string; namespaced: boolean; verbs?: string[] }>;
}
interface DiscoveryGroup {
  name: string;
  preferredVersion?: { version: string };
  versions?: Array<{ version: string }>;
}

function fromResourceList(
  group: string,
  version: string,
  list: DiscoveryResourceList,
): ApiResource[] {
  return (list.resources ?? [])
    .filter((r) => !r.name.includes('/')) // subresources (pods/log, deployments/scale)
    .map((r) => ({
      kind: r.kind,
      group,
      version,
      name: r.name,
      namespaced: r.namespaced,
      verbs: r.verbs ?? [],
    }));
}

/** Aggregated discovery first (v2, then v2beta1), plain JSON (legacy documents) otherwise. */
const AGGREGATED_DISCOVERY = [
  'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList',
  'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList',
  'application/json',
].join(',');

interface AggregatedDiscovery {
  kind: 'APIGroupDiscoveryList';
  items?: Array<{
    metadata?: { name?: string };
    versions?: Array<{
      version: string;
      resources?: Array<{
        resource: string;
        responseKind?: { group?: string; version?: string; kind?: string };
        scope?: string;
        verbs?: string[];
      }>;
    }>;
  }>;
}

function isAggregated(v: unknown): v is AggregatedDiscovery {
  return (v as { kind?: string } | undefined)?.kind === 'APIGroupDiscoveryList';
}

/** Every group's versions in preference order (the first version listed is preferred). */
function fromAggregated(list: AggregatedDiscovery): ApiResource[] {
  const out: ApiResource[] = [];
  for (const group of list.items ?? []) {
    const groupName = group.metadata?.name ?? '';
    for (const v of group.versions ?? []) {
      for (const r of v.resources ?? []) {
        const kind = r.responseKind?.kind;
        if (!kind) continue;
        out.push({
          kind,
          group: groupName,
          version: v.version,
          name: r.resource,
          namespaced: r.scope === 'Namespaced',
          verbs: r.verbs ?? [],
        });
      }
    }
  }
  return out;
}
