import type { Logger } from '@qontract/core';
import { type ApiResource, parseKind } from '../cluster/api-resources.ts';
import type { ClusterHandle } from '../cluster/cluster-map.ts';
import type { KubeObject } from '../cluster/kube-client.ts';
import type { PlannedAction } from './plan-types.ts';
import { pyRepr } from './py-repr.ts';

const TRIGGER_KINDS = new Set(['ConfigMap', 'Secret']);
const OWNER_KINDS = new Set(['DaemonSet', 'Deployment', 'DeploymentConfig', 'StatefulSet']);

interface PodSpecLike {
  volumes?: Array<{ secret?: { secretName?: string }; configMap?: { name?: string } }>;
  containers?: ContainerLike[];
  initContainers?: ContainerLike[];
}
interface ContainerLike {
  envFrom?: Array<{ secretRef?: { name?: string }; configMapRef?: { name?: string } }>;
  env?: Array<{
    valueFrom?: { secretKeyRef?: { name?: string }; configMapKeyRef?: { name?: string } };
  }>;
}

/** Names of Secrets or ConfigMaps a pod spec uses (volumes, envFrom, env keyRefs; optional ones too). */
export function resourcesUsedInPodSpec(
  spec: PodSpecLike,
  kind: 'Secret' | 'ConfigMap',
): Set<string> {
  const names = new Set<string>();
  const add = (n: string | undefined) => n && names.add(n);
  for (const v of spec.volumes ?? [])
    add(kind === 'Secret' ? v.secret?.secretName : v.configMap?.name);
  for (const c of [...(spec.containers ?? []), ...(spec.initContainers ?? [])]) {
    for (const e of c.envFrom ?? [])
      add(kind === 'Secret' ? e.secretRef?.name : e.configMapRef?.name);
    for (const e of c.env ?? [])
      add(kind === 'Secret' ? e.valueFrom?.secretKeyRef?.name : e.valueFrom?.configMapKeyRef?.name);
  }
  return names;
}

/**
 * The original's pod recycling: after a `qontract.recycle: "true"` Secret or
 * ConfigMap changed, restart the workloads (root owners of the pods that use
 * it) the way `oc rollout restart` does. In dry-run the pods are still listed
 * and the restarts logged, as upstream.
 */
export async function recyclePods(
  h: ClusterHandle,
  action: PlannedAction,
  options: { dryRun: boolean; log: Logger; fieldManager: string },
): Promise<void> {
  const kind = parseKind(action.kind).kind;
  if (!TRIGGER_KINDS.has(kind)) return;
  const podResource = h.catalog.get('Pod');
  const pods = await h.client.list(podResource, action.namespace);
  const owners = new Map<string, { kind: string; name: string; apiVersion: string }>();
  for (const pod of pods) {
    const used = resourcesUsedInPodSpec(
      (pod.spec ?? {}) as PodSpecLike,
      kind as 'Secret' | 'ConfigMap',
    );
    if (!used.has(action.name)) continue;
    const root = await rootOwner(h, pod, action.namespace);
    if (OWNER_KINDS.has(root.kind)) owners.set(`${root.kind}/${root.name}`, root);
  }
  for (const owner of [...owners.values()].sort((a, b) =>
    `${a.kind}/${a.name}`.localeCompare(`${b.kind}/${b.name}`),
  )) {
    options.log.info(
      pyRepr([`recycle_${owner.kind.toLowerCase()}`, action.cluster, action.namespace, owner.name]),
    );
    if (options.dryRun) continue;
    const r = resourceFor(h, owner.kind, owner.apiVersion);
    await h.client.patch(
      r,
      action.namespace,
      owner.name,
      {
        spec: {
          template: {
            metadata: {
              annotations: { 'kubectl.kubernetes.io/restartedAt': new Date().toISOString() },
            },
          },
        },
      },
      'merge',
      { fieldManager: 'kubectl-rollout' },
    );
  }
}

async function rootOwner(
  h: ClusterHandle,
  obj: KubeObject,
  namespace: string,
): Promise<{ kind: string; name: string; apiVersion: string }> {
  let current = {
    kind: obj.kind ?? 'Pod',
    name: obj.metadata?.name ?? '',
    apiVersion: obj.apiVersion ?? 'v1',
  };
  let refs =
    (obj.metadata?.ownerReferences as
      | Array<{ kind: string; name: string; apiVersion: string; controller?: boolean }>
      | undefined) ?? [];
  for (let depth = 0; depth < 10; depth++) {
    const ref = refs.find((r) => r.controller);
    if (!ref) break;
    let owner: KubeObject | undefined;
    try {
      owner = await h.client.get(resourceFor(h, ref.kind, ref.apiVersion), namespace, ref.name);
    } catch {
      owner = undefined;
    }
    if (!owner) break;
    current = { kind: ref.kind, name: ref.name, apiVersion: ref.apiVersion };
    refs = (owner.metadata?.ownerReferences as typeof refs | undefined) ?? [];
  }
  return current;
}

function resourceFor(h: ClusterHandle, kind: string, apiVersion: string): ApiResource {
  const group = apiVersion.includes('/') ? apiVersion.split('/')[0]! : '';
  return h.catalog.get(group ? `${kind}.${group}` : kind);
}
