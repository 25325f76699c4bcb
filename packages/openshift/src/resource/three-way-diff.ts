/**
 * The original's equality decision before applying an object that exists on both sides
 * (upstream `reconcile/openshift_base.py` `patch_desired_resource_for_recycle_annotations()`,
 * used by `realize_data()`, + `reconcile/utils/three_way_diff_strategy.py`
 * `three_way_diff_using_hash()`): compare the stored sha, then diff normalised current against
 * normalised desired and ignore removals, moves, numerically equal cpu values and empty env
 * values.
 */
import {
  LAST_APPLIED_ANNOTATION,
  mergeStringData,
  QONTRACT_ANNOTATION_INTEGRATION,
  QONTRACT_ANNOTATION_SHA256SUM,
  QONTRACT_ANNOTATIONS,
} from './canonicalize.ts';
import { cpuEqual } from './cpu.ts';
import { ResourceDataError } from './errors.ts';
import { type JsonPatchOperation, jsonPatchFromDiff, resolvePointer } from './json-patch-diff.ts';
import { OpenshiftResource } from './openshift-resource.ts';
import {
  dictDelete,
  dictEntries,
  dictGet,
  dictHas,
  dictSet,
  isDict,
  isPlainDict,
  PyDict,
  type PyObject,
  type PyValue,
  pyDeepCopy,
  pyEquals,
  pyTruthy,
  pyTuples,
  pyTypeName,
  setOwn,
} from './py-values.ts';

const RECYCLE_POD_ANNOTATIONS: readonly string[] = [
  'kubectl.kubernetes.io/restartedAt',
  'openshift.openshift.io/restartedAt',
];
const POD_RECYCLE_SUPPORTED_OWNER_KINDS: readonly string[] = [
  'DaemonSet',
  'Deployment',
  'DeploymentConfig',
  'StatefulSet',
];

const NORMALIZE_IGNORED_METADATA: ReadonlySet<string> = new Set([
  'creationTimestamp',
  'resourceVersion',
  'generation',
  'selfLink',
  'uid',
  'fieldRef',
  'managedFields',
  'namespace',
]);

/** The annotations normalizeObject drops: the `qontract.*` ones and kubectl's last-applied copy. */
const NORMALIZE_DROPPED_ANNOTATIONS: ReadonlySet<string> = new Set([
  ...QONTRACT_ANNOTATIONS,
  LAST_APPLIED_ANNOTATION,
]);

// Python `re.match`: `.` is anything but a newline and `$` also matches before a final newline.
const CPU_PATH = /^\/[^\n]*\/(requests|limits)\/cpu\n?$/;
const ENV_VALUE_PATH = /^\/[^\n]*\/env\/[0-9]+\/value\n?$/;

function typeError(message: string): ResourceDataError {
  return new ResourceDataError('TypeError', message);
}

/**
 * The current pod template's restart annotations (`kubectl rollout restart`), to copy into the
 * desired object: none when the current object is no workload or has none.
 */
function recycleAnnotationsOf(current: OpenshiftResource): [string, PyValue][] {
  if (
    !isDict(current.body) ||
    !POD_RECYCLE_SUPPORTED_OWNER_KINDS.includes(dictGet(current.body, 'kind') as string)
  )
    return [];
  let node: PyValue | undefined = current.body;
  for (const key of ['spec', 'template', 'metadata', 'annotations']) {
    node = isDict(node) ? dictGet(node, key) : undefined;
  }
  const currentAnnotations = isDict(node) ? node : undefined;
  const copied: [string, PyValue][] = [];
  for (const key of RECYCLE_POD_ANNOTATIONS) {
    const value = currentAnnotations ? dictGet(currentAnnotations, key) : undefined;
    if (pyTruthy(value)) copied.push([key, value as PyValue]);
  }
  return copied;
}

