import { bindArgs, type Param } from './arguments.ts';
import { checkStringSize, type FilterContext, type FilterFn } from './context.ts';
import { failure, RenderFailure } from './errors.ts';
import { binaryOp } from './evaluator.ts';
import { pyReplace, pySplit } from './methods.ts';
import { pyPercentFormat } from './python-format.ts';
import {
  floatToInt,
  intAbs,
  intDivMod,
  intMul,
  intPow,
  normalizeInt,
  type PyInt,
  parseIntText,
  toBigInt,
} from './python-int.ts';
import { pythonJsonDump } from './python-json.ts';
import { pyRound } from './python-round.ts';
import { urlQuote } from './url-quote.ts';
import {
  checkHashable,
  dictEntries,
  dictGet,
  floatValue,
  intValue,
  isDict,
  isFloat,
  isInt,
  isNumber,
  namedTuple,
  pyCompare,
  pyEquals,
  pyFloat,
  pyIterate,
  pyStr,
  toNumber,
  truthy,
  tuple,
  typeName,
  Undefined,
} from './values.ts';

/** Defines a filter with Python-style parameters (the first, the filtered value, is implicit). */
function filter(
  name: string,
  params: Param[],
  run: (ctx: FilterContext, value: unknown, a: Record<string, unknown>) => unknown,
): [string, FilterFn] {
  return [
    name,
    (ctx, value, args, kwargs) => run(ctx, value, bindArgs(name, params, args, kwargs)),
  ];
}

