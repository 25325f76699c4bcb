import { pythonString } from '@qontract/core';
import { compareCodePoints } from '@qontract/pycompat';
import { failure } from './errors.ts';
import {
  type Dict,
  dictEntries,
  isDict,
  isNumber,
  PyFloat,
  reprNumber,
  typeName,
  Undefined,
} from './values.ts';

/**
 * Python's `json.dumps(value, sort_keys=..., indent=...)` over template values,
 * so `tojson` prints `1.0` for a float and Python's separators and escapes.
 * Hand-written: the core package's `pythonJsonDumps` has no notion of the
 * template's integral floats or of `indent`.
 */
export function pythonJsonDump(
  value: unknown,
  options: { sortKeys: boolean; indent?: number | undefined },
): string {
  return dump(value, options, 0, new Set());
}

function dump(
  v: unknown,
  o: { sortKeys: boolean; indent?: number | undefined },
  level: number,
  seen: Set<unknown>,
): string {
  if (v === null || v === undefined) return 'null';
  if (v === true) return 'true';
  if (v === false) return 'false';
  if (typeof v === 'string') return pythonString(v);
  if (typeof v === 'bigint') return reprNumber(v);
  if (isNumber(v)) {
    const n = v instanceof PyFloat ? v.value : v;
    if (Number.isNaN(n)) return 'NaN';
    if (!Number.isFinite(n)) return n > 0 ? 'Infinity' : '-Infinity';
    return reprNumber(v);
  }
  if (v instanceof Undefined) {
    if (v.strict) v.fail();
    return 'null';
  }
  const container = Array.isArray(v) || isDict(v);
  if (!container) throw failure.type(`Object of type ${typeName(v)} is not JSON serializable`);
  if (seen.has(v)) throw failure.value('Circular reference detected');
  seen.add(v);
  const indent = o.indent;
  const nl = indent === undefined ? '' : `\n${' '.repeat(indent * (level + 1))}`;
  const end = indent === undefined ? '' : `\n${' '.repeat(indent * level)}`;
  const sep = indent === undefined ? ', ' : ',';
  let out: string;
  if (Array.isArray(v)) {
    out =
      v.length === 0
        ? '[]'
        : `[${nl}${v.map((x) => dump(x, o, level + 1, seen)).join(sep + nl)}${end}]`;
  } else {
    const entries = dictEntries(v as Dict);
    if (o.sortKeys) entries.sort(([a], [b]) => compareCodePoints(a, b));
    out =
      entries.length === 0
        ? '{}'
        : `{${nl}${entries.map(([k, x]) => `${pythonString(k)}: ${dump(x, o, level + 1, seen)}`).join(sep + nl)}${end}}`;
  }
  seen.delete(v);
  return out;
}
