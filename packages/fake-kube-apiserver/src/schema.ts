/**
 * The list semantics of the built-in types we use (`x-kubernetes-list-type` /
 * `patchMergeKey` in the real OpenAPI), keyed by where the list sits. Server-side
 * apply and strategic merge patch both read it; lists not named here are atomic.
 */
export type ListType =
  | { readonly kind: 'map'; readonly keys: readonly string[] }
  | { readonly kind: 'set' }
  | { readonly kind: 'atomic' };

const ATOMIC: ListType = { kind: 'atomic' };
const SET: ListType = { kind: 'set' };
const byName: ListType = { kind: 'map', keys: ['name'] };

const POD_SPEC_LISTS: Record<string, ListType> = {
  containers: byName,
  initContainers: byName,
  ephemeralContainers: byName,
  volumes: byName,
  imagePullSecrets: byName,
  hostAliases: { kind: 'map', keys: ['ip'] },
  topologySpreadConstraints: { kind: 'map', keys: ['topologyKey', 'whenUnsatisfiable'] },
  resourceClaims: byName,
};

const CONTAINER_LISTS: Record<string, ListType> = {
  env: byName,
  ports: { kind: 'map', keys: ['containerPort', 'protocol'] },
  volumeMounts: { kind: 'map', keys: ['mountPath'] },
  volumeDevices: { kind: 'map', keys: ['devicePath'] },
  resizePolicy: { kind: 'map', keys: ['resourceName'] },
};

const CONTAINER_FIELDS = new Set(['containers', 'initContainers', 'ephemeralContainers']);

/**
 * `path` holds the field names from the object root to the list (list items are
 * transparent). `builtin` is false for custom resources, whose lists we treat as
 * atomic (we do not read CRD schemas).
 */
export function listTypeAt(path: readonly string[], builtin: boolean): ListType {
  const field = path[path.length - 1];
  const parent = path[path.length - 2];
  if (field === undefined) return ATOMIC;
  if (path.length === 2 && parent === 'metadata') {
    if (field === 'finalizers') return SET;
    if (field === 'ownerReferences') return { kind: 'map', keys: ['uid'] };
    return ATOMIC;
  }
  if (!builtin) return ATOMIC;
  if (field === 'conditions' && parent === 'status') return { kind: 'map', keys: ['type'] };
  if (parent !== undefined && CONTAINER_FIELDS.has(parent)) {
    return CONTAINER_LISTS[field] ?? ATOMIC;
  }
  if (parent === 'spec' && field === 'ports' && path.length === 2) {
    // Service ports; only Services have a top-level `spec.ports` among our types.
    return { kind: 'map', keys: ['port', 'protocol'] };
  }
  if (parent === 'spec' && field in POD_SPEC_LISTS) return POD_SPEC_LISTS[field] ?? ATOMIC;
  return ATOMIC;
}

/** Keys that the real server defaults, so items keyed on them match before defaulting. */
export function keyDefault(key: string): unknown {
  return key === 'protocol' ? 'TCP' : undefined;
}
