/**
 * The original's `OpenshiftResource.__eq__` (`obj_intersect_equal(desired, current)` in upstream
 * `reconcile/utils/openshift_resource.py`): a subset test where extra keys in current are fine
 * except under `labels`, `data` and `matchLabels`. realize_data does not use it (it uses the
 * three-way diff), but other integrations compare resources with it.
 */
import {
  IGNORABLE_DATA_FIELDS,
  isControllerManagedLabel,
  LAST_APPLIED_ANNOTATION,
} from './canonicalize.ts';
import { cpuEqual } from './cpu.ts';
import { ResourceDataError } from './errors.ts';
import {
  dictEntries,
  dictGet,
  dictKeys,
  dictSet,
  dictSize,
  isDict,
  isPyStr,
  PyDict,
  type PyValue,
  pyEquals,
  pyTruthy,
  pyTypeName,
} from './py-values.ts';

const IGNORED_KEYS: ReadonlySet<string> = new Set([
  LAST_APPLIED_ANNOTATION,
  'creationTimestamp',
  'resourceVersion',
  'generation',
  'selfLink',
  'uid',
  'fieldRef',
]);

const EQUIVALENT_API_VERSIONS: ReadonlyArray<readonly [string, string]> = [
  ['apps/v1', 'extensions/v1beta1'],
  ['extensions/v1beta1', 'apps/v1'],
  ['networking.k8s.io/v1', 'extensions/v1beta1'],
];

function pyClass(v: PyValue | undefined): string {
  return pyTypeName(v);
}

function keysOf(v: PyValue | undefined, what: string): PyValue[] {
  if (isDict(v)) return dictKeys(v);
  if (Array.isArray(v)) return v;
  if (typeof v === 'string') return Array.from(v);
  throw new ResourceDataError('TypeError', `'${pyTypeName(v)}' object is not iterable (${what})`);
}

function contains(container: PyValue | undefined, key: PyValue): boolean {
  if (isDict(container))
    return container instanceof PyDict
      ? container.has(key)
      : typeof key === 'string' && Object.hasOwn(container, key);
  if (Array.isArray(container)) return container.some((x) => pyEquals(x, key));
  if (typeof container === 'string' && typeof key === 'string') return container.includes(key);
  throw new ResourceDataError(
    'TypeError',
    `argument of type '${pyTypeName(container)}' is not iterable`,
  );
}

/** `obj_intersect_equal(obj1, obj2)`; obj1 is desired, obj2 is current (mutated like the original: env items). */
export function objIntersectEqual(
  obj1: PyValue | undefined,
  obj2: PyValue | undefined,
  depth = 0,
): boolean {
  if (pyClass(obj1) !== pyClass(obj2)) return false;
  if (isDict(obj1) && isDict(obj2)) {
    for (const [k, v1] of dictEntries(obj1)) {
      const found =
        obj2 instanceof PyDict ? obj2.get(k) : typeof k === 'string' ? dictGet(obj2, k) : undefined;
      const v2 = found === undefined ? null : found;
      if (v2 === null && pyTruthy(v1)) return false;
      if (typeof k === 'string' && IGNORED_KEYS.has(k)) continue;
      if ((k === 'annotations' && v1 === null) || (k === 'divisor' && v1 === '0')) continue;
      if (k === 'status' && depth === 0) continue;
      if (k === 'labels') {
        for (const label of keysOf(v2, 'labels')) {
          if (!contains(v1, label) && !isControllerManagedLabel('ManagedCluster', label))
            return false;
        }
        if (!objIntersectEqual(v1, v2, depth + 1)) return false;
      } else if (k === 'data' || k === 'matchLabels') {
        for (const key of keysOf(v2, String(k))) {
          if (
            !contains(v1, key) &&
            !(typeof key === 'string' && IGNORABLE_DATA_FIELDS.includes(key))
          )
            return false;
        }
        if (!objIntersectEqual(v1, v2, depth + 1)) return false;
      } else if (k === 'env') {
        for (const item of keysOf(v2, 'env')) {
          if (isDict(item) && dictSize(item) === 1 && contains(item, 'name'))
            dictSet(item, 'value', '');
        }
        if (!objIntersectEqual(v1, v2, depth + 1)) return false;
      } else if (k === 'cpu') {
        if (!cpuEqual(v1, v2)) return false;
      } else if (k === 'apiVersion') {
        if (!pyEquals(v1, v2) && !EQUIVALENT_API_VERSIONS.some(([a, b]) => v1 === a && v2 === b))
          return false;
      } else if (k === 'imagePullSecrets') {
        const kept = keysOf(v2, 'imagePullSecrets').filter((s) => {
          const name = isDict(s) ? dictGet(s, 'name') : undefined;
          if (!isPyStr(name))
            throw new ResourceDataError(
              'TypeError',
              'imagePullSecrets entry without a string name',
            );
          return !(typeof name === 'string' ? name : name.js).includes('-dockercfg-');
        });
        if (!objIntersectEqual(v1, kept, depth + 1)) return false;
      } else if (!objIntersectEqual(v1, v2, depth + 1)) {
        return false;
      }
    }
    return true;
  }
  if (Array.isArray(obj1) && Array.isArray(obj2)) {
    if (obj1.length !== obj2.length) return false;
    for (let i = 0; i < obj1.length; i++)
      if (!objIntersectEqual(obj1[i], obj2[i], depth + 1)) return false;
    return true;
  }
  if (obj1 === undefined || obj2 === undefined) return obj1 === obj2;
  return pyEquals(obj1, obj2);
}
