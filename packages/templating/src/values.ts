import { types } from 'node:util';
import { compareCodePoints, pyNumberRepr, pyStrRepr } from '@qontract/pycompat';
import { checkCollectionSize, checkStringSize } from './context.ts';
import { failure } from './errors.ts';
import { compareNumeric, intToDecimal, intToFloat, type PyInt } from './python-int.ts';

/**
 * The template value model: Python semantics over plain JavaScript data.
 *
 * - `None` is `null`; `bool`, `str` are the JavaScript primitives.
 * - A JavaScript integer is a Python `int`, a non-integral number a Python
 *   `float`; an integral float (`1.0`) is a `PyFloat`, so that it prints as
 *   Python prints it. Ints beyond ±(2^53 − 1) are `bigint`s, so they stay
 *   exact as Python's do (`python-int.ts`).
 * - `list` is an array, `tuple` an array registered in `TUPLES`, `dict` a
 *   plain object (prototype `Object.prototype` or `null`) read through its own
 *   data properties only.
 * - Anything else (class instances, functions, proxies, getters) is opaque:
 *   it has no attributes and cannot be called.
 */
export class PyFloat {
  readonly value: number;
  constructor(value: number) {
    this.value = value;
    Object.freeze(this);
  }
}

export function pyFloat(n: number): number | PyFloat {
  return Number.isInteger(n) || Object.is(n, -0) ? new PyFloat(n) : n;
}

export function isNumber(v: unknown): v is number | bigint | PyFloat {
  return typeof v === 'number' || typeof v === 'bigint' || v instanceof PyFloat;
}

export function isInt(v: unknown): v is PyInt {
  return (
    typeof v === 'bigint' || (typeof v === 'number' && Number.isInteger(v) && !Object.is(v, -0))
  );
}

export function isFloat(v: unknown): boolean {
  return v instanceof PyFloat || (typeof v === 'number' && !isInt(v));
}

/**
 * The numeric value of an int, float or bool (Python treats `True` as 1) as a
 * double: approximate for ints beyond 2^53, so only for sizes, counts, widths
 * and indices. Arithmetic uses `intValue` / `floatValue`.
 */
export function toNumber(v: unknown): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  if (v instanceof PyFloat) return v.value;
  if (typeof v === 'boolean') return v ? 1 : 0;
  throw failure.type(`'${typeName(v)}' object cannot be interpreted as a number`);
}

/** The exact value of an int or bool. */
export function intValue(v: PyInt | boolean): PyInt {
  return typeof v === 'boolean' ? (v ? 1 : 0) : v;
}

/** Python `float(x)` of an int, float or bool: an int too large for a float is an OverflowError. */
export function floatValue(v: unknown): number {
  if (typeof v === 'bigint') return intToFloat(v);
  return toNumber(v);
}

/** An int, float or bool as an exact `number | bigint` (floats are `number`s), for comparisons. */
function exactNumber(v: unknown): number | bigint {
  return typeof v === 'bigint' ? v : toNumber(v);
}

const TUPLES = new WeakSet<readonly unknown[]>();

export function tuple(items: unknown[]): unknown[] {
  TUPLES.add(items);
  return items;
}

export function isTuple(v: unknown): v is unknown[] {
  return Array.isArray(v) && TUPLES.has(v);
}

/**
 * A name or attribute that does not exist. With `strict` (the original's
 * `StrictUndefined`) printing, iterating, testing or comparing it fails.
 */
export class Undefined {
  readonly hint: string;
  readonly strict: boolean;
  constructor(hint: string, strict: boolean) {
    this.hint = hint;
    this.strict = strict;
    Object.freeze(this);
  }

  fail(): never {
    throw failure.undefined(this.hint);
  }
}

/** A function the template may call: built-ins, filters-as-functions, helpers, macros, methods. */
export abstract class TemplateCallable {
  abstract readonly name: string;
  abstract call(args: unknown[], kwargs: Record<string, unknown>): Promise<unknown> | unknown;
}

/** A `TemplateCallable` built from a plain function; only the engine creates these. */
export class BuiltinFunction extends TemplateCallable {
  readonly name: string;
  readonly #fn: (args: unknown[], kwargs: Record<string, unknown>) => Promise<unknown> | unknown;
  constructor(
    name: string,
    fn: (args: unknown[], kwargs: Record<string, unknown>) => Promise<unknown> | unknown,
  ) {
    super();
    this.name = name;
    this.#fn = fn;
  }
  call(args: unknown[], kwargs: Record<string, unknown>): Promise<unknown> | unknown {
    return this.#fn(args, kwargs);
  }
}

