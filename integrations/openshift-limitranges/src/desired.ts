import { type CurrentStateSpec, specsForKind } from '@qontract/openshift';
import type { OpenshiftLimitrangesNamespacesQuery } from './namespaces.generated.ts';

type Namespace = NonNullable<OpenshiftLimitrangesNamespacesQuery['namespaces']>[number];
type LimitRange = NonNullable<Namespace['limitRanges']>;
type LimitItem = LimitRange['limits'][number];

/** The only kind this integration reads and writes (the original's override_managed_types). */
const MANAGED_TYPE = 'LimitRange';

/** The keys of a limit item copied into the object, in the original's order. */
const SUPPORTED_LIMITRANGE_TYPES = [
  'default',
  'defaultRequest',
  'max',
  'maxLimitRequestRatio',
  'min',
  'type',
] as const satisfies ReadonlyArray<keyof LimitItem>;

type LimitRangeItemSpec = {
  [K in (typeof SUPPORTED_LIMITRANGE_TYPES)[number]]?: LimitItem[K];
};

export interface LimitRangeBody {
  apiVersion: 'v1';
  kind: 'LimitRange';
  metadata: { name: string };
  spec: { limits: LimitRangeItemSpec[] | null };
}

export interface DesiredLimitRange {
  readonly cluster: string;
  readonly namespace: string;
  /** The namespace and limitrange data files, for error messages. */
  readonly source: string;
  readonly body: LimitRangeBody;
}

/** A namespace with a `limitRanges` reference that is not being deleted (no sharding, as upstream). */
export function isManagedNamespace(ns: Namespace): ns is Namespace & { limitRanges: LimitRange } {
  return Boolean(ns.limitRanges) && !ns.delete;
}

/**
 * The LimitRange of a `limitrange-1` file: each limit item keeps its non-null
 * keys as they are (a resource map keeps inner nulls, e.g. `{cpu: '1', memory: null}`,
 * because the original hashes them). An empty list becomes null, as the API
 * server returns it.
 */
export function limitRangeBody(limitRange: Pick<LimitRange, 'name' | 'limits'>): LimitRangeBody {
  const limits = limitRange.limits.map((item) => {
    const spec: Record<string, unknown> = {};
    for (const key of SUPPORTED_LIMITRANGE_TYPES) {
      if (item[key] !== null && item[key] !== undefined) spec[key] = item[key];
    }
    return spec as LimitRangeItemSpec;
  });
  return {
    apiVersion: 'v1',
    kind: 'LimitRange',
    metadata: { name: limitRange.name },
    spec: { limits: limits.length === 0 ? null : limits },
  };
}

/**
 * What to read per managed namespace: its LimitRanges, read with the
 * cluster-admin token when the namespace says `clusterAdmin`, restricted to the
 * names listed for `LimitRange` in `managedResourceNames` (the last entry wins;
 * entries for other kinds are ignored, as the original does with an override list).
 */
export function currentStateSpecs(namespaces: readonly Namespace[]): CurrentStateSpec[] {
  return specsForKind(namespaces.filter(isManagedNamespace), MANAGED_TYPE);
}

/**
 * One LimitRange per managed namespace on a cluster with a working client
 * (other clusters are left alone: their current state is unknown).
 */
export function desiredLimitRanges(input: {
  readonly namespaces: readonly Namespace[];
  readonly clusters: ReadonlySet<string>;
}): DesiredLimitRange[] {
  return input.namespaces
    .filter(isManagedNamespace)
    .filter((ns) => input.clusters.has(ns.cluster.name))
    .map((ns) => ({
      cluster: ns.cluster.name,
      namespace: ns.name,
      source: `${ns.path} (limitRanges ${ns.limitRanges.path})`,
      body: limitRangeBody(ns.limitRanges),
    }));
}
