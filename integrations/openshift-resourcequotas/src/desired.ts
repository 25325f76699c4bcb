import { type CurrentStateSpec, type PyValue, pyStr, specsForKind } from '@qontract/openshift';
import type { OpenshiftResourcequotasNamespacesQuery } from './namespaces.generated.ts';

type Namespace = NonNullable<OpenshiftResourcequotasNamespacesQuery['namespaces']>[number];
type Quota = NonNullable<Namespace['quota']>;
type QuotaItem = Quota['quotas'][number];

/** The only kind this integration reads and writes (the original's override_managed_types). */
const MANAGED_TYPE = 'ResourceQuota';

export interface ResourceQuotaBody {
  apiVersion: 'v1';
  kind: 'ResourceQuota';
  metadata: { name: string };
  spec: { hard: Record<string, string>; scopes?: string[] };
}

export interface DesiredResourceQuota {
  readonly cluster: string;
  readonly namespace: string;
  /** The namespace data file, for error messages. */
  readonly source: string;
  readonly body: ResourceQuotaBody;
}

/** A namespace with a `quota` reference that is not being deleted (no sharding, as upstream). */
export function isManagedNamespace(ns: Namespace): ns is Namespace & { quota: Quota } {
  return Boolean(ns.quota) && !ns.delete;
}

/**
 * `{limits: {cpu: '4'}, pods: 20}` → `{'limits.cpu': '4', pods: '20'}`: nested
 * maps joined with dots, null values dropped, leaves as Python's `str()` writes
 * them (the original's `flatten` helper).
 */
export function flattenResources(resources: object, prefix = ''): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(resources)) {
    if (value === null || value === undefined) continue;
    const path = prefix ? `${prefix}.${key}` : key;
    if (typeof value === 'object') Object.assign(out, flattenResources(value, path));
    else out[path] = pyStr(value as PyValue);
  }
  return out;
}

/** A `quota-1` item as a ResourceQuota: `spec.hard` from its resources, `spec.scopes` only when non-empty. */
export function resourceQuotaBody(quota: QuotaItem): ResourceQuotaBody {
  const body: ResourceQuotaBody = {
    apiVersion: 'v1',
    kind: 'ResourceQuota',
    metadata: { name: quota.name },
    spec: { hard: flattenResources(quota.resources) },
  };
  if (quota.scopes?.length) body.spec.scopes = [...quota.scopes];
  return body;
}

/**
 * What to read per managed namespace: its ResourceQuotas, read with the
 * cluster-admin token when the namespace says `clusterAdmin`, restricted to the
 * names listed for `ResourceQuota` in `managedResourceNames` (the last entry
 * wins; entries for other kinds are ignored, as the original does with an
 * override list).
 */
export function currentStateSpecs(namespaces: readonly Namespace[]): CurrentStateSpec[] {
  return specsForKind(namespaces.filter(isManagedNamespace), MANAGED_TYPE);
}

/**
 * One ResourceQuota per item of each managed namespace's quota, on clusters
 * with a working client (other clusters are left alone: their current state
 * is unknown).
 */
export function desiredResourceQuotas(input: {
  readonly namespaces: readonly Namespace[];
  readonly clusters: ReadonlySet<string>;
}): DesiredResourceQuota[] {
  return input.namespaces
    .filter(isManagedNamespace)
    .filter((ns) => input.clusters.has(ns.cluster.name))
    .flatMap((ns) =>
      ns.quota.quotas.map((quota) => ({
        cluster: ns.cluster.name,
        namespace: ns.name,
        source: `${ns.path} (quota ${quota.name})`,
        body: resourceQuotaBody(quota),
      })),
    );
}
