import {
  type ActionHandler,
  type ErrorRegistry,
  errorMessage,
  executeActions,
  type Logger,
  type RunReport,
} from '@qontract/core';
import { type ApiResource, parseKind } from '../cluster/api-resources.ts';
import { type ClusterHandle, type ClusterMap, isClusterProblem } from '../cluster/cluster-map.ts';
import { KubeApiError, type KubeClient, type KubeObject } from '../cluster/kube-client.ts';
import { takeOverClientSideApplyFields } from './managed-fields.ts';
import type { Plan, PlannedAction } from './plan-types.ts';
import { pyRepr } from './py-repr.ts';
import { waitForReady } from './readiness.ts';
import { recyclePods } from './recycle.ts';

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
  /** Wait for applied workloads to become ready. */
  readonly waitForReady?: { readonly timeoutMs: number; readonly pollMs?: number };
}

export interface ActionResult {
  readonly action: PlannedAction;
  readonly outcome: 'done' | 'dry-run' | 'skipped' | 'failed';
}

/**
 * Executes a plan through the run's action executor (`executeActions` of
 * core): every apply of the run before any delete, each delete only while no
 * error is registered, with the original's log lines and recovery paths. In
 * dry-run only the log lines are written (and pods are listed for recycle
 * planning, as upstream). Failures register an error and the rest goes on.
 */
export async function executePlan(plan: Plan, settings: ExecuteSettings): Promise<ActionResult[]> {
  const results = await executeActions(settings, plan.actions, planHandler(settings), {
    concurrency: settings.concurrency,
  });
  return results.map(({ action, outcome }) => ({
    action,
    outcome: outcome === 'disabled' ? 'skipped' : outcome,
  }));
}

