import { type PyJsonModel, pyFloatRepr, pyJsonDumps } from '@qontract/pycompat';
import { failure } from './errors.ts';
import { dictEntries, isDict, PyFloat, reprNumber, typeName, Undefined } from './values.ts';

/**
 * The template's value model for `json.dumps`: ints beyond 2^53 (bigint, or an integral number
 * written exactly), the integral floats `PyFloat` keeps apart from ints (`1.0`), `Undefined`
 * (`null`, or the UndefinedError of a strict one), dicts of either kind, and Python's exceptions.
 */
const TEMPLATE_VALUES: PyJsonModel = {
  leaf(v) {
    if (typeof v === 'bigint') return reprNumber(v);
    if (v instanceof PyFloat) return pyFloatRepr(v.value);
    if (v instanceof Undefined) {
      if (v.strict) v.fail();
      return 'null';
    }
    if (!Array.isArray(v) && !isDict(v)) {
      throw failure.type(`Object of type ${typeName(v)} is not JSON serializable`);
    }
    return undefined;
  },
  items: (v) => (isDict(v) ? dictEntries(v) : undefined),
  error: (kind, message) => (kind === 'TypeError' ? failure.type(message) : failure.value(message)),
};

/**
 * Python's `json.dumps(value, sort_keys=..., indent=...)` over template values, so `tojson`
 * prints `1.0` for a float and Python's separators and escapes.
 */
export function pythonJsonDump(
  value: unknown,
  options: { sortKeys: boolean; indent?: number | undefined },
): string {
  return pyJsonDumps(value, {
    sortKeys: options.sortKeys,
    indent: options.indent,
    number: reprNumber,
    model: TEMPLATE_VALUES,
  });
}
