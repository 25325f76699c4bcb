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
 * `filterObjectPredicateBuilder`), with the server's answers to odd
 * filters: an unknown field fails with a `BAD_FILTER_FIELD` error naming
 * the type in `extensions.gqlType`; a filter that is not an object matches
 * nothing; an array is read as an object keyed "0", "1", ...
 */
export function compileFilter(
  filter: unknown,
  typeName: string,
  confs: ReadonlyMap<string, GraphqlTypeConf>,
  db: BundleDatabase,
): FilterPredicate {
  if (filter === null) {
    // The server reads the entries of null: a TypeError, reported as the field's error.
    throw new GraphQLError('Cannot convert undefined or null to object');
  }
  if (typeof filter !== 'object') return () => false;
  const fields = filterableFields(typeName, confs);
  const predicates: FilterPredicate[] = [];
  for (const [name, wanted] of Object.entries(filter)) {
    const field = fields.get(name);
    if (!field) {
      throw new GraphQLError(`Field "${name}" does not exist on type "${typeName}"`, {
        extensions: { code: 'BAD_FILTER_FIELD', gqlType: typeName },
      });
    }
    predicates.push(compilePredicate(field, wanted, confs, db));
  }
  return (source) => predicates.every((p) => p(source));
}

/** `new Set(value.in)`: strings give their characters, null nothing, a non-iterable fails. */
function inSet(values: unknown): Set<unknown> {
  if (values === null || values === undefined) return new Set();
  if (typeof values === 'string' || Array.isArray(values)) return new Set(values);
  throw new GraphQLError(`${typeof values} is not iterable`);
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
    const allowed = inSet(wanted.in);
    return everyElement(
      (source) =>
        typeof source === 'object' &&
        source !== null &&
        name in source &&
        allowed.has((source as Record<string, unknown>)[name]),
    );
  }
  if (isPlainObject(wanted) && hasOwn(wanted, 'filter')) {
    // The server builds the nested filter when a value reaches it, so its
    // errors (an unknown field) only show when some object has this field.
    let nested: FilterPredicate | undefined;
    return everyElement((source) => {
      if (source === null || typeof source !== 'object') return false;
      const stored = (source as Record<string, unknown>)[name];
      if (stored === undefined) return false;
      // The server resolves refs here without its list flattening (and, as
      // in its default resolver, an explicit null fails the field).
      const resolved = resolveStoredValue(db, stored, false);
      if (resolved === null || resolved === undefined) return false;
      nested ??= compileFilter(wanted.filter, field.type, confs, db);
      return nested(resolved);
    });
  }
  if (isPlainObject(wanted) && hasOwn(wanted, 'ne')) {
    const excluded = wanted.ne;
    return everyElement((source) => read(source, name) !== excluded);
  }
  return (source) => read(source, name) === wanted;
}
