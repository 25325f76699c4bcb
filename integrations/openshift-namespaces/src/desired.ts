/**
 * The desired state of openshift-namespaces: a pure function of app-interface
 * data and the run's filters.
 */
export interface NamespaceInput {
  readonly name: string;
  readonly delete?: boolean | null;
  readonly clusterAdmin?: boolean | null;
  readonly managedByExternal?: boolean | null;
  readonly cluster: { readonly name: string };
}

export interface DesiredNamespace<N extends NamespaceInput = NamespaceInput> {
  readonly cluster: string;
  readonly namespace: string;
  readonly delete: boolean;
  readonly clusterAdmin: boolean;
  /** The app-interface entry, for the cluster client factory. */
  readonly source: N;
}

export interface DesiredNamespacesFilter {
  /** Legacy sharding on `<cluster>/<namespace>`. */
  readonly isInShard: (key: string) => boolean;
  readonly clusterNames?: readonly string[];
  readonly namespaceName?: string | undefined;
}

export interface DesiredNamespaces<N extends NamespaceInput> {
  readonly desired: DesiredNamespace<N>[];
  /** Keys defined more than once: reported, and the namespace is not touched. */
  readonly duplicates: string[];
}

/**
 * Namespaces of this shard, one per `<cluster>/<name>`; a key defined twice
 * is reported and left alone, an externally managed one ignored. The
 * `--cluster-name` / `--namespace-name` filters apply after duplicate
 * detection, as upstream.
 */
export function desiredNamespaces<N extends NamespaceInput>(
  namespaces: readonly N[],
  filter: DesiredNamespacesFilter,
): DesiredNamespaces<N> {
  const byKey = new Map<string, N[]>();
  for (const ns of namespaces) {
    const key = `${ns.cluster.name}/${ns.name}`;
    if (!filter.isInShard(key)) continue;
    byKey.set(key, [...(byKey.get(key) ?? []), ns]);
  }
  const desired: DesiredNamespace<N>[] = [];
  const duplicates: string[] = [];
  for (const [key, defs] of byKey) {
    if (defs.length > 1) {
      duplicates.push(key);
      continue;
    }
    const ns = defs[0]!;
    if (ns.managedByExternal) continue;
    if (filter.clusterNames?.length && !filter.clusterNames.includes(ns.cluster.name)) continue;
    if (filter.namespaceName && ns.name !== filter.namespaceName) continue;
    desired.push({
      cluster: ns.cluster.name,
      namespace: ns.name,
      delete: Boolean(ns.delete),
      clusterAdmin: Boolean(ns.clusterAdmin),
      source: ns,
    });
  }
  desired.sort((a, b) => cmp(a.cluster, b.cluster) || cmp(a.namespace, b.namespace));
  return { desired, duplicates: duplicates.sort() };
}

export interface NamespaceAction {
  readonly action: 'create' | 'delete';
  readonly cluster: string;
  readonly namespace: string;
  readonly kind: 'Namespace';
  readonly name: string;
  readonly privileged: boolean;
  readonly reason: 'missing' | 'marked for deletion';
}

/**
 * Create what is desired and missing; delete only what app-interface marks
 * `delete: true` and exists. Namespaces unknown to app-interface are never touched.
 */
export function planNamespaceActions(
  desired: readonly DesiredNamespace[],
  exists: (cluster: string, namespace: string) => boolean,
): NamespaceAction[] {
  const actions: NamespaceAction[] = [];
  for (const d of desired) {
    const present = exists(d.cluster, d.namespace);
    const base = {
      cluster: d.cluster,
      namespace: d.namespace,
      kind: 'Namespace' as const,
      name: d.namespace,
      privileged: d.clusterAdmin,
    };
    if (d.delete && present)
      actions.push({ ...base, action: 'delete', reason: 'marked for deletion' });
    if (!d.delete && !present) actions.push({ ...base, action: 'create', reason: 'missing' });
  }
  return actions;
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
