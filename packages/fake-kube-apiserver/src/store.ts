import { isObject, type JsonObject, metadataOf, stringMap } from './json.ts';
import type { LabelSelector } from './selectors.ts';
import { type FieldSelector, matchesFieldSelector } from './selectors.ts';
import { badRequest, expired } from './status.ts';

/**
 * One stored object. The body is kept serialised as UTF-8 bytes: list and
 * watch responses copy them as they are (no parse, no re-encode, no string to
 * byte conversion), and bytes cost far less memory than the parsed tree.
 */
export interface StoredObject {
  readonly key: string;
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly labels: Readonly<Record<string, string>>;
  /** uids in `metadata.ownerReferences`, for garbage collection. */
  readonly owners: readonly string[];
  readonly resourceVersion: number;
  /** The `apiVersion` the body carries. */
  readonly apiVersion: string;
  readonly bytes: Buffer;
  /** Length of the leading `{"apiVersion":...,"kind":...,` (0 when the body starts otherwise). */
  readonly typeMetaLength: number;
  /** The body as text (decoded on each call). */
  readonly json: string;
}

class StoredEntry implements StoredObject {
  readonly key: string;
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly owners: readonly string[];
  readonly resourceVersion: number;
  readonly apiVersion: string;
  readonly bytes: Buffer;
  readonly typeMetaLength: number;
  constructor(fields: Omit<StoredObject, 'json'>) {
    this.key = fields.key;
    this.namespace = fields.namespace;
    this.name = fields.name;
    this.uid = fields.uid;
    this.labels = fields.labels;
    this.owners = fields.owners;
    this.resourceVersion = fields.resourceVersion;
    this.apiVersion = fields.apiVersion;
    this.bytes = fields.bytes;
    this.typeMetaLength = fields.typeMetaLength;
  }
  get json(): string {
    return this.bytes.toString('utf8');
  }
}

const NO_OWNERS: readonly string[] = Object.freeze([]);

/**
 * A buffer of its own rather than a slice of Node's shared 8 KiB pool: a live
 * slice keeps its whole slab alive, so objects rewritten over time would pin
 * many mostly-dead slabs.
 */
function ownBuffer(text: string): Buffer {
  const bytes = Buffer.allocUnsafeSlow(Buffer.byteLength(text, 'utf8'));
  bytes.write(text, 'utf8');
  return bytes;
}

export interface ObjectRef {
  readonly resource: string;
  readonly namespace: string;
  readonly name: string;
}

type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface StoreEvent {
  readonly type: WatchEventType;
  readonly resource: string;
  /** The new state; for DELETED the last state, stamped with the deletion's revision. */
  readonly object: StoredObject;
  /**
   * The state a MODIFIED change replaced: a watch with a selector decides from
   * both whether the object entered, stayed in or left its selection.
   */
  readonly previous?: StoredObject;
}

export interface Query {
  readonly namespace?: string;
  readonly labels?: LabelSelector;
  readonly fields?: FieldSelector;
}

export interface ListPage {
  readonly items: StoredObject[];
  readonly resourceVersion: number;
  readonly continueToken?: string;
  readonly remainingItemCount?: number;
}

function objectKey(namespace: string, name: string): string {
  return namespace === '' ? name : `${namespace}/${name}`;
}

class Collection {
  readonly byKey = new Map<string, StoredObject>();
  /** Keys in etcd order, kept sorted on insert so that pages are a binary search away. */
  readonly sorted: string[] = [];

  insert(object: StoredObject): void {
    if (!this.byKey.has(object.key))
      this.sorted.splice(lowerBound(this.sorted, object.key), 0, object.key);
    this.byKey.set(object.key, object);
  }

  remove(key: string): void {
    if (!this.byKey.delete(key)) return;
    const index = lowerBound(this.sorted, key);
    if (this.sorted[index] === key) this.sorted.splice(index, 1);
  }
}

