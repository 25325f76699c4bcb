import type { ApiResource } from '../cluster/api-resources.ts';
import { isClientSideApplyEntry } from '../cluster/compact-object.ts';
import type { KubeClient, KubeObject } from '../cluster/kube-client.ts';

interface ManagedFieldsEntry {
  manager?: string;
  operation?: string;
  apiVersion?: string;
  time?: string;
  fieldsType?: string;
  fieldsV1?: Record<string, unknown>;
  subresource?: string;
}

/**
 * The managedFields an object should carry before our first server-side
 * apply: the fields owned by client-side apply move to our Apply entry, so
 * that a field dropped from the desired state is removed by the next apply
 * instead of lingering under the old manager. Undefined when nothing moves.
 */
export function migratedManagedFields(
  current: KubeObject,
  fieldManager: string,
  now = new Date(),
): ManagedFieldsEntry[] | undefined {
  const entries = (current.metadata?.managedFields as ManagedFieldsEntry[] | undefined) ?? [];
  if (!entries.some(isClientSideApplyEntry)) return undefined;
  const ours = entries.find(
    (e) => e.manager === fieldManager && e.operation === 'Apply' && !e.subresource,
  );
  let merged: Record<string, unknown> = structuredClone(ours?.fieldsV1 ?? {});
  for (const e of entries)
    if (isClientSideApplyEntry(e)) merged = mergeFieldSets(merged, e.fieldsV1 ?? {});
  const kept = entries.filter((e) => !isClientSideApplyEntry(e) && e !== ours);
  return [
    ...kept,
    {
      manager: fieldManager,
      operation: 'Apply',
      apiVersion: current.apiVersion ?? 'v1',
      time: now.toISOString().replace(/\.\d{3}Z$/, 'Z'),
      fieldsType: 'FieldsV1',
      fieldsV1: merged,
    },
  ];
}

/** Union of two FieldsV1 sets. */
export function mergeFieldSets(
  a: Record<string, unknown>,
  b: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...a };
  for (const [k, v] of Object.entries(b)) {
    const prev = out[k];
    out[k] =
      prev && typeof prev === 'object' && v && typeof v === 'object'
        ? mergeFieldSets(prev as Record<string, unknown>, v as Record<string, unknown>)
        : structuredClone(v);
  }
  return out;
}

/** Writes the migrated managedFields with a JSON patch guarded by the resourceVersion; no request when nothing moves. */
export async function takeOverClientSideApplyFields(
  client: KubeClient,
  r: ApiResource,
  current: KubeObject,
  fieldManager: string,
): Promise<boolean> {
  const migrated = migratedManagedFields(current, fieldManager);
  if (!migrated) return false;
  const ns = r.namespaced ? current.metadata?.namespace : undefined;
  await client.patch(
    r,
    ns,
    current.metadata?.name ?? '',
    [
      { op: 'test', path: '/metadata/resourceVersion', value: current.metadata?.resourceVersion },
      { op: 'replace', path: '/metadata/managedFields', value: migrated },
    ],
    'json',
  );
  return true;
}
