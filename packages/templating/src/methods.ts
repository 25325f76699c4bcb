import { bindArgs, type Param } from './arguments.ts';
import { checkCollectionSize, checkStringSize } from './context.ts';
import { failure } from './errors.ts';
import { pyFormatMethod } from './python-format.ts';
import {
  BuiltinFunction,
  type Dict,
  dictDelete,
  dictEntries,
  dictGet,
  dictKeys,
  dictSet,
  isDict,
  isInt,
  isList,
  isTuple,
  newDict,
  pyEquals,
  pyIterate,
  pyStr,
  toNumber,
  tuple,
  typeName,
} from './values.ts';

type Method<T> = (self: T, a: Record<string, unknown>) => unknown;
interface MethodDef<T> {
  params: Param[];
  run: Method<T>;
}

function str(v: unknown, what: string): string {
  if (typeof v !== 'string') throw failure.type(`${what} must be str, not ${typeName(v)}`);
  return v;
}

function stripChars(s: string, chars: unknown, left: boolean, right: boolean): string {
  if (chars === null || chars === undefined) {
    let out = s;
    if (left) out = out.replace(/^\s+/, '');
    if (right) out = out.replace(/\s+$/, '');
    return out;
  }
  const set = new Set(str(chars, 'strip arg'));
  const cs = [...s];
  let start = 0;
  let end = cs.length;
  if (left) while (start < end && set.has(cs[start]!)) start++;
  if (right) while (end > start && set.has(cs[end - 1]!)) end--;
  return cs.slice(start, end).join('');
}

/** Python `str.replace` (a negative count replaces all; an empty `old` inserts between characters). */
export function pyReplace(s: string, from: string, to: string, count: number): string {
  const limit = count < 0 ? Number.POSITIVE_INFINITY : count;
  if (from === '') {
    const chars = [...s];
    const n = Math.min(limit, chars.length + 1);
    checkStringSize(s.length + n * to.length);
    let out = '';
    chars.forEach((ch, i) => {
      out += (i < n ? to : '') + ch;
    });
    return n === chars.length + 1 ? out + to : out;
  }
  const parts = s.split(from);
  const n = Math.min(limit, parts.length - 1);
  checkStringSize(s.length + n * Math.max(0, to.length - from.length));
  if (n === parts.length - 1) return parts.join(to);
  return `${parts.slice(0, n + 1).join(to)}${from}${parts.slice(n + 1).join(from)}`;
}

/** Python `str.split`: no separator splits on whitespace runs and drops empty parts. */
export function pySplit(s: string, sep: unknown, maxsplit: unknown): string[] {
  const limit = maxsplit === null || maxsplit === undefined ? -1 : toNumber(maxsplit);
  if (sep === null || sep === undefined) {
    const out: string[] = [];
    let rest = s.replace(/^\s+/, '');
    while (rest.length) {
      if (limit >= 0 && out.length === limit) {
        out.push(rest);
        break;
      }
      const m = /\s+/.exec(rest);
      if (!m) {
        out.push(rest);
        break;
      }
      out.push(rest.slice(0, m.index));
      rest = rest.slice(m.index + m[0].length);
    }
    return out;
  }
  const separator = str(sep, 'separator');
  if (separator === '') throw failure.value('empty separator');
  const parts = s.split(separator);
  if (limit < 0 || parts.length <= limit + 1) return parts;
  return [...parts.slice(0, limit), parts.slice(limit).join(separator)];
}

function prefixTest(prefix: unknown, test: (p: string) => boolean): boolean {
  if (Array.isArray(prefix) && isTuple(prefix)) return prefix.some((p) => test(str(p, 'prefix')));
  return test(str(prefix, 'prefix'));
}

