import {
  type FieldSet,
  type FieldSetOptions,
  fieldSetOf,
  fromFieldsV1,
  pathToString,
  removeAt,
  splitPath,
  toFieldsV1,
  valueAt,
} from './fieldpath.ts';
import { clone, deepEqual, isObject, type JsonObject } from './json.ts';
import { keyDefault, listTypeAt } from './schema.ts';
import { ApiError } from './status.ts';

/** One `metadata.managedFields` entry, decoded. */
interface Manager {
  manager: string;
  operation: string;
  apiVersion: string;
  time: string;
  subresource?: string;
  fields: FieldSet;
}

function decode(list: unknown): Manager[] {
  if (!Array.isArray(list)) return [];
  return list.filter(isObject).map((e) => ({
    manager: typeof e.manager === 'string' ? e.manager : '',
    operation: typeof e.operation === 'string' ? e.operation : 'Update',
    apiVersion: typeof e.apiVersion === 'string' ? e.apiVersion : '',
    time: typeof e.time === 'string' ? e.time : '',
    ...(typeof e.subresource === 'string' ? { subresource: e.subresource } : {}),
    fields: fromFieldsV1(e.fieldsV1),
  }));
}

function encode(managers: readonly Manager[]): JsonObject[] {
  return managers
    .filter((m) => m.fields.size > 0)
    .map((m) => ({
      manager: m.manager,
      operation: m.operation,
      apiVersion: m.apiVersion,
      time: m.time,
      fieldsType: 'FieldsV1',
      fieldsV1: toFieldsV1(m.fields),
      ...(m.subresource ? { subresource: m.subresource } : {}),
    }));
}

function managersOf(obj: JsonObject | undefined): Manager[] {
  const metadata = obj?.metadata;
  return isObject(metadata) ? decode(metadata.managedFields) : [];
}

function setManagedFields(obj: JsonObject, managers: readonly Manager[]): void {
  const metadata = isObject(obj.metadata) ? obj.metadata : {};
  obj.metadata = metadata;
  const encoded = encode(managers);
  if (encoded.length > 0) metadata.managedFields = encoded;
  else delete metadata.managedFields;
}

