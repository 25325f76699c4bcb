import { apiVersionOf } from './catalogue.ts';
import type { FakeCluster } from './cluster.ts';

/**
 * Just enough OpenAPI v3 for kubectl: the index of group-versions and, per
 * group-version, the PATCH operations with their `fieldValidation` parameter.
 * kubectl reads them to learn that the server validates fields itself, and
 * then skips client-side validation (which would need full schemas).
 */

function prefixOf(group: string, version: string): string {
  return group === '' ? `api/${version}` : `apis/${group}/${version}`;
}

export function openApiIndex(cluster: FakeCluster): string {
  const paths: Record<string, { serverRelativeURL: string }> = {};
  for (const t of cluster.types()) {
    for (const v of t.versions) {
      const prefix = prefixOf(t.group, v);
      paths[prefix] = {
        serverRelativeURL: `/openapi/v3/${prefix}?hash=${cluster.store.resourceVersion}`,
      };
    }
  }
  return JSON.stringify({ paths });
}

const PARAMETERS = ['dryRun', 'fieldManager', 'fieldValidation', 'force'].map((name) => ({
  name,
  in: 'query',
  schema: { type: name === 'force' ? 'boolean' : 'string' },
}));

/** The document of `api/v1` or `apis/<group>/<version>`; undefined when not served. */
export function openApiGroupVersion(cluster: FakeCluster, path: string): string | undefined {
  const segments = path.split('/').filter((s) => s !== '');
  const [group, version] =
    segments[0] === 'api' ? ['', segments[1] ?? ''] : [segments[1] ?? '', segments[2] ?? ''];
  const types = cluster.types().filter((t) => t.group === group && t.versions.includes(version));
  if (types.length === 0) return undefined;
  const paths: Record<string, unknown> = {};
  for (const t of types) {
    const base = `/${prefixOf(group, version)}`;
    const collection = t.namespaced
      ? `${base}/namespaces/{namespace}/${t.plural}`
      : `${base}/${t.plural}`;
    paths[`${collection}/{name}`] = {
      patch: {
        operationId: `patch${t.kind}`,
        parameters: PARAMETERS,
        responses: { '200': { description: 'OK' } },
        'x-kubernetes-action': 'patch',
        'x-kubernetes-group-version-kind': { group, version, kind: t.kind },
      },
    };
  }
  return JSON.stringify({
    openapi: '3.0.0',
    info: { title: 'Kubernetes', version: 'v1.31.0' },
    paths,
    components: { schemas: {} },
    'x-api-version': apiVersionOf(group, version),
  });
}
