import { errorMessage } from '@qontract/core';
import { isClientSideApplyEntry } from '../cluster/compact-object.ts';
import { jsonPatchFromDiff } from '../resource/json-patch-diff.ts';
import type { OpenshiftResource } from '../resource/openshift-resource.ts';
import { dictGet } from '../resource/py-values.ts';
import {
  normalizeObject,
  resourcesEqual,
  withRecycleAnnotations,
} from '../resource/three-way-diff.ts';
import { renderObjectDiff } from './object-diff.ts';
import type { ActionReason, PlannedAction } from './plan-types.ts';

/** One (cluster, namespace, kind) of the inventory, with both sides by name. */
export interface InventoryItemView {
  readonly cluster: string;
  readonly namespace: string;
  readonly kind: string;
  readonly current: ReadonlyMap<string, OpenshiftResource>;
  readonly desired: ReadonlyMap<string, OpenshiftResource>;
  /** Names to apply/delete with the cluster-admin token. */
  readonly useAdminToken: ReadonlyMap<string, boolean>;
}

export interface PlanOptions {
  /** Delete unannotated objects of the managed kinds (no ownerReferences); take over identical ones from other callers. */
  readonly takeOver: boolean;
  readonly caller?: string | null | undefined;
  /** All callers the integration knows (saas files): a changed object of another known caller is an error. */
  readonly allCallers?: readonly string[] | undefined;
  /**
   * The caller of an object of another caller that holds this name, hidden
   * from `current` (see `leaveOtherCallers` of the engine): such a desired
   * object is left alone, not applied over it.
   */
  readonly heldByOther?: (item: InventoryItemView, name: string) => string | null | undefined;
  readonly clusterHasError: (cluster: string) => boolean;
  /** Render each action's unified diff into the plan (`--diff`, `--plan-out`). */
  readonly renderDiff?: boolean;
  /**
   * Apply our own objects even when the three-way compare finds them equal (a
   * saas file's `compare: false`, the original's `no_dry_run_skip_compare`).
   * The caller rules still hold: another known caller's object stays an error.
   */
  readonly skipCompare?: boolean;
  /** Time of the `qontract.update` annotation (tests pin it). */
  readonly now?: Date;
}

export interface ItemPlan {
  readonly actions: PlannedAction[];
  /** Errors the rules found (caller conflicts), as scope/message pairs to register. */
  readonly errors: Array<{ readonly scope: string; readonly message: string }>;
  /** Items skipped because their cluster has errors. */
  readonly skippedForClusterError: boolean;
  /** A line per desired object left to the other caller that holds it (`heldByOther`). */
  readonly left: string[];
}

/**
 * The original's realize_data decisions for one inventory item, as data:
 * desired-only → apply; on both sides and not equal (three-way compare) →
 * apply unless another known caller owns it; equal but owned by another
 * caller → take over (or an error); current-only → delete only our own
 * objects (same integration and major version, same caller), or unannotated
 * ones without ownerReferences when taking over.
 */
