import { type BlockBuilders, compareCodePoints, readBlockSubset } from '@qontract/pycompat';
import { type Document, LineCounter, parseDocument, type ScalarTag, type Tags, visit } from 'yaml';
import type { JsonValue } from './types.ts';

/*
 * The bundler reads YAML with PyYAML's SafeLoader (YAML 1.1). The `yaml`
 * package's 1.1 schema differs from it in ways that change data: it reads
 * `y`/`n` as booleans, `1e3` as a number, and allows exponents without a
 * sign. These tags copy PyYAML's implicit resolvers instead; no library
 * offers PyYAML's exact rules.
 */

/** A value PyYAML would turn into a date/datetime, which the bundler cannot serialise to JSON. */
class YamlTimestamp {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

function stripUnderscores(s: string): string {
  return s.replaceAll('_', '');
}

function sexagesimal(text: string): number {
  let value = 0;
  for (const part of text.split(':')) value = value * 60 + Number(part);
  return value;
}

function resolveInt(source: string): number {
  let text = stripUnderscores(source);
  let sign = 1;
  if (text.startsWith('-')) {
    sign = -1;
    text = text.slice(1);
  } else if (text.startsWith('+')) {
    text = text.slice(1);
  }
  if (text === '0') return 0;
  if (text.startsWith('0b')) return sign * Number.parseInt(text.slice(2), 2);
  if (text.startsWith('0x')) return sign * Number.parseInt(text.slice(2), 16);
  if (text.startsWith('0')) return sign * Number.parseInt(text, 8);
  if (text.includes(':')) return sign * sexagesimal(text);
  return sign * Number(text);
}

function resolveFloat(source: string): number {
  let text = stripUnderscores(source).toLowerCase();
  let sign = 1;
  if (text.startsWith('-')) {
    sign = -1;
    text = text.slice(1);
  } else if (text.startsWith('+')) {
    text = text.slice(1);
  }
  if (text === '.inf') return sign * Number.POSITIVE_INFINITY;
  if (text === '.nan') return Number.NaN;
  if (text.includes(':')) return sign * sexagesimal(text);
  return sign * Number(text);
}

const pyBool: ScalarTag = {
  tag: 'tag:yaml.org,2002:bool',
  default: true,
  test: /^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$/,
  resolve: (s) => /^(?:yes|Yes|YES|true|True|TRUE|on|On|ON)$/.test(s),
};

const pyFloat: ScalarTag = {
  tag: 'tag:yaml.org,2002:float',
  default: true,
  test: /^(?:[-+]?[0-9][0-9_]*\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9_]+(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$/,
  resolve: resolveFloat,
};

const pyInt: ScalarTag = {
  tag: 'tag:yaml.org,2002:int',
  default: true,
  test: /^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$/,
  resolve: resolveInt,
};

const pyNull: ScalarTag = {
  tag: 'tag:yaml.org,2002:null',
  default: true,
  test: /^(?:~|null|Null|NULL|)$/,
  resolve: () => null,
};

const pyTimestamp: ScalarTag = {
  tag: 'tag:yaml.org,2002:timestamp',
  default: true,
  test: /^(?:[0-9]{4}-[0-9]{2}-[0-9]{2}|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9]{1,2}(?::[0-9]{2})?))?)$/,
  resolve: (s) => new YamlTimestamp(s),
};

const PLAIN_TAGS = [pyBool, pyFloat, pyInt, pyNull, pyTimestamp];

/**
 * What the block-subset reader builds: what the full parser's
 * `toJS({ mapAsMap: true })` gives (Maps with the keys as resolved, arrays,
 * plain scalars through the tags above, in their order), for `toJsonData`.
 */
const TO_JS: BlockBuilders<unknown> = {
  plain: (text) => {
    for (const tag of PLAIN_TAGS) {
      if (tag.test?.test(text)) return tag.resolve(text, () => undefined, {});
    }
    return text;
  },
  quoted: (text) => text,
  mapping: (pairs) => new Map(pairs),
  sequence: (items) => items,
};

