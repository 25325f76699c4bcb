import fastJsonPatch from 'fast-json-patch';
import { clone, deepEqual, isObject, type JsonObject } from './json.ts';
import { keyDefault, listTypeAt } from './schema.ts';
import { ApiError } from './status.ts';

export const PatchType = {
  json: 'application/json-patch+json',
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
} as const;

/** RFC 7386 JSON merge patch (a few lines, no library needed). */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return clone(patch);
  const result: JsonObject = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete result[k];
    else result[k] = applyMergePatch(result[k], v);
  }
  return result;
}

/** RFC 6902 JSON patch; failures are 422 like the real server's. */
export function applyJsonPatch(target: JsonObject, operations: unknown): JsonObject {
  if (!Array.isArray(operations)) {
    throw new ApiError(
      400,
      'BadRequest',
      'json: cannot unmarshal object into Go value of type jsonpatch.Patch',
    );
  }
  try {
    const result = fastJsonPatch.applyPatch(
      clone(target),
      operations as fastJsonPatch.Operation[],
      true,
      true,
    );
    return result.newDocument;
  } catch (error) {
    const detail = error instanceof Error ? (error.message.split('\n')[0] ?? '') : String(error);
    // The real server's generic 422: a fixed message, the patch error as the cause.
    throw new ApiError(
      422,
      'Invalid',
      'the server rejected our request due to an error in our request',
      { causes: [{ message: detail }] },
    );
  }
}

function stripDirectives(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stripDirectives);
  if (!isObject(value)) return value;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(value)) {
    if (k.startsWith('$')) continue;
    out[k] = stripDirectives(v);
  }
  return out;
}

function sameKey(a: unknown, b: unknown, keys: readonly string[]): boolean {
  return keys.every((k) =>
    deepEqual(
      (isObject(a) ? a[k] : undefined) ?? keyDefault(k),
      (isObject(b) ? b[k] : undefined) ?? keyDefault(k),
    ),
  );
}

/**
 * Strategic merge patch for the built-in types: lists with a merge key merge
 * item by item, `finalizers` merge as a set, and the `$patch`, `$retainKeys`,
 * `$deleteFromPrimitiveList/` and `$setElementOrder/` directives are honoured.
 * Hand-written: no npm library knows the Kubernetes patch strategies.
 */
export function applyStrategicMergePatch(
  target: unknown,
  patch: unknown,
  fields: string[] = [],
): unknown {
  if (!isObject(patch)) return clone(patch);
  if (patch.$patch === 'replace') return stripDirectives(patch);
  const result: JsonObject = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (k === '$patch' || k === '$retainKeys' || k.startsWith('$setElementOrder/')) continue;
    if (k.startsWith('$deleteFromPrimitiveList/')) {
      const field = k.slice('$deleteFromPrimitiveList/'.length);
      const current = result[field];
      if (Array.isArray(current) && Array.isArray(v)) {
        result[field] = current.filter((x) => !v.some((d) => deepEqual(d, x)));
      }
      continue;
    }
    if (v === null) {
      delete result[k];
      continue;
    }
    const path = [...fields, k];
    if (isObject(v)) {
      if (v.$patch === 'delete') delete result[k];
      else result[k] = applyStrategicMergePatch(result[k], v, path);
      continue;
    }
    if (Array.isArray(v)) {
      result[k] = mergeList(result[k], v, path);
      continue;
    }
    result[k] = v;
  }
  if (Array.isArray(patch.$retainKeys)) {
    const keep = new Set(patch.$retainKeys.map(String));
    for (const k of Object.keys(result)) if (!keep.has(k)) delete result[k];
  }
  return result;
}

function mergeList(current: unknown, patch: unknown[], path: string[]): unknown {
  const type = listTypeAt(path, true);
  if (type.kind === 'set') {
    const out = Array.isArray(current) ? [...current] : [];
    for (const item of patch) if (!out.some((x) => deepEqual(x, item))) out.push(item);
    return out;
  }
  if (type.kind !== 'map') return stripDirectives(patch);
  if (patch.some((item) => isObject(item) && item.$patch === 'replace')) {
    return stripDirectives(patch.filter((item) => !(isObject(item) && item.$patch === 'replace')));
  }
  const out = Array.isArray(current) ? [...current] : [];
  for (const item of patch) {
    const index = out.findIndex((existing) => sameKey(existing, item, type.keys));
    if (isObject(item) && item.$patch === 'delete') {
      if (index >= 0) out.splice(index, 1);
      continue;
    }
    if (index >= 0) out[index] = applyStrategicMergePatch(out[index], item, path);
    else out.push(stripDirectives(item));
  }
  return out;
}