/** Jinja2's `namespace()`: the one object a template may assign attributes to. */
export class Namespace {
  readonly attrs: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
}

/**
 * A Python dict made by the engine (literals, `dict()`, parsed JSON/YAML,
 * copied caller data): a Map, so keys keep insertion order even when they
 * look like integers (a JavaScript object would list `"80"` before `"b"`).
 */
export class PyDict {
  readonly #map = new Map<string, unknown>();

  get size(): number {
    return this.#map.size;
  }
  has(key: string): boolean {
    return this.#map.has(key);
  }
  get(key: string): unknown {
    return this.#map.get(key);
  }
  set(key: string, value: unknown): void {
    this.#map.set(key, value);
  }
  delete(key: string): void {
    this.#map.delete(key);
  }
  keys(): string[] {
    return [...this.#map.keys()];
  }
  entries(): [string, unknown][] {
    return [...this.#map.entries()];
  }
}

/** A template dict: an engine-made `PyDict` or a plain data object from a library. */
export type Dict = PyDict | Record<string, unknown>;

/** A `PyDict`, or a plain data object (no class, no proxy). Only these are read as Python dicts. */
export function isDict(v: unknown): v is Dict {
  if (v instanceof PyDict) return true;
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  if (types.isProxy(v)) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}

export function isList(v: unknown): v is unknown[] {
  return Array.isArray(v) && !types.isProxy(v) && Object.getPrototypeOf(v) === Array.prototype;
}

/** Keys in order; of plain objects only own, enumerable data properties (no getters, nothing inherited). */
export function dictKeys(d: Dict): string[] {
  if (d instanceof PyDict) return d.keys();
  const keys: string[] = [];
  for (const key of Object.keys(d)) {
    const desc = Object.getOwnPropertyDescriptor(d, key);
    if (desc && 'value' in desc) keys.push(key);
  }
  return keys;
}

export function dictGet(d: Dict, key: string): { found: boolean; value: unknown } {
  if (d instanceof PyDict)
    return d.has(key) ? { found: true, value: d.get(key) } : { found: false, value: undefined };
  if (!Object.hasOwn(d, key)) return { found: false, value: undefined };
  const desc = Object.getOwnPropertyDescriptor(d, key);
  if (!desc || !('value' in desc) || !desc.enumerable) return { found: false, value: undefined };
  return { found: true, value: desc.value };
}

/** Sets a key without ever invoking a setter or touching a prototype (`__proto__` included). */
export function dictSet(d: Dict, key: string, value: unknown): void {
  if (d instanceof PyDict) d.set(key, value);
  else
    Object.defineProperty(d, key, { value, writable: true, enumerable: true, configurable: true });
}

export function dictDelete(d: Dict, key: string): void {
  if (d instanceof PyDict) d.delete(key);
  else if (Object.hasOwn(d, key)) Reflect.deleteProperty(d, key);
}

function dictSize(d: Dict): number {
  return d instanceof PyDict ? d.size : dictKeys(d).length;
}

export function newDict(): PyDict {
  return new PyDict();
}

export function dictEntries(d: Dict): [string, unknown][] {
  if (d instanceof PyDict) return d.entries();
  return dictKeys(d).map((k) => [k, dictGet(d, k).value]);
}

/** A null-prototype plain object, for libraries that want JSON-shaped input. */
export function plainObject(entries: [string, unknown][]): Record<string, unknown> {
  const out = Object.create(null) as Record<string, unknown>;
  for (const [k, v] of entries) {
    Object.defineProperty(out, k, {
      value: v,
      writable: true,
      enumerable: true,
      configurable: true,
    });
  }
  return out;
}

/** Python's `type(x).__name__`, for error messages that never show values. */
export function typeName(v: unknown): string {
  if (v === null || v === undefined) return 'NoneType';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'string') return 'str';
  if (isInt(v)) return 'int';
  if (isNumber(v)) return 'float';
  if (isTuple(v)) return 'tuple';
  if (Array.isArray(v)) return 'list';
  if (v instanceof Undefined) return 'Undefined';
  if (v instanceof TemplateCallable) return 'function';
  if (v instanceof Namespace) return 'Namespace';
  if (isDict(v)) return 'dict';
  return 'object';
}

/** Python truthiness; a strict undefined refuses to be tested. */
export function truthy(v: unknown): boolean {
  if (v instanceof Undefined) {
    if (v.strict) v.fail();
    return false;
  }
  if (v === null || v === undefined || v === false) return false;
  if (v === true) return true;
  if (typeof v === 'string') return v.length > 0;
  if (isNumber(v)) return toNumber(v) !== 0;
  if (Array.isArray(v)) return v.length > 0;
  if (isDict(v)) return dictSize(v) > 0;
  return true;
}

/** Python `str(x)`: what `{{ x }}` prints. */
export function pyStr(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v instanceof Undefined) {
    if (v.strict) v.fail();
    return '';
  }
  return pyRepr(v);
}

