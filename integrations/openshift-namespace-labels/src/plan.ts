/**
 * The three-way label diff of one namespace: what app-interface wants, what
 * the cluster has, and which keys this integration set before (kept in the
 * state store). Only keys we manage are ever changed or removed; a wanted
 * key that someone else already set is a conflict, never overwritten.
 */
export interface NamespaceLabelState {
  readonly cluster: string;
  readonly namespace: string;
  readonly desired: Readonly<Record<string, string>>;
  /** Keys this integration manages, in the order the state store keeps them. */
  readonly managed: readonly string[];
  readonly current: Readonly<Record<string, string>>;
}

export interface NamespaceLabelPlan {
  readonly cluster: string;
  readonly namespace: string;
  /** Labels to set (a value) or remove (`null`), in the order the original logs them. */
  readonly changes: Readonly<Record<string, string | null>>;
  /** The new managed-key list when it changed (to be stored), otherwise undefined. */
  readonly managed: readonly string[] | undefined;
  /** Wanted keys that are on the namespace but not ours; the namespace must not be touched. */
  readonly conflicts: readonly string[];
}

/**
 * Plans one namespace as upstream does: forget managed keys that are gone
 * from both sides; set wanted keys the namespace lacks (and start managing
 * them); fix managed keys whose value differs; remove managed keys no longer
 * wanted. The managed list keeps upstream's order (old keys first, new ones
 * appended), so the stored JSON matches what the original writes.
 */
export function planNamespaceLabels(s: NamespaceLabelState): NamespaceLabelPlan {
  const { desired, current } = s;
  const managed = new Set(s.managed);
  const has = (o: Readonly<Record<string, unknown>>, k: string) => Object.hasOwn(o, k);
  const changes: Record<string, string | null> = {};
  const conflicts: string[] = [];
  const forget = new Set<string>();
  const adopt: string[] = [];

  for (const key of s.managed) {
    if (!has(desired, key) && !has(current, key)) forget.add(key);
  }
  for (const [key, value] of Object.entries(desired)) {
    if (!has(current, key)) {
      if (!managed.has(key)) adopt.push(key);
      changes[key] = value;
    } else if (!managed.has(key)) {
      conflicts.push(`Label conflict: desired ${key}=${value} vs current ${key}=${current[key]}`);
    } else if (value !== current[key]) {
      changes[key] = value;
    }
  }
  for (const key of Object.keys(current)) {
    if (managed.has(key) && !has(desired, key)) changes[key] = null;
  }
  const updated =
    forget.size > 0 || adopt.length > 0
      ? [...s.managed.filter((k) => !forget.has(k)), ...adopt]
      : undefined;
  return { cluster: s.cluster, namespace: s.namespace, changes, managed: updated, conflicts };
}

/** The state-store key of a namespace's managed label keys (upstream's layout). */
export function managedLabelsStateKey(cluster: string, namespace: string): string {
  return `${cluster}/${namespace}-managed-labels`;
}
