import { types } from 'node:util';
import { checkCollectionSize } from './context.ts';
import { normalizeInt } from './python-int.ts';
import { dictSet, newDict, PyDict, PyFloat } from './values.ts';

/**
 * Copies caller data into the template value model before a template sees
 * it: plain objects become null-prototype dicts of their own enumerable data
 * properties (getters are never invoked), arrays are copied, functions and
 * symbols become `None`, proxies become opaque. Shared and cyclic structure is
 * preserved (one copy per original object), so the cyclic `resource.namespace`
 * costs linear time. Templates can then neither reach nor mutate the caller's
 * objects.
 */
export function toTemplateValue(value: unknown, memo: Map<object, unknown> = new Map()): unknown {
  if (value === undefined || typeof value === 'function' || typeof value === 'symbol') return null;
  if (typeof value === 'bigint') return normalizeInt(value);
  // An integral double beyond 2^53 from a caller (JSON.parse'd GraphQL data) is an int with that
  // double's value: the digits it had in the source are already lost.
  if (typeof value === 'number' && Number.isInteger(value) && !Number.isSafeInteger(value))
    return BigInt(value);
  if (value === null || typeof value !== 'object') return value;
  // Checked first: any other inspection of a proxy would run its traps.
  if (types.isProxy(value)) return Object.freeze(Object.create(null));
  if (value instanceof PyFloat) return value;
  if (value instanceof PyDict) {
    const hit = memo.get(value);
    if (hit !== undefined) return hit;
    const copy = newDict();
    memo.set(value, copy);
    for (const [k, v] of value.entries()) copy.set(k, toTemplateValue(v, memo));
    return copy;
  }
  const hit = memo.get(value);
  if (hit !== undefined) return hit;
  if (Array.isArray(value)) {
    checkCollectionSize(value.length);
    const out: unknown[] = [];
    memo.set(value, out);
    for (let i = 0; i < value.length; i++) {
      const desc = Object.getOwnPropertyDescriptor(value, i);
      out.push(desc && 'value' in desc ? toTemplateValue(desc.value, memo) : null);
    }
    return out;
  }
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null) {
    if (value instanceof Date) return value.toISOString();
    // Class instances stay opaque: no attributes, not callable, printed as `<object>`.
    return value;
  }
  const out = newDict();
  memo.set(value, out);
  for (const key of Object.keys(value)) {
    const desc = Object.getOwnPropertyDescriptor(value, key);
    if (desc && 'value' in desc) dictSet(out, key, toTemplateValue(desc.value, memo));
  }
  return out;
}
