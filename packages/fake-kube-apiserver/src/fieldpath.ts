import { deepEqual, isObject, type JsonObject } from './json.ts';
import { keyDefault, listTypeAt } from './schema.ts';

/**
 * Field sets in the shape of structured-merge-diff: a path is a list of
 * elements `f:<field>`, `k:<json key>`, `v:<json value>` or `.` (the node
 * itself), joined by newlines (JSON never holds a raw newline) so that a set of
 * paths is a plain `Set<string>`.
 */
export type FieldSet = Set<string>;

const SEP = '\n';

/** Fields the server owns or that identify the object: never tracked. */
const IGNORED_TOP = new Set(['apiVersion', 'kind']);
const IGNORED_METADATA = new Set([
  'name',
  'namespace',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'managedFields',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'selfLink',
]);

/** Maps keyed by user data; update operations mark them with `.` as the real server does. */
const FREE_FORM_MAPS = new Set([
  'labels',
  'annotations',
  'data',
  'binaryData',
  'stringData',
  'nodeSelector',
  'matchLabels',
  'limits',
  'requests',
]);

export interface FieldSetOptions {
  /** Custom resources have no list keys we know of. */
  readonly builtin: boolean;
  /** `apply` marks only list items with `.`; `update` also marks free-form maps. */
  readonly mode: 'apply' | 'update';
  /** Leave `status` out (it belongs to the status subresource). */
  readonly skipStatus: boolean;
}

function itemKey(item: unknown, keys: readonly string[]): string {
  const source = isObject(item) ? item : {};
  const parts: string[] = [];
  for (const k of [...keys].sort()) {
    const v = source[k] ?? keyDefault(k);
    if (v !== undefined) parts.push(`${JSON.stringify(k)}:${JSON.stringify(v)}`);
  }
  return `k:{${parts.join(',')}}`;
}

/** Every field path the object sets (leaves, list items, and `.` markers). */
export function fieldSetOf(obj: JsonObject, options: FieldSetOptions): FieldSet {
  const out: FieldSet = new Set();
  for (const [key, value] of Object.entries(obj)) {
    if (IGNORED_TOP.has(key) || value === undefined) continue;
    if (key === 'status' && options.skipStatus) continue;
    if (key === 'metadata' && isObject(value)) {
      for (const [mk, mv] of Object.entries(value)) {
        if (IGNORED_METADATA.has(mk) || mv === undefined) continue;
        walk(mv, [`f:metadata`, `f:${mk}`], ['metadata', mk], options, out);
      }
      continue;
    }
    walk(value, [`f:${key}`], [key], options, out);
  }
  return out;
}

function walk(
  value: unknown,
  path: string[],
  fields: string[],
  options: FieldSetOptions,
  out: FieldSet,
): void {
  if (isObject(value)) {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined);
    if (entries.length === 0) {
      out.add(path.join(SEP));
      return;
    }
    const field = fields[fields.length - 1];
    if (options.mode === 'update' && field !== undefined && FREE_FORM_MAPS.has(field)) {
      out.add([...path, '.'].join(SEP));
    }
    for (const [k, v] of entries) walk(v, [...path, `f:${k}`], [...fields, k], options, out);
    return;
  }
  if (Array.isArray(value)) {
    const type = listTypeAt(fields, options.builtin);
    if (type.kind === 'map' && value.length > 0) {
      for (const item of value) {
        const itemPath = [...path, itemKey(item, type.keys)];
        out.add([...itemPath, '.'].join(SEP));
        if (isObject(item)) {
          for (const [k, v] of Object.entries(item)) {
            if (v !== undefined) walk(v, [...itemPath, `f:${k}`], [...fields, k], options, out);
          }
        }
      }
      return;
    }
    if (type.kind === 'set' && value.length > 0) {
      for (const item of value) out.add([...path, `v:${JSON.stringify(item)}`].join(SEP));
      return;
    }
  }
  out.add(path.join(SEP));
}