function lowerBound(sorted: readonly string[], key: string): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((sorted[mid] ?? '') < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export function matches(object: StoredObject, query: Query): boolean {
  if (query.namespace !== undefined && object.namespace !== query.namespace) return false;
  if (query.labels && !query.labels(object.labels)) return false;
  if (query.fields && !matchesFieldSelector(query.fields, object.namespace, object.name))
    return false;
  return true;
}

interface ContinueToken {
  v: string;
  rv: number;
  start: string;
}

function encodeContinue(rv: number, lastKey: string): string {
  const token: ContinueToken = { v: 'meta.k8s.io/v1', rv, start: `${lastKey}\u0000` };
  return Buffer.from(JSON.stringify(token)).toString('base64url');
}

function decodeContinue(token: string): ContinueToken {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
    if (isObject(parsed) && typeof parsed.start === 'string' && typeof parsed.rv === 'number') {
      return { v: String(parsed.v), rv: parsed.rv, start: parsed.start };
    }
  } catch {
    // fall through to the error the real server gives
  }
  throw badRequest(
    'continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)',
  );
}

/** Writes `resourceVersion` into the object's metadata and keeps it serialised. */
function storedEntry(object: JsonObject, resourceVersion: number): StoredObject {
  const metadata = metadataOf(object);
  metadata.resourceVersion = String(resourceVersion);
  const namespace = typeof metadata.namespace === 'string' ? metadata.namespace : '';
  const name = String(metadata.name ?? '');
  const apiVersion = String(object.apiVersion ?? '');
  const json = JSON.stringify(object);
  const typeMeta = `{"apiVersion":${JSON.stringify(apiVersion)},"kind":${JSON.stringify(String(object.kind ?? ''))},`;
  return new StoredEntry({
    key: objectKey(namespace, name),
    namespace,
    name,
    uid: String(metadata.uid ?? ''),
    labels: stringMap(metadata.labels),
    owners: Array.isArray(metadata.ownerReferences)
      ? metadata.ownerReferences.filter(isObject).map((r) => String(r.uid ?? ''))
      : NO_OWNERS,
    resourceVersion,
    apiVersion,
    bytes: ownBuffer(json),
    typeMetaLength: json.startsWith(typeMeta) ? Buffer.byteLength(typeMeta) : 0,
  });
}

/**
 * A stored state carrying another resourceVersion: the watch cache reports an
 * object leaving a watch's selection as DELETED with the state the watcher
 * knew, stamped with the version of the change that took it out.
 */
export function restamped(object: StoredObject, resourceVersion: number): StoredObject {
  return storedEntry(JSON.parse(object.json) as JsonObject, resourceVersion);
}

const HISTORY_LIMIT = 2000;

/** All objects of one cluster, its resourceVersion counter and its watchers. */
export class ObjectStore {
  private revision = 1000;
  private readonly collections = new Map<string, Collection>();
  /** The latest events (between HISTORY_LIMIT and twice that), for resumed watches. */
  private readonly history: StoreEvent[] = [];
  private trimmed = false;
  private readonly listeners = new Set<(event: StoreEvent) => void>();
  /** owner uid → `resource\nkey` of the objects that name it as owner. */
  private readonly dependents = new Map<string, Set<string>>();

  get resourceVersion(): number {
    return this.revision;
  }

  private collection(resource: string): Collection {
    let c = this.collections.get(resource);
    if (!c) {
      c = new Collection();
      this.collections.set(resource, c);
    }
    return c;
  }

  get(resource: string, namespace: string, name: string): StoredObject | undefined {
    return this.collections.get(resource)?.byKey.get(objectKey(namespace, name));
  }

  /** Parsed copy of a stored object, safe to change. */
  read(resource: string, namespace: string, name: string): JsonObject | undefined {
    const stored = this.get(resource, namespace, name);
    return stored ? (JSON.parse(stored.json) as JsonObject) : undefined;
  }

  count(resource?: string): number {
    if (resource !== undefined) return this.collections.get(resource)?.byKey.size ?? 0;
    let n = 0;
    for (const c of this.collections.values()) n += c.byKey.size;
    return n;
  }

  /** Stores the object under a new resourceVersion (written into it) and tells the watchers. */
  put(resource: string, object: JsonObject, type: 'ADDED' | 'MODIFIED'): StoredObject {
    const stored = this.serialise(object);
    const c = this.collection(resource);
    const previous = c.byKey.get(stored.key);
    if (previous) this.unindex(resource, previous);
    c.insert(stored);
    this.index(resource, stored);
    this.emit(
      type === 'MODIFIED' && previous
        ? { type, resource, object: stored, previous }
        : { type, resource, object: stored },
    );
    return stored;
  }

