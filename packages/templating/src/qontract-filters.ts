import { parseDocument, visit } from 'yaml';
import { bindArgs, type Param } from './arguments.ts';
import type { FilterContext, FilterFn } from './context.ts';
import { failure } from './errors.ts';
import { parseJson } from './json-parse.ts';
import { extractJsonpath, jsonPointers, matchesJsonpath } from './jsonpath.ts';
import { pyPercentFormat } from './python-format.ts';
import { normalizeInt } from './python-int.ts';
import { urlQuote, urlUnquote } from './url-quote.ts';
import { PyDict, PyFloat, plainObject, pyStr, Undefined } from './values.ts';

function text(v: unknown): string {
  if (v instanceof Undefined) v.fail();
  return pyStr(v);
}

/** JSON as Python's `json.loads` reads it (key order kept, `1.0` a float). */
function parseJsonValue(source: string): unknown {
  return parseJson(source);
}

/**
 * A resource's `variables` JSON as top-level template variables: a plain
 * object (spread it next to `resource`) whose values keep Python's reading
 * (nested objects in document order, `1.0` a float).
 */
export function parseTemplateVariables(source: string): Record<string, unknown> {
  const value = parseJson(source);
  if (!(value instanceof PyDict)) throw failure.type('template variables must be a JSON object');
  return plainObject(value.entries());
}

/** YAML's Maps into `PyDict`s (keys as Python would print them), sharing what aliases share. */
function fromYaml(v: unknown, memo: Map<object, unknown>): unknown {
  if (typeof v === 'bigint') return normalizeInt(v);
  if (v === null || typeof v !== 'object' || v instanceof PyFloat) return v;
  const hit = memo.get(v);
  if (hit !== undefined) return hit;
  if (v instanceof Map) {
    const out = new PyDict();
    memo.set(v, out);
    for (const [k, x] of v)
      out.set(typeof k === 'string' ? k : pyStr(fromYaml(k, memo)), fromYaml(x, memo));
    return out;
  }
  if (Array.isArray(v)) {
    const out: unknown[] = [];
    memo.set(v, out);
    for (const x of v) out.push(fromYaml(x, memo));
    return out;
  }
  if (v instanceof Set) return fromYaml([...v], memo);
  return v;
}

/**
 * YAML as PyYAML's `safe_load` reads it (YAML 1.1: `yes`/`no` are booleans,
 * `017` is octal). Floats such as `1.0` stay floats; timestamps stay the text
 * they were written as (PyYAML's `date` prints the same for `YYYY-MM-DD`).
 */
function parseYamlValue(source: string): unknown {
  // Integers as bigint (then `number` where safe): PyYAML reads them exactly at any size.
  const doc = parseDocument(source, { version: '1.1', uniqueKeys: false, intAsBigInt: true });
  if (doc.errors.length) throw failure.value(`invalid YAML: ${doc.errors[0]!.message}`);
  visit(doc, {
    Scalar(_key, node) {
      const src = node.source ?? '';
      if (node.value instanceof Date) node.value = src;
      else if (
        typeof node.value === 'number' &&
        Number.isInteger(node.value) &&
        /[.eE]/.test(src)
      ) {
        node.value = new PyFloat(node.value);
      }
    },
  });
  return fromYaml(doc.toJS({ maxAliasCount: 100, mapAsMap: true }) as unknown, new Map());
}

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

/** The filters the original registers on top of Jinja2's. */
export const QONTRACT_FILTERS: Record<string, FilterFn> = Object.assign(
  Object.create(null) as Record<string, FilterFn>,
  Object.fromEntries([
    filter('json_to_dict', [], (_ctx, v) => parseJsonValue(text(v))),
    filter('yaml_to_dict', [], (_ctx, v) => parseYamlValue(text(v))),
    filter(
      'urlescape',
      [
        ['safe', '/'],
        ['encoding', null],
      ],
      (_ctx, v, a) => urlQuote(text(v), text(a.safe), false, a.encoding),
    ),
    filter('urlunescape', [['encoding', null]], (_ctx, v, a) => urlUnquote(text(v), a.encoding)),
    [
      'eval',
      (ctx: FilterContext, v: unknown, args: unknown[], kwargs: Record<string, unknown>) => {
        if (args.length) throw failure.type('eval() takes keyword arguments only');
        return ctx.renderString(text(v), kwargs);
      },
    ],
    filter('extract_jsonpath', ['jsonpath'], (_ctx, v, a) => extractJsonpath(v, a.jsonpath)),
    filter('matches_jsonpath', ['jsonpath'], (_ctx, v, a) => matchesJsonpath(v, a.jsonpath)),
    filter('json_pointers', ['jsonpath'], (_ctx, v, a) => jsonPointers(v, a.jsonpath)),
    filter('str_format', ['format'], (_ctx, v, a) => pyPercentFormat(text(a.format), v)),
  ]),
);
