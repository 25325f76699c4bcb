import { GraphQLError } from 'graphql';
import type { BundleDatabase } from './database.ts';
import { resolveStoredValue } from './refs.ts';
import type { GraphqlFieldConf, GraphqlTypeConf } from './types.ts';

export type FilterPredicate = (source: unknown) => boolean;

const hasOwn = (o: object, k: string) => Object.hasOwn(o, k);

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function read(source: unknown, field: string): unknown {
  if (source === null || typeof source !== 'object') return null;
  return (source as Record<string, unknown>)[field] ?? null;
}

/** Fields a filter may name on a type: its own, plus every fieldMap implementation's. */
function filterableFields(
  typeName: string,
  confs: ReadonlyMap<string, GraphqlTypeConf>,
): Map<string, GraphqlFieldConf> {
  const fields = new Map<string, GraphqlFieldConf>();
  const conf = confs.get(typeName);
  if (!conf) return fields;
  for (const f of conf.fields) fields.set(f.name, f);
  const resolve = conf.interfaceResolve;
  if (conf.isInterface && resolve?.strategy === 'fieldMap') {
    for (const impl of Object.values(resolve.fieldMap ?? {})) {
      for (const f of confs.get(impl)?.fields ?? []) if (!fields.has(f.name)) fields.set(f.name, f);
    }
  }
  return fields;
}

/** Applies a predicate to each element when the filtered value is a resolved list. */
function everyElement(p: FilterPredicate): FilterPredicate {
  return (source) => (Array.isArray(source) ? source.every(p) : p(source));
}

/**
 * Compiles a `filter: JSON` argument for values of `typeName` into one
 * predicate (upstream qontract-server `src/schema.ts`
 * `filterObjectPredicateBuilder`). Unknown fields fail up front with a
 * `BAD_FILTER_FIELD` GraphQL error, whether or not any data would be tested.
 */
export function compileFilter(
  filter: unknown,
  typeName: string,
  confs: ReadonlyMap<string, GraphqlTypeConf>,
  db: BundleDatabase,
): FilterPredicate {
  if (!isPlainObject(filter)) {
    throw new GraphQLError(`filter on type "${typeName}" must be an object`, {
      extensions: { code: 'BAD_FILTER_FIELD' },
    });
  }
  const fields = filterableFields(typeName, confs);
  const predicates: FilterPredicate[] = [];
  for (const [name, wanted] of Object.entries(filter)) {
    const field = fields.get(name);
    if (!field) {
      throw new GraphQLError(`Field "${name}" does not exist on type "${typeName}"`, {
        extensions: { code: 'BAD_FILTER_FIELD' },
      });
    }
    predicates.push(compilePredicate(field, wanted, confs, db));
  }
  return (source) => predicates.every((p) => p(source));
}

function compilePredicate(
  field: GraphqlFieldConf,
  wanted: unknown,
  confs: ReadonlyMap<string, GraphqlTypeConf>,
  db: BundleDatabase,
): FilterPredicate {
  const name = field.name;
  if (field.isList && Array.isArray(wanted)) {
    return (source) => {
      const actual = read(source, name);
      return (
        Array.isArray(actual) &&
        actual.length === wanted.length &&
        actual.every((v, i) => v === wanted[i])
      );
    };
  }
  if (isPlainObject(wanted) && hasOwn(wanted, 'in')) {
    const allowed = Array.isArray(wanted.in) ? wanted.in : [];
    return everyElement(
      (source) =>
        typeof source === 'object' &&
        source !== null &&
        name in source &&
        allowed.includes((source as Record<string, unknown>)[name]),
    );
  }
  if (isPlainObject(wanted) && hasOwn(wanted, 'filter')) {
    const nested = compileFilter(wanted.filter, field.type, confs, db);
    return everyElement((source) => {
      const stored = read(source, name);
      if (stored === null) return false;
      const resolved = resolveStoredValue(db, stored, field.isList === true);
      if (resolved === null || resolved === undefined) return false;
      return nested(resolved);
    });
  }
  if (isPlainObject(wanted) && hasOwn(wanted, 'ne')) {
    const excluded = wanted.ne;
    return everyElement((source) => read(source, name) !== excluded);
  }
  return (source) => read(source, name) === wanted;
}