/**
 * Python `repr(x)` (used inside containers). Cycles print as `[...]` / `{...}`
 * like Python. Shared structure is printed each time it occurs, as Python
 * does, so the size is checked while printing: a small DAG can print huge.
 */
export function pyRepr(v: unknown, seen: Set<unknown> = new Set()): string {
  const budget = { chars: 0 };
  return reprInner(v, seen, budget);
}

function reprInner(v: unknown, seen: Set<unknown>, budget: { chars: number }): string {
  const text = reprOne(v, seen, budget);
  budget.chars += text.length;
  checkStringSize(budget.chars);
  return text;
}

function reprOne(v: unknown, seen: Set<unknown>, budget: { chars: number }): string {
  if (v === null || v === undefined) return 'None';
  if (v === true) return 'True';
  if (v === false) return 'False';
  if (typeof v === 'string') return pyStrRepr(v);
  if (typeof v === 'number' || typeof v === 'bigint' || v instanceof PyFloat) return reprNumber(v);
  // Python's repr() of even a StrictUndefined succeeds; only str() and friends fail.
  if (v instanceof Undefined) return 'Undefined';
  if (Array.isArray(v)) {
    const tup = isTuple(v);
    if (seen.has(v)) return tup ? '(...)' : '[...]';
    seen.add(v);
    const inner = v.map((x) => reprInner(x, seen, budget)).join(', ');
    seen.delete(v);
    if (tup) return v.length === 1 ? `(${inner},)` : `(${inner})`;
    return `[${inner}]`;
  }
  if (isDict(v)) {
    if (seen.has(v)) return '{...}';
    seen.add(v);
    const inner = dictEntries(v)
      .map(([k, x]) => `${pyStrRepr(k)}: ${reprInner(x, seen, budget)}`)
      .join(', ');
    seen.delete(v);
    return `{${inner}}`;
  }
  if (v instanceof TemplateCallable) return `<function ${v.name}>`;
  if (v instanceof Namespace) return '<Namespace>';
  return '<object>';
}

export function reprNumber(v: number | bigint | PyFloat): string {
  if (typeof v === 'bigint') return intToDecimal(v);
  const n = typeof v === 'number' ? v : v.value;
  if (Number.isNaN(n)) return 'nan';
  if (n === Number.POSITIVE_INFINITY) return 'inf';
  if (n === Number.NEGATIVE_INFINITY) return '-inf';
  if (typeof v === 'number' && Number.isInteger(n) && !Number.isSafeInteger(n))
    return intToDecimal(v);
  const text = pyNumberRepr(n);
  if (v instanceof PyFloat && /^-?\d+$/.test(text)) return `${text}.0`;
  return text;
}

function checkUndefined(v: unknown): void {
  if (v instanceof Undefined && v.strict) v.fail();
}

/** Python `==` (numbers across int/float/bool, deep for containers). */
export function pyEquals(a: unknown, b: unknown): boolean {
  checkUndefined(a);
  checkUndefined(b);
  if (a instanceof Undefined || b instanceof Undefined) {
    return a instanceof Undefined && b instanceof Undefined;
  }
  if ((isNumber(a) || typeof a === 'boolean') && (isNumber(b) || typeof b === 'boolean')) {
    if (typeof a !== 'bigint' && typeof b !== 'bigint') return toNumber(a) === toNumber(b);
    return compareNumeric(exactNumber(a), exactNumber(b)) === 0;
  }
  if (a === null || a === undefined) return b === null || b === undefined;
  if (typeof a === 'string' || typeof b === 'string') return a === b;
  if (Array.isArray(a) && Array.isArray(b)) {
    if (isTuple(a) !== isTuple(b) || a.length !== b.length) return false;
    return a.every((x, i) => pyEquals(x, b[i]));
  }
  if (isDict(a) && isDict(b)) {
    const ka = dictKeys(a);
    const kb = dictKeys(b);
    if (ka.length !== kb.length) return false;
    return ka.every((k) => {
      const other = dictGet(b, k);
      return other.found && pyEquals(dictGet(a, k).value, other.value);
    });
  }
  return a === b;
}

