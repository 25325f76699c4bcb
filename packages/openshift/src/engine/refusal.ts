/**
 * What the engine does when the API server refuses a server-side apply: the
 * original's recovery rules as one pure decision, table-tested in
 * `refusal.test.ts`. The recoveries themselves live in `recoveries.ts`.
 */
export type Recovery =
  /** The namespace does not exist (yet): warn and skip; openshift-namespaces creates it. */
  | 'namespace-missing'
  /** 409: somebody wrote in between; read the object again and apply once more. */
  | 'read-and-retry'
  /** A Deployment's selector is immutable: re-create it (per its strategy). */
  | 'recreate-deployment'
  /**
   * A Deployment switched to Recreate still holds the server's default
   * `rollingUpdate` (owned by nobody, so an apply does not remove it): drop it
   * with the type change, then apply.
   */
  | 'switch-to-recreate'
  /** An immutable field of a Route, Service, Secret or Job (or a Service's clusterIP): delete, wait, apply. */
  | 'delete-and-apply'
  /** A StatefulSet update the API forbids: orphan-delete, apply, grow the volume claims. */
  | 'recreate-statefulset'
  /** The body is too large for an apply (413/415): replace, or create when missing. */
  | 'replace-or-create'
  /** No recovery: the refusal is the action's error. */
  | 'none';

/** The parts of a refusal the decision reads. */
export interface Refusal {
  readonly status: number;
  readonly message: string;
  /** The Status `details` (`{kind, name}` of what was not found). */
  readonly details?: unknown;
}

/** Kinds the original deletes and re-creates when a field is immutable. */
const RECREATE_ON_IMMUTABLE = new Set(['Route', 'Service', 'Secret', 'Job']);

/**
 * The recovery for a refused apply of an object of `kind` (the bare kind,
 * `Deployment`) in `namespace` (undefined for cluster-scoped objects).
 */
export function recoveryFor(kind: string, refusal: Refusal, namespace?: string): Recovery {
  const { status, message } = refusal;
  if (status === 404 && namespace !== undefined && isNamespaceNotFound(refusal, namespace)) {
    return 'namespace-missing';
  }
  if (status === 409) return 'read-and-retry';
  if (
    kind === 'Deployment' &&
    message.includes(
      "spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'",
    )
  ) {
    return 'switch-to-recreate';
  }
  const immutable = message.includes('field is immutable');
  if (immutable && kind === 'Deployment') return 'recreate-deployment';
  if (
    (immutable && RECREATE_ON_IMMUTABLE.has(kind)) ||
    (kind === 'Service' &&
      (message.includes('may not change once set') ||
        message.includes('primary clusterIP can not be unset')))
  ) {
    return 'delete-and-apply';
  }
  if (
    kind === 'StatefulSet' &&
    message.includes('updates to statefulset spec for fields other than')
  ) {
    return 'recreate-statefulset';
  }
  if (status === 413 || status === 415 || message.includes('Request entity too large')) {
    return 'replace-or-create';
  }
  return 'none';
}

function isNamespaceNotFound(refusal: Refusal, namespace: string): boolean {
  const details = refusal.details as { kind?: string; name?: string } | undefined;
  return (
    (details?.kind === 'namespaces' && details.name === namespace) ||
    refusal.message.includes(`namespaces "${namespace}" not found`)
  );
}