/** Merges `copied` into the pod template annotations of `body` (desired's own values win). */
function mergeRecycleAnnotations(body: PyValue, copied: readonly [string, PyValue][]): void {
  let target: PyValue = body;
  for (const key of ['spec', 'template', 'metadata']) {
    if (!isDict(target))
      throw typeError(`'${pyTypeName(target)}' object has no attribute 'setdefault'`);
    if (!dictHas(target, key)) dictSet(target, key, {});
    target = dictGet(target, key) as PyValue;
  }
  if (!isDict(target)) throw typeError(`'${pyTypeName(target)}' object has no attribute 'get'`);
  const existing = dictHas(target, 'annotations') ? dictGet(target, 'annotations') : {};
  if (!isDict(existing))
    throw typeError(`unsupported operand type(s) for |: 'dict' and '${pyTypeName(existing)}'`);
  const merged: PyObject = {};
  for (const [k, v] of copied) setOwn(merged, k, v);
  let result: PyObject | PyDict = merged;
  for (const [k, v] of dictEntries(existing)) {
    if (typeof k === 'string' && !(result instanceof PyDict)) setOwn(result, k, v);
    else {
      if (!(result instanceof PyDict)) result = new PyDict(Object.entries(result));
      result.set(k, v);
    }
  }
  dictSet(target, 'annotations', result);
}

/**
 * Desired with the current pod template's restart annotations copied in (desired's values win),
 * so a `rollout restart` done on the cluster does not count as drift, as the original does: a new
 * resource with a copied body when there is any to copy, `desired` itself otherwise. Nothing
 * given is changed (a desired body may be the desired cache's, shared with later runs).
 */
export function withRecycleAnnotations(
  desired: OpenshiftResource,
  current: OpenshiftResource,
): OpenshiftResource {
  const copied = recycleAnnotationsOf(current);
  if (copied.length === 0) return desired;
  const body = pyDeepCopy(desired.body);
  mergeRecycleAnnotations(body, copied);
  return new OpenshiftResource(body, desired.integration, desired.integrationVersion, {
    validate: false,
    callerName: desired.callerName,
    errorDetails: desired.errorDetails,
  });
}

/**
 * The original's `normalize_object`: a shallow copy without server metadata, the `qontract.*`
 * annotations (the owning integration, version, sha, update time, caller) and last-applied.
 */
export function normalizeObject(resource: OpenshiftResource): PyObject | PyDict {
  const source = resource.body;
  if (!isDict(source)) throw typeError(`'${pyTypeName(source)}' object is not subscriptable`);
  const body: PyObject | PyDict =
    source instanceof PyDict ? new PyDict(source.entries.slice()) : { ...source };
  const metadataSource = dictGet(body, 'metadata');
  if (metadataSource === undefined) throw new ResourceDataError('KeyError', "'metadata'");
  if (!isDict(metadataSource))
    throw typeError(`'${pyTypeName(metadataSource)}' object is not iterable`);
  const metadata: PyObject | PyDict =
    metadataSource instanceof PyDict
      ? new PyDict(
          metadataSource.entries.filter(
            ([k]) => !(typeof k === 'string' && NORMALIZE_IGNORED_METADATA.has(k)),
          ),
        )
      : Object.fromEntries(
          Object.entries(metadataSource).filter(([k]) => !NORMALIZE_IGNORED_METADATA.has(k)),
        );
  const annotationsSource = dictGet(metadata, 'annotations');
  const annotations: PyObject | PyDict =
    pyTruthy(annotationsSource) && isDict(annotationsSource) ? annotationsSource : {};
  const dropped = NORMALIZE_DROPPED_ANNOTATIONS;
  const kept: PyObject | PyDict =
    annotations instanceof PyDict
      ? new PyDict(annotations.entries.filter(([k]) => !(typeof k === 'string' && dropped.has(k))))
      : Object.fromEntries(Object.entries(annotations).filter(([k]) => !dropped.has(k)));
  dictSet(metadata, 'annotations', kept);
  dictSet(body, 'metadata', metadata);
  if (dictGet(body, 'kind') === 'Secret') {
    const stringData = dictGet(body, 'stringData');
    if (pyTruthy(stringData)) {
      if (!isDict(stringData))
        throw typeError(`'${pyTypeName(stringData)}' object has no attribute 'items'`);
      const data = dictGet(body, 'data');
      const base: PyObject | PyDict = pyTruthy(data) && isDict(data) ? data : {};
      const copy: PyObject | PyDict =
        base instanceof PyDict ? new PyDict(base.entries.slice()) : { ...base };
      dictSet(body, 'data', mergeStringData(copy, stringData));
      dictDelete(body, 'stringData');
    }
  }
  return body;
}

function isCpuMutation(current: PyValue, op: JsonPatchOperation): boolean {
  if (!CPU_PATH.test(op.path)) return false;
  return cpuEqual(resolvePointer(current, op.path), op.value);
}

