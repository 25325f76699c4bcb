import { Buffer } from 'node:buffer';
import { createTwoFilesPatch } from 'diff';
import { stringify } from 'yaml';

/** `metadata` fields the API server owns: never part of what is applied, left out of a diff. */
const SERVER_OWNED_METADATA = [
  'managedFields',
  'resourceVersion',
  'uid',
  'creationTimestamp',
  'generation',
  'selfLink',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
];

/** Annotations written by tools, not by the desired state (the first one holds a copy of the body: secrets too). */
const SERVER_OWNED_ANNOTATIONS = [
  'kubectl.kubernetes.io/last-applied-configuration',
  'deployment.kubernetes.io/revision',
];

export interface ObjectDiffInput {
  readonly cluster: string;
  readonly namespace: string;
  readonly kind: string;
  readonly name: string;
  /** The cluster's object (plain JSON); absent for a creation. */
  readonly current?: unknown;
  /** The object as it would be applied (plain JSON); absent for a deletion. */
  readonly desired?: unknown;
}

type Json = Record<string, unknown>;

const SHA_ANNOTATION = 'qontract.sha256sum';

const isObject = (v: unknown): v is Json =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A unified diff of the cluster's object against the object that would be
 * applied, as `kubectl diff` shows it: YAML of both sides (keys sorted),
 * `---`/`+++` headers naming cluster/namespace/kind/name. Fields the server
 * owns are left out; Secret values are masked per key (changed / unchanged,
 * never the value or its base64). A creation shows the whole desired object
 * added, a deletion the whole current object removed. Empty when both sides
 * read the same.
 */
export function renderObjectDiff(input: ObjectDiffInput): string {
  const secret = input.kind.split('.')[0] === 'Secret';
  let current = input.current === undefined ? undefined : readable(input.current);
  let desired = input.desired === undefined ? undefined : readable(input.desired);
  // The apply puts a namespaced object into the namespace it is planned for.
  if (desired && input.namespace !== 'cluster' && isObject(desired.metadata)) {
    const metadata = desired.metadata;
    if (metadata.namespace === undefined || metadata.namespace === '') {
      desired = { ...desired, metadata: { ...metadata, namespace: input.namespace } };
    }
  }
  if (secret) [current, desired] = maskSecretValues(current, desired);
  const path = `${input.cluster}/${input.namespace}/${input.kind}/${input.name}`;
  const patch = createTwoFilesPatch(
    current === undefined ? '/dev/null' : `live/${path}`,
    desired === undefined ? '/dev/null' : `desired/${path}`,
    toYaml(current),
    toYaml(desired),
    undefined,
    undefined,
    { context: 3 },
  );
  // Drop the `====` separator line: the headers start the text.
  const text = patch.replace(/^=+\n/, '');
  return text.includes('\n@@') ? text.trimEnd() : '';
}

function toYaml(value: Json | undefined): string {
  return value === undefined ? '' : stringify(value, { sortMapEntries: true, lineWidth: 0 });
}

/** A copy without the fields the server owns (`status`, `metadata.managedFields`, ...). */
function readable(body: unknown): Json | undefined {
  if (!isObject(body)) return undefined;
  const { status: _status, ...rest } = body;
  if (!isObject(rest.metadata)) return rest;
  const metadata: Json = { ...rest.metadata };
  for (const field of SERVER_OWNED_METADATA) delete metadata[field];
  if (isObject(metadata.annotations)) {
    const annotations: Json = { ...metadata.annotations };
    for (const a of SERVER_OWNED_ANNOTATIONS) delete annotations[a];
    if (Object.keys(annotations).length === 0) delete metadata.annotations;
    else metadata.annotations = annotations;
  }
  return { ...rest, metadata };
}

/**
 * A Secret's `data` and `stringData`, as one map of key → base64 value
 * (`stringData` wins, as the API server merges it).
 */
function secretValues(body: Json | undefined): Map<string, string> {
  const values = new Map<string, string>();
  if (!body) return values;
  if (isObject(body.data)) {
    for (const [k, v] of Object.entries(body.data))
      values.set(k, String(v ?? '').replace(/\s/g, ''));
  }
  if (isObject(body.stringData)) {
    for (const [k, v] of Object.entries(body.stringData)) {
      values.set(k, Buffer.from(String(v ?? ''), 'utf8').toString('base64'));
    }
  }
  return values;
}

/** What one side shows instead of a secret value, given the other side's value. */
function masked(value: string, other: string | undefined, side: 'current' | 'desired'): string {
  if (other === undefined) return side === 'current' ? '*** (removed)' : '*** (added)';
  if (other === value) return '*** (unchanged)';
  return side === 'current' ? '*** (old value)' : '*** (changed)';
}

/**
 * Both sides with `data`/`stringData` replaced by one `data` map whose values
 * only say what happens to each key: the cluster never holds `stringData`,
 * so comparing the merged values is what the apply changes.
 */
function maskSecretValues(
  currentBody: Json | undefined,
  desiredBody: Json | undefined,
): [Json | undefined, Json | undefined] {
  let current = currentBody;
  let desired = desiredBody;
  const oneSided = !current || !desired;
  const before = secretValues(current);
  const after = secretValues(desired);
  // The hash of the whole body: a weak value could be guessed from it offline.
  const sha = (body: Json | undefined) => {
    const annotations = isObject(body?.metadata) ? body.metadata.annotations : undefined;
    const value = isObject(annotations) ? annotations[SHA_ANNOTATION] : undefined;
    return value === undefined ? undefined : String(value);
  };
  const [shaBefore, shaAfter] = [sha(current), sha(desired)];
  const maskSha = (body: Json | undefined, side: 'current' | 'desired'): Json | undefined => {
    const own = side === 'current' ? shaBefore : shaAfter;
    if (!body || own === undefined || !isObject(body.metadata)) return body;
    const other = side === 'current' ? shaAfter : shaBefore;
    const annotations = { ...(body.metadata.annotations as Json) };
    annotations[SHA_ANNOTATION] = masked(own, oneSided ? undefined : other, side);
    return { ...body, metadata: { ...body.metadata, annotations } };
  };
  current = maskSha(current, 'current');
  desired = maskSha(desired, 'desired');
  const mask = (
    body: Json | undefined,
    own: Map<string, string>,
    other: Map<string, string>,
    side: 'current' | 'desired',
  ): Json | undefined => {
    if (!body) return body;
    const { data: _data, stringData: _stringData, ...rest } = body;
    if (own.size === 0) return rest;
    const data: Json = {};
    for (const [key, value] of own) {
      data[key] = masked(value, other.get(key), side);
    }
    return { ...rest, data };
  };
  return [
    mask(current, before, oneSided ? new Map() : after, 'current'),
    mask(desired, after, oneSided ? new Map() : before, 'desired'),
  ];
}