const STRING_METHODS: Record<string, MethodDef<string>> = {
  lower: { params: [], run: (s) => s.toLowerCase() },
  upper: { params: [], run: (s) => s.toUpperCase() },
  strip: { params: [['chars', null]], run: (s, a) => stripChars(s, a.chars, true, true) },
  lstrip: { params: [['chars', null]], run: (s, a) => stripChars(s, a.chars, true, false) },
  rstrip: { params: [['chars', null]], run: (s, a) => stripChars(s, a.chars, false, true) },
  split: {
    params: [
      ['sep', null],
      ['maxsplit', -1],
    ],
    run: (s, a) => pySplit(s, a.sep, a.maxsplit),
  },
  rsplit: {
    params: [
      ['sep', null],
      ['maxsplit', -1],
    ],
    run: (s, a) => {
      const limit = toNumber(a.maxsplit);
      if (limit < 0) return pySplit(s, a.sep, -1);
      const rev = (x: string) => [...x].reverse().join('');
      const sep = a.sep === null ? null : rev(str(a.sep, 'separator'));
      return pySplit(rev(s), sep, limit).map(rev).reverse();
    },
  },
  splitlines: {
    params: [],
    run: (s) =>
      s === ''
        ? []
        : s
            .replace(/\r\n|\r|\n$/, '\n')
            .replace(/\n$/, '')
            .split(/\r\n|\r|\n/),
  },
  replace: {
    params: ['old', 'new', ['count', -1]],
    run: (s, a) =>
      pyReplace(
        s,
        str(a.old, 'replace() argument 1'),
        str(a.new, 'replace() argument 2'),
        toNumber(a.count),
      ),
  },
  startswith: {
    params: ['prefix'],
    run: (s, a) => prefixTest(a.prefix, (p) => s.startsWith(p)),
  },
  endswith: { params: ['suffix'], run: (s, a) => prefixTest(a.suffix, (p) => s.endsWith(p)) },
  join: {
    params: ['iterable'],
    run: (s, a) => {
      const parts = pyIterate(a.iterable).map((x) => str(x, 'sequence item'));
      checkStringSize(parts.reduce((n, p) => n + p.length + s.length, 0));
      return parts.join(s);
    },
  },
  find: { params: ['sub'], run: (s, a) => s.indexOf(str(a.sub, 'sub')) },
  rfind: { params: ['sub'], run: (s, a) => s.lastIndexOf(str(a.sub, 'sub')) },
  count: { params: ['sub'], run: (s, a) => s.split(str(a.sub, 'sub')).length - 1 },
  capitalize: { params: [], run: (s) => s.charAt(0).toUpperCase() + s.slice(1).toLowerCase() },
  title: {
    params: [],
    run: (s) => s.replace(/\p{L}+/gu, (w) => w.charAt(0).toUpperCase() + w.slice(1).toLowerCase()),
  },
  isdigit: { params: [], run: (s) => /^\d+$/.test(s) },
  isalpha: { params: [], run: (s) => /^\p{L}+$/u.test(s) },
  isalnum: { params: [], run: (s) => /^[\p{L}\d]+$/u.test(s) },
  islower: { params: [], run: (s) => /\p{Ll}/u.test(s) && s === s.toLowerCase() },
  isupper: { params: [], run: (s) => /\p{Lu}/u.test(s) && s === s.toUpperCase() },
  zfill: {
    params: ['width'],
    run: (s, a) => {
      const width = toNumber(a.width);
      checkStringSize(width);
      const sign = s.startsWith('-') || s.startsWith('+') ? s[0]! : '';
      const body = sign ? s.slice(1) : s;
      return sign + body.padStart(width - sign.length, '0');
    },
  },
};

const LIST_METHODS: Record<string, MethodDef<unknown[]>> = {
  append: {
    params: ['object'],
    run: (l, a) => {
      checkCollectionSize(l.length + 1);
      l.push(a.object);
      return null;
    },
  },
  extend: {
    params: ['iterable'],
    run: (l, a) => {
      const items = pyIterate(a.iterable);
      checkCollectionSize(l.length + items.length);
      l.push(...items);
      return null;
    },
  },
  insert: {
    params: ['index', 'object'],
    run: (l, a) => {
      checkCollectionSize(l.length + 1);
      let i = toNumber(a.index);
      if (i < 0) i = Math.max(0, i + l.length);
      l.splice(Math.min(i, l.length), 0, a.object);
      return null;
    },
  },
  pop: {
    params: [['index', -1]],
    run: (l, a) => {
      if (l.length === 0) throw failure.runtime('pop from empty list');
      let i = toNumber(a.index);
      if (i < 0) i += l.length;
      if (i < 0 || i >= l.length) throw failure.runtime('pop index out of range');
      return l.splice(i, 1)[0];
    },
  },
  remove: {
    params: ['value'],
    run: (l, a) => {
      const i = l.findIndex((x) => pyEquals(x, a.value));
      if (i === -1) throw failure.value('list.remove(x): x not in list');
      l.splice(i, 1);
      return null;
    },
  },
  copy: { params: [], run: (l) => [...l] },
};

