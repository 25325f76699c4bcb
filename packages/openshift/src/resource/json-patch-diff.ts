/**
 * The JSON Patch that Python jsonpatch 1.33 `JsonPatch.from_diff(src, dst)` produces, with the same
 * pairing of removes and adds into `move`s, the same index bookkeeping, Python `==` for list items
 * (`1 == 1.0 == True`) and `json.dumps` text equality for other values (`1 != true`).
 *
 * Why not fast-json-patch: its `compare()` never emits moves and compares with `===`, so a label
 * renamed with the same value, a reordered list or `1` versus `true` in a list would decide
 * "changed" where the original decides "equal", and every such object would be re-applied.
 * Key iteration follows insertion order; the original follows Python set order, which only
 * changes which of several equal values pair up.
 */
import { pyJsonDumps } from './py-json.ts';
import { pyIntParse } from './py-numbers.ts';
import {
  dictEntries,
  dictGet,
  isDict,
  PyDict,
  PyFloat,
  type PyObject,
  PyStr,
  type PyValue,
  pyEquals,
  pyTuples,
  pyTypeName,
} from './py-values.ts';

export interface JsonPatchOperation {
  op: 'add' | 'remove' | 'replace' | 'move';
  path: string;
  value?: PyValue;
  from?: string;
}

class JsonPointerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JsonPointerException';
  }
}

function escapePart(part: string): string {
  if (!part.includes('~') && !part.includes('/')) return part;
  return part.replaceAll('~', '~0').replaceAll('/', '~1');
}

function parsePointer(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/'))
    throw new JsonPointerError(`Location must start with /: ${pointer}`);
  return pointer
    .split('/')
    .slice(1)
    .map((p) => p.replaceAll('~1', '/').replaceAll('~0', '~'));
}

function pointerPath(parts: readonly string[]): string {
  let out = '';
  for (const p of parts) out += `/${escapePart(p)}`;
  return out;
}

function pathJoin(path: string, key: string | number | null): string {
  if (key === null) return path;
  return `${path}/${escapePart(String(key))}`;
}

/** Python `int(part)` or the part itself, like jsonpatch's `PatchOperation.key`. */
function partKey(part: string | undefined): number | string {
  if (part === undefined) throw new Error('IndexError: list index out of range');
  try {
    return Number(pyIntParse(part, 10));
  } catch {
    return part;
  }
}

const ARRAY_INDEX = /^(?:0|[1-9][0-9]*)$/;

function isSequence(v: PyValue | undefined): v is PyValue[] {
  return Array.isArray(v);
}

function isList(v: PyValue | undefined): v is PyValue[] {
  return Array.isArray(v) && !pyTuples.has(v);
}

/** One step of jsonpointer's `walk`. */
function walk(doc: PyValue | undefined, part: string): PyValue {
  if (isDict(doc)) {
    const v = doc instanceof PyDict ? doc.get(part) : dictGet(doc, part);
    if (v === undefined) throw new JsonPointerError(`member '${part}' not found`);
    return v;
  }
  if (isSequence(doc) || typeof doc === 'string' || doc instanceof PyStr) {
    if (!ARRAY_INDEX.test(part))
      throw new JsonPointerError(`'${part}' is not a valid sequence index`);
    const index = Number(part);
    const chars =
      typeof doc === 'string' ? Array.from(doc) : doc instanceof PyStr ? doc.codePoints : doc;
    if (index >= chars.length) throw new JsonPointerError(`index '${part}' is out of bounds`);
    const v = chars[index];
    return typeof v === 'number' && doc instanceof PyStr ? String.fromCodePoint(v) : (v as PyValue);
  }
  throw new JsonPointerError(`Document '${pyTypeName(doc)}' does not support indexing`);
}

/** jsonpointer `resolve_pointer(doc, pointer)` without a default: throws when the path is missing. */
export function resolvePointer(doc: PyValue, pointer: string): PyValue {
  let current: PyValue = doc;
  for (const part of parsePointer(pointer)) current = walk(current, part);
  return current;
}

class Operation {
  op: JsonPatchOperation['op'];
  value: PyValue | undefined;
  fromParts: string[] | undefined;
  // Parsed lazily: most ops never have their index adjusted.
  #location: string;
  #parts: string[] | undefined;