const REPLACED_TAGS: ReadonlySet<string> = new Set([
  'tag:yaml.org,2002:bool',
  'tag:yaml.org,2002:int',
  'tag:yaml.org,2002:float',
  'tag:yaml.org,2002:null',
  'tag:yaml.org,2002:timestamp',
]);

// PyYAML tries its resolvers in this order: bool, float, int, merge, null, timestamp.
function pyYamlTags(defaults: Tags): Tags {
  return [
    pyBool,
    pyFloat,
    pyInt,
    pyNull,
    pyTimestamp,
    ...defaults.filter((t) => typeof t === 'string' || !REPLACED_TAGS.has(t.tag)),
  ];
}

export class YamlParseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'YamlParseError';
  }
}

/**
 * Parses one YAML document with PyYAML SafeLoader's rules and returns plain
 * JSON data with keys in code-point order. Throws `YamlParseError` for what
 * the bundler cannot handle: syntax errors, several documents, an empty file,
 * and unquoted timestamps. Text in the plain block subset
 * (`readBlockSubset` of @qontract/pycompat) is read without the full parser, with the same
 * result; `subset: false` always uses the full parser (tests compare them).
 */
export function parseYaml11(text: string, options: { subset?: boolean } = {}): JsonValue {
  // Most data files are plain block YAML: read without building a syntax tree.
  const simple = options.subset === false ? undefined : readBlockSubset(text, TO_JS);
  if (simple !== undefined) {
    try {
      return toJsonData(simple, '');
    } catch (e) {
      // An unquoted timestamp: the full parse below says on which line.
      if (!(e instanceof YamlParseError)) throw e;
    }
  }
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, {
    lineCounter,
    version: '1.1',
    schema: 'yaml-1.1',
    customTags: pyYamlTags,
    uniqueKeys: false,
    merge: true,
  });
  if (doc.errors.length > 0) {
    const e = doc.errors[0]!;
    if (e.code === 'MULTIPLE_DOCS')
      throw new YamlParseError('the file holds several YAML documents');
    const pos = e.linePos?.[0];
    const where = pos ? ` at line ${pos.line}, column ${pos.col}` : '';
    throw new YamlParseError(
      `invalid YAML${where}: ${firstLine(e.message).replace(/ at line \d+, column \d+:?$/, '')}`,
    );
  }
  if (doc.contents === null) throw new YamlParseError('the file holds no YAML document');
  try {
    // Maps keep the real key values, so keys can be stringified the way json.dump does.
    return toJsonData(doc.toJS({ maxAliasCount: -1, mapAsMap: true }), '');
  } catch (e) {
    if (!(e instanceof YamlParseError)) throw e;
    const line = timestampLine(e, doc, lineCounter);
    throw line === undefined ? e : new YamlParseError(`${e.message} (line ${line})`);
  }
}

/** The line of the unquoted timestamp an error names, so an author finds it in a long file. */
function timestampLine(e: Error, doc: Document, lines: LineCounter): number | undefined {
  const text = /'([^']*)' is a YAML 1\.1 timestamp/.exec(e.message)?.[1];
  if (text === undefined) return undefined;
  let line: number | undefined;
  visit(doc, {
    Scalar(_, node) {
      if (node.value instanceof YamlTimestamp && node.value.text === text && node.range) {
        line = lines.linePos(node.range[0]).line;
        return visit.BREAK;
      }
      return undefined;
    },
  });
  return line;
}

function firstLine(s: string): string {
  const i = s.indexOf('\n');
  return i < 0 ? s : s.slice(0, i);
}

/** Parses a JSON data file (the bundler uses Python's json.load for `.json`). */
export function parseJsonData(text: string): JsonValue {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw new YamlParseError(`invalid JSON: ${(e as Error).message}`);
  }
  return toJsonData(parsed, '');
}

/*
 * The bundle stores keys in code-point order, but the bundler walks each
 * file's mappings in document order (a Python dict keeps it), and that walk
 * decides the order of resources' backrefs. The document order of a mapping
 * whose keys were not already sorted is kept beside it, for that walk only.
 */
const documentKeyOrder = new WeakMap<object, readonly string[]>();

