import type { BundleDatabase } from './database.ts';

/** A crossref: a plain object whose only key is `$ref`. */
function isCrossRef(value: unknown): value is { $ref: string } {
  if (value === null) {
    // qontract-server inspects `.constructor` of every value it resolves (`isRef` in its
    // `src/schema.ts`), so an explicit null in the data fails the field instead of yielding null.
    throw new TypeError("Cannot read properties of null (reading 'constructor')");
  }
  if (typeof value !== 'object' || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return false;
  const keys = Object.keys(value);
  return keys.length === 1 && keys[0] === '$ref';
}

/**
 * Follows one crossref the way qontract-server does: the datafile key is the
 * text before the first `$`; whatever follows is applied as a JSON pointer.
 * A `#fragment` therefore stays part of the key and never resolves.
 * A missing target gives null.
 */
function resolveCrossRef(db: BundleDatabase, ref: { $ref: string }): unknown {
  const text = String(ref.$ref);
  const dollar = text.indexOf('$');
  const path = dollar < 0 ? text : text.slice(0, dollar);
  const target = db.datafiles.get(path);
  if (target === undefined) return null;
  if (dollar < 0) return target;
  return applyJsonPointer(target, text.slice(dollar));
}

function applyJsonPointer(doc: unknown, pointer: string): unknown {
  if (pointer === '') return doc;
  if (!pointer.startsWith('/')) throw new Error(`Invalid JSON pointer: ${pointer}`);
  let current: unknown = doc;
  for (const raw of pointer.slice(1).split('/')) {
    const token = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[token];
  }
  return current;
}

/**
 * The value the default resolver returns for a stored value: a non-empty
 * array made only of crossrefs is resolved element-wise (and flattened one
 * level when the field is a list); a single crossref is resolved; anything
 * else, including arrays mixing refs and values, comes back unchanged.
 */
export function resolveStoredValue(db: BundleDatabase, value: unknown, isList: boolean): unknown {
  if (value === undefined) return null;
  if (Array.isArray(value)) {
    if (value.length === 0) return value;
    const flags = value.map(isCrossRef);
    if (flags.includes(false)) return value;
    const resolved = value.map((v) => resolveCrossRef(db, v as { $ref: string }));
    return isList ? resolved.flat(1) : resolved;
  }
  if (isCrossRef(value)) return resolveCrossRef(db, value);
  return value;
}