function planHandler(s: ExecuteSettings): ActionHandler<PlannedAction> {
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
    describe: (action) =>
      pyRepr([
        action.action,
        `privileged=${action.privileged ? 'True' : 'False'}`,
        action.cluster,
        action.namespace,
        action.kind,
        action.name,
      ]),
    destructive: (action) => action.action === 'delete',
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
        return;
      }
      if ((await applyObject(handle, action, s)) === 'namespace-missing') return 'skipped';
      if (s.waitForReady) {
        await waitForReady(
          handle.client,
          handle.catalog.get(action.kind),
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

async function deleteObject(h: ClusterHandle, a: PlannedAction): Promise<void> {
  const r = h.catalog.get(a.kind);
  await h.client.delete(r, nsOf(r, a.namespace), a.name, { propagationPolicy: 'Background' });
}

function nsOf(r: ApiResource, namespace: string): string | undefined {
  return r.namespaced && namespace !== 'cluster' ? namespace : undefined;
}

/** Kinds the original deletes and re-creates when a field is immutable. */
const RECREATE_ON_IMMUTABLE = new Set(['Route', 'Service', 'Secret', 'Job']);

async function applyObject(
  h: ClusterHandle,
  a: PlannedAction,
  s: ExecuteSettings,
): Promise<'applied' | 'namespace-missing'> {
  const r = h.catalog.get(a.kind);
  const ns = nsOf(r, a.namespace);
  const payload = a.payload!;
  const client = h.client;
  const kind = parseKind(a.kind).kind;
  // The plan knows from the list whether client-side apply still owns fields:
  // only then are they moved to our manager first (guarded by the listed
  // resourceVersion). After a conflict the object is read again.
  const apply = async (current: KubeObject | undefined) => {
    if (current) await takeOverClientSideApplyFields(client, r, current, s.fieldManager);
    return client.apply(r, ns, a.name, payload, { fieldManager: s.fieldManager, force: true });
  };
  const listed: KubeObject | undefined = a.clientSideApplied
    ? ({
        apiVersion: r.group ? `${r.group}/${r.version}` : r.version,
        metadata: {
          name: a.name,
          ...(ns ? { namespace: ns } : {}),
          resourceVersion: a.clientSideApplied.resourceVersion,
          managedFields: a.clientSideApplied.managedFields,
        },
      } as KubeObject)
    : undefined;
  try {
    try {
      await apply(listed);
    } catch (e) {
      // The listed resourceVersion is stale (the migration's JSON-patch test failed): read again.
      if (!(listed && e instanceof KubeApiError && (e.status === 409 || e.status === 422))) throw e;
      await apply(await client.get(r, ns, a.name));
    }
    return 'applied';
  } catch (e) {
    if (!(e instanceof KubeApiError)) throw e;
    if (e.status === 404 && ns && isNamespaceNotFound(e, ns)) {
      s.log.warn(`[${a.cluster}/${a.namespace}] namespace does not exist (yet).`);
      return 'namespace-missing';
    }
    const message = e.message;
    if (e.status === 409) {
      // Somebody wrote in between; read again and retry once.
      await apply(await client.get(r, ns, a.name));
      return 'applied';
    }
    if (message.includes('field is immutable') && kind === 'Deployment') {
      await recreateDeployment(client, r, ns, a, payload, s);
      return 'applied';
    }
    if (
      (message.includes('field is immutable') && RECREATE_ON_IMMUTABLE.has(kind)) ||
      (kind === 'Service' &&
        (message.includes('may not change once set') ||
          message.includes('primary clusterIP can not be unset')))
    ) {
      s.log.info(pyRepr(['delete_and_apply', a.cluster, a.namespace, a.kind, a.name]));
      await client.delete(r, ns, a.name, { propagationPolicy: 'Background' });
      await waitGone(client, r, ns, a.name);
      await client.apply(r, ns, a.name, payload, { fieldManager: s.fieldManager, force: true });
      return 'applied';
    }
    if (
      kind === 'StatefulSet' &&
      message.includes('updates to statefulset spec for fields other than')
    ) {
      await recreateStatefulSet(client, r, ns, a, payload, s);
      return 'applied';
    }
    if (e.status === 413 || e.status === 415 || message.includes('Request entity too large')) {
      const exists = await client.get(r, ns, a.name);
      if (exists) {
        const withVersion = JSON.parse(payload) as KubeObject;
        withVersion.metadata = {
          ...withVersion.metadata,
          resourceVersion: exists.metadata?.resourceVersion,
        };
        await client.replace(r, ns, a.name, withVersion, { fieldManager: s.fieldManager });
      } else {
        await client.create(r, ns, payload, { fieldManager: s.fieldManager });
      }
      return 'applied';
    }
    throw e;
  }
}

function isNamespaceNotFound(e: KubeApiError, ns: string): boolean {
  const details = e.details as { kind?: string; name?: string } | undefined;
  return (
    (details?.kind === 'namespaces' && details.name === ns) ||
    e.message.includes(`namespaces "${ns}" not found`)
  );
}

async function waitGone(
  client: KubeClient,
  r: ApiResource,
  ns: string | undefined,
  name: string,
): Promise<void> {
  for (let i = 0; i < 60; i++) {
    if (!(await client.get(r, ns, name))) return;
    await new Promise((res) => setTimeout(res, Math.min(100 * (i + 1), 1000)));
  }
  throw new Error(`${r.kind} ${name} is still being deleted`);
}

/**
 * A Deployment whose selector changed: Recreate strategy → delete and create;
 * RollingUpdate → orphan-delete, apply, and hand the old ReplicaSet to the new
 * Deployment so its pods are scaled down by the rollout, as upstream does.
 */
async function recreateDeployment(
  client: KubeClient,
  r: ApiResource,
  ns: string | undefined,
  a: PlannedAction,
  payload: string,
  s: ExecuteSettings,
): Promise<void> {
  s.log.info(pyRepr(['replace', a.cluster, a.namespace, a.kind, a.name]));
  const current = await client.get(r, ns, a.name);
  const strategy =
    (current?.spec as { strategy?: { type?: string } } | undefined)?.strategy?.type ??
    'RollingUpdate';
  if (strategy === 'Recreate') {
    await client.delete(r, ns, a.name, { propagationPolicy: 'Background' });
    await waitGone(client, r, ns, a.name);
    await client.apply(r, ns, a.name, payload, { fieldManager: s.fieldManager, force: true });
    return;
  }
  if (strategy !== 'RollingUpdate') {
    throw new Error(
      `Can't replace Deployment '${a.name}' inplace w/ointerruption because spec.strategy.type != 'RollingUpdate'`,
    );
  }
  const oldUid = current?.metadata?.uid as string | undefined;
  await client.delete(r, ns, a.name, { propagationPolicy: 'Orphan' });
  await waitGone(client, r, ns, a.name);
  const created = await client.apply(r, ns, a.name, payload, {
    fieldManager: s.fieldManager,
    force: true,
  });
  if (!oldUid || !ns) return;
  const rsResource: ApiResource = {
    kind: 'ReplicaSet',
    group: 'apps',
    version: 'v1',
    name: 'replicasets',
    namespaced: true,
    verbs: [],
  };
  const matchLabels =
    (created.spec as { selector?: { matchLabels?: Record<string, string> } })?.selector
      ?.matchLabels ?? {};
  for (const rs of await client.list(rsResource, ns)) {
    const owners = (rs.metadata?.ownerReferences as Array<{ uid?: string }> | undefined) ?? [];
    if (!owners.some((o) => o.uid === oldUid)) continue;
    const hash = (rs.metadata?.labels as Record<string, string> | undefined)?.['pod-template-hash'];
    await client.patch(
      rsResource,
      ns,
      rs.metadata!.name!,
      {
        metadata: {
          labels: { ...matchLabels, ...(hash ? { 'pod-template-hash': hash } : {}) },
          ownerReferences: [
            {
              apiVersion: 'apps/v1',
              kind: 'Deployment',
              name: a.name,
              uid: created.metadata?.uid,
              controller: true,
            },
          ],
        },
      },
      'merge',
      { fieldManager: s.fieldManager },
    );
  }
}

/** A StatefulSet update the API forbids: orphan-delete, apply, and grow the PVCs when storage changed. */
async function recreateStatefulSet(
  client: KubeClient,
  r: ApiResource,
  ns: string | undefined,
  a: PlannedAction,
  payload: string,
  s: ExecuteSettings,
): Promise<void> {
  s.log.info(pyRepr(['delete_sts_and_apply', a.cluster, a.namespace, a.kind, a.name]));
  const body = JSON.parse(payload) as KubeObject;
  const current = await client.get(r, ns, a.name);
  const storage = (o: KubeObject | undefined) =>
    (
      o?.spec as
        | {
            volumeClaimTemplates?: Array<{
              spec?: { resources?: { requests?: { storage?: string } } };
            }>;
          }
        | undefined
    )?.volumeClaimTemplates?.[0]?.spec?.resources?.requests?.storage;
  const before = storage(current);
  const after = storage(body);
  const resize = before !== undefined && before !== after;
  let pvcs: string[] = [];
  if (resize) {
    if (after === undefined) throw new Error('Resource body does not contain storage information.');
    const podResource: ApiResource = {
      kind: 'Pod',
      group: '',
      version: 'v1',
      name: 'pods',
      namespaced: true,
      verbs: [],
    };
    const pods = await client.list(podResource, ns);
    pvcs = pods
      .filter((p) =>
        (
          (p.metadata?.ownerReferences as Array<{ kind?: string; name?: string }> | undefined) ?? []
        ).some((o) => o.kind === 'StatefulSet' && o.name === a.name),
      )
      .flatMap(
        (p) =>
          (p.spec as { volumes?: Array<{ persistentVolumeClaim?: { claimName?: string } }> })
            .volumes ?? [],
      )
      .map((v) => v.persistentVolumeClaim?.claimName)
      .filter((n): n is string => Boolean(n));
  }
  await client.delete(r, ns, a.name, { propagationPolicy: 'Orphan' });
  await waitGone(client, r, ns, a.name);
  await client.apply(r, ns, a.name, payload, { fieldManager: s.fieldManager, force: true });
  if (resize && pvcs.length) {
    s.log.info(pyRepr(['resizing_pvcs', a.cluster, a.namespace, new Set(pvcs)]));
    const pvc: ApiResource = {
      kind: 'PersistentVolumeClaim',
      group: '',
      version: 'v1',
      name: 'persistentvolumeclaims',
      namespaced: true,
      verbs: [],
    };
    for (const name of pvcs) {
      await client.patch(
        pvc,
        ns,
        name,
        { spec: { resources: { requests: { storage: after } } } },
        'merge',
        { fieldManager: s.fieldManager },
      );
    }
  }
}