export function planItem(item: InventoryItemView, options: PlanOptions): ItemPlan {
  const plan: ItemPlan = {
    actions: [],
    errors: [],
    skippedForClusterError: false,
    left: [],
  };
  if (options.clusterHasError(item.cluster)) return { ...plan, skippedForClusterError: true };
  const { cluster, namespace, kind } = item;
  const scope = `${cluster}/${namespace}`;
  const caller = options.caller ?? null;
  const apply = (
    name: string,
    desired: OpenshiftResource,
    reason: ActionReason,
    current?: OpenshiftResource,
  ) => {
    const annotated = desired.annotate(options.now ? { now: options.now } : {});
    const payload = annotated.toJson();
    plan.actions.push({
      action: 'apply',
      cluster,
      namespace,
      kind,
      name,
      privileged: item.useAdminToken.get(name) ?? false,
      reason,
      ...(current ? { diff: changedPaths(current, desired) } : {}),
      ...(options.renderDiff
        ? {
            unifiedDiff: unifiedDiff(
              { cluster, namespace, kind, name },
              current,
              () => JSON.parse(payload) as unknown,
            ),
          }
        : {}),
      payload,
      recycle: wantsRecycle(desired),
      ...(dictGet(desired.annotations ?? {}, 'qontract.ignore_reconcile_time') === 'true'
        ? { ignoreReconcileTime: true as const }
        : {}),
      ...(current ? clientSideAppliedState(current) : {}),
    });
  };
  const conflict = (name: string, current: OpenshiftResource) =>
    plan.errors.push({
      scope,
      message: `[${cluster}/${namespace}] resource '${kind}/${name}' present and managed by another caller: ${current.caller}`,
    });

  for (const [name, built] of item.desired) {
    const current = item.current.get(name);
    if (!current) {
      const holder = options.heldByOther?.(item, name);
      if (holder !== undefined) {
        plan.left.push(
          `${kind}/${name} in ${cluster}/${namespace} is held by another caller (${holder ?? 'none'}): left alone`,
        );
      } else apply(name, built, 'new');
      continue;
    }
    // The object applied, if any, keeps the cluster's restart annotations (a copy: the inventory's
    // desired object is left as it was built).
    const desired = withRecycleAnnotations(built, current);
    const otherCaller = caller !== null && current.caller !== caller;
    if (resourcesEqual(current, desired)) {
      if (!otherCaller) {
        if (options.skipCompare) apply(name, desired, 'unchanged', current);
        continue;
      }
      const unknownCaller =
        Boolean(options.allCallers?.length) && !options.allCallers!.includes(current.caller ?? '');
      if (options.takeOver || unknownCaller) apply(name, desired, 'take-over', current);
      else conflict(name, current);
      continue;
    }
    const knownOtherCaller =
      !options.takeOver &&
      otherCaller &&
      Boolean(options.allCallers?.length) &&
      options.allCallers!.includes(current.caller ?? '');
    if (knownOtherCaller) conflict(name, current);
    else apply(name, desired, 'changed', current);
  }

  for (const [name, current] of item.current) {
    if (item.desired.has(name)) continue;
    let reason: ActionReason | undefined;
    if (current.hasQontractAnnotations()) {
      if (!(caller !== null && current.caller !== caller)) reason = 'removed';
    } else if (options.takeOver && !current.hasOwnerReference()) {
      reason = 'take-over-delete';
    }
    if (!reason) continue;
    const action: PlannedAction = {
      action: 'delete',
      cluster,
      namespace,
      kind,
      name,
      privileged: item.useAdminToken.get(name) ?? false,
      reason,
      ...(options.renderDiff
        ? { unifiedDiff: unifiedDiff({ cluster, namespace, kind, name }, current) }
        : {}),
    };
    // Planned whatever the run's errors: the executor alone holds deletes back.
    plan.actions.push(action);
  }
  return plan;
}

/** `qontract.recycle: "true"` on a Secret or ConfigMap: restart the workloads using it after a change. */
function wantsRecycle(desired: OpenshiftResource): boolean {
  const kind = desired.kind;
  if (kind !== 'Secret' && kind !== 'ConfigMap') return false;
  const ann = desired.annotations;
  return ann !== null && dictGet(ann, 'qontract.recycle') === 'true';
}

/** The JSON-patch paths from current to desired (values left out: they may be secret). */
function changedPaths(current: OpenshiftResource, desired: OpenshiftResource): string[] {
  try {
    const ops = jsonPatchFromDiff(normalizeObject(current), normalizeObject(desired));
    const paths = ops.filter((op) => op.op !== 'remove').map((op) => `${op.op} ${op.path}`);
    return paths.length > 20 ? [...paths.slice(0, 20), `... ${paths.length - 20} more`] : paths;
  } catch (e) {
    return [`(diff unavailable: ${errorMessage(e)})`];
  }
}

/** The readable diff of one action; a body that cannot be rendered says so instead. */
function unifiedDiff(
  where: { cluster: string; namespace: string; kind: string; name: string },
  current: OpenshiftResource | undefined,
  desired?: () => unknown,
): string {
  try {
    return renderObjectDiff({
      ...where,
      ...(current ? { current: JSON.parse(current.toJson()) as unknown } : {}),
      ...(desired ? { desired: desired() } : {}),
    });
  } catch (e) {
    // Only the error's name: a parse error's message quotes the body (it may be a Secret).
    return `(diff unavailable: ${e instanceof Error ? e.name : 'error'})`;
  }
}

/** What the apply needs to migrate client-side-apply fields, when it has to (see PlannedAction). */
function clientSideAppliedState(
  current: OpenshiftResource,
): Pick<PlannedAction, 'clientSideApplied'> {
  const body = current.body as {
    metadata?: { resourceVersion?: string; managedFields?: unknown[] };
  };
  const managedFields = body.metadata?.managedFields ?? [];
  const csa = managedFields.some((e) =>
    isClientSideApplyEntry(e as Parameters<typeof isClientSideApplyEntry>[0]),
  );
  return csa
    ? {
        clientSideApplied: {
          resourceVersion: String(body.metadata?.resourceVersion ?? ''),
          managedFields,
        },
      }
    : {};
}
