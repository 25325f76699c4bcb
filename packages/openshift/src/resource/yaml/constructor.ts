/**
 * PyYAML 6.0.3 `SafeConstructor` semantics (MIT licence) on the node graph of composer.ts,
 * producing the value model of py-values.ts.
 */

import type { BlockBuilders } from '@qontract/pycompat';
import { internSlice } from '../intern.ts';
import { pyFloatParse, pyIntParse } from '../py-numbers.ts';
import {
  bodiesWithSharedNodes,
  PyBytes,
  PyDate,
  PyDict,
  PyFloat,
  type PyObject,
  PySet,
  PyStr,
  type PyTimezone,
  type PyValue,
  pyEquals,
  pyOrderedDicts,
  pyTuples,
  pyTypeName,
  setOwn,
} from '../py-values.ts';
import {
  type MappingNode,
  type Node,
  resolveScalarTag,
  type ScalarNode,
  type SequenceNode,
  TAG_PREFIX,
} from './composer.ts';
import { YamlError } from './scanner.ts';

const T = {
  null: `${TAG_PREFIX}null`,
  bool: `${TAG_PREFIX}bool`,
  int: `${TAG_PREFIX}int`,
  float: `${TAG_PREFIX}float`,
  binary: `${TAG_PREFIX}binary`,
  timestamp: `${TAG_PREFIX}timestamp`,
  omap: `${TAG_PREFIX}omap`,
  pairs: `${TAG_PREFIX}pairs`,
  set: `${TAG_PREFIX}set`,
  str: `${TAG_PREFIX}str`,
  seq: `${TAG_PREFIX}seq`,
  map: `${TAG_PREFIX}map`,
  merge: `${TAG_PREFIX}merge`,
  value: `${TAG_PREFIX}value`,
} as const;

const BOOL_VALUES: Readonly<Record<string, boolean>> = {
  yes: true,
  no: false,
  true: true,
  false: false,
  on: true,
  off: false,
};

const TIMESTAMP_RE =
  /^([0-9][0-9][0-9][0-9])-([0-9][0-9]?)-([0-9][0-9]?)(?:(?:[Tt]|[ \t]+)([0-9][0-9]?):([0-9][0-9]):([0-9][0-9])(?:\.([0-9]*))?(?:[ \t]*(Z|([-+])([0-9][0-9]?)(?::([0-9][0-9]))?))?)?$/;

const SURROGATE = /[\uD800-\uDFFF]/;

function constructorError(message: string, node: Node): YamlError {
  return new YamlError(`${message} (line ${node.mark.line + 1}, column ${node.mark.column + 1})`);
}

/** The text of a scalar, as a JS string or a `PyStr` when escaped surrogates would fuse. */
function scalarText(node: ScalarNode): string | PyStr {
  // Only surrogates can fuse: text without any (nearly all) is its value as it is,
  // kept once when it is short (see intern.ts).
  if (!node.parts.some((p) => typeof p !== 'string' || SURROGATE.test(p)))
    return internSlice(node.value);
  let fuses = false;
  const cps: number[] = [];
  for (const part of node.parts) {
    if (typeof part === 'string') {
      for (const ch of part) cps.push(ch.codePointAt(0) ?? 0);
    } else {
      cps.push(part.escapedCodePoint);
    }
  }
  for (let i = 0; i + 1 < cps.length; i++) {
    const a = cps[i]!;
    const b = cps[i + 1]!;
    if (a >= 0xd800 && a <= 0xdbff && b >= 0xdc00 && b <= 0xdfff) {
      fuses = true;
      break;
    }
  }
  return fuses ? new PyStr(cps) : node.value;
}

function requireScalar(node: Node): ScalarNode {
  if (node.kind !== 'scalar')
    throw constructorError(`expected a scalar node, but found ${node.kind}`, node);
  return node;
}

