/** Why an action is planned: the original's decision rules, by name. */
export type ActionReason =
  | 'new' // desired only
  | 'changed' // on both sides, three-way compare says different
  | 'take-over' // identical, but owned by another caller we may take over
  | 'unchanged' // identical and ours, applied anyway: the run skips the compare (`skipCompare`)
  | 'removed' // current only, ours
  | 'take-over-delete'; // current only, unannotated, taken over (no ownerReferences)

/** One step of a plan. Plain data: dry-run prints it, `--plan-out` writes it, wet-run executes it. */
export interface PlannedAction {
  readonly action: 'apply' | 'delete';
  readonly cluster: string;
  /** The namespace, or `cluster` for cluster-scoped objects (the original's convention). */
  readonly namespace: string;
  /** The inventory's resource type: a kind string (`Deployment`, `Route.route.openshift.io`). */
  readonly kind: string;
  readonly name: string;
  readonly privileged: boolean;
  readonly reason: ActionReason;
  /** Changed top-level paths for `changed` applies, for the reader; Secret data is never shown. */
  readonly diff?: readonly string[];
  /**
   * The unified diff of the cluster's object against what would be applied
   * (`renderObjectDiff`: server-owned fields left out, Secret values masked),
   * computed only when the run asks for it (`--diff`, `--plan-out`).
   */
  readonly unifiedDiff?: string;
  /**
   * For applies: the annotated body as the original serialises it for
   * `oc apply` (Python `json.dumps(sort_keys=True)` text), sent as is.
   */
  readonly payload?: string;
  /** A `qontract.recycle: "true"` Secret/ConfigMap: restart the workloads using it after applying. */
  readonly recycle?: boolean;
  /** `qontract.ignore_reconcile_time: "true"`: the apply is left out of the reconcile-time histogram. */
  readonly ignoreReconcileTime?: true;
  /**
   * The object as the list returned it, kept only when client-side apply
   * still owns fields of it: the apply moves those fields to our manager
   * first, without reading the object again.
   */
  readonly clientSideApplied?: {
    readonly resourceVersion: string;
    readonly managedFields: readonly unknown[];
  };
}

/** An action as `--plan-out` writes it (bodies left out: they may hold secrets; the masked diff stays). */
export function planEntryOf(action: PlannedAction): Record<string, unknown> {
  const {
    payload: _payload,
    recycle: _recycle,
    clientSideApplied: _csa,
    ignoreReconcileTime: _ignored,
    ...rest
  } = action;
  return rest;
}
