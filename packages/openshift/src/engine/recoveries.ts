import type { Logger } from '@qontract/core';
import type { ApiResource } from '../cluster/api-resources.ts';
import type { KubeClient, KubeObject } from '../cluster/kube-client.ts';
import type { PlannedAction } from './plan-types.ts';
import { pyRepr } from './py-repr.ts';
import type { Recovery } from './refusal.ts';

/** The object a refused apply was for, and what is needed to write it again. */
export interface RecoveryTarget {
  readonly client: KubeClient;
  readonly resource: ApiResource;
  /** The namespace of the request; undefined for cluster-scoped objects. */
  readonly namespace: string | undefined;
  readonly action: PlannedAction;
  /** The body to apply (the plan's payload). */
  readonly payload: string;
  readonly fieldManager: string;
  readonly log: Logger;
}

/** The recoveries that write; `recoveryFor` in `refusal.ts` says which one a refusal gets. */
export type WritingRecovery = Exclude<Recovery, 'none' | 'namespace-missing' | 'read-and-retry'>;

/** Carries out a recovery: the object ends up applied, or this throws. */
export async function recover(recovery: WritingRecovery, target: RecoveryTarget): Promise<void> {
  const { action } = target;
  switch (recovery) {
    case 'delete-and-apply':
      target.log.info(
        pyRepr(['delete_and_apply', action.cluster, action.namespace, action.kind, action.name]),
      );
      await deleteWaitApply(target, 'Background');
      return;
    case 'recreate-deployment':
      await recreateDeployment(target);
      return;
    case 'switch-to-recreate':
      await switchToRecreate(target);
      return;
    case 'recreate-statefulset':
      await recreateStatefulSet(target);
      return;
    case 'replace-or-create':
      await replaceOrCreate(target);
      return;
  }
}

/**
 * One JSON patch drops the defaulted `rollingUpdate` and sets the type (either
 * alone is refused or defaulted again); the apply then finds nothing to refuse.
 * The pods are not touched: the change of strategy starts no rollout.
 */
async function switchToRecreate(target: RecoveryTarget): Promise<void> {
  const { client, resource, namespace, action } = target;
  await client.patch(
    resource,
    namespace,
    action.name,
    [
      { op: 'remove', path: '/spec/strategy/rollingUpdate' },
      { op: 'replace', path: '/spec/strategy/type', value: 'Recreate' },
    ],
    'json',
    { fieldManager: target.fieldManager },
  );
  await client.apply(resource, namespace, action.name, target.payload, {
    fieldManager: target.fieldManager,
    force: true,
  });
}

/**
 * Deletes the object, waits until the API server no longer has it, then
 * applies the payload: the one way every re-creating recovery writes.
 */
async function deleteWaitApply(
  target: RecoveryTarget,
  propagationPolicy: 'Background' | 'Orphan',
): Promise<KubeObject> {
  const { client, resource, namespace, action } = target;
  await client.delete(resource, namespace, action.name, { propagationPolicy });
  await waitUntilGone(client, resource, namespace, action.name);
  return client.apply(resource, namespace, action.name, target.payload, {
    fieldManager: target.fieldManager,
    force: true,
  });
}

async function waitUntilGone(
  client: KubeClient,
  resource: ApiResource,
  namespace: string | undefined,
  name: string,
): Promise<void> {
  for (let attempt = 0; attempt < 60; attempt++) {
    if (!(await client.get(resource, namespace, name))) return;
    await new Promise((resolve) => setTimeout(resolve, Math.min(100 * (attempt + 1), 1000)));
  }
  throw new Error(`${resource.kind} ${name} is still being deleted`);
}

const REPLICA_SETS = builtIn('ReplicaSet', 'apps', 'replicasets');
const PODS = builtIn('Pod', '', 'pods');
const VOLUME_CLAIMS = builtIn('PersistentVolumeClaim', '', 'persistentvolumeclaims');

function builtIn(kind: string, group: string, plural: string): ApiResource {
  return { kind, group, version: 'v1', name: plural, namespaced: true, verbs: [] };
}

/**
 * A Deployment whose selector changed: Recreate strategy → delete and create;
 * RollingUpdate → orphan-delete, apply, and hand the old ReplicaSets to the
 * new Deployment so their pods are scaled down by the rollout, as upstream does.
 */
async function recreateDeployment(target: RecoveryTarget): Promise<void> {
  const { client, resource, namespace, action } = target;
  target.log.info(pyRepr(['replace', action.cluster, action.namespace, action.kind, action.name]));
  const current = await client.get(resource, namespace, action.name);
  const strategy =
    (current?.spec as { strategy?: { type?: string } } | undefined)?.strategy?.type ??
    'RollingUpdate';
  if (strategy === 'Recreate') {
    await deleteWaitApply(target, 'Background');
    return;
  }
  if (strategy !== 'RollingUpdate') {
    throw new Error(
      `Can't replace Deployment '${action.name}' inplace w/ointerruption because spec.strategy.type != 'RollingUpdate'`,
    );
  }
  // The active ReplicaSet is found before the delete: orphaning removes its
  // owner reference, after which nothing says whose it was.
  const obsolete = namespace ? await activeReplicaSet(client, namespace, current) : undefined;
  const created = await deleteWaitApply(target, 'Orphan');
  if (!obsolete || !namespace) return;
  const matchLabels =
    (created.spec as { selector?: { matchLabels?: Record<string, string> } })?.selector
      ?.matchLabels ?? {};
  const oldLabels = (obsolete.metadata?.labels as Record<string, string> | undefined) ?? {};
  const hash = oldLabels['pod-template-hash'];
  await client.patch(
    REPLICA_SETS,
    namespace,
    obsolete.metadata!.name!,
    {
      metadata: {
        // A merge patch: the old labels are removed (null), the new selector's set.
        labels: {
          ...Object.fromEntries(Object.keys(oldLabels).map((key) => [key, null])),
          ...matchLabels,
          ...(hash ? { 'pod-template-hash': hash } : {}),
        },
        ownerReferences: [
          {
            apiVersion: 'apps/v1',
            kind: 'Deployment',
            name: action.name,
            uid: created.metadata?.uid,
            controller: true,
          },
        ],
      },
    },
    'merge',
    { fieldManager: target.fieldManager },
  );
}