function isHashable(v: PyValue): boolean {
  if (Array.isArray(v)) return pyTuples.has(v) && v.every(isHashable);
  if (v instanceof PyDict || v instanceof PySet) return false;
  return !(typeof v === 'object' && v !== null && Object.getPrototypeOf(v) === Object.prototype);
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

function constructTimestamp(node: ScalarNode): PyDate {
  const m = TIMESTAMP_RE.exec(node.value);
  if (!m) throw constructorError("'NoneType' object has no attribute 'groupdict'", node);
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  if (year < 1) throw constructorError(`year ${year} is out of range`, node);
  if (month < 1 || month > 12) throw constructorError('month must be in 1..12', node);
  if (day < 1 || day > daysInMonth(year, month))
    throw constructorError('day is out of range for month', node);
  if (!m[4]) return new PyDate(year, month, day);
  const hour = Number(m[4]);
  const minute = Number(m[5]);
  const second = Number(m[6]);
  if (hour > 23) throw constructorError('hour must be in 0..23', node);
  if (minute > 59) throw constructorError('minute must be in 0..59', node);
  if (second > 59) throw constructorError('second must be in 0..59', node);
  let microsecond = 0;
  if (m[7]) microsecond = Number(m[7].slice(0, 6).padEnd(6, '0'));
  let tz: PyTimezone | null = null;
  if (m[9]) {
    const offset = (Number(m[10]) * 60 + Number(m[11] ?? 0)) * (m[9] === '-' ? -1 : 1);
    if (Math.abs(offset) >= 24 * 60) {
      throw constructorError(
        'offset must be a timedelta strictly between -timedelta(hours=24) and timedelta(hours=24)',
        node,
      );
    }
    tz = { offsetMinutes: offset, utc: offset === 0 };
  } else if (m[8]) {
    tz = { offsetMinutes: 0, utc: true };
  }
  return new PyDate(year, month, day, { hour, minute, second, microsecond, tz });
}

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** Python `base64.decodebytes` (binascii.a2b_base64, non-strict): skips junk, checks padding. */
function pyBase64Decode(text: string): Uint8Array {
  const out: number[] = [];
  let quadPos = 0;
  let leftChar = 0;
  let pads = 0;
  for (const ch of text) {
    if (ch === '=') {
      pads++;
      if (quadPos >= 2 && quadPos + pads >= 4) {
        quadPos = 0;
        break;
      }
      continue;
    }
    const v = B64.indexOf(ch);
    if (v < 0) continue;
    pads = 0;
    switch (quadPos) {
      case 0:
        quadPos = 1;
        leftChar = v;
        break;
      case 1:
        quadPos = 2;
        out.push(((leftChar << 2) | (v >> 4)) & 0xff);
        leftChar = v & 0x0f;
        break;
      case 2:
        quadPos = 3;
        out.push(((leftChar << 4) | (v >> 2)) & 0xff);
        leftChar = v & 0x03;
        break;
      default:
        quadPos = 0;
        out.push(((leftChar << 6) | v) & 0xff);
        leftChar = 0;
    }
  }
  if (quadPos === 1) {
    throw new YamlError(
      'failed to decode base64 data: number of data characters cannot be 1 more than a multiple of 4',
    );
  }
  if (quadPos !== 0) throw new YamlError('failed to decode base64 data: Incorrect padding');
  return Uint8Array.from(out);
}

function signAndRest(value: string): [number, string] {
  const sign = value[0] === '-' ? -1 : 1;
  return [sign, value[0] === '-' || value[0] === '+' ? value.slice(1) : value];
}

function negate(v: number | bigint, sign: number): number | bigint {
  if (sign > 0) return v;
  return typeof v === 'bigint' ? -v : v === 0 ? 0 : -v;
}

function normaliseInt(v: bigint): number | bigint {
  return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER)
    ? Number(v)
    : v;
}