/** Python ordering (`<`): numbers, strings, and sequences element-wise; anything else is a TypeError. */
export function pyCompare(a: unknown, b: unknown, op = '<'): number {
  checkUndefined(a);
  checkUndefined(b);
  if ((isNumber(a) || typeof a === 'boolean') && (isNumber(b) || typeof b === 'boolean')) {
    const x = exactNumber(a);
    const y = exactNumber(b);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (typeof a === 'string' && typeof b === 'string') return compareCodePoints(a, b);
  if (Array.isArray(a) && Array.isArray(b) && isTuple(a) === isTuple(b)) {
    for (let i = 0; i < Math.min(a.length, b.length); i++) {
      if (!pyEquals(a[i], b[i])) return pyCompare(a[i], b[i], op);
    }
    return a.length - b.length;
  }
  throw failure.type(
    `'${op}' not supported between instances of '${typeName(a)}' and '${typeName(b)}'`,
  );
}

/** Python refuses lists and dicts (and tuples holding them) as dict keys and set members. */
export function checkHashable(v: unknown): void {
  if (isTuple(v)) {
    for (const item of v) checkHashable(item);
    return;
  }
  if (Array.isArray(v) || isDict(v)) throw failure.type(`unhashable type: '${typeName(v)}'`);
}

/** Python `in`. */
export function pyContains(container: unknown, item: unknown): boolean {
  checkUndefined(container);
  checkUndefined(item);
  if (typeof container === 'string') {
    if (typeof item !== 'string') {
      throw failure.type(`'in <string>' requires string as left operand, not ${typeName(item)}`);
    }
    return container.includes(item);
  }
  if (Array.isArray(container)) return container.some((x) => pyEquals(x, item));
  if (isDict(container)) checkHashable(item);
  if (isDict(container))
    return typeof item === 'string'
      ? dictGet(container, item).found
      : isNumber(item)
        ? dictGet(container, pyStr(item)).found
        : false;
  if (container instanceof Undefined) return false;
  throw failure.type(`argument of type '${typeName(container)}' is not iterable`);
}

/** Python `iter(x)` as a list: dicts give their keys, strings their characters. */
export function pyIterate(v: unknown): unknown[] {
  if (v instanceof Undefined) {
    if (v.strict) v.fail();
    return [];
  }
  if (Array.isArray(v)) return v;
  if (typeof v === 'string') return [...v];
  if (isDict(v)) return dictKeys(v);
  throw failure.type(`'${typeName(v)}' object is not iterable`);
}

/**
 * Plain JSON-like data for libraries (JSONPath, YAML): floats unwrapped,
 * tuples as arrays. Shared structure is converted once; cycles are refused.
 */
export function toPlain(v: unknown, memo: Map<object, unknown> = new Map()): unknown {
  if (v instanceof PyFloat) return v.value;
  if (v instanceof Undefined) {
    if (v.strict) v.fail();
    return null;
  }
  if (v === undefined) return null;
  if (!Array.isArray(v) && !isDict(v)) return v;
  if (memo.has(v)) {
    const done = memo.get(v);
    if (done === IN_PROGRESS) throw failure.value('Circular reference detected');
    return done;
  }
  memo.set(v, IN_PROGRESS);
  let out: unknown;
  if (Array.isArray(v)) {
    checkCollectionSize(v.length);
    out = v.map((x) => toPlain(x, memo));
  } else {
    out = plainObject(dictEntries(v).map(([k, x]) => [k, toPlain(x, memo)]));
  }
  memo.set(v, out);
  return out;
}

const IN_PROGRESS = Symbol('in progress');

const NAMED_FIELDS = new WeakMap<readonly unknown[], Record<string, unknown>>();

/** A tuple whose items are also attributes (`groupby`'s `(grouper, list)`). */
export function namedTuple(fields: Record<string, unknown>): unknown[] {
  const items = tuple(Object.values(fields));
  NAMED_FIELDS.set(items, fields);
  return items;
}

export function namedField(v: unknown, name: string): { found: boolean; value: unknown } {
  const fields = Array.isArray(v) ? NAMED_FIELDS.get(v) : undefined;
  if (fields && Object.hasOwn(fields, name)) return { found: true, value: fields[name] };
  return { found: false, value: undefined };
}
