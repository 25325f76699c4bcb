import { type CurrentStateSpec, specsForKind } from '@qontract/openshift';
import type { OpenshiftNetworkPoliciesNamespacesQuery } from './namespaces.generated.ts';

type Namespace = NonNullable<OpenshiftNetworkPoliciesNamespacesQuery['namespaces']>[number];
type AllowedNamespace = NonNullable<Namespace['networkPoliciesAllow']>[number];

/** The only kind this integration reads and writes (the original's override_managed_types). */
const MANAGED_TYPE = 'NetworkPolicy';

export interface NetworkPolicyBody {
  apiVersion: 'networking.k8s.io/v1';
  kind: 'NetworkPolicy';
  metadata: { name: string };
  spec: {
    ingress: Array<{
      from: Array<{ namespaceSelector: { matchLabels: Record<string, string> } }>;
    }>;
    podSelector: Record<string, never>;
    policyTypes: ['Ingress'];
  };
}

export interface DesiredNetworkPolicy {
  readonly cluster: string;
  readonly namespace: string;
  readonly privileged: boolean;
  /** The namespace data file, for error messages. */
  readonly source: string;
  readonly body: NetworkPolicyBody;
}

export interface NetworkPoliciesProblem {
  readonly scope: string;
  readonly message: string;
}

/**
 * A namespace that lets other namespaces in (non-empty `networkPoliciesAllow`),
 * is not being deleted and belongs to this shard (`<cluster>/<namespace>`).
 */
export function isManagedNamespace(
  ns: Namespace,
  isInShard: (key: string) => boolean,
): ns is Namespace & { networkPoliciesAllow: AllowedNamespace[] } {
  return (
    Boolean(ns.networkPoliciesAllow?.length) &&
    !ns.delete &&
    isInShard(`${ns.cluster.name}/${ns.name}`)
  );
}

/** Allows ingress from every pod of `source` (selected by its `kubernetes.io/metadata.name` label). */
export function networkPolicyBody(source: string): NetworkPolicyBody {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name: `allow-from-${source}-namespace` },
    spec: {
      ingress: [
        {
          from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': source } } }],
        },
      ],
      podSelector: {},
      policyTypes: ['Ingress'],
    },
  };
}

/** What to read: the NetworkPolicies of each managed namespace (cluster-admin token when `clusterAdmin`). */
export function currentStateSpecs(namespaces: readonly Namespace[]): CurrentStateSpec[] {
  return specsForKind(namespaces, MANAGED_TYPE);
}

/**
 * One NetworkPolicy per allowed source namespace, in managed namespaces on
 * clusters with a working client. A source on another cluster cannot be
 * selected by a NetworkPolicy: it is a problem (an error of the run), and the
 * namespace's other sources still get theirs.
 */
export function desiredNetworkPolicies(input: {
  readonly namespaces: readonly Namespace[];
  readonly clusters: ReadonlySet<string>;
}): { desired: DesiredNetworkPolicy[]; problems: NetworkPoliciesProblem[] } {
  const desired: DesiredNetworkPolicy[] = [];
  const problems: NetworkPoliciesProblem[] = [];
  for (const ns of input.namespaces) {
    const cluster = ns.cluster.name;
    if (!input.clusters.has(cluster)) continue;
    for (const source of ns.networkPoliciesAllow ?? []) {
      if (source.cluster.name !== cluster) {
        problems.push({
          scope: `${cluster}/${ns.name}`,
          message: `[${cluster}/${ns.name}] Network Policy from cluster '${source.cluster.name}' not allowed.`,
        });
        continue;
      }
      desired.push({
        cluster,
        namespace: ns.name,
        privileged: Boolean(ns.clusterAdmin),
        source: `${ns.path} (networkPoliciesAllow ${source.name})`,
        body: networkPolicyBody(source.name),
      });
    }
  }
  return { desired, problems };
}