function constructInt(node: ScalarNode): number | bigint {
  const text = node.value.replaceAll('_', '');
  if (text === '') throw constructorError('string index out of range', node);
  const [sign, value] = signAndRest(text);
  if (value === '0') return 0;
  let result: bigint;
  if (value.startsWith('0b')) result = pyIntParse(value.slice(2), 2);
  else if (value.startsWith('0x')) result = pyIntParse(value.slice(2), 16);
  else if (value[0] === '0') result = pyIntParse(value, 8);
  else if (value.includes(':')) {
    const digits = value.split(':').map((part) => pyIntParse(part, 10));
    digits.reverse();
    let base = 1n;
    result = 0n;
    for (const digit of digits) {
      result += digit * base;
      base *= 60n;
    }
  } else result = pyIntParse(value, 10);
  return negate(normaliseInt(result), sign);
}

function wrapFloat(x: number): number | PyFloat {
  return Number.isInteger(x) || !Number.isFinite(x) ? new PyFloat(x) : x;
}

function constructFloat(node: ScalarNode): number | PyFloat {
  const text = node.value.replaceAll('_', '').toLowerCase();
  if (text === '') throw constructorError('string index out of range', node);
  const [sign, value] = signAndRest(text);
  if (value === '.inf') return new PyFloat(sign * Number.POSITIVE_INFINITY);
  if (value === '.nan') return new PyFloat(Number.NaN);
  if (value.includes(':')) {
    const digits = value.split(':').map((part) => pyFloatParse(part));
    if (digits.some((d) => d === undefined))
      throw constructorError(`could not convert string to float: '${value}'`, node);
    digits.reverse();
    let base = 1;
    let result = 0.0;
    for (const digit of digits) {
      result += (digit as number) * base;
      base *= 60;
    }
    return wrapFloat(sign * result);
  }
  const parsed = pyFloatParse(value);
  if (parsed === undefined)
    throw constructorError(`could not convert string to float: '${value}'`, node);
  return wrapFloat(sign * parsed);
}

class Constructor {
  private readonly constructed = new Map<Node, PyValue>();
  private readonly inProgress = new Set<Node>();

  /** Whether a node was used twice (an alias to a constructed node). */
  shared = false;

  construct(node: Node): PyValue {
    const done = this.constructed.get(node);
    if (done !== undefined || this.constructed.has(node)) {
      this.shared = true;
      return done as PyValue;
    }
    if (this.inProgress.has(node))
      throw constructorError('found unconstructable recursive node', node);
    this.inProgress.add(node);
    const value = this.build(node);
    this.inProgress.delete(node);
    return value;
  }

  /** Containers are registered before their content, like PyYAML's generator constructors. */
  private remember<V extends PyValue>(node: Node, value: V): V {
    this.constructed.set(node, value);
    this.inProgress.delete(node);
    return value;
  }

  private build(node: Node): PyValue {
    switch (node.tag) {
      case T.null:
        requireScalar(node);
        return this.remember(node, null);
      case T.bool: {
        const s = requireScalar(node);
        const key = s.value.toLowerCase();
        if (!Object.hasOwn(BOOL_VALUES, key)) throw constructorError(`KeyError: '${key}'`, node);
        return this.remember(node, BOOL_VALUES[key] as boolean);
      }
      case T.int:
        return this.remember(node, constructInt(requireScalar(node)));
      case T.float:
        return this.remember(node, constructFloat(requireScalar(node)));
      case T.binary: {
        const s = requireScalar(node);
        // biome-ignore lint/suspicious/noControlCharactersInRegex: the ASCII range is the point
        if (/[^\x00-\x7f]/.test(s.value))
          throw constructorError('failed to convert base64 data into ascii', node);
        return this.remember(node, new PyBytes(pyBase64Decode(s.value)));
      }
      case T.timestamp:
        return this.remember(node, constructTimestamp(requireScalar(node)));
      case T.str:
        return this.remember(node, scalarText(requireScalar(node)));
      case T.seq: {
        if (node.kind !== 'sequence')
          throw constructorError(`expected a sequence node, but found ${node.kind}`, node);
        const list: PyValue[] = this.remember(node, []);
        for (const item of node.items) list.push(this.construct(item));
        return list;
      }
      case T.map: {
        if (node.kind !== 'mapping')
          throw constructorError(`expected a mapping node, but found ${node.kind}`, node);
        const holder = new DictBuilder();
        // A dict is only known to need the PyDict form once its keys are read; build it first,
        // then register, so that a recursive alias to a mapping is reported instead of looping.
        const placeholder: PyObject = {};
        this.constructed.set(node, placeholder);
        this.constructMapping(node, holder);
        const dict = holder.toValue(placeholder);
        this.constructed.set(node, dict);
        return dict;
      }
      case T.set: {
        if (node.kind !== 'mapping')
          throw constructorError(`expected a mapping node, but found ${node.kind}`, node);
        const set = this.remember(node, new PySet([]));
        const holder = new DictBuilder();
        this.constructMapping(node, holder);
        set.items.push(...holder.keys());
        return set;
      }
      case T.omap:
        return this.constructOrderedDict(node);
      case T.pairs: {
        const what = 'pairs';
        if (node.kind !== 'sequence')
          throw constructorError(`while constructing ${what}: expected a sequence`, node);
        const list: PyValue[] = this.remember(node, []);
        for (const sub of node.items) {
          if (sub.kind !== 'mapping')
            throw constructorError(
              `while constructing ${what}: expected a mapping of length 1`,
              sub,
            );
          if (sub.pairs.length !== 1) {
            throw constructorError(
              `while constructing ${what}: expected a single mapping item, but found ${sub.pairs.length} items`,
              sub,
            );
          }
          const [k, v] = sub.pairs[0]!;
          const tuple: PyValue[] = [this.construct(k), this.construct(v)];
          pyTuples.add(tuple);
          list.push(tuple);
        }
        return list;
      }
      default:
        throw constructorError(`could not determine a constructor for the tag '${node.tag}'`, node);
    }
  }