  constructor(op: JsonPatchOperation['op'], path: string, value?: PyValue, from?: string) {
    this.op = op;
    this.#location = path;
    this.value = value;
    this.fromParts = from === undefined ? undefined : parsePointer(from);
  }

  get parts(): string[] {
    if (this.#parts === undefined) this.#parts = parsePointer(this.#location);
    return this.#parts;
  }

  get location(): string {
    return this.#parts === undefined ? this.#location : pointerPath(this.#parts);
  }
  get path(): string {
    return this.parts.slice(0, -1).join('/');
  }
  get key(): number | string {
    return partKey(this.parts[this.parts.length - 1]);
  }
  set key(value: number | string) {
    const parts = this.parts;
    parts[parts.length - 1] = String(value);
  }
  get fromPath(): string {
    return (this.fromParts ?? []).slice(0, -1).join('/');
  }
  get fromKey(): number | string {
    const parts = this.fromParts ?? [];
    return partKey(parts[parts.length - 1]);
  }
  set fromKey(value: number | string) {
    const parts = this.fromParts ?? [];
    parts[parts.length - 1] = String(value);
  }

  onUndoRemove(path: string, key: number): number {
    if (this.op === 'add' || this.op === 'remove') {
      if (this.path === path) {
        const mine = this.key as number;
        if (this.op === 'remove' ? mine >= key : mine > key) this.key = mine + 1;
        else key += this.op === 'remove' ? -1 : 1;
      }
      return key;
    }
    if (this.op === 'move') {
      if (this.fromPath === path) {
        const from = this.fromKey as number;
        if (from >= key) this.fromKey = from + 1;
        else key -= 1;
      }
      if (this.path === path) {
        const mine = this.key as number;
        if (mine > key) this.key = mine + 1;
        else key += 1;
      }
    }
    return key;
  }

  onUndoAdd(path: string, key: number): number {
    if (this.op === 'add' || this.op === 'remove') {
      if (this.path === path) {
        const mine = this.key as number;
        if (mine > key) this.key = mine - 1;
        else key += this.op === 'remove' ? -1 : 1;
      }
      return key;
    }
    if (this.op === 'move') {
      if (this.fromPath === path) {
        const from = this.fromKey as number;
        if (from > key) this.fromKey = from - 1;
        else key -= 1;
      }
      if (this.path === path) {
        const mine = this.key as number;
        if (mine > key) this.key = mine - 1;
        else key += 1;
      }
    }
    return key;
  }

  toJson(): JsonPatchOperation {
    if (this.op === 'move')
      return { op: 'move', from: pointerPath(this.fromParts ?? []), path: this.location };
    if (this.op === 'remove') return { op: 'remove', path: this.location };
    return { op: this.op, path: this.location, value: this.value as PyValue };
  }
}

interface Link {
  prev: Link;
  next: Link;
  op: Operation | null;
}

const ST_ADD = 0;
const ST_REMOVE = 1;

/** A hashable value's `(value, type(value))` as a map key; `undefined` for unhashable values. */
function typedKey(v: PyValue): string | undefined {
  if (v === null) return 'NoneType:';
  if (typeof v === 'string') return `str:${v}`;
  if (v instanceof PyStr) return `str:${v.js}`;
  if (typeof v === 'boolean') return `bool:${v}`;
  if (typeof v === 'bigint') return `int:${v}`;
  if (typeof v === 'number') return Number.isInteger(v) ? `int:${BigInt(v)}` : `float:${v}`;
  if (v instanceof PyFloat) return `float:${Object.is(v.value, -0) ? 0 : v.value}`;
  return undefined;
}

class DiffBuilder {
  private readonly dst: PyValue;
  private readonly root: Link;
  private readonly storage: [Map<string, Link[]>, Map<string, Link[]>] = [new Map(), new Map()];
  private readonly storage2: [[PyValue, Link][], [PyValue, Link][]] = [[], []];

  constructor(dst: PyValue) {
    this.dst = dst;
    const root = { op: null } as unknown as Link;
    root.prev = root;
    root.next = root;
    this.root = root;
  }

  private storeIndex(value: PyValue, index: Link, st: number): void {
    const key = typedKey(value);
    if (key === undefined) {
      this.storage2[st]!.push([value, index]);
      return;
    }
    const map = this.storage[st]!;
    const stored = map.get(key);
    if (stored) stored.push(index);
    else map.set(key, [index]);
  }