function isEmptyEnvValue(op: JsonPatchOperation): boolean {
  return op.op === 'add' && !pyTruthy(op.value) && ENV_VALUE_PATH.test(op.path);
}

/** Whether an op from the current→desired patch means the cluster must be updated. */
export function isValidChange(current: PyValue, op: JsonPatchOperation): boolean {
  return (
    (op.op === 'add' || op.op === 'replace') && !isCpuMutation(current, op) && !isEmptyEnvValue(op)
  );
}

/** The original's `three_way_diff_using_hash(current, desired)`: true means "equal, do not apply". */
export function threeWayDiffUsingHash(
  current: OpenshiftResource,
  desired: OpenshiftResource,
): boolean {
  const body = current.body;
  if (!isDict(body)) throw typeError(`'${pyTypeName(body)}' object is not subscriptable`);
  const metadata = dictGet(body, 'metadata');
  if (metadata === undefined) return false;
  if (!isDict(metadata)) throw typeError(`'${pyTypeName(metadata)}' object is not subscriptable`);
  if (!dictHas(metadata, 'annotations')) return false;
  const annotations = dictGet(metadata, 'annotations');
  if (!isDict(annotations))
    throw typeError(`'${pyTypeName(annotations)}' object is not subscriptable`);
  const storedSha = dictGet(annotations, QONTRACT_ANNOTATION_SHA256SUM);
  if (storedSha === undefined) return false;
  const storedIntegration = dictGet(annotations, QONTRACT_ANNOTATION_INTEGRATION);
  if (storedIntegration === undefined) {
    throw new ResourceDataError('KeyError', `'${QONTRACT_ANNOTATION_INTEGRATION}'`);
  }
  if (!pyEquals(storedIntegration, desired.integration)) return false;
  if (!pyEquals(storedSha, desired.sha256sum())) return false;
  if (normalizedDesiredContained(current.body, desired.body)) return true;
  const currentNormalized = normalizeObject(current);
  const desiredNormalized = normalizeObject(desired);
  for (const op of jsonPatchFromDiff(currentNormalized, desiredNormalized)) {
    if (isValidChange(currentNormalized, op)) return false;
  }
  return true;
}

/**
 * A shortcut of the diff above that copies nothing: true when every key of
 * normalised `desired` is in normalised `current` with a contained value
 * (dicts: their keys, recursively; lists: the same length and contained items;
 * anything else: the same JS value). The current→desired patch then holds
 * removals only, so the objects are equal, exactly as the full diff would
 * say. False says nothing: the full diff decides (a changed or missing value,
 * a list of another length, Python-only values, `PyDict` keys, a Secret's
 * `stringData`, and everything normalizeObject would refuse). In a steady
 * state nearly every object takes the shortcut.
 */
export function normalizedDesiredContained(current: PyValue, desired: PyValue): boolean {
  if (!isPlainDict(desired) || !isPlainDict(current)) return false;
  if (!Object.hasOwn(desired, 'metadata')) return false;
  if (hasStringData(desired) || hasStringData(current)) return false;
  for (const key of Object.keys(desired)) {
    if (!Object.hasOwn(current, key)) return false;
    const ok =
      key === 'metadata'
        ? metadataContained(current[key]!, desired[key]!)
        : contained(current[key]!, desired[key]!);
    if (!ok) return false;
  }
  return true;
}

/** A Secret whose `stringData` normalizeObject would merge into `data`. */
function hasStringData(body: PyObject): boolean {
  return (
    Object.hasOwn(body, 'kind') && body.kind === 'Secret' && pyTruthy(dictGet(body, 'stringData'))
  );
}

function metadataContained(current: PyValue, desired: PyValue): boolean {
  if (!isPlainDict(desired) || !isPlainDict(current)) return false;
  for (const key of Object.keys(desired)) {
    if (NORMALIZE_IGNORED_METADATA.has(key)) continue;
    if (key === 'annotations') {
      if (!annotationsContained(current.annotations, desired.annotations)) return false;
    } else if (!Object.hasOwn(current, key) || !contained(current[key]!, desired[key]!)) {
      return false;
    }
  }
  return true;
}