const SEQUENCE_METHODS: Record<string, MethodDef<unknown[]>> = {
  index: {
    params: ['value'],
    run: (l, a) => {
      const i = l.findIndex((x) => pyEquals(x, a.value));
      if (i === -1) throw failure.value('value is not in list');
      return i;
    },
  },
  count: { params: ['value'], run: (l, a) => l.filter((x) => pyEquals(x, a.value)).length },
};

const DICT_METHODS: Record<string, MethodDef<Dict>> = {
  items: { params: [], run: (d) => dictEntries(d).map(([k, v]) => tuple([k, v])) },
  keys: { params: [], run: (d) => dictKeys(d) },
  values: { params: [], run: (d) => dictEntries(d).map(([, v]) => v) },
  get: {
    params: ['key', ['default', null]],
    run: (d, a) => {
      const key = a.key;
      const hit =
        typeof key === 'string' || isInt(key)
          ? dictGet(d, pyStr(key))
          : { found: false, value: undefined };
      return hit.found ? hit.value : a.default;
    },
  },
  copy: {
    params: [],
    run: (d) => {
      const out = newDict();
      for (const [k, v] of dictEntries(d)) dictSet(out, k, v);
      return out;
    },
  },
  update: {
    params: [['other', null]],
    run: (d, a) => {
      if (a.other !== null) {
        if (!isDict(a.other)) throw failure.type(`'${typeName(a.other)}' object is not a mapping`);
        for (const [k, v] of dictEntries(a.other)) dictSet(d, k, v);
      }
      return null;
    },
  },
  pop: {
    params: ['key', ['default', undefined]],
    run: (d, a) => {
      const key = pyStr(a.key);
      const hit = dictGet(d, key);
      if (hit.found) {
        dictDelete(d, key);
        return hit.value;
      }
      if (a.default === undefined) throw failure.runtime(`KeyError: ${pyStr(a.key)}`);
      return a.default;
    },
  },
  setdefault: {
    params: ['key', ['default', null]],
    run: (d, a) => {
      const key = pyStr(a.key);
      const hit = dictGet(d, key);
      if (hit.found) return hit.value;
      dictSet(d, key, a.default);
      return a.default;
    },
  },
};

function bind<T>(self: T, name: string, def: MethodDef<T>): BuiltinFunction {
  return new BuiltinFunction(name, (args, kwargs) =>
    def.run(self, bindArgs(name, def.params, args, kwargs)),
  );
}

/**
 * The built-in methods templates call on values (`d.items()`, `s.split()`,
 * ...). Only names in these tables exist; there is no generic member lookup.
 */
export function methodOf(obj: unknown, name: string): BuiltinFunction | undefined {
  if (typeof obj === 'string') {
    if (name === 'format') {
      return new BuiltinFunction('format', (args, kwargs) => pyFormatMethod(obj, args, kwargs));
    }
    const def = Object.hasOwn(STRING_METHODS, name) ? STRING_METHODS[name] : undefined;
    return def ? bind(obj, name, def) : undefined;
  }
  if (Array.isArray(obj)) {
    if (Object.hasOwn(SEQUENCE_METHODS, name)) return bind(obj, name, SEQUENCE_METHODS[name]!);
    if (isList(obj) && !isTuple(obj) && Object.hasOwn(LIST_METHODS, name)) {
      return bind(obj, name, LIST_METHODS[name]!);
    }
    return undefined;
  }
  if (isDict(obj) && Object.hasOwn(DICT_METHODS, name)) return bind(obj, name, DICT_METHODS[name]!);
  return undefined;
}