  private takeIndex(value: PyValue, st: number): Link | undefined {
    const key = typedKey(value);
    if (key !== undefined) return this.storage[st]!.get(key)?.pop();
    const list = this.storage2[st]!;
    for (let i = list.length - 1; i >= 0; i--) {
      const [stored, link] = list[i]!;
      if (pyTypeName(stored) === pyTypeName(value) && pyEquals(stored, value)) {
        list.splice(i, 1);
        return link;
      }
    }
    return undefined;
  }

  private insert(op: Operation): Link {
    const last = this.root.prev;
    const link: Link = { prev: last, next: this.root, op };
    last.next = link;
    this.root.prev = link;
    return link;
  }

  private unlink(link: Link): void {
    link.prev.next = link.next;
    link.next.prev = link.prev;
  }

  private *iterFrom(start: Link): Generator<Operation> {
    let curr = start.next;
    while (curr !== this.root) {
      if (curr.op) yield curr.op;
      curr = curr.next;
    }
  }

  *execute(): Generator<JsonPatchOperation> {
    let curr = this.root.next;
    while (curr !== this.root) {
      const op = curr.op as Operation;
      if (curr.next !== this.root) {
        const second = curr.next.op as Operation;
        if (op.location === second.location && op.op === 'remove' && second.op === 'add') {
          yield { op: 'replace', path: second.location, value: second.value as PyValue };
          curr = curr.next.next;
          continue;
        }
      }
      yield op.toJson();
      curr = curr.next;
    }
  }

  private itemAdded(path: string, key: string | number, item: PyValue): void {
    const index = this.takeIndex(item, ST_REMOVE);
    if (index !== undefined) {
      const op = index.op as Operation;
      if (typeof op.key === 'number' && typeof key === 'number') {
        for (const v of this.iterFrom(index)) op.key = v.onUndoRemove(op.path, op.key as number);
      }
      this.unlink(index);
      if (op.location !== pathJoin(path, key)) {
        this.insert(new Operation('move', pathJoin(path, key), undefined, op.location));
      }
      return;
    }
    const link = this.insert(new Operation('add', pathJoin(path, key), item));
    this.storeIndex(item, link, ST_ADD);
  }

  private itemRemoved(path: string, key: string | number, item: PyValue): void {
    let newOp = new Operation('remove', pathJoin(path, key));
    const index = this.takeIndex(item, ST_ADD);
    const newIndex = this.insert(newOp);
    if (index === undefined) {
      this.storeIndex(item, newIndex, ST_REMOVE);
      return;
    }
    const op = index.op as Operation;
    const parentParts = op.parts.slice(0, -1);
    let parent: PyValue = this.dst;
    for (const part of parentParts) parent = walk(parent, part);
    // jsonpointer's `to_last` also checks the last part against a sequence parent.
    const last = op.parts[op.parts.length - 1] ?? '';
    if (
      (isSequence(parent) || typeof parent === 'string' || parent instanceof PyStr) &&
      last !== '-' &&
      !ARRAY_INDEX.test(last)
    ) {
      throw new JsonPointerError(`'${last}' is not a valid sequence index`);
    }
    if (isList(parent)) {
      for (const v of this.iterFrom(index)) op.key = v.onUndoAdd(op.path, op.key as number);
    }
    this.unlink(index);
    if (newOp.location !== op.location) {
      newOp = new Operation('move', op.location, undefined, newOp.location);
      newIndex.op = newOp;
    } else {
      this.unlink(newIndex);
    }
  }

  private itemReplaced(path: string, key: string | number | null, item: PyValue): void {
    this.insert(new Operation('replace', pathJoin(path, key), item));
  }

  private compareDicts(path: string, src: PyObject | PyDict, dst: PyObject | PyDict): void {
    if (src instanceof PyDict || dst instanceof PyDict) {
      this.comparePyDicts(path, src, dst);
      return;
    }
    // jsonpatch order: every removed key, then every added key, then the common keys.
    const common: string[] = [];
    for (const k of Object.keys(src)) {
      if (Object.hasOwn(dst, k)) common.push(k);
      else this.itemRemoved(path, k, src[k] as PyValue);
    }
    for (const k of Object.keys(dst)) {
      if (!Object.hasOwn(src, k)) this.itemAdded(path, k, dst[k] as PyValue);
    }
    for (const k of common) {
      const a = src[k] as PyValue;
      const b = dst[k] as PyValue;
      // The same value (a string, a number, a shared object) never yields an op.
      if (a !== b) this.compareValues(path, k, a, b);
    }
  }

