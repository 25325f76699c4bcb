import { intern, internValues } from '../resource/intern.ts';
import type { KubeObject } from './kube-client.ts';

const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/**
 * Managers that client-side apply leaves in managedFields (`oc apply` /
 * `kubectl apply` as the original writes objects); the first server-side
 * apply migrates their field sets (engine/managed-fields.ts).
 */
const CLIENT_SIDE_APPLY_MANAGERS: ReadonlySet<string> = new Set([
  'kubectl-client-side-apply',
  'kubectl',
  'oc',
  'before-first-apply',
]);

/** A managedFields entry written by client-side apply (on the object itself, not a subresource). */
export function isClientSideApplyEntry(entry: {
  manager?: string | undefined;
  operation?: string | undefined;
  subresource?: string | undefined;
}): boolean {
  return (
    !entry.subresource &&
    entry.operation === 'Update' &&
    CLIENT_SIDE_APPLY_MANAGERS.has(entry.manager ?? '')
  );
}

/**
 * The form the engine keeps of a current object (listed for a run, or held by
 * a watch cache): what the plan compares and applies from. The field sets of managedFields are dropped (who wrote what and
 * when stays: fights name the writer) unless client-side apply still owns
 * fields (the first server-side apply migrates them), and so is kubectl's
 * last-applied copy of the whole object (the compare ignores it).
 */
export function compactObject(object: KubeObject): KubeObject {
  const metadata = object.metadata;
  if (!metadata) return object;
  const out: Record<string, unknown> = { ...metadata };
  const managed = metadata.managedFields;
  if (Array.isArray(managed)) {
    if (!managed.some(isClientSideApplyEntry)) {
      out.managedFields = managed.map(
        ({ fieldsV1: _f, fieldsType: _t, ...entry }: Record<string, unknown>) => {
          internValues(entry);
          return entry;
        },
      );
    }
  }
  const annotations = metadata.annotations as Record<string, unknown> | undefined;
  if (annotations && LAST_APPLIED in annotations) {
    const { [LAST_APPLIED]: _dropped, ...rest } = annotations;
    out.annotations = rest;
  }
  // The metadata values repeated across objects (see intern.ts); names and uids are not.
  for (const key of ['namespace', 'creationTimestamp'] as const) {
    if (typeof out[key] === 'string') out[key] = intern(out[key]);
  }
  for (const key of ['labels', 'annotations'] as const) {
    const record = out[key];
    if (record !== null && typeof record === 'object' && !Array.isArray(record))
      internValues(record as Record<string, unknown>);
  }
  const compact: KubeObject = { ...object, metadata: out as KubeObject['metadata'] };
  if (typeof compact.apiVersion === 'string') compact.apiVersion = intern(compact.apiVersion);
  if (typeof compact.kind === 'string') compact.kind = intern(compact.kind);
  return compact;
}