export function splitPath(path: string): string[] {
  return path.split(SEP);
}

/** The `FieldsV1` JSON of a set, keys sorted as the real server writes them. */
export function toFieldsV1(set: FieldSet): JsonObject {
  const root: JsonObject = {};
  for (const path of set) {
    let node = root;
    for (const element of splitPath(path)) {
      const next = node[element];
      if (isObject(next)) node = next;
      else {
        const created: JsonObject = {};
        node[element] = created;
        node = created;
      }
    }
  }
  return sortKeys(root);
}

function sortKeys(node: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const key of Object.keys(node).sort()) {
    const child = node[key];
    out[key] = isObject(child) ? sortKeys(child) : child;
  }
  return out;
}

export function fromFieldsV1(fields: unknown): FieldSet {
  const out: FieldSet = new Set();
  const visit = (node: JsonObject, prefix: string[]) => {
    for (const [key, child] of Object.entries(node)) {
      const path = [...prefix, key];
      if (key === '.' || !isObject(child) || Object.keys(child).length === 0) {
        out.add(path.join(SEP));
      } else visit(child, path);
    }
  };
  if (isObject(fields)) visit(fields, []);
  return out;
}

interface Located {
  readonly found: boolean;
  readonly value?: unknown;
}

function matchesElement(item: unknown, element: string): boolean {
  if (element.startsWith('v:')) return deepEqual(item, JSON.parse(element.slice(2)));
  const key = JSON.parse(element.slice(2)) as JsonObject;
  if (!isObject(item)) return false;
  return Object.entries(key).every(([k, v]) => deepEqual(item[k] ?? keyDefault(k), v));
}

/** The value at a field path (`.` designates the node reached so far). */
export function valueAt(obj: unknown, path: string): Located {
  let node: unknown = obj;
  for (const element of splitPath(path)) {
    if (element === '.') return { found: true, value: node };
    if (element.startsWith('f:')) {
      if (!isObject(node) || !(element.slice(2) in node)) return { found: false };
      node = node[element.slice(2)];
    } else if (element.startsWith('k:') || element.startsWith('v:')) {
      if (!Array.isArray(node)) return { found: false };
      const match = node.find((item) => matchesElement(item, element));
      if (match === undefined) return { found: false };
      node = match;
    } else return { found: false };
  }
  return { found: true, value: node };
}

/** Removes the field, list item or set value a path names (a trailing `.` removes its node). */
export function removeAt(obj: JsonObject, path: string): void {
  const elements = splitPath(path);
  if (elements[elements.length - 1] === '.') elements.pop();
  const last = elements.pop();
  if (last === undefined) return;
  const parent = valueAt(obj, elements.join(SEP));
  if (elements.length > 0 && !parent.found) return;
  const container = elements.length === 0 ? obj : parent.value;
  if (last.startsWith('f:')) {
    if (isObject(container)) delete container[last.slice(2)];
  } else if (Array.isArray(container)) {
    const index = container.findIndex((item) => matchesElement(item, last));
    if (index >= 0) container.splice(index, 1);
  }
  // A list or map emptied by the removal goes too, as structured-merge-diff leaves none behind.
  const emptied = Array.isArray(container)
    ? container.length === 0
    : isObject(container) && Object.keys(container).length === 0;
  if (emptied && elements.length > 0) removeAt(obj, elements.join(SEP));
}

/** The path as structured-merge-diff prints it in conflicts: `.spec.containers[name="x"].image`. */
export function pathToString(path: string): string {
  let out = '';
  for (const element of splitPath(path)) {
    if (element === '.') continue;
    if (element.startsWith('f:')) out += `.${element.slice(2)}`;
    else if (element.startsWith('v:')) out += `[=${element.slice(2)}]`;
    else if (element.startsWith('k:')) {
      const key = JSON.parse(element.slice(2)) as JsonObject;
      out += `[${Object.entries(key)
        .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
        .join(',')}]`;
    }
  }
  return out;
}