/** A mapping's keys in the order its file wrote them (code-point order when unknown). */
export function keysInDocumentOrder(obj: object): readonly string[] {
  return documentKeyOrder.get(obj) ?? Object.keys(obj);
}

/** Records `keys` as the document order of `obj` (a copy of a parsed mapping). */
export function rememberDocumentOrder(obj: object, keys: readonly string[]): void {
  const stored = Object.keys(obj);
  if (keys.length === stored.length && keys.every((k, i) => k === stored[i])) return;
  documentKeyOrder.set(obj, keys);
}

/**
 * A deep copy of parsed data that keeps each mapping's document order, for
 * a parse shared by two bundles: post-processing writes into the data.
 */
export function cloneJsonData<T extends JsonValue>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map(cloneJsonData) as T;
  const out: Record<string, JsonValue> = {};
  for (const key of Object.keys(value)) setKey(out, key, cloneJsonData(value[key]!));
  const order = documentKeyOrder.get(value);
  if (order) documentKeyOrder.set(out, order);
  return out as T;
}

/** `keys` when they are not in code-point order (the order to remember), else null. */
function sortedOrNull(keys: string[]): string[] | null {
  for (let i = 1; i < keys.length; i++) {
    if (compareCodePoints(keys[i - 1]!, keys[i]!) > 0) return keys;
  }
  return null;
}

/** Copies parsed data into plain JSON with keys in code-point order (the bundle's order). */
function toJsonData(value: unknown, where: string): JsonValue {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return value;
  if (value === undefined) return null;
  if (Array.isArray(value)) return value.map((v, i) => toJsonData(v, `${where}[${i}]`));
  if (value instanceof YamlTimestamp) {
    throw new YamlParseError(
      `${where || 'document'}: unquoted date/time '${value.text}' is a YAML 1.1 timestamp, which the bundler cannot store as JSON; quote it`,
    );
  }
  if (value instanceof Uint8Array) {
    throw new YamlParseError(`${where || 'document'}: binary values cannot be stored as JSON`);
  }
  if (value instanceof Set) {
    // PyYAML builds a dict of key → None for !!set
    const out: Record<string, JsonValue> = {};
    for (const k of [...value].map(String).sort(compareCodePoints)) setKey(out, k, null);
    return out;
  }
  if (value instanceof Map) {
    const entries: [string, unknown][] = [];
    for (const [k, v] of value) entries.push([pythonKey(k, where), v]);
    const order = sortedOrNull(entries.map((e) => e[0]));
    if (order) entries.sort((a, b) => compareCodePoints(a[0], b[0]));
    const out: Record<string, JsonValue> = {};
    for (const [k, v] of entries) setKey(out, k, toJsonData(v, where ? `${where}.${k}` : k));
    if (order) documentKeyOrder.set(out, order);
    return out;
  }
  const obj = value as Record<string, unknown>;
  const out: Record<string, JsonValue> = {};
  const keys = Object.keys(obj);
  const order = sortedOrNull(keys);
  for (const key of order ? [...keys].sort(compareCodePoints) : keys) {
    setKey(out, key, toJsonData(obj[key], where ? `${where}.${key}` : key));
  }
  if (order) documentKeyOrder.set(out, order);
  return out;
}

/** How json.dump writes a non-string mapping key; PyYAML refuses collection keys. */
function pythonKey(key: unknown, where: string): string {
  if (typeof key === 'string') return key;
  if (key === null || key === undefined) return 'null';
  if (typeof key === 'boolean' || typeof key === 'number') return String(key);
  const at = where || 'document';
  if (key instanceof YamlTimestamp) {
    throw new YamlParseError(
      `${at}: the key '${key.text}' is a YAML 1.1 timestamp, which JSON cannot hold; quote it`,
    );
  }
  throw new YamlParseError(`${at}: a mapping key must be a scalar`);
}

function setKey(obj: Record<string, JsonValue>, key: string, value: JsonValue): void {
  if (key === '__proto__') {
    Object.defineProperty(obj, key, {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  } else {
    obj[key] = value;
  }
}
