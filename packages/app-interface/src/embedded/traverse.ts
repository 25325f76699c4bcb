import { confsOf } from './graphql-conf.ts';
import type { Bundle, GraphqlFieldConf, GraphqlTypeConf, JsonValue } from './types.ts';

/**
 * What the typed walk over the data reports (upstream qontract-validator
 * `validator/traverse.py` `traverse_data()`).
 */
export interface DataVisitor {
  /** A non-empty value of an `isResource` string field. */
  resourceRef?(file: string, datafileSchema: string, jsonpath: string, resource: string): void;
  /** A scalar value of an `isUnique` field; `typeName` is the interface's when it declares the field unique. */
  uniqueValue?(file: string, typeName: string, field: string, value: JsonValue): void;
  /** Items of one list (at `jsonpath`) that agree on all their context-unique fields. */
  contextUniqueDuplicate?(
    file: string,
    jsonpath: string,
    fields: string[],
    indexes: number[],
  ): void;
}

function isRefObject(v: unknown): boolean {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const keys = Object.keys(v);
  return keys.length === 1 && keys[0] === '$ref';
}

function isInlineObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !isRefObject(v);
}

/**
 * What the bundler hashes into `__identifier` for a list item: the values of
 * its type's `isContextUnique`/`isUnique` fields (with the field set, since
 * items of different types are only compared within the same set). Null
 * when the type has no such field.
 */
function contextIdentifier(
  confs: readonly GraphqlTypeConf[],
  item: Record<string, unknown>,
): string | null {
  const names = new Set<string>();
  for (const conf of confs) {
    for (const f of conf.fields) if (f.isContextUnique || f.isUnique) names.add(f.name);
  }
  const fields = [...names].sort();
  if (fields.length === 0) return null;
  return JSON.stringify([fields, fields.map((f) => item[f] ?? null)]);
}

function isScalar(v: unknown): v is string | number | boolean {
  return typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
}

/**
 * Walks every datafile together with its GraphQL type, like the bundler's
 * traversal: fieldMap and schema interfaces pick the concrete type from the
 * data, inline objects are entered, crossrefs are not followed. `jsonpath`
 * joins field names with `.` and writes list positions as `[i]` segments.
 */
export function traverseData(bundle: Bundle, visitor: DataVisitor): void {
  const confs = confsOf(bundle.graphql);
  const byName = new Map(confs.map((c) => [c.name, c]));
  const typeBySchema = new Map<string, string>();
  for (const c of confs) {
    for (const f of c.fields) if (f.datafileSchema) typeBySchema.set(f.datafileSchema, f.type);
  }
  for (const c of confs) if (c.datafile) typeBySchema.set(c.datafile, c.name);

  const concrete = (conf: GraphqlTypeConf, value: Record<string, unknown>): GraphqlTypeConf => {
    if (!conf.isInterface || !conf.interfaceResolve) return conf;
    const r = conf.interfaceResolve;
    const name =
      r.strategy === 'fieldMap'
        ? r.fieldMap?.[String(value[r.field ?? ''])]
        : typeBySchema.get(String(value.$schema));
    const found = name ? byName.get(name) : undefined;
    return found && found !== conf ? concrete(found, value) : conf;
  };

  const uniqueOwner = (conf: GraphqlTypeConf, field: GraphqlFieldConf): string | null => {
    const iface = conf.interface ? byName.get(conf.interface) : undefined;
    if (iface?.fields.some((f) => f.name === field.name && f.isUnique)) return iface.name;
    return field.isUnique ? conf.name : null;
  };

  const walk = (
    file: string,
    datafileSchema: string,
    value: Record<string, unknown>,
    declared: GraphqlTypeConf,
    jsonpath: string,
  ): void => {
    const conf = concrete(declared, value);
    for (const field of conf.fields) {
      if (field.synthetic || field.datafileSchema) continue;
      const v = value[field.name];
      if (v === undefined || v === null || isRefObject(v)) continue;
      const path = jsonpath ? `${jsonpath}.${field.name}` : field.name;
      if (field.isResource && field.type === 'string') {
        const leaves = Array.isArray(v)
          ? v.map((x, i) => [x, `${path}.[${i}]`] as const)
          : [[v, path] as const];
        for (const [leaf, at] of leaves) {
          if (typeof leaf === 'string' && leaf !== '')
            visitor.resourceRef?.(file, datafileSchema, at, leaf);
        }
        continue;
      }
      const owner = uniqueOwner(conf, field);
      if (owner && isScalar(v)) visitor.uniqueValue?.(file, owner, field.name, v);
      const child = byName.get(field.type);
      if (!child) continue;
      if (Array.isArray(v)) {
        const identifiers = new Map<string, number[]>();
        v.forEach((item, i) => {
          if (!isInlineObject(item)) return;
          walk(file, datafileSchema, item, child, `${path}.[${i}]`);
          const id = contextIdentifier([child, concrete(child, item)], item);
          if (id === null) return;
          const seen = identifiers.get(id);
          if (seen) seen.push(i);
          else identifiers.set(id, [i]);
        });
        for (const [id, indexes] of identifiers) {
          if (indexes.length > 1) {
            visitor.contextUniqueDuplicate?.(file, path, JSON.parse(id)[0] as string[], indexes);
          }
        }
      } else if (typeof v === 'object') {
        walk(file, datafileSchema, v as Record<string, unknown>, child, path);
      }
    }
  };

  for (const [file, df] of Object.entries(bundle.data)) {
    const schema = typeof df.$schema === 'string' ? df.$schema : '';
    const typeName = typeBySchema.get(schema);
    const conf = typeName ? byName.get(typeName) : undefined;
    if (conf) walk(file, schema, df, conf, '');
  }
}
