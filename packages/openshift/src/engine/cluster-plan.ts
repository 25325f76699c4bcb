import { errorMessage } from '@qontract/core';
import {
  type ClusterEntries,
  ResourceInventory,
  ResourceKeyExistsError,
  ResourceNotManagedError,
  ResourceTypeNotInitializedError,
} from '../inventory/index.ts';
import type { OpenshiftResource } from '../resource/openshift-resource.ts';
import { dictGet, isDict } from '../resource/py-values.ts';
import { type AdmissionRule, admitCurrent, otherCaller } from './admission.ts';
import type { CurrentStateSpec, FetchedState } from './fetch.ts';
import { type PlanOptions, planItem } from './plan.ts';
import type { PlannedAction } from './plan-types.ts';
import type { DesiredResource } from './reconcile.ts';

/** An error the plan of a cluster found, to register on the run. */
interface PlanError {
  readonly scope: string;
  readonly message: string;
}

/** What planning one cluster made: its inventory entries, its actions and what to say of them. */
export interface ClusterPlan {
  readonly entries: ClusterEntries;
  /** Applies and deletes, in the inventory's order; the executor decides on the deletes. */
  readonly actions: readonly PlannedAction[];
  /** Its items were skipped: the cluster has errors (one error line says so). */
  readonly skipped: boolean;
  /** Desired objects the inventory refused, and caller conflicts. */
  readonly errors: readonly PlanError[];
  /** Info lines: desired objects left to another caller (`leaveOtherCallers`). */
  readonly left: readonly string[];
  /** Warnings: managed kinds nothing is desired of. */
  readonly unusedTypes: readonly string[];
}

/** The rules a cluster is planned with: the run's settings that are not its data. */
export interface ClusterPlanRules extends AdmissionRule {
  readonly takeOver?: boolean | undefined;
  readonly allCallers?: readonly string[] | undefined;
  readonly leaveOtherCallers?: boolean | undefined;
  /** Render each action's diff (`--diff`, `--plan-out`). */
  readonly renderDiff: boolean;
  /** Apply unchanged objects too (see `PlanOptions.skipCompare`); never in a dry-run. */
  readonly skipCompare?: boolean | undefined;
}

/** One cluster's part of the run: what it manages, what it has, what is desired of it. */
export interface ClusterInput {
  readonly cluster: string;
  /** The cluster's specs, in the run's order. */
  readonly specs: readonly CurrentStateSpec[];
  /** What was read of it (none when its read failed). */
  readonly states: readonly FetchedState[];
  /** Its desired objects, in the order they were built. */
  readonly desired: readonly DesiredResource[];
  /** Whether the run has an error that skips this cluster (its read failed, a token is missing). */
  readonly hasClusterError: boolean;
}

/**
 * Plans one cluster with the original's rules (upstream `realize_data` for
 * its items): the managed kinds, the current objects the admission rule
 * lets in, the desired objects, then each item's actions. Pure: it reads
 * nothing else and changes nothing it is given; the run registers and logs
 * what it returns.
 */
export function planCluster(input: ClusterInput, rules: ClusterPlanRules): ClusterPlan {
  const { cluster } = input;
  const inventory = new ResourceInventory();
  for (const spec of input.specs) {
    inventory.initializeResourceType(cluster, spec.namespace, spec.kind, spec.resourceNames);
  }
  /** `leaveOtherCallers`: the objects of other callers the admission hid, by item and name. */
  const heldByOthers = new Map<string, string | null>();
  for (const { spec, items } of input.states) {
    for (const item of items) {
      const name = item.metadata?.name ?? '';
      const current = admitCurrent(item, rules);
      if (current) inventory.addCurrent(cluster, spec.namespace, spec.kind, name, current);
      else if (rules.leaveOtherCallers) {
        const other = otherCaller(item, rules);
        if (other !== undefined) heldByOthers.set(heldKey(spec, name), other);
      }
    }
  }
  const errors: PlanError[] = [];
  for (const d of input.desired) {
    const error = addDesired(inventory, d);
    if (error) errors.push(error);
  }
  const options: PlanOptions = {
    takeOver: rules.takeOver ?? false,
    caller: rules.caller,
    allCallers: rules.allCallers,
    ...(rules.leaveOtherCallers
      ? { heldByOther: (item, name) => heldByOthers.get(heldKey(item, name)) }
      : {}),
    clusterHasError: () => input.hasClusterError,
    renderDiff: rules.renderDiff,
    skipCompare: rules.skipCompare ?? false,
  };
  const actions: PlannedAction[] = [];
  const left: string[] = [];
  const unusedTypes: string[] = [];
  for (const item of inventory.items(cluster)) {
    const p = planItem(item, options);
    errors.push(...p.errors);
    actions.push(...p.actions);
    left.push(...p.left);
    if (item.desired.size === 0) {
      unusedTypes.push(
        `[${cluster}/${item.namespace}] unused resource type: ${item.kind}. please remove it in a following PR.`,
      );
    }
  }
  return {
    entries: inventory.clusterEntries(cluster) ?? (new Map() as unknown as ClusterEntries),
    actions,
    skipped: input.hasClusterError && input.specs.length > 0,
    errors,
    left,
    unusedTypes,
  };
}

/** The key of an object of (namespace, kind) named `name`, for `leaveOtherCallers`. */
const heldKey = (item: { readonly namespace: string; readonly kind: string }, name: string) =>
  JSON.stringify([item.namespace, item.kind, name]);

/** Adds a desired object to the cluster's inventory, or says why it cannot be. */
function addDesired(inventory: ResourceInventory, d: DesiredResource): PlanError | undefined {
  const where = `[${d.cluster}/${d.namespace}]`;
  const scope = `${d.cluster}/${d.namespace}`;
  const kind = String(d.resource.kind);
  const name = String(d.resource.name);
  const declared = declaredNamespace(d.resource);
  if (d.namespace !== 'cluster' && declared !== undefined && declared !== d.namespace) {
    // The API server refuses it at apply time; the dry-run must say so too,
    // and the run must not go on to delete what it was meant to replace.
    return {
      scope,
      message: `${where} ${kind}/${name}${d.source ? ` (${d.source})` : ''}: metadata.namespace '${declared}' does not match the namespace it is declared in ('${d.namespace}')`,
    };
  }
  try {
    inventory.addDesiredResource(d.cluster, d.namespace, d.resource, {
      privileged: d.privileged ?? false,
      ...(d.source ? { source: d.source } : {}),
    });
    return undefined;
  } catch (e) {
    let message: string;
    if (e instanceof ResourceTypeNotInitializedError) {
      const source = d.source ? ` (${d.source})` : '';
      message = `${where} unknown kind: ${kind}${source}. hint: is it missing from managedResourceTypes?`;
    } else if (e instanceof ResourceKeyExistsError) {
      message = `${where} desired item already exists: ${kind}/${name}. ${e.message}`;
    } else if (e instanceof ResourceNotManagedError) {
      message = `${where} desired item is not managed: ${kind}/${name}.`;
    } else {
      message = `${where} ${errorMessage(e)}`;
    }
    return { scope, message };
  }
}

/** `metadata.namespace` of a desired body, when it sets one. */
function declaredNamespace(resource: OpenshiftResource): string | undefined {
  const metadata = isDict(resource.body) ? dictGet(resource.body, 'metadata') : undefined;
  const namespace = isDict(metadata) ? dictGet(metadata, 'namespace') : undefined;
  return namespace === undefined || namespace === null || namespace === ''
    ? undefined
    : String(namespace);
}