  /**
   * The original's loader (anymarkup-core) replaces PyYAML's `!!omap` constructor with one that
   * builds an `OrderedDict` from the pairs (dict semantics: a repeated key keeps its first place and
   * takes the last value), and that falls back to the plain `!!seq` constructor when building the
   * pairs raises a ConstructorError. Which outcome wins depends on the first item that trips:
   * - an item that is not a one-pair mapping, or a merge key `<<` (PyYAML has no constructor for
   *   its tag), falls back cleanly: the node loads as a list of its items;
   * - a value key `=` falls back too, but the failed key node stays marked "in construction", so
   *   the list's mapping then fails on it (recursive node);
   * - a node that is not a sequence falls back to `!!seq`, which rejects it.
   * Any other failure inside the pairs fails the load either way (again or later), which the eager
   * construction below reproduces.
   */
  private constructOrderedDict(node: Node): PyValue {
    if (node.kind !== 'sequence')
      throw constructorError(`expected a sequence node, but found ${node.kind}`, node);
    for (const sub of node.items) {
      if (sub.kind !== 'mapping' || sub.pairs.length !== 1) return this.constructAsSeq(node);
      const keyTag = sub.pairs[0]![0].tag;
      if (keyTag === T.merge) return this.constructAsSeq(node);
      if (keyTag === T.value)
        throw constructorError('found unconstructable recursive node', sub.pairs[0]![0]);
    }
    const holder = new DictBuilder();
    for (const sub of node.items) {
      const [k, v] = (sub as MappingNode).pairs[0]!;
      const key = this.construct(k);
      const value = this.construct(v);
      if (!isHashable(key)) throw constructorError(`unhashable type: '${pyTypeName(key)}'`, k);
      holder.set(key, value);
    }
    const dict = holder.toValue({});
    pyOrderedDicts.add(dict);
    return this.remember(node, dict);
  }

  private constructAsSeq(node: SequenceNode): PyValue[] {
    const list: PyValue[] = this.remember(node, []);
    for (const item of node.items) list.push(this.construct(item));
    return list;
  }