/** Time as metav1.Time serialises: RFC 3339 to the second. */
let cachedSecond = -1;
let cachedTimestamp = '';
export function nowTimestamp(): string {
  const second = Math.floor(Date.now() / 1000);
  if (second !== cachedSecond) {
    cachedSecond = second;
    cachedTimestamp = new Date(second * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  }
  return cachedTimestamp;
}

export interface WriteContext {
  readonly manager: string;
  readonly apiVersion: string;
  readonly builtin: boolean;
  readonly statusSubresource: boolean;
  /** Set for writes to a subresource (`status`). */
  readonly subresource?: string;
}

function setOptions(ctx: WriteContext, mode: FieldSetOptions['mode']): FieldSetOptions {
  return {
    builtin: ctx.builtin,
    mode,
    skipStatus: ctx.statusSubresource && ctx.subresource !== 'status',
  };
}

function isSame(m: Manager, manager: string, operation: string, ctx: WriteContext): boolean {
  return (
    m.manager === manager &&
    m.operation === operation &&
    (m.subresource ?? '') === (ctx.subresource ?? '') &&
    (operation === 'Apply' || m.apiVersion === ctx.apiVersion)
  );
}

/**
 * Tracks a create, update or patch: the writer takes the fields it set or
 * changed (from whoever held them), and fields gone from the object leave
 * every manager. Managed fields sent by the client are taken as the new base
 * (how `kubectl` and our engine migrate client-side-applied objects); a single
 * empty entry clears them.
 */
export function trackUpdate(
  live: JsonObject | undefined,
  next: JsonObject,
  ctx: WriteContext,
): void {
  const liveManagers = managersOf(live);
  const sent = isObject(next.metadata) ? next.metadata.managedFields : undefined;
  let managers = liveManagers;
  if (Array.isArray(sent) && sent.length > 0) {
    const liveSent = isObject(live?.metadata) ? live.metadata.managedFields : undefined;
    if (!deepEqual(sent, liveSent)) {
      managers = decode(sent).filter((m) => m.manager !== '' || m.fields.size > 0);
    }
  }
  const options = setOptions(ctx, 'update');
  // A main-resource write leaves the status fields alone, a status write everything else.
  const inScope = (path: string) =>
    ctx.subresource === 'status'
      ? path.startsWith('f:status')
      : !(options.skipStatus && path.startsWith('f:status'));
  const nextFields = new Set([...fieldSetOf(next, options)].filter(inScope));
  const changed: FieldSet = new Set();
  for (const path of nextFields) {
    if (path.endsWith('.')) {
      if (!valueAt(live, path).found) changed.add(path);
    } else {
      const before = valueAt(live, path);
      if (!before.found || !deepEqual(before.value, valueAt(next, path).value)) changed.add(path);
    }
  }
  const time = nowTimestamp();
  const result: Manager[] = [];
  let mine: Manager | undefined;
  for (const m of managers) {
    const fields = new Set<string>();
    for (const path of m.fields) {
      if (!inScope(path)) {
        fields.add(path);
        continue;
      }
      if (!nextFields.has(path)) continue;
      if (changed.has(path) && !isSame(m, ctx.manager, 'Update', ctx)) continue;
      fields.add(path);
    }
    const kept = { ...m, fields };
    if (isSame(m, ctx.manager, 'Update', ctx)) mine = kept;
    result.push(kept);
  }
  if (changed.size > 0) {
    if (!mine) {
      mine = {
        manager: ctx.manager,
        operation: 'Update',
        apiVersion: ctx.apiVersion,
        time,
        ...(ctx.subresource ? { subresource: ctx.subresource } : {}),
        fields: new Set(),
      };
      result.push(mine);
    }
    for (const path of changed) mine.fields.add(path);
    mine.time = time;
  }
  setManagedFields(next, result);
}

function mergeApplied(
  live: unknown,
  applied: unknown,
  fields: string[],
  builtin: boolean,
): unknown {
  if (isObject(applied)) {
    const base: JsonObject = isObject(live) ? { ...live } : {};
    for (const [k, v] of Object.entries(applied)) {
      if (v === null) delete base[k];
      else base[k] = mergeApplied(base[k], v, [...fields, k], builtin);
    }
    return base;
  }
  if (Array.isArray(applied) && Array.isArray(live)) {
    const type = listTypeAt(fields, builtin);
    if (type.kind === 'map') {
      const matches = (a: unknown, b: unknown) =>
        type.keys.every((k) =>
          deepEqual(
            (isObject(a) ? a[k] : undefined) ?? keyDefault(k),
            (isObject(b) ? b[k] : undefined) ?? keyDefault(k),
          ),
        );
      const result = [...live];
      for (const item of applied) {
        const index = result.findIndex((existing) => matches(existing, item));
        if (index >= 0) result[index] = mergeApplied(result[index], item, fields, builtin);
        else result.push(clone(item));
      }
      return result;
    }
    if (type.kind === 'set') {
      const result = [...live];
      for (const item of applied) if (!result.some((x) => deepEqual(x, item))) result.push(item);
      return result;
    }
  }
  return clone(applied);
}

/** Message of a 409 apply conflict, worded as kube-apiserver does. */
function conflictError(conflicts: { manager: Manager; path: string }[]): ApiError {
  const who = (m: Manager) =>
    m.operation === 'Update'
      ? `"${m.manager}" using ${m.apiVersion}${m.time ? ` at ${m.time}` : ''}`
      : `"${m.manager}"`;
  let message: string;
  if (conflicts.length === 1) {
    const c = conflicts[0]!;
    message = `Apply failed with 1 conflict: conflict with ${who(c.manager)}: ${pathToString(c.path)}`;
  } else {
    const byManager = new Map<string, string[]>();
    for (const c of conflicts) {
      const key = who(c.manager);
      byManager.set(key, [...(byManager.get(key) ?? []), pathToString(c.path)]);
    }
    const lines: string[] = [];
    for (const key of [...byManager.keys()].sort()) {
      lines.push(`conflicts with ${key}:`);
      for (const p of byManager.get(key) ?? []) lines.push(`- ${p}`);
    }
    message = `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
  }
  return new ApiError(409, 'Conflict', message, {
    causes: conflicts.map((c) => ({
      type: 'FieldManagerConflict',
      message: `conflict with ${who(c.manager)}`,
      field: pathToString(c.path),
    })),
  });
}

/**
 * Server-side apply of `applied` over `live` (undefined on create). Returns the
 * merged object with its new managed fields; throws a 409 listing the fields
 * other managers hold with another value, unless `force`.
 */
export function serverSideApply(
  live: JsonObject | undefined,
  applied: JsonObject,
  ctx: WriteContext,
  force: boolean,
): JsonObject {
  const managers = managersOf(live);
  const appliedFields = fieldSetOf(applied, setOptions(ctx, 'apply'));
  const conflicts: { manager: Manager; path: string }[] = [];
  const taken = new Map<Manager, string[]>();
  for (const m of managers) {
    // Managers are told apart by name, operation and subresource (apiserver's manager identifier):
    // the applier's own Update entries can conflict with it.
    if (isSame(m, ctx.manager, 'Apply', ctx)) continue;
    for (const path of appliedFields) {
      if (path.endsWith('.') || !m.fields.has(path)) continue;
      const current = valueAt(live, path);
      if (current.found && deepEqual(current.value, valueAt(applied, path).value)) continue;
      conflicts.push({ manager: m, path });
      taken.set(m, [...(taken.get(m) ?? []), path]);
    }
  }
  if (conflicts.length > 0 && !force) {
    // structured-merge-diff reports conflicts in field-path order.
    conflicts.sort((a, b) => (pathToString(a.path) < pathToString(b.path) ? -1 : 1));
    throw conflictError(conflicts);
  }
  for (const [m, paths] of taken) for (const p of paths) m.fields.delete(p);

  const previous = managers.find((m) => isSame(m, ctx.manager, 'Apply', ctx));
  const merged = mergeApplied(live ?? {}, applied, [], ctx.builtin) as JsonObject;
  if (isObject(merged.metadata)) delete merged.metadata.managedFields;

  if (previous) {
    const others = managers.filter((m) => m !== previous);
    const ownedElsewhere = (prefix: string) =>
      appliedFields.has(prefix) ||
      others.some((m) => m.fields.has(prefix)) ||
      [...appliedFields].some((p) => p.startsWith(`${prefix}\n`)) ||
      others.some((m) => [...m.fields].some((p) => p.startsWith(`${prefix}\n`)));
    const dropped = [...previous.fields]
      .filter((p) => !appliedFields.has(p))
      .sort((a, b) => splitPath(b).length - splitPath(a).length);
    for (const path of dropped) {
      const target = path.endsWith('.') ? path.slice(0, -2) : path;
      if (ownedElsewhere(target)) continue;
      removeAt(merged, path);
    }
  }

  const time = nowTimestamp();
  const result = managers.filter((m) => m !== previous);
  const entry: Manager = {
    manager: ctx.manager,
    operation: 'Apply',
    apiVersion: ctx.apiVersion,
    time,
    ...(ctx.subresource ? { subresource: ctx.subresource } : {}),
    fields: appliedFields,
  };
  if (previous) result.splice(managers.indexOf(previous), 0, entry);
  else result.push(entry);
  setManagedFields(merged, result);
  return merged;
}
