/**
 * The original's `canonicalize(body)` (upstream `reconcile/utils/openshift_resource.py`): the
 * body the sha256 is computed over.
 * Every step runs in the original's order, and fails where the original raises (KeyError on a
 * missing `spec`/`rules`/`subjects`, TypeError on `labels: null`, ...), so that a document the
 * original rejects is rejected here too.
 */
import { ResourceDataError } from './errors.ts';
import { PyTypeError, pySortInPlace } from './py-sort.ts';
import { pyStr, pyUtf8Base64 } from './py-str.ts';
import {
  bodiesWithSharedNodes,
  dictDelete,
  dictGet,
  dictHas,
  dictKeys,
  dictSet,
  isDict,
  isPlainDict,
  isPyStr,
  PyDict,
  type PyObject,
  PySet,
  PyStr,
  type PyValue,
  pyDeepCopy,
  pyEquals,
  pyTruthy,
  pyTuples,
  pyTypeName,
} from './py-values.ts';

export const QONTRACT_ANNOTATION_INTEGRATION = 'qontract.integration';
export const QONTRACT_ANNOTATION_INTEGRATION_VERSION = 'qontract.integration_version';
export const QONTRACT_ANNOTATION_SHA256SUM = 'qontract.sha256sum';
export const QONTRACT_ANNOTATION_UPDATE = 'qontract.update';
export const QONTRACT_ANNOTATION_CALLER_NAME = 'qontract.caller_name';
export const QONTRACT_ANNOTATIONS: readonly string[] = [
  QONTRACT_ANNOTATION_INTEGRATION,
  QONTRACT_ANNOTATION_INTEGRATION_VERSION,
  QONTRACT_ANNOTATION_SHA256SUM,
  QONTRACT_ANNOTATION_UPDATE,
  QONTRACT_ANNOTATION_CALLER_NAME,
];
const SECRET_UPDATED_AT = 'external-resources/updated_at';
export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';
export const IGNORABLE_DATA_FIELDS: readonly string[] = ['service-ca.crt'];

const SERVER_METADATA_FIELDS = [
  'creationTimestamp',
  'resourceVersion',
  'generation',
  'selfLink',
  'uid',
  'namespace',
  'managedFields',
] as const;

// Python `re.search` semantics: unanchored, and `.` matches anything but a newline.
const MANAGED_CLUSTER_FEATURE_LABEL = /feature[^\n]open-cluster-management[^\n]io\//;
const MANAGED_CLUSTER_LABELS: ReadonlySet<string> = new Set([
  'clusterID',
  'managed-by',
  'openshiftVersion',
]);

/** Whether a label is set by a controller for this kind (and so never part of the desired state). */
export function isControllerManagedLabel(kind: PyValue | undefined, label: PyValue): boolean {
  if (kind !== 'ManagedCluster') return false;
  if (typeof label === 'string' && MANAGED_CLUSTER_LABELS.has(label)) return true;
  if (!isPyStr(label))
    throw new ResourceDataError('TypeError', 'expected string or bytes-like object');
  return MANAGED_CLUSTER_FEATURE_LABEL.test(typeof label === 'string' ? label : label.js);
}

type Dict = PyObject | PyDict;

function keyError(key: string): ResourceDataError {
  return new ResourceDataError('KeyError', `'${key}'`);
}

function typeError(message: string): ResourceDataError {
  return new ResourceDataError('TypeError', message);
}

/** `d[key]` where d must be a dict. */
function item(d: PyValue | undefined, key: string): PyValue {
  if (!isDict(d)) throw typeError(`'${pyTypeName(d)}' object is not subscriptable by '${key}'`);
  const v = dictGet(d, key);
  if (v === undefined) throw keyError(key);
  return v;
}

/** `d` used as a dict (`.get`, `.pop`, `in`): anything else raises like in Python. */
function asDict(d: PyValue | undefined, what: string): Dict {
  if (!isDict(d)) throw typeError(`'${pyTypeName(d)}' object has no dict methods (${what})`);
  return d;
}