function str(v: unknown): string {
  return pyStr(v);
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: these are Python's line boundaries.
const LINE_BREAKS = /\r\n|[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]/;

/** Python `str.splitlines()`. */
function splitLines(s: string): string[] {
  const lines = s.split(LINE_BREAKS);
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** Jinja2's dotted attribute paths (`sort(attribute='a.b')`, `map(attribute='0')`). */
function attributeGetter(
  ctx: FilterContext,
  attribute: unknown,
  options: { lower?: boolean; default?: unknown } = {},
): (item: unknown) => unknown {
  const parts =
    attribute === null || attribute === undefined
      ? []
      : isInt(attribute)
        ? [toNumber(attribute)]
        : pyStr(attribute).split('.');
  return (item) => {
    let v = item;
    for (const part of parts) {
      const key = typeof part === 'string' && /^\d+$/.test(part) ? Number(part) : part;
      v =
        typeof key === 'number'
          ? Array.isArray(v)
            ? (v[key] ?? new Undefined(`no element ${key}`, ctx.strict))
            : ctx.getAttribute(v, String(key))
          : ctx.getAttribute(v, key);
      if (v instanceof Undefined && options.default !== undefined) return options.default;
    }
    if (options.lower && typeof v === 'string') return v.toLowerCase();
    return v;
  };
}

function sortKey(
  ctx: FilterContext,
  caseSensitive: unknown,
  attribute: unknown,
): (item: unknown) => unknown {
  return attributeGetter(ctx, attribute, { lower: !truthy(caseSensitive) });
}

function sorted(items: unknown[], key: (item: unknown) => unknown, reverse: boolean): unknown[] {
  const keyed = items.map((item) => ({ item, key: key(item) }));
  keyed.sort((a, b) => pyCompare(a.key, b.key));
  if (reverse) {
    // Python's reverse sort keeps equal items in their original order.
    const groups: (typeof keyed)[] = [];
    for (const k of keyed) {
      const last = groups[groups.length - 1];
      if (last && pyCompare(last[0]!.key, k.key) === 0) last.push(k);
      else groups.push([k]);
    }
    return groups
      .reverse()
      .flat()
      .map((k) => k.item);
  }
  return keyed.map((k) => k.item);
}

function htmlEscape(s: string): string {
  return s
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&#34;')
    .replaceAll("'", '&#39;');
}

const BASE_PREFIX: Record<number, string> = { 2: 'b', 8: 'o', 16: 'x' };

/** Python `int(text, base)`, or `undefined` where Python raises a ValueError. */
function parseIntString(text: string, base: number): PyInt | undefined {
  let s = text.trim();
  // Underscores only between digits (and after a base prefix), as Python's int() allows.
  if (!/^[-+]?(?:0[xob]_)?[0-9a-z]+(?:_[0-9a-z]+)*$/i.test(s)) return undefined;
  const prefix = BASE_PREFIX[base];
  if (prefix) s = s.replace(new RegExp(`^([-+]?)0${prefix}_?`, 'i'), '$1');
  try {
    return parseIntText(s.replaceAll('_', ''), base);
  } catch (e) {
    // More than 4300 decimal digits: Python's int() raises a ValueError too.
    if (e instanceof RenderFailure && e.kind === 'ValueError') return undefined;
    throw e;
  }
}

/** Jinja2's `int` filter: `int(value)` (or `int(value, base)`), else `int(float(value))`, else the default. */
function toInt(value: unknown, dflt: unknown, base: number): unknown {
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (isInt(value)) return value;
  if (isNumber(value)) {
    const f = toNumber(value);
    // Python's int(nan) is a ValueError (the default); int(inf) an OverflowError Jinja2 lets through.
    return Number.isNaN(f) ? dflt : floatToInt(f);
  }
  if (typeof value === 'string') {
    const n = parseIntString(value, base);
    if (n !== undefined) return n;
    const f = parseFloatStrict(value.replaceAll('_', ''));
    if (f !== undefined && Number.isFinite(f)) return floatToInt(f);
  }
  return dflt;
}

/** Python `round(int, digits)` for negative `digits`: exact, ties to even. */
function roundInt(x: PyInt, digits: number): PyInt {
  if (digits >= 0) return x;
  const text = toBigInt(intAbs(x)).toString();
  if (-digits > text.length) return 0;
  const unit = intPow(10, -digits);
  const [q, r] = intDivMod(x, unit);
  const twice = toBigInt(r) * 2n;
  const u = toBigInt(unit);
  const up = twice > u || (twice === u && toBigInt(q) % 2n !== 0n);
  return intMul(up ? normalizeInt(toBigInt(q) + 1n) : q, unit);
}

function parseFloatStrict(s: string): number | undefined {
  const t = s.trim().toLowerCase();
  if (/^[-+]?(inf|infinity)$/.test(t)) return t.startsWith('-') ? -Infinity : Infinity;
  if (/^[-+]?nan$/.test(t)) return Number.NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/.test(t)) return undefined;
  return Number(t);
}

function lengthOf(value: unknown): number {
  if (value instanceof Undefined) {
    if (value.strict) value.fail();
    return 0;
  }
  if (typeof value === 'string') return [...value].length;
  if (Array.isArray(value)) return value.length;
  if (isDict(value)) return dictEntries(value).length;
  throw failure.type(`object of type '${typeName(value)}' has no len()`);
}

function selectOrReject(
  ctx: FilterContext,
  value: unknown,
  args: unknown[],
  kwargs: Record<string, unknown>,
  keep: boolean,
  byAttribute: boolean,
): Promise<unknown[]> {
  const rest = [...args];
  const attribute = byAttribute ? rest.shift() : undefined;
  if (byAttribute && attribute === undefined)
    throw failure.runtime('Missing parameter for attribute name');
  const get = byAttribute ? attributeGetter(ctx, attribute) : (x: unknown) => x;
  const testName = rest.shift();
  return (async () => {
    const out: unknown[] = [];
    for (const item of truthy(value) ? pyIterate(value) : []) {
      const v = get(item);
      const ok =
        testName === undefined ? truthy(v) : await ctx.callTest(pyStr(testName), v, rest, kwargs);
      if (ok === keep) out.push(item);
    }
    return out;
  })();
}

function minMax(
  ctx: FilterContext,
  value: unknown,
  a: Record<string, unknown>,
  sign: number,
): unknown {
  const items = pyIterate(value);
  if (items.length === 0)
    return new Undefined('No aggregated item, sequence was empty.', ctx.strict);
  const key = sortKey(ctx, a.case_sensitive, a.attribute);
  let best = items[0];
  let bestKey = key(best);
  for (const item of items.slice(1)) {
    const k = key(item);
    if (pyCompare(k, bestKey) * sign > 0) {
      best = item;
      bestKey = k;
    }
  }
  return best;
}

/** The standard Jinja2 filters templates use, with Jinja2 3.x behaviour. */
export const STANDARD_FILTERS: Record<string, FilterFn> = Object.fromEntries([
  filter(
    'default',
    [
      ['default_value', ''],
      ['boolean', false],
    ],
    (_ctx, v, a) =>
      v instanceof Undefined || (truthy(a.boolean) && !truthy(v)) ? a.default_value : v,
  ),
  filter('length', [], (_ctx, v) => lengthOf(v)),
  filter('lower', [], (_ctx, v) => str(v).toLowerCase()),
  filter('upper', [], (_ctx, v) => str(v).toUpperCase()),
  filter('capitalize', [], (_ctx, v) => {
    const s = str(v);
    return s.charAt(0).toUpperCase() + s.slice(1).toLowerCase();
  }),
  filter('title', [], (_ctx, v) =>
    str(v)
      .split(/([-\s({[<]+)/)
      .filter((p) => p)
      .map((p) => p.charAt(0).toUpperCase() + p.slice(1).toLowerCase())
      .join(''),
  ),
  filter('trim', [['chars', null]], (_ctx, v, a) => {
    const s = str(v);
    if (a.chars === null) return s.trim();
    const set = new Set(str(a.chars));
    const cs = [...s];
    let i = 0;
    let j = cs.length;
    while (i < j && set.has(cs[i]!)) i++;
    while (j > i && set.has(cs[j - 1]!)) j--;
    return cs.slice(i, j).join('');
  }),
  filter('replace', ['old', 'new', ['count', null]], (_ctx, v, a) =>
    pyReplace(str(v), str(a.old), str(a.new), a.count === null ? -1 : toNumber(a.count)),
  ),
  filter(
    'join',
    [
      ['d', ''],
      ['attribute', null],
    ],
    (ctx, v, a) => {
      const get = attributeGetter(ctx, a.attribute);
      const sep = str(a.d);
      const parts = pyIterate(v).map((x) => str(get(x)));
      checkStringSize(parts.reduce((n, p) => n + p.length + sep.length, 0));
      return parts.join(sep);
    },
  ),
  filter('first', [], (ctx, v) => {
    const items = pyIterate(v);
    return items.length
      ? items[0]
      : new Undefined('No first item, sequence was empty.', ctx.strict);
  }),
  filter('last', [], (ctx, v) => {
    const items = pyIterate(v);
    return items.length
      ? items[items.length - 1]
      : new Undefined('No last item, sequence was empty.', ctx.strict);
  }),
  filter('list', [], (_ctx, v) => [...pyIterate(v)]),
  filter(
    'sort',
    [
      ['reverse', false],
      ['case_sensitive', false],
      ['attribute', null],
    ],
    (ctx, v, a) =>
      sorted([...pyIterate(v)], sortKey(ctx, a.case_sensitive, a.attribute), truthy(a.reverse)),
  ),
  filter(
    'unique',
    [
      ['case_sensitive', false],
      ['attribute', null],
    ],
    (ctx, v, a) => {
      const key = sortKey(ctx, a.case_sensitive, a.attribute);
      // Python's set: equal values (1, 1.0, True) share a bucket; a scan of
      // everything seen would make a long list take minutes.
      const seen = new Map<string, unknown[]>();
      const out: unknown[] = [];
      for (const item of pyIterate(v)) {
        const k = key(item);
        checkHashable(k);
        const bucket = hashBucket(k);
        const same = seen.get(bucket) ?? [];
        if (!same.some((s) => pyEquals(s, k))) {
          same.push(k);
          seen.set(bucket, same);
          out.push(item);
        }
      }
      return out;
    },
  ),
  [
    'map',
    async (ctx: FilterContext, v: unknown, args: unknown[], kwargs: Record<string, unknown>) => {
      // Jinja2 maps nothing over a falsy value (`none|map(...)` is empty).
      const items = truthy(v) ? pyIterate(v) : [];
      if (args.length === 0 && 'attribute' in kwargs) {
        const { attribute, default: dflt, ...rest } = kwargs;
        if (Object.keys(rest).length)
          throw failure.type(`Unexpected keyword argument '${Object.keys(rest)[0]}'`);
        const get = attributeGetter(ctx, attribute, { default: dflt });
        return items.map(get);
      }
      const [name, ...rest] = args;
      if (name === undefined) throw failure.runtime('map requires a filter argument');
      const out: unknown[] = [];
      for (const item of items) out.push(await ctx.callFilter(pyStr(name), item, rest, kwargs));
      return out;
    },
  ],
  [
    'select',
    (ctx: FilterContext, v: unknown, args: unknown[], kw: Record<string, unknown>) =>
      selectOrReject(ctx, v, args, kw, true, false),
  ],
  [
    'reject',
    (ctx: FilterContext, v: unknown, args: unknown[], kw: Record<string, unknown>) =>
      selectOrReject(ctx, v, args, kw, false, false),
  ],
  [
    'selectattr',
    (ctx: FilterContext, v: unknown, args: unknown[], kw: Record<string, unknown>) =>
      selectOrReject(ctx, v, args, kw, true, true),
  ],
  [
    'rejectattr',
    (ctx: FilterContext, v: unknown, args: unknown[], kw: Record<string, unknown>) =>
      selectOrReject(ctx, v, args, kw, false, true),
  ],
  filter(
    'int',
    [
      ['default', 0],
      ['base', 10],
    ],
    (_ctx, v, a) => {
      if (v instanceof Undefined && v.strict) v.fail();
      return toInt(v, a.default, toNumber(a.base));
    },
  ),
  filter('float', [['default', pyFloat(0)]], (_ctx, v, a) => {
    if (v instanceof Undefined && v.strict) v.fail();
    if (isNumber(v) || typeof v === 'boolean') return pyFloat(floatValue(v));
    if (typeof v === 'string') {
      const f = parseFloatStrict(v.replaceAll('_', ''));
      if (f !== undefined) return pyFloat(f);
    }
    return a.default;
  }),
  filter('string', [], (_ctx, v) => str(v)),
  filter('tojson', [['indent', null]], (_ctx, v, a) => {
    const indent = a.indent === null ? undefined : toNumber(a.indent);
    if (indent !== undefined) checkStringSize(indent);
    return pythonJsonDump(v, { sortKeys: true, indent })
      .replaceAll('<', '\\u003c')
      .replaceAll('>', '\\u003e')
      .replaceAll('&', '\\u0026')
      .replaceAll("'", '\\u0027');
  }),
  filter(
    'indent',
    [
      ['width', 4],
      ['first', false],
      ['blank', false],
    ],
    (_ctx, v, a) => {
      if (typeof a.width !== 'string') checkStringSize(toNumber(a.width));
      const indention = typeof a.width === 'string' ? a.width : ' '.repeat(toNumber(a.width));
      // Jinja2 appends a newline to the value itself, so only strings are accepted.
      if (v instanceof Undefined) v.fail();
      if (typeof v !== 'string') {
        throw failure.type(`unsupported operand type(s) for +=: '${typeName(v)}' and 'str'`);
      }
      const lines = splitLines(`${v}\n`);
      checkStringSize(lines.reduce((n, l) => n + l.length + indention.length + 1, 0));
      let out: string;
      if (truthy(a.blank)) out = lines.join(`\n${indention}`);
      else {
        out = lines.shift() ?? '';
        if (lines.length) out += `\n${lines.map((l) => (l ? indention + l : l)).join('\n')}`;
      }
      return truthy(a.first) ? indention + out : out;
    },
  ),
  filter(
    'dictsort',
    [
      ['case_sensitive', false],
      ['by', 'key'],
      ['reverse', false],
    ],
    (_ctx, v, a) => {
      if (!isDict(v)) throw failure.type('dictsort filter requires a mapping');
      const pos = a.by === 'key' ? 0 : a.by === 'value' ? 1 : undefined;
      if (pos === undefined) throw failure.runtime('You can only sort by either "key" or "value"');
      const items = dictEntries(v).map(([k, x]) => tuple([k, x]));
      return sorted(
        items,
        (item) => {
          const k = (item as unknown[])[pos];
          return !truthy(a.case_sensitive) && typeof k === 'string' ? k.toLowerCase() : k;
        },
        truthy(a.reverse),
      );
    },
  ),
  filter('items', [], (_ctx, v) => {
    if (v instanceof Undefined) {
      if (v.strict) v.fail();
      return [];
    }
    if (!isDict(v)) throw failure.type(`Can only get item pairs from a mapping.`);
    return dictEntries(v).map(([k, x]) => tuple([k, x]));
  }),
  filter(
    'min',
    [
      ['case_sensitive', false],
      ['attribute', null],
    ],
    (ctx, v, a) => minMax(ctx, v, a, -1),
  ),
  filter(
    'max',
    [
      ['case_sensitive', false],
      ['attribute', null],
    ],
    (ctx, v, a) => minMax(ctx, v, a, 1),
  ),
  filter(
    'sum',
    [
      ['attribute', null],
      ['start', 0],
    ],
    (ctx, v, a) => {
      // Python's sum(): `start + x1 + x2 ...` with `+` as the template has it (exact ints).
      const get = attributeGetter(ctx, a.attribute);
      if (typeof a.start === 'string')
        throw failure.type("sum() can't sum strings [use ''.join(seq) instead]");
      let total: unknown = a.start;
      for (const item of pyIterate(v)) {
        // Adding lists copies them: a long list of lists is quadratic work.
        ctx.budget.checkTime();
        total = binaryOp('+', total, get(item), ctx.budget);
      }
      return total;
    },
  ),
  filter('abs', [], (_ctx, v) => {
    if (!isNumber(v) && typeof v !== 'boolean')
      throw failure.type(`bad operand type for abs(): '${typeName(v)}'`);
    if (isFloat(v)) return pyFloat(Math.abs(toNumber(v)));
    return intAbs(intValue(v as PyInt | boolean));
  }),
  filter(
    'round',
    [
      ['precision', 0],
      ['method', 'common'],
    ],
    (ctx, v, a) => {
      if (a.method !== 'common' && a.method !== 'ceil' && a.method !== 'floor') {
        throw failure.runtime('method must be common, ceil or floor');
      }
      const p = toNumber(a.precision);
      if (a.method === 'common') {
        if (isInt(v) || typeof v === 'boolean') return roundInt(intValue(v), p);
        return pyFloat(pyRound(floatValue(v), p));
      }
      // Jinja2: math.ceil/floor(value * 10**precision) / 10**precision, with Python's types.
      if (!isNumber(v) && typeof v !== 'boolean')
        throw failure.type(`must be real number, not ${typeName(v)}`);
      const scale = binaryOp('**', 10, a.precision, ctx.budget);
      const scaled = binaryOp('*', v, scale, ctx.budget);
      const whole = isFloat(scaled)
        ? floatToInt(
            a.method === 'ceil' ? Math.ceil(toNumber(scaled)) : Math.floor(toNumber(scaled)),
          )
        : scaled;
      return binaryOp('/', whole, scale, ctx.budget);
    },
  ),
  [
    'format',
    (_ctx: FilterContext, v: unknown, args: unknown[], kwargs: Record<string, unknown>) => {
      if (args.length && Object.keys(kwargs).length) {
        throw failure.runtime("can't handle positional and keyword arguments at the same time");
      }
      const mapping = Object.assign(Object.create(null) as Record<string, unknown>, kwargs);
      return pyPercentFormat(str(v), Object.keys(kwargs).length ? mapping : tuple(args));
    },
  ],
  filter('reverse', [], (_ctx, v) => {
    if (typeof v === 'string') return [...v].reverse().join('');
    return [...pyIterate(v)].reverse();
  }),
  filter('safe', [], (_ctx, v) => v),
  filter('escape', [], (_ctx, v) => htmlEscape(str(v))),
  filter('forceescape', [], (_ctx, v) => htmlEscape(str(v))),
  filter('urlencode', [], (_ctx, v) => {
    if (v instanceof Undefined) v.fail();
    if (typeof v === 'string' || !(Array.isArray(v) || isDict(v))) return urlQuote(str(v), '/');
    const pairs = isDict(v)
      ? dictEntries(v)
      : pyIterate(v).map((p) => {
          const pair = pyIterate(p);
          if (pair.length !== 2) {
            throw failure.value(
              pair.length > 2
                ? 'too many values to unpack (expected 2)'
                : `not enough values to unpack (expected 2, got ${pair.length})`,
            );
          }
          return pair as [unknown, unknown];
        });
    return pairs
      .map(([k, x]) => `${urlQuote(str(k), '', true)}=${urlQuote(str(x), '', true)}`)
      .join('&');
  }),
  filter('batch', ['linecount', ['fill_with', null]], (ctx, v, a) => {
    const size = toNumber(a.linecount);
    if (size <= 0) throw failure.value('linecount must be positive');
    if (a.fill_with !== null) ctx.budget.checkLength(size, 'batch');
    const out: unknown[][] = [];
    let row: unknown[] = [];
    for (const item of pyIterate(v)) {
      if (row.length === size) {
        out.push(row);
        row = [];
      }
      row.push(item);
    }
    if (row.length) {
      if (a.fill_with !== null) while (row.length < size) row.push(a.fill_with);
      out.push(row);
    }
    return out;
  }),
  filter('slice', ['slices', ['fill_with', null]], (ctx, v, a) => {
    const seq = [...pyIterate(v)];
    const slices = toNumber(a.slices);
    // One list per slice: a huge count would build millions of empty lists.
    ctx.budget.checkLength(slices, 'slice');
    const length = seq.length;
    const perSlice = Math.floor(length / slices);
    const withExtra = length % slices;
    let offset = 0;
    const out: unknown[][] = [];
    for (let i = 0; i < slices; i++) {
      const start = offset + i * perSlice;
      if (i < withExtra) offset++;
      const end = offset + (i + 1) * perSlice;
      const tmp = seq.slice(start, end);
      if (a.fill_with !== null && i >= withExtra) tmp.push(a.fill_with);
      out.push(tmp);
    }
    return out;
  }),
  filter('groupby', ['attribute', ['default', null], ['case_sensitive', false]], (ctx, v, a) => {
    const key = attributeGetter(ctx, a.attribute, {
      lower: !truthy(a.case_sensitive),
      ...(a.default !== null ? { default: a.default } : {}),
    });
    const raw = attributeGetter(ctx, a.attribute, a.default !== null ? { default: a.default } : {});
    const items = sorted([...pyIterate(v)], key, false);
    const groups: unknown[] = [];
    let current: { key: unknown; grouper: unknown; list: unknown[] } | undefined;
    for (const item of items) {
      const k = key(item);
      if (current && pyEquals(current.key, k)) current.list.push(item);
      else {
        if (current) groups.push(namedTuple({ grouper: current.grouper, list: current.list }));
        current = { key: k, grouper: raw(item), list: [item] };
      }
    }
    if (current) groups.push(namedTuple({ grouper: current.grouper, list: current.list }));
    return groups;
  }),
  filter('center', [['width', 80]], (_ctx, v, a) => {
    const s = str(v);
    const width = toNumber(a.width);
    const len = [...s].length;
    if (len >= width) return s;
    checkStringSize(width);
    const marg = width - len;
    const left = Math.floor(marg / 2) + (marg & width & 1);
    return ' '.repeat(left) + s + ' '.repeat(marg - left);
  }),
  filter(
    'truncate',
    [
      ['length', 255],
      ['killwords', false],
      ['end', '...'],
      ['leeway', null],
    ],
    (_ctx, v, a) => {
      const length = toNumber(a.length);
      const end = str(a.end);
      if (typeof v !== 'string') {
        // Jinja2 measures the value itself: lists short enough pass through, scalars have no len().
        if (v instanceof Undefined) v.fail();
        const size = lengthOf(v);
        if (size <= length + (a.leeway === null ? 5 : toNumber(a.leeway))) return v;
        throw failure.type(`can only concatenate ${typeName(v)} (not "str") to ${typeName(v)}`);
      }
      const s = v;
      const leeway = a.leeway === null ? 5 : toNumber(a.leeway);
      if (length < end.length)
        throw failure.runtime(`expected length >= ${end.length}, got ${length}`);
      if (leeway < 0) throw failure.runtime(`expected leeway >= 0, got ${leeway}`);
      if (s.length <= length + leeway) return s;
      if (truthy(a.killwords)) return s.slice(0, length - end.length) + end;
      const cut = s.slice(0, length - end.length);
      const i = cut.lastIndexOf(' ');
      return (i === -1 ? cut : cut.slice(0, i)) + end;
    },
  ),
  filter('wordcount', [], (_ctx, v) => (str(v).match(/[\p{L}\p{N}_]+/gu) ?? []).length),
  filter('attr', ['name'], (ctx, v, a) => {
    const value = ctx.getAttribute(v, str(a.name));
    // `attr` never falls back to items.
    if (isDict(v) && !(value instanceof Undefined) && dictGet(v, str(a.name)).found) {
      return new Undefined(`'dict object' has no attribute '${str(a.name)}'`, ctx.strict);
    }
    return value;
  }),
  filter('wordwrap', [['width', 79]], (_ctx, v, a) => {
    const width = toNumber(a.width);
    return splitLines(str(v))
      .map((line) => {
        const words = pySplit(line, null, -1);
        const out: string[] = [];
        let cur = '';
        for (const w of words) {
          if (cur && cur.length + 1 + w.length > width) {
            out.push(cur);
            cur = w;
          } else cur = cur ? `${cur} ${w}` : w;
        }
        if (cur) out.push(cur);
        return out.join('\n');
      })
      .join('\n');
  }),
]);
STANDARD_FILTERS.d = STANDARD_FILTERS.default!;
STANDARD_FILTERS.count = STANDARD_FILTERS.length!;
STANDARD_FILTERS.e = STANDARD_FILTERS.escape!;
Object.setPrototypeOf(STANDARD_FILTERS, null);

/** A cheap key under which Python-equal hashable values meet (`1`, `1.0` and `True` share one). */
function hashBucket(v: unknown): string {
  if (typeof v === 'string') return `s${v}`;
  if (typeof v === 'boolean' || isNumber(v)) return `n${floatValue(v)}`;
  return '*';
}