  private flattenMapping(node: MappingNode): void {
    const merge: [Node, Node][] = [];
    let index = 0;
    while (index < node.pairs.length) {
      const [keyNode, valueNode] = node.pairs[index]!;
      if (keyNode.tag === T.merge) {
        node.pairs.splice(index, 1);
        if (valueNode.kind === 'mapping') {
          this.flattenMapping(valueNode);
          merge.push(...valueNode.pairs);
        } else if (valueNode.kind === 'sequence') {
          const submerge: [Node, Node][][] = [];
          for (const sub of valueNode.items) {
            if (sub.kind !== 'mapping') {
              throw constructorError(
                `while constructing a mapping: expected a mapping for merging, but found ${sub.kind}`,
                sub,
              );
            }
            this.flattenMapping(sub);
            submerge.push(sub.pairs);
          }
          submerge.reverse();
          for (const pairs of submerge) merge.push(...pairs);
        } else {
          throw constructorError(
            `while constructing a mapping: expected a mapping or list of mappings for merging, but found ${valueNode.kind}`,
            valueNode,
          );
        }
      } else {
        if (keyNode.tag === T.value) keyNode.tag = T.str;
        index++;
      }
    }
    if (merge.length) node.pairs = [...merge, ...node.pairs];
  }

  private constructMapping(node: MappingNode, into: DictBuilder): void {
    this.flattenMapping(node);
    for (const [keyNode, valueNode] of node.pairs) {
      const key = this.construct(keyNode);
      if (!isHashable(key))
        throw constructorError('while constructing a mapping: found unhashable key', keyNode);
      into.set(key, this.construct(valueNode));
    }
  }
}

/** Python dict insertion semantics: an equal key keeps its first spelling and takes the last value. */
class DictBuilder {
  private readonly entries: [PyValue, PyValue][] = [];
  private readonly stringIndex = new Map<string, number>();
  private allStrings = true;

  set(key: PyValue, value: PyValue): void {
    if (typeof key === 'string') {
      const at = this.stringIndex.get(key);
      if (at !== undefined) this.entries[at]![1] = value;
      else {
        this.stringIndex.set(key, this.entries.length);
        this.entries.push([key, value]);
      }
      return;
    }
    this.allStrings = false;
    for (const entry of this.entries) {
      if (typeof entry[0] !== 'string' && pyEquals(entry[0], key)) {
        entry[1] = value;
        return;
      }
    }
    this.entries.push([key, value]);
  }

  keys(): PyValue[] {
    return this.entries.map((e) => e[0]);
  }

  toValue(target: PyObject): PyObject | PyDict {
    if (!this.allStrings) return new PyDict(this.entries);
    for (const [k, v] of this.entries) setOwn(target, k as string, v);
    return target;
  }
}

export function constructDocument(node: Node): PyValue {
  const builder = new Constructor();
  let value: PyValue;
  try {
    value = builder.construct(node);
  } catch (e) {
    // Python's int()/float() ValueErrors surface as plain Errors: report them as load errors.
    if (e instanceof YamlError || !(e instanceof Error)) throw e;
    throw new YamlError(e.message);
  }
  if (builder.shared && typeof value === 'object' && value !== null)
    bodiesWithSharedNodes.add(value);
  return value;
}

/**
 * What `safe_load` builds, for the block-subset reader of @qontract/pycompat:
 * a plain scalar resolved and constructed as above (a string needs neither),
 * a quoted one a str, a mapping a dict with Python's key semantics, a
 * sequence a list. A scalar that fails to construct (an impossible date)
 * throws, and the caller then loads the text the full way for its error.
 */
export const SAFE_LOAD_VALUES: BlockBuilders<PyValue> = {
  plain: (text) => {
    const tag = resolveScalarTag(text, true);
    // Short values repeat across files (kinds, apiVersions, label values): one copy each.
    if (tag === T.str) return internSlice(text);
    const node: ScalarNode = {
      kind: 'scalar',
      tag,
      parts: [text],
      value: text,
      style: null,
      mark: { line: 0, column: 0 },
    };
    return constructDocument(node);
  },
  quoted: (text) => internSlice(text),
  mapping: (pairs) => {
    const dict = new DictBuilder();
    for (const [key, value] of pairs) {
      if (!isHashable(key)) throw new YamlError('found unhashable key');
      dict.set(key, value);
    }
    return dict.toValue({});
  },
  sequence: (items) => items,
};
