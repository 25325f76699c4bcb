/**
 * Which namespaces a run looks at: every namespace that wants tokens copied
 * in (its own `openshiftServiceAccountTokens` plus those of its
 * `sharedResources`), and every namespace the tokens come from.
 */
export interface ClusterRef {
  readonly name: string;
  readonly disable?: { readonly integrations?: readonly string[] | null } | null;
}

export interface TokenSpecInput<C extends ClusterRef = ClusterRef> {
  /** The Secret's name in the consumer namespace; default `<cluster>-<namespace>-<serviceAccountName>`. */
  readonly name?: string | null;
  readonly serviceAccountName: string;
  /** Where the ServiceAccount lives. */
  readonly namespace: { readonly name: string; readonly cluster: C };
}

export interface TokenNamespaceInput<C extends ClusterRef = ClusterRef> {
  readonly name: string;
  readonly delete?: boolean | null;
  readonly cluster: C;
  readonly openshiftServiceAccountTokens?: readonly TokenSpecInput<C>[] | null;
  readonly sharedResources?: ReadonlyArray<{
    readonly openshiftServiceAccountTokens?: readonly TokenSpecInput<C>[] | null;
  } | null> | null;
}

/** A namespace of the run: consumers carry their token specs, source-only namespaces none. */
export interface ScopedNamespace<C extends ClusterRef = ClusterRef> {
  readonly name: string;
  readonly cluster: C;
  readonly tokens: readonly TokenSpecInput<C>[];
}

export interface TokenScope<C extends ClusterRef> {
  /** Consumers first (in data order), then source namespaces not already present. */
  readonly namespaces: ScopedNamespace<C>[];
  /** Namespaces defined more than once (`<cluster>/<namespace>`): reported; the first definition is used. */
  readonly duplicates: string[];
}

/**
 * The run's namespaces, as upstream builds them: consumers not being deleted
 * whose cluster does not disable `integration`, with shared token specs
 * appended to their own, then the source namespace of every spec.
 */
export function tokenScope<C extends ClusterRef>(
  namespaces: readonly TokenNamespaceInput<C>[],
  integration: string,
): TokenScope<C> {
  const byKey = new Map<string, ScopedNamespace<C>>();
  const duplicates = new Set<string>();
  for (const ns of namespaces) {
    if (ns.delete) continue;
    if (ns.cluster.disable?.integrations?.includes(integration)) continue;
    const tokens = [
      ...(ns.openshiftServiceAccountTokens ?? []),
      ...(ns.sharedResources ?? []).flatMap((sr) => sr?.openshiftServiceAccountTokens ?? []),
    ];
    if (tokens.length === 0) continue;
    const key = `${ns.cluster.name}/${ns.name}`;
    if (byKey.has(key)) {
      duplicates.add(key);
      continue;
    }
    byKey.set(key, { name: ns.name, cluster: ns.cluster, tokens });
  }
  for (const consumer of [...byKey.values()]) {
    for (const spec of consumer.tokens) {
      const key = `${spec.namespace.cluster.name}/${spec.namespace.name}`;
      if (!byKey.has(key)) {
        byKey.set(key, { name: spec.namespace.name, cluster: spec.namespace.cluster, tokens: [] });
      }
    }
  }
  return { namespaces: [...byKey.values()], duplicates: [...duplicates].sort() };
}