/**
 * The Deployment's active ReplicaSet, as upstream picks it: the newest one it
 * owns whose pod template is the Deployment's (the `pod-template-hash` label
 * aside).
 */
async function activeReplicaSet(
  client: KubeClient,
  namespace: string,
  deployment: KubeObject | undefined,
): Promise<KubeObject | undefined> {
  const uid = deployment?.metadata?.uid;
  if (!uid) return undefined;
  const template = withoutHashLabel(
    (deployment.spec as { template?: unknown } | undefined)?.template,
  );
  const owned = (await client.list(REPLICA_SETS, namespace)).filter((replicaSet) =>
    ((replicaSet.metadata?.ownerReferences as Array<{ uid?: string }> | undefined) ?? []).some(
      (owner) => owner.uid === uid,
    ),
  );
  return owned
    .filter(
      (replicaSet) =>
        JSON.stringify(
          withoutHashLabel((replicaSet.spec as { template?: unknown } | undefined)?.template),
        ) === JSON.stringify(template),
    )
    .sort((a, b) =>
      String(b.metadata?.creationTimestamp ?? '').localeCompare(
        String(a.metadata?.creationTimestamp ?? ''),
      ),
    )[0];
}

/** A pod template with its keys sorted and without the `pod-template-hash` label, for comparison. */
function withoutHashLabel(template: unknown): unknown {
  const sorted = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(sorted)
      : value && typeof value === 'object'
        ? Object.fromEntries(
            Object.keys(value)
              .sort()
              .map((key) => [key, sorted((value as Record<string, unknown>)[key])]),
          )
        : value;
  const copy = sorted(template) as { metadata?: { labels?: Record<string, string> } } | undefined;
  const labels = copy?.metadata?.labels;
  if (labels && 'pod-template-hash' in labels) {
    delete labels['pod-template-hash'];
    if (Object.keys(labels).length === 0) delete copy.metadata!.labels;
  }
  return copy;
}

type WithClaimTemplates = {
  volumeClaimTemplates?: Array<{ spec?: { resources?: { requests?: { storage?: string } } } }>;
};

/** The storage request of a StatefulSet's first volume claim template. */
function requestedStorage(statefulSet: KubeObject | undefined): string | undefined {
  return (statefulSet?.spec as WithClaimTemplates | undefined)?.volumeClaimTemplates?.[0]?.spec
    ?.resources?.requests?.storage;
}

/** A StatefulSet update the API forbids: orphan-delete, apply, and grow the PVCs when storage changed. */
async function recreateStatefulSet(target: RecoveryTarget): Promise<void> {
  const { client, resource, namespace, action } = target;
  target.log.info(
    pyRepr(['delete_sts_and_apply', action.cluster, action.namespace, action.kind, action.name]),
  );
  const before = requestedStorage(await client.get(resource, namespace, action.name));
  const after = requestedStorage(JSON.parse(target.payload) as KubeObject);
  const resize = before !== undefined && before !== after;
  let claims: string[] = [];
  if (resize) {
    if (after === undefined) throw new Error('Resource body does not contain storage information.');
    claims = claimsOfStatefulSetPods(await client.list(PODS, namespace), action.name);
  }
  await deleteWaitApply(target, 'Orphan');
  if (!resize || claims.length === 0) return;
  target.log.info(pyRepr(['resizing_pvcs', action.cluster, action.namespace, new Set(claims)]));
  for (const claim of claims) {
    await client.patch(
      VOLUME_CLAIMS,
      namespace,
      claim,
      { spec: { resources: { requests: { storage: after } } } },
      'merge',
      { fieldManager: target.fieldManager },
    );
  }
}

function claimsOfStatefulSetPods(pods: readonly KubeObject[], statefulSet: string): string[] {
  return pods
    .filter((pod) =>
      (
        (pod.metadata?.ownerReferences as Array<{ kind?: string; name?: string }> | undefined) ?? []
      ).some((owner) => owner.kind === 'StatefulSet' && owner.name === statefulSet),
    )
    .flatMap(
      (pod) =>
        (pod.spec as { volumes?: Array<{ persistentVolumeClaim?: { claimName?: string } }> })
          .volumes ?? [],
    )
    .map((volume) => volume.persistentVolumeClaim?.claimName)
    .filter((name): name is string => Boolean(name));
}

/** A body too large for an apply: replace it at the resourceVersion read, or create it. */
async function replaceOrCreate(target: RecoveryTarget): Promise<void> {
  const { client, resource, namespace, action } = target;
  const existing = await client.get(resource, namespace, action.name);
  if (!existing) {
    await client.create(resource, namespace, target.payload, { fieldManager: target.fieldManager });
    return;
  }
  const body = JSON.parse(target.payload) as KubeObject;
  body.metadata = { ...body.metadata, resourceVersion: existing.metadata?.resourceVersion };
  await client.replace(resource, namespace, action.name, body, {
    fieldManager: target.fieldManager,
  });
}