  remove(resource: string, namespace: string, name: string): StoredObject | undefined {
    const c = this.collections.get(resource);
    const current = c?.byKey.get(objectKey(namespace, name));
    if (!c || !current) return undefined;
    c.remove(current.key);
    this.unindex(resource, current);
    // The DELETED event carries the revision of the deletion, as etcd reports it.
    const stored = this.serialise(JSON.parse(current.json) as JsonObject);
    this.emit({ type: 'DELETED', resource, object: stored });
    return stored;
  }

  dropCollection(resource: string): void {
    const c = this.collections.get(resource);
    if (c) for (const object of c.byKey.values()) this.unindex(resource, object);
    this.collections.delete(resource);
  }

  /** Objects whose ownerReferences name this uid. */
  dependentsOf(uid: string): ObjectRef[] {
    const refs = this.dependents.get(uid);
    if (!refs) return [];
    return [...refs].map((ref) => {
      const [resource = '', key = ''] = ref.split('\n');
      const slash = key.indexOf('/');
      return slash < 0
        ? { resource, namespace: '', name: key }
        : { resource, namespace: key.slice(0, slash), name: key.slice(slash + 1) };
    });
  }

  private index(resource: string, object: StoredObject): void {
    for (const uid of object.owners) {
      let set = this.dependents.get(uid);
      if (!set) {
        set = new Set();
        this.dependents.set(uid, set);
      }
      set.add(`${resource}\n${object.key}`);
    }
  }

  private unindex(resource: string, object: StoredObject): void {
    for (const uid of object.owners) {
      const set = this.dependents.get(uid);
      set?.delete(`${resource}\n${object.key}`);
      if (set?.size === 0) this.dependents.delete(uid);
    }
  }

  private serialise(object: JsonObject): StoredObject {
    this.revision += 1;
    return storedEntry(object, this.revision);
  }

  private emit(event: StoreEvent): void {
    this.history.push(event);
    // Trimmed in batches: shifting the array on every write would cost O(n) each.
    if (this.history.length >= 2 * HISTORY_LIMIT) {
      this.history.splice(0, HISTORY_LIMIT);
      this.trimmed = true;
    }
    for (const listener of this.listeners) listener(event);
  }

  all(resource: string, query: Query = {}): StoredObject[] {
    const c = this.collections.get(resource);
    if (!c) return [];
    const out: StoredObject[] = [];
    for (const key of c.sorted) {
      const object = c.byKey.get(key);
      if (object && matches(object, query)) out.push(object);
    }
    return out;
  }

  /** One page of a list; continue tokens carry the last key, as the real server's do. */
  list(
    resource: string,
    query: Query,
    limit: number | undefined,
    token: string | undefined,
  ): ListPage {
    const c = this.collections.get(resource);
    const resourceVersion = this.revision;
    if (!c) return { items: [], resourceVersion };
    let index = 0;
    const prefix = query.namespace ? `${query.namespace}/` : '';
    if (token) index = lowerBound(c.sorted, decodeContinue(token).start);
    else if (prefix) index = lowerBound(c.sorted, prefix);
    const items: StoredObject[] = [];
    const max = limit && limit > 0 ? limit : Number.POSITIVE_INFINITY;
    for (; index < c.sorted.length && items.length < max; index++) {
      const key = c.sorted[index] ?? '';
      if (prefix && !key.startsWith(prefix)) break;
      const object = c.byKey.get(key);
      if (object && matches(object, query)) items.push(object);
    }
    const more = index < c.sorted.length && (!prefix || (c.sorted[index] ?? '').startsWith(prefix));
    if (!more || items.length === 0) return { items, resourceVersion };
    const last = items[items.length - 1]!;
    const filtered = query.labels !== undefined || query.fields !== undefined;
    let remaining: number | undefined;
    if (!filtered) {
      const end = prefix ? lowerBound(c.sorted, `${query.namespace}0`) : c.sorted.length;
      remaining = end - index;
    }
    return {
      items,
      resourceVersion,
      continueToken: encodeContinue(resourceVersion, last.key),
      ...(remaining !== undefined ? { remainingItemCount: remaining } : {}),
    };
  }

  /**
   * Events after `since` for a resumed watch; a revision older than the kept
   * history is answered with 410 Expired, as etcd compaction makes the real one.
   */
  eventsSince(since: number): StoreEvent[] {
    const first = this.history[0];
    if (first && since < first.object.resourceVersion - 1 && this.trimmed) {
      throw expired(`too old resource version: ${since} (${first.object.resourceVersion - 1})`);
    }
    return this.history.filter((e) => e.object.resourceVersion > since);
  }

  subscribe(listener: (event: StoreEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
