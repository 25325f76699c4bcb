import { validateLabels } from './validate-labels.ts';

/** A namespace as far as its labels are concerned (`labels` is the JSON text GraphQL returns). */
export interface LabelledNamespaceInput {
  readonly name: string;
  readonly delete?: boolean | null;
  readonly labels?: string | null;
  readonly cluster: { readonly name: string };
}

/** The labels app-interface wants on one namespace. */
export interface DesiredNamespaceLabels {
  readonly cluster: string;
  readonly namespace: string;
  readonly labels: Readonly<Record<string, string>>;
}

/** Bad data found while building the desired state; the namespace concerned is left alone. */
interface NamespaceLabelError {
  readonly cluster: string;
  readonly namespace: string;
  readonly message: string;
}

export interface DesiredNamespaceLabelsResult {
  /** Valid, uniquely defined namespaces, sorted by cluster and name. */
  readonly desired: DesiredNamespaceLabels[];
  readonly errors: NamespaceLabelError[];
}

/** Namespaces this run looks at: not being deleted and in this shard (`<cluster>/<namespace>`). */
export function namespacesInScope<N extends LabelledNamespaceInput>(
  namespaces: readonly N[],
  isInShard: (key: string) => boolean,
): N[] {
  return namespaces.filter((ns) => !ns.delete && isInShard(`${ns.cluster.name}/${ns.name}`));
}

/**
 * The labels wanted per namespace of `namespaces` (already in scope). A
 * namespace without `labels` is not managed; one on a cluster without a
 * working client is skipped, as upstream. Every invalid label is reported
 * and its namespace skipped. A namespace defined more than once is reported
 * and skipped too (upstream drops it with a debug line only; see README).
 */
export function desiredNamespaceLabels(
  namespaces: readonly LabelledNamespaceInput[],
  clustersWithClient: ReadonlySet<string>,
): DesiredNamespaceLabelsResult {
  const errors: NamespaceLabelError[] = [];
  const byKey = new Map<string, DesiredNamespaceLabels>();
  const failed = new Set<string>();
  const definitions = new Map<string, { cluster: string; namespace: string; count: number }>();
  for (const ns of namespaces) {
    if (ns.labels === null || ns.labels === undefined) continue;
    const cluster = ns.cluster.name;
    if (!clustersWithClient.has(cluster)) continue;
    const key = `${cluster}/${ns.name}`;
    const seen = definitions.get(key);
    if (seen) seen.count += 1;
    else definitions.set(key, { cluster, namespace: ns.name, count: 1 });
    const parsed = parseLabels(ns.labels);
    const problems = typeof parsed === 'string' ? [parsed] : validateLabels(parsed);
    if (typeof parsed === 'string' || problems.length > 0) {
      for (const message of problems) errors.push({ cluster, namespace: ns.name, message });
      failed.add(key);
      continue;
    }
    if (!byKey.has(key)) {
      byKey.set(key, { cluster, namespace: ns.name, labels: parsed as Record<string, string> });
    }
  }
  for (const [key, { cluster, namespace, count }] of definitions) {
    if (count < 2) continue;
    errors.push({
      cluster,
      namespace,
      message: `Found ${count} definitions of namespace ${key}; its labels are left alone`,
    });
    byKey.delete(key);
  }
  const desired = [...byKey.entries()]
    .filter(([key]) => !failed.has(key))
    .map(([, value]) => value)
    .sort((a, b) => cmp(a.cluster, b.cluster) || cmp(a.namespace, b.namespace));
  return { desired, errors };
}

function parseLabels(text: string): Record<string, unknown> | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return `labels are not valid JSON: ${text}`;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return `labels must be a map of label keys to values, not ${text}`;
  }
  return value as Record<string, unknown>;
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