/** Python `key in container` for the shapes resource bodies can have. */
function pyContains(container: PyValue | undefined, key: string): boolean {
  if (isDict(container)) return dictHas(container, key);
  if (typeof container === 'string') return container.includes(key);
  if (container instanceof PyStr) return container.js.includes(key);
  if (Array.isArray(container)) return container.some((x) => pyEquals(x, key));
  throw typeError(`argument of type '${pyTypeName(container)}' is not iterable`);
}

/** The items `for x in value` visits for a value that is not a list. */
function pyIterate(value: PyValue): PyValue[] {
  if (isDict(value)) return dictKeys(value);
  if (typeof value === 'string') return Array.from(value);
  if (value instanceof PyStr) return value.codePoints.map((c) => String.fromCodePoint(c));
  if (value instanceof PySet) return value.items;
  throw typeError(`'${pyTypeName(value)}' object is not iterable`);
}

/** Python `needle in haystack` for two strings (substring test). */
function pyIn(needle: PyValue, haystack: PyValue | undefined): boolean {
  if (!isPyStr(haystack))
    throw typeError(`argument of type '${pyTypeName(haystack)}' is not iterable`);
  if (!isPyStr(needle))
    throw typeError(`'in <string>' requires string as left operand, not ${pyTypeName(needle)}`);
  const n = typeof needle === 'string' ? needle : needle.js;
  const h = typeof haystack === 'string' ? haystack : haystack.js;
  return h.includes(n);
}

/** Python `list.sort()` on a list of str. */
/** Python `list.sort()` of a rule's `resources`/`verbs`: any items Python can order, else TypeError. */
function sortList(list: PyValue): void {
  if (!Array.isArray(list)) throw typeError(`'${pyTypeName(list)}' object has no attribute 'sort'`);
  try {
    pySortInPlace(list);
  } catch (e) {
    if (e instanceof PyTypeError) throw typeError(e.message);
    throw e;
  }
}

/** The base64 helper of the Secret canonicalisation: `""` for an empty string. */
function base64OfStr(value: PyValue): string {
  const text = value instanceof PyStr ? value : pyStr(value);
  if (text === '') return '';
  return pyUtf8Base64(text);
}

/** Folds Secret `stringData` into `data` (Python `str()` of each value, base64). */
export function mergeStringData(data: Dict, stringData: Dict): Dict {
  let target = data;
  for (const k of dictKeys(stringData)) {
    const encoded = base64OfStr(
      stringData instanceof PyDict
        ? (stringData.get(k) ?? null)
        : (stringData[k as string] ?? null),
    );
    if (typeof k === 'string') {
      dictSet(target, k, encoded);
    } else {
      if (!(target instanceof PyDict)) target = new PyDict(Object.entries(target));
      target.set(k, encoded);
    }
  }
  return target;
}

function popIfPresent(d: Dict, key: string): void {
  dictDelete(d, key);
}

/** A shallow copy of a dict or list (other values are returned as they are). */
function shallowCopy<T extends PyValue | undefined>(v: T): T {
  if (Array.isArray(v)) {
    const copy = v.slice();
    if (pyTuples.has(v)) pyTuples.add(copy);
    return copy as T;
  }
  if (v instanceof PyDict) return new PyDict(v.entries.map(([k, x]) => [k, x])) as T;
  if (isPlainDict(v)) return { ...(v as PyObject) } as T;
  return v;
}

/**
 * Copy-on-write for the canonical body: only the containers canonicalisation changes are copied,
 * everything else is shared with the input (the hash path must stay fast). This equals Python's
 * `deepcopy` unless a changed container is also reachable another way, which only YAML aliases
 * produce; such bodies get a full, sharing-preserving deep copy instead.
 */