  private comparePyDicts(path: string, src: PyObject | PyDict, dst: PyObject | PyDict): void {
    const srcEntries = dictEntries(src);
    const dstEntries = dictEntries(dst);
    const keyOf = (k: PyValue) => (typeof k === 'string' ? k : String(typedKey(k) ?? k));
    const srcKeys = new Map(srcEntries.map(([k, v]) => [keyOf(k), [k, v] as const]));
    const dstKeys = new Map(dstEntries.map(([k, v]) => [keyOf(k), [k, v] as const]));
    for (const [id, [k, v]] of srcKeys)
      if (!dstKeys.has(id)) this.itemRemoved(path, pyKeyStr(k), v);
    for (const [id, [k, v]] of dstKeys) if (!srcKeys.has(id)) this.itemAdded(path, pyKeyStr(k), v);
    for (const [id, [k, v]] of srcKeys) {
      const other = dstKeys.get(id);
      if (other) this.compareValues(path, pyKeyStr(k), v, other[1]);
    }
  }

  private compareLists(path: string, src: PyValue[], dst: PyValue[]): void {
    const maxLen = Math.max(src.length, dst.length);
    const minLen = Math.min(src.length, dst.length);
    for (let key = 0; key < maxLen; key++) {
      if (key < minLen) {
        const oldValue = src[key]!;
        const newValue = dst[key]!;
        if (pyEquals(oldValue, newValue)) continue;
        if (isDict(oldValue) && isDict(newValue))
          this.compareDicts(pathJoin(path, key), oldValue, newValue);
        else if (isList(oldValue) && isList(newValue))
          this.compareLists(pathJoin(path, key), oldValue, newValue);
        else {
          this.itemRemoved(path, key, oldValue);
          this.itemAdded(path, key, newValue);
        }
      } else if (src.length > dst.length) {
        this.itemRemoved(path, dst.length, src[key]!);
      } else {
        this.itemAdded(path, key, dst[key]!);
      }
    }
  }

  compareValues(path: string, key: string | null, src: PyValue, dst: PyValue): void {
    if (isDict(src) && isDict(dst)) this.compareDicts(pathJoin(path, key), src, dst);
    else if (isList(src) && isList(dst)) this.compareLists(pathJoin(path, key), src, dst);
    else if (!sameJsonText(src, dst)) this.itemReplaced(path, key, dst);
  }
}

/** `json.dumps(a) == json.dumps(b)`, without writing the text for the common scalar cases. */
function sameJsonText(a: PyValue, b: PyValue): boolean {
  if (typeof a === 'string' && typeof b === 'string') return a === b;
  if (typeof a === 'number' && typeof b === 'number') {
    // An integral JS number is a Python int and a non-integral one a float: equal values are equal
    // text, and NaN is written `NaN` on both sides.
    return a === b || (Number.isNaN(a) && Number.isNaN(b));
  }
  if (typeof a === 'boolean' || a === null || typeof b === 'boolean' || b === null) return a === b;
  if (typeof a === 'string' || typeof b === 'string') {
    if (!(a instanceof PyStr) && !(b instanceof PyStr)) return false;
  }
  return pyJsonDumps(a, { sortKeys: false }) === pyJsonDumps(b, { sortKeys: false });
}

/** Python `str(key)` for a dict key, as jsonpatch uses in paths. */
function pyKeyStr(k: PyValue): string {
  if (typeof k === 'string') return k;
  if (k instanceof PyStr) return k.js;
  if (k === null) return 'None';
  if (typeof k === 'boolean') return k ? 'True' : 'False';
  if (k instanceof PyFloat) return pyJsonDumps(k).replace('Infinity', 'inf').replace('NaN', 'nan');
  return pyJsonDumps(k);
}

/** `jsonpatch.JsonPatch.from_diff(src, dst).patch` (jsonpatch 1.33). */
export function jsonPatchFromDiff(src: PyValue, dst: PyValue): JsonPatchOperation[] {
  const builder = new DiffBuilder(dst);
  builder.compareValues('', null, src, dst);
  return [...builder.execute()];
}
