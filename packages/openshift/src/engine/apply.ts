import {
  type ActionHandler,
  type ErrorRegistry,
  errorMessage,
  executeActions,
  type Logger,
  type RunReport,
} from '@qontract/core';
import { type ApiResource, apiVersionOf, parseKind } from '../cluster/api-resources.ts';
import {
  apiResourceOf,
  type ClusterHandle,
  type ClusterMap,
  isClusterProblem,
} from '../cluster/cluster-map.ts';
import { KubeApiError, type KubeObject } from '../cluster/kube-client.ts';
import type { TimedWrite } from '../reconcile-time.ts';
import { takeOverClientSideApplyFields } from './managed-fields.ts';
import { type NamespaceWait, namespaceWaiter } from './namespace-wait.ts';
import { type PlannedAction, planEntryOf } from './plan-types.ts';
import { pyRepr } from './py-repr.ts';
import { waitForReady } from './readiness.ts';
import { recover } from './recoveries.ts';
import { recyclePods } from './recycle.ts';
import { recoveryFor } from './refusal.ts';

export interface ExecuteSettings {
  readonly dryRun: boolean;
  readonly clusters: ClusterMap;
  readonly log: Logger;
  readonly errors: ErrorRegistry;
  readonly report?: RunReport;
  /** Server-side apply field manager, stable per integration. */
  readonly fieldManager: string;
  readonly concurrency?: number;
  readonly signal?: AbortSignal;
  /** Restart workloads that mount a `qontract.recycle: "true"` Secret/ConfigMap when it changes. */
  readonly recyclePods?: boolean;
  /** Log each action's unified diff after its line (`--diff`). */
  readonly showDiff?: boolean;
  /** Wait for applied workloads to become ready. */
  readonly waitForReady?: { readonly timeoutMs: number; readonly pollMs?: number };
  /**
   * Wait (bounded) for a namespace that does not exist yet, then fail the
   * apply (openshift-saas-deploy, as the original's `wait_for_namespace`).
   * Without it such an apply is skipped with a warning: openshift-namespaces
   * creates the namespace and the next run applies.
   */
  readonly waitForNamespace?: NamespaceWait;
  /** Told about each object written (applied or deleted), right after the write (`reconcileTimeObserver`). */
  readonly onWritten?: ((write: TimedWrite) => void) | undefined;
}

export interface ActionResult {
  readonly action: PlannedAction;
  readonly outcome: 'done' | 'dry-run' | 'skipped' | 'failed';
}

/**
 * Executes planned actions through the run's action executor (`executeActions`
 * of core): every apply of the run before any delete, each delete only while
 * no error is registered, with the original's log lines and recovery paths. In
 * dry-run only the log lines are written (and pods are listed for recycle
 * planning, as upstream). Failures register an error and the rest goes on.
 * The actions may come in batches as they are planned (see `reconcileResources`).
 */
export async function executePlan(
  actions: readonly PlannedAction[] | AsyncIterable<readonly PlannedAction[]>,
  settings: ExecuteSettings,
): Promise<ActionResult[]> {
  const results = await executeActions(settings, actions, planHandler(settings), {
    concurrency: settings.concurrency,
  });
  return results.map(({ action, outcome }) => ({
    action,
    outcome: outcome === 'disabled' ? 'skipped' : outcome,
  }));
}

function timedWrite(action: PlannedAction): TimedWrite {
  const { cluster, namespace, kind, name } = action;
  return { fn: action.action, cluster, namespace, kind, name, ignored: action.ignoreReconcileTime };
}

