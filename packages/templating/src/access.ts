import { failure } from './errors.ts';
import { methodOf } from './methods.ts';
import {
  dictGet,
  isDict,
  isInt,
  isNumber,
  isTuple,
  Namespace,
  namedField,
  pyRepr,
  pyStr,
  TemplateCallable,
  toNumber,
  tuple,
  typeName,
  Undefined,
} from './values.ts';

/** Template objects with a fixed attribute set (the `loop` variable). */
export abstract class AttributeHolder extends TemplateCallable {
  abstract attribute(name: string): { found: boolean; value: unknown };
}

/** Jinja2's description of the object in an undefined-attribute message. */
function objectDescription(v: unknown): string {
  if (v === null || v === undefined) return 'None';
  return `${typeName(v)} object`;
}

function missing(obj: unknown, key: unknown, strict: boolean): Undefined {
  const hint =
    typeof key === 'string'
      ? `'${objectDescription(obj)}' has no attribute '${key}'`
      : `${objectDescription(obj)} has no element ${pyRepr(key)}`;
  return new Undefined(hint, strict);
}

function attribute(obj: unknown, name: string): { found: boolean; value: unknown } {
  const method = methodOf(obj, name);
  if (method) return { found: true, value: method };
  if (obj instanceof Namespace) return dictGet(obj.attrs, name);
  if (obj instanceof AttributeHolder) return obj.attribute(name);
  return namedField(obj, name);
}

function item(obj: unknown, key: unknown): { found: boolean; value: unknown } {
  if (isDict(obj)) {
    if (typeof key === 'string') return dictGet(obj, key);
    if (isNumber(key) || typeof key === 'boolean') return dictGet(obj, pyStr(key));
    return { found: false, value: undefined };
  }
  if (Array.isArray(obj) || typeof obj === 'string') {
    if (!(isInt(key) || typeof key === 'boolean')) return { found: false, value: undefined };
    // Python indexes strings by code point, not by UTF-16 unit.
    const seq = typeof obj === 'string' && /[\uD800-\uDFFF]/.test(obj) ? Array.from(obj) : obj;
    const length = seq.length;
    let index = toNumber(key);
    if (index < 0) index += length;
    if (index < 0 || index >= length) return { found: false, value: undefined };
    return { found: true, value: seq[index] };
  }
  return { found: false, value: undefined };
}

/**
 * `obj.name`: Python attributes first (the built-in methods the sandbox
 * allows), then items, as Jinja2's `getattr` does. Nothing else is reachable:
 * no prototype members, no getters, no functions found in data.
 */
export function getAttribute(obj: unknown, name: string, strict: boolean): unknown {
  if (obj instanceof Undefined) obj.fail();
  const a = attribute(obj, name);
  if (a.found) return sanitize(a.value);
  const i = item(obj, name);
  if (i.found) return sanitize(i.value);
  return missing(obj, name, strict);
}

/** `obj[key]`: items first, then attributes for string keys, as Jinja2's `getitem` does. */
export function getItem(obj: unknown, key: unknown, strict: boolean): unknown {
  if (obj instanceof Undefined) obj.fail();
  if (key instanceof Undefined && key.strict) key.fail();
  const i = item(obj, key);
  if (i.found) return sanitize(i.value);
  if (typeof key === 'string') {
    const a = attribute(obj, key);
    if (a.found) return sanitize(a.value);
  }
  return missing(obj, key, strict);
}

/** Data never hands out a JavaScript function: only engine-made callables are callable. */
function sanitize(v: unknown): unknown {
  if (typeof v === 'function' || typeof v === 'symbol') return null;
  if (v === undefined) return null;
  return v;
}

export interface SliceSpec {
  start: unknown;
  stop: unknown;
  step: unknown;
}

/** Python slicing of lists, tuples and strings. */
export function sliceValue(obj: unknown, spec: SliceSpec): unknown {
  if (obj instanceof Undefined) obj.fail();
  const seq: unknown[] | undefined = Array.isArray(obj)
    ? obj
    : typeof obj === 'string'
      ? [...obj]
      : undefined;
  if (seq === undefined) throw failure.type(`'${typeName(obj)}' object is not subscriptable`);
  const num = (v: unknown): number | undefined =>
    v === null || v === undefined ? undefined : toNumber(v);
  const step = num(spec.step) ?? 1;
  if (step === 0) throw failure.value('slice step cannot be zero');
  const len = seq.length;
  const clamp = (v: number | undefined, dflt: number, lo: number, hi: number): number => {
    if (v === undefined) return dflt;
    let x = v < 0 ? v + len : v;
    x = Math.max(lo, Math.min(hi, x));
    return x;
  };
  const out: unknown[] = [];
  if (step > 0) {
    const start = clamp(num(spec.start), 0, 0, len);
    const stop = clamp(num(spec.stop), len, 0, len);
    for (let i = start; i < stop; i += step) out.push(seq[i]);
  } else {
    const start = clamp(num(spec.start), len - 1, -1, len - 1);
    const stop = clamp(num(spec.stop), -1, -1, len - 1);
    for (let i = start; i > stop; i += step) out.push(seq[i]);
  }
  if (typeof obj === 'string') return out.join('');
  return isTuple(obj) ? tuple(out) : out;
}