/** normalizeObject's annotations: a truthy dict without the qontract.* and last-applied ones, else `{}`. */
function annotationsContained(current: PyValue | undefined, desired: PyValue | undefined): boolean {
  if (!pyTruthy(desired ?? null) || !isDict(desired)) return true;
  if (!isPlainDict(desired)) return false;
  const kept = pyTruthy(current ?? null) && isDict(current) ? current : {};
  if (!isPlainDict(kept)) return false;
  for (const key of Object.keys(desired)) {
    if (NORMALIZE_DROPPED_ANNOTATIONS.has(key)) continue;
    if (!Object.hasOwn(kept, key) || !contained(kept[key]!, desired[key]!)) return false;
  }
  return true;
}

function contained(current: PyValue, desired: PyValue): boolean {
  if (current === desired) return true;
  if (typeof desired !== 'object' || desired === null) return false;
  if (Array.isArray(desired)) {
    if (!Array.isArray(current) || current.length !== desired.length) return false;
    if (pyTuples.has(desired) || pyTuples.has(current)) return false;
    for (let i = 0; i < desired.length; i++) {
      if (!contained(current[i]!, desired[i]!)) return false;
    }
    return true;
  }
  if (!isPlainDict(desired) || !isPlainDict(current)) return false;
  for (const key of Object.keys(desired)) {
    if (!Object.hasOwn(current, key) || !contained(current[key]!, desired[key]!)) return false;
  }
  return true;
}

/**
 * The decision realize_data makes for an object present on both sides: `true` when the cluster
 * object is up to date and nothing is applied. `desired` carries the current object's restart
 * annotations already (`withRecycleAnnotations`), as the original's does when it compares.
 */
export function resourcesEqual(current: OpenshiftResource, desired: OpenshiftResource): boolean {
  const desiredBody = desired.body;
  // A frozen desired body (the desired cache's, shared between runs) cannot
  // change, and a cluster object is the same object while its uid,
  // resourceVersion and apiVersion are: the verdict on the two is kept, so a
  // run whose objects and desired state did not change since the one before
  // (a later run of the loop, a watch period) does not compare them again.
  const version =
    typeof desiredBody === 'object' && desiredBody !== null && Object.isFrozen(desiredBody)
      ? objectVersion(current.body)
      : undefined;
  const known = version && verdicts.get(desiredBody as object);
  const verdict = version && known ? known.get(version.uid) : undefined;
  if (
    verdict &&
    verdict.resourceVersion === version!.resourceVersion &&
    verdict.apiVersion === version!.apiVersion &&
    verdict.integration === desired.integration
  ) {
    return verdict.equal;
  }
  const equal = threeWayDiffUsingHash(current, desired);
  if (version) {
    const kept = known || new Map<string, Verdict>();
    // Objects deleted and created again (new uids) would pile up: a bounded number is kept
    // (enough for a file used in many namespaces and clusters).
    if (kept.size >= MAX_VERDICTS_PER_BODY && !kept.has(version.uid)) kept.clear();
    kept.set(version.uid, { ...version, integration: desired.integration, equal });
    if (!known) verdicts.set(desiredBody as object, kept);
  }
  return equal;
}

interface ObjectVersion {
  readonly uid: string;
  readonly resourceVersion: string;
  readonly apiVersion: string;
}

interface Verdict extends ObjectVersion {
  readonly integration: string;
  readonly equal: boolean;
}

/**
 * The last verdict by frozen desired body (gone with it), then by cluster
 * object (uid): a desired body shared by several objects (the same file in
 * several namespaces) holds one for each.
 */
const verdicts = new WeakMap<object, Map<string, Verdict>>();
const MAX_VERDICTS_PER_BODY = 1024;

/** The uid, resourceVersion and apiVersion of a cluster object; undefined when one is missing (never kept). */
function objectVersion(body: PyValue): ObjectVersion | undefined {
  if (!isDict(body) || body instanceof PyDict) return undefined;
  const metadata = body.metadata;
  if (metadata === null || typeof metadata !== 'object' || metadata instanceof PyDict) {
    return undefined;
  }
  const { uid, resourceVersion } = metadata as Record<string, unknown>;
  const apiVersion = body.apiVersion;
  if (typeof uid !== 'string' || !uid) return undefined;
  if (typeof resourceVersion !== 'string' || !resourceVersion) return undefined;
  if (typeof apiVersion !== 'string') return undefined;
  return { uid, resourceVersion, apiVersion };
}