class CanonicalCopy {
  readonly deep: boolean;
  constructor(deep: boolean) {
    this.deep = deep;
  }
  /** `parent[key]`, made private to the canonical body before it is changed. */
  own(parent: Dict, key: string): PyValue | undefined {
    const child = dictGet(parent, key);
    if (this.deep || child === undefined) return child;
    const copy = shallowCopy(child);
    if (copy !== child) dictSet(parent, key, copy);
    return copy;
  }
  ownItem(list: PyValue[], index: number): PyValue {
    const child = list[index] as PyValue;
    if (this.deep) return child;
    const copy = shallowCopy(child);
    list[index] = copy;
    return copy;
  }
}

/**
 * Returns the canonical form of `body` without modifying it. The result may share unchanged
 * sub-objects with `body`: treat it as read-only.
 */
export function canonicalize(body: PyValue): Dict {
  const deep = typeof body === 'object' && body !== null && bodiesWithSharedNodes.has(body);
  const cow = new CanonicalCopy(deep);
  const b = asDict(deep ? pyDeepCopy(body) : shallowCopy(body), 'body');
  item(b, 'metadata');
  const metadata = asDict(cow.own(b, 'metadata'), 'metadata');
  const existing = dictGet(metadata, 'annotations');
  if (existing === undefined || existing === null) dictSet(metadata, 'annotations', {});
  const ann = asDict(cow.own(metadata, 'annotations'), 'metadata.annotations');

  for (const field of SERVER_METADATA_FIELDS) popIfPresent(metadata, field);
  popIfPresent(ann, LAST_APPLIED_ANNOTATION);
  popIfPresent(b, 'status');

  const kind = dictGet(b, 'kind');
  const labelsValue = dictGet(metadata, 'labels');
  if (labelsValue !== undefined) {
    const labels = asDict(labelsValue, 'metadata.labels');
    let owned: Dict | undefined;
    for (const label of dictKeys(labels)) {
      if (isControllerManagedLabel(kind, label)) {
        owned ??= asDict(cow.own(metadata, 'labels'), 'metadata.labels');
        if (owned instanceof PyDict) owned.delete(label);
        else dictDelete(owned, label as string);
      }
    }
  }

  if ((kind === 'ConfigMap' || kind === 'Secret') && dictGet(b, 'type') === 'Opaque')
    popIfPresent(b, 'type');

  if (kind === 'Secret') {
    const stringData = dictGet(b, 'stringData');
    popIfPresent(b, 'stringData');
    if (pyTruthy(stringData)) {
      if (!dictHas(b, 'data')) dictSet(b, 'data', {});
      const data = cow.own(b, 'data');
      if (!isDict(data))
        throw typeError(`'${pyTypeName(data)}' object does not support item assignment`);
      const merged = mergeStringData(data, asDict(stringData, 'stringData'));
      if (merged !== data) dictSet(b, 'data', merged);
    }
  }

  if (kind === 'Deployment') popIfPresent(ann, 'deployment.kubernetes.io/revision');

  if (kind === 'Route') {
    item(b, 'spec');
    const spec = asDict(cow.own(b, 'spec'), 'spec');
    if (dictGet(spec, 'wildcardPolicy') === 'None') popIfPresent(spec, 'wildcardPolicy');
    if (dictHas(ann, 'kubernetes.io/tls-acme')) {
      popIfPresent(ann, 'kubernetes.io/tls-acme-awaiting-authorization-owner');
      popIfPresent(ann, 'kubernetes.io/tls-acme-awaiting-authorization-at-url');
      if (dictHas(spec, 'tls')) {
        const tls = asDict(cow.own(spec, 'tls'), 'spec.tls');
        popIfPresent(tls, 'key');
        popIfPresent(tls, 'certificate');
      }
    }
    if (!pyTruthy(dictGet(spec, 'subdomain'))) popIfPresent(spec, 'subdomain');
  }

  if (kind === 'ServiceAccount') {
    if (dictHas(b, 'imagePullSecrets')) {
      const secrets = dictGet(b, 'imagePullSecrets');
      if (!Array.isArray(secrets))
        throw typeError(`'${pyTypeName(secrets)}' object is not iterable`);
      const kept = secrets.filter((s) => !pyIn('-dockercfg-', item(s, 'name')));
      if (kept.length) dictSet(b, 'imagePullSecrets', kept);
      else popIfPresent(b, 'imagePullSecrets');
    }
    popIfPresent(b, 'secrets');
  }

  if (kind === 'Role') {
    const rawRules = item(b, 'rules');
    // `for rule in body["rules"]` also walks a dict's keys or a string's characters; none of those
    // can be subscripted by a rule field, so they only pass when no field name is "in" them.
    if (!Array.isArray(rawRules)) {
      for (const rule of pyIterate(rawRules)) {
        for (const field of ['resources', 'verbs', 'attributeRestrictions']) {
          if (pyContains(rule, field)) item(rule, field);
        }
      }
    }
    const rules = Array.isArray(rawRules) ? (cow.own(b, 'rules') as PyValue[]) : [];
    for (let i = 0; i < rules.length; i++) {
      const rule = isDict(rules[i]) ? cow.ownItem(rules, i) : (rules[i] as PyValue);
      if (pyContains(rule, 'resources')) {
        item(rule, 'resources');
        sortList(cow.own(asDict(rule, 'rule'), 'resources') as PyValue);
      }
      if (pyContains(rule, 'verbs')) {
        item(rule, 'verbs');
        sortList(cow.own(asDict(rule, 'rule'), 'verbs') as PyValue);
      }
      if (
        pyContains(rule, 'attributeRestrictions') &&
        !pyTruthy(item(rule, 'attributeRestrictions'))
      ) {
        popIfPresent(asDict(rule, 'rule'), 'attributeRestrictions');
      }
    }
  }

  if (kind === 'OperatorGroup') popIfPresent(ann, 'olm.providedAPIs');

  if (kind === 'RoleBinding') {
    item(b, 'subjects');
    const subjects = cow.own(b, 'subjects');
    popIfPresent(b, 'groupNames');
    popIfPresent(b, 'userNames');
    if (dictHas(b, 'roleRef')) {
      const roleRef = asDict(cow.own(b, 'roleRef'), 'roleRef');
      popIfPresent(roleRef, 'namespace');
      if (dictHas(roleRef, 'apiGroup') && pyIn(item(roleRef, 'apiGroup'), item(b, 'apiVersion'))) {
        popIfPresent(roleRef, 'apiGroup');
      }
      popIfPresent(roleRef, 'kind');
    }
    if (!Array.isArray(subjects))
      throw typeError(`'${pyTypeName(subjects)}' object is not iterable`);
    for (let i = 0; i < subjects.length; i++) {
      const s = asDict(cow.ownItem(subjects, i), 'subject');
      popIfPresent(s, 'namespace');
      if (dictHas(s, 'apiGroup')) {
        const group = item(s, 'apiGroup');
        if (!pyTruthy(group) || pyIn(group, item(b, 'apiVersion'))) popIfPresent(s, 'apiGroup');
      }
    }
  }

  if (kind === 'ClusterRoleBinding') {
    popIfPresent(b, 'userNames');
    if (dictHas(b, 'roleRef')) {
      const roleRef = asDict(cow.own(b, 'roleRef'), 'roleRef');
      if (dictHas(roleRef, 'apiGroup') && pyIn(item(roleRef, 'apiGroup'), item(b, 'apiVersion'))) {
        popIfPresent(roleRef, 'apiGroup');
      }
      popIfPresent(roleRef, 'kind');
    }
    popIfPresent(b, 'groupNames');
  }

  if (kind === 'Service') {
    item(b, 'spec');
    const spec = asDict(cow.own(b, 'spec'), 'spec');
    if (dictGet(spec, 'sessionAffinity') === 'None') popIfPresent(spec, 'sessionAffinity');
    if (dictGet(spec, 'type') === 'ClusterIP') popIfPresent(spec, 'clusterIP');
  }

  for (const key of QONTRACT_ANNOTATIONS) popIfPresent(ann, key);
  popIfPresent(ann, SECRET_UPDATED_AT);
  return b;
}