function planHandler(s: ExecuteSettings): ActionHandler<PlannedAction> {
  const namespaceWait = s.waitForNamespace && namespaceWaiter(s.waitForNamespace, s.signal);
  /** The cluster's handle, or undefined (logged) when the cluster cannot be written. */
  const handleFor = (action: PlannedAction): ClusterHandle | undefined => {
    const handle = s.clusters.get(action.cluster, action.privileged);
    if (!isClusterProblem(handle)) return handle;
    if (handle.level === 'error') s.log.error(handle.message);
    else s.log.debug(handle.message);
    return undefined;
  };
  return {
    name: (action) => action.action,
    describe: (action) => {
      const line = pyRepr([
        action.action,
        `privileged=${action.privileged ? 'True' : 'False'}`,
        action.cluster,
        action.namespace,
        action.kind,
        action.name,
      ]);
      return s.showDiff && action.unifiedDiff ? [line, action.unifiedDiff] : line;
    },
    destructive: (action) => action.action === 'delete',
    planEntry: planEntryOf,
    preview: async (action) => {
      if (action.action === 'delete' || !action.recycle || s.recyclePods === false) return;
      const handle = handleFor(action);
      if (handle)
        await recyclePods(handle, action, {
          dryRun: true,
          log: s.log,
          fieldManager: s.fieldManager,
        });
    },
    execute: async (action) => {
      const handle = handleFor(action);
      if (!handle) return 'skipped';
      if (action.action === 'delete') {
        await deleteObject(handle, action);
        s.onWritten?.(timedWrite(action));
        return;
      }
      if ((await applyObject(handle, action, s, namespaceWait)) === 'namespace-missing') {
        return 'skipped';
      }
      s.onWritten?.(timedWrite(action));
      if (s.waitForReady) {
        await waitForReady(
          handle.client,
          await apiResourceOf(handle, action.kind),
          action.namespace,
          action.name,
          s.waitForReady,
          s.log,
        );
      }
      if (s.recyclePods !== false && action.recycle) {
        await recyclePods(handle, action, {
          dryRun: false,
          log: s.log,
          fieldManager: s.fieldManager,
        });
      }
    },
    failure: ({ cluster, namespace, kind, name }, e) => ({
      scope: `${cluster}/${namespace}`,
      message: `[${cluster}/${namespace}] ${
        kind.split('.')[0] === 'Secret'
          ? `error applying Secret ${name}: REDACTED`
          : errorMessage(e)
      }`,
    }),
  };
}

async function deleteObject(handle: ClusterHandle, action: PlannedAction): Promise<void> {
  const resource = await apiResourceOf(handle, action.kind);
  await handle.client.delete(resource, requestNamespace(resource, action.namespace), action.name, {
    propagationPolicy: 'Background',
  });
}

/** The namespace of a request: none for cluster-scoped kinds (the plan says `cluster`). */
function requestNamespace(resource: ApiResource, namespace: string): string | undefined {
  return resource.namespaced && namespace !== 'cluster' ? namespace : undefined;
}

/**
 * Server-side apply of one planned object. A refusal gets the original's
 * recovery (`recoveryFor` decides, `recover` writes); anything else is the
 * action's error.
 */
async function applyObject(
  handle: ClusterHandle,
  action: PlannedAction,
  settings: ExecuteSettings,
  namespaceWait?: (handle: ClusterHandle, namespace: string) => Promise<void>,
): Promise<'applied' | 'namespace-missing'> {
  const resource = await apiResourceOf(handle, action.kind);
  const namespace = requestNamespace(resource, action.namespace);
  const payload = action.payload!;
  const { client } = handle;
  const { fieldManager } = settings;
  // The plan knows from the list whether client-side apply still owns fields:
  // only then are they moved to our manager first (guarded by the listed
  // resourceVersion). After a conflict the object is read again.
  const apply = async (current: KubeObject | undefined) => {
    if (current) await takeOverClientSideApplyFields(client, resource, current, fieldManager);
    return client.apply(resource, namespace, action.name, payload, { fieldManager, force: true });
  };
  const listed: KubeObject | undefined = action.clientSideApplied
    ? ({
        apiVersion: apiVersionOf(resource),
        metadata: {
          name: action.name,
          ...(namespace ? { namespace } : {}),
          resourceVersion: action.clientSideApplied.resourceVersion,
          managedFields: action.clientSideApplied.managedFields,
        },
      } as KubeObject)
    : undefined;
  try {
    try {
      await apply(listed);
    } catch (e) {
      // The listed resourceVersion is stale (the migration's JSON-patch test failed): read again.
      if (!(listed && e instanceof KubeApiError && (e.status === 409 || e.status === 422))) throw e;
      await apply(await client.get(resource, namespace, action.name));
    }
    return 'applied';
  } catch (e) {
    if (!(e instanceof KubeApiError)) throw e;
    const recovery = recoveryFor(parseKind(action.kind).kind, e, namespace);
    switch (recovery) {
      case 'none':
        throw e;
      case 'namespace-missing': {
        const missing = `[${action.cluster}/${action.namespace}] namespace does not exist (yet).`;
        if (!namespaceWait) {
          settings.log.warn(missing);
          return 'namespace-missing';
        }
        settings.log.info(`${missing} waiting...`);
        await namespaceWait(handle, action.namespace);
        // Once: a namespace that is there but still refuses (terminating) fails the apply.
        if ((await applyObject(handle, action, settings)) === 'namespace-missing') {
          throw new Error(`namespace ${action.namespace} does not exist`);
        }
        return 'applied';
      }
      case 'read-and-retry':
        await apply(await client.get(resource, namespace, action.name));
        return 'applied';
      default:
        await recover(recovery, {
          client,
          resource,
          namespace,
          action,
          payload,
          fieldManager,
          log: settings.log,
        });
        return 'applied';
    }
  }
}
