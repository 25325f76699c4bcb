import { QontractError } from '@qontract/core';
import { JSONPath } from 'jsonpath-plus';

/*
 * JSONPath as the original evaluates namespace selectors: jsonpath-ng with its
 * extended filter syntax (`namespace[?@.app.name="x" & @.cluster.name=~"^a"]`).
 * jsonpath-plus (well kept, already used by @qontract/templating) walks the
 * document; its script engines are replaced by `evaluate`, which
 * implements jsonpath-ng's filter rules and runs no code:
 * - `&` joins conditions (no `|`), parentheses group;
 * - a condition without an operator tests that the path exists (even when
 *   its value is false or empty);
 * - operators `=`/`==`, `!=`, `<`, `<=`, `>`, `>=`, `=~` (regex search on strings);
 * - against an integer or `true`/`false` literal the value is converted as
 *   Python's `int()` would (bools are ints there), values it cannot convert
 *   do not match; strings and floats compare as they are.
 * jsonpath-ng also accepts filters without parentheses (`[?@.a=1]`), which
 * jsonpath-plus does not: `toJsonpathPlus` adds them.
 */

type Literal = string | number | boolean;
interface Path {
  readonly segments: readonly (string | number)[];
}
interface Condition {
  readonly path: Path;
  readonly op?: string;
  readonly value?: Literal;
  readonly integer?: boolean;
}
type Expr = { readonly and: readonly Expr[] } | Condition;

const TOKEN =
  /\s*(?:(_\$_v|@)|([A-Za-z_][A-Za-z0-9_-]*)|'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)"|(-?\d+\.\d+)|(-?\d+)|(=~|==|!=|<=|>=|=|<|>|&|\.|\[|\]|\(|\)))/y;

interface Token {
  readonly kind: 'this' | 'name' | 'string' | 'float' | 'int' | 'op';
  readonly text: string;
}

function tokenize(script: string): Token[] {
  const tokens: Token[] = [];
  let pos = 0;
  while (pos < script.length) {
    if (/^\s*$/.test(script.slice(pos))) break;
    TOKEN.lastIndex = pos;
    const m = TOKEN.exec(script);
    if (!m) throw new Error(`unexpected character at ${pos}`);
    pos = TOKEN.lastIndex;
    if (m[1] !== undefined) tokens.push({ kind: 'this', text: m[1] });
    else if (m[2] !== undefined) tokens.push({ kind: 'name', text: m[2] });
    else if (m[3] !== undefined || m[4] !== undefined)
      tokens.push({ kind: 'string', text: (m[3] ?? m[4] ?? '').replace(/\\(.)/g, '$1') });
    else if (m[5] !== undefined) tokens.push({ kind: 'float', text: m[5] });
    else if (m[6] !== undefined) tokens.push({ kind: 'int', text: m[6] });
    else tokens.push({ kind: 'op', text: m[7] ?? '' });
  }
  return tokens;
}

const COMPARISONS: ReadonlySet<string> = new Set(['=~', '==', '!=', '<=', '>=', '=', '<', '>']);

function parseFilter(script: string): Expr {
  const tokens = tokenize(script);
  let i = 0;
  const peek = (): Token | undefined => tokens[i];
  const isOp = (text: string) => peek()?.kind === 'op' && peek()?.text === text;
  const fail = (): never => {
    throw new Error(`unexpected '${peek()?.text ?? 'end'}'`);
  };

  const path = (): Path => {
    const segments: (string | number)[] = [];
    const first = tokens[i];
    if (first?.kind === 'this') i++;
    else if (first?.kind === 'name') {
      segments.push(first.text);
      i++;
    } else fail();
    for (;;) {
      if (isOp('.')) {
        i++;
        const n = tokens[i++];
        if (n?.kind !== 'name') fail();
        segments.push((n as Token).text);
      } else if (isOp('[')) {
        i++;
        const k = tokens[i++];
        if (k?.kind === 'string') segments.push(k.text);
        else if (k?.kind === 'int') segments.push(Number(k.text));
        else fail();
        if (!isOp(']')) fail();
        i++;
      } else return { segments };
    }
  };

  const condition = (): Condition => {
    const p = path();
    const t = peek();
    if (t?.kind !== 'op' || !COMPARISONS.has(t.text)) return { path: p };
    i++;
    const v = tokens[i++];
    if (!v) return fail();
    switch (v.kind) {
      case 'string':
        return { path: p, op: t.text, value: v.text };
      case 'float':
        return { path: p, op: t.text, value: Number(v.text) };
      case 'int':
        return { path: p, op: t.text, value: Number(v.text), integer: true };
      case 'name':
        if (v.text === 'true' || v.text === 'false')
          return { path: p, op: t.text, value: v.text === 'true', integer: true };
        return { path: p, op: t.text, value: v.text };
      default:
        return fail();
    }
  };

  const primary = (): Expr => {
    if (isOp('(')) {
      i++;
      const e = and();
      if (!isOp(')')) fail();
      i++;
      return e;
    }
    return condition();
  };

  const and = (): Expr => {
    const parts = [primary()];
    while (isOp('&')) {
      i++;
      parts.push(primary());
    }
    return parts.length === 1 ? (parts[0] as Expr) : { and: parts };
  };

  const e = and();
  if (i < tokens.length) fail();
  return e;
}

const MISSING = Symbol('missing');

function lookup(value: unknown, path: Path): unknown {
  let v: unknown = value;
  for (const s of path.segments) {
    if (typeof s === 'number') {
      if (!Array.isArray(v) || s >= v.length || s < -v.length) return MISSING;
      v = v.at(s);
    } else {
      if (v === null || typeof v !== 'object' || Array.isArray(v) || !Object.hasOwn(v, s))
        return MISSING;
      v = (v as Record<string, unknown>)[s];
    }
  }
  return v;
}

/** Python's `int(v)` where it succeeds without raising; `undefined` where it would not. */
function pyInt(v: unknown): number | undefined {
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'number') return Number.isFinite(v) ? Math.trunc(v) : undefined;
  if (typeof v === 'string' && /^\s*[-+]?\d(?:_?\d)*\s*$/.test(v)) {
    return Number(v.replaceAll('_', '').trim());
  }
  return undefined;
}

function compare(op: string, a: unknown, b: Literal): boolean {
  switch (op) {
    case '=':
    case '==':
      return a === b;
    case '!=':
      return a !== b;
    case '=~':
      return typeof a === 'string' && new RegExp(String(b)).test(a);
  }
  // Python orders numbers with numbers and strings with strings only.
  const comparable =
    (typeof a === 'number' && typeof b === 'number') ||
    (typeof a === 'string' && typeof b === 'string');
  if (!comparable) return false;
  const x = a as number | string;
  const y = b as number | string;
  switch (op) {
    case '<':
      return x < y;
    case '<=':
      return x <= y;
    case '>':
      return x > y;
    default:
      return x >= y;
  }
}

function evaluate(e: Expr, value: unknown): boolean {
  if ('and' in e) return e.and.every((p) => evaluate(p, value));
  const found = lookup(value, e.path);
  if (found === MISSING) return false;
  if (e.op === undefined || e.value === undefined) return true;
  let actual: unknown = found;
  let expected: Literal = e.value;
  if (e.integer) {
    actual = pyInt(found);
    if (actual === undefined) return false;
    if (typeof expected === 'boolean') expected = expected ? 1 : 0;
  }
  return compare(e.op, actual, expected);
}

/**
 * jsonpath-ng's `[?expr]` as jsonpath-plus's `[?(expr)]`: every filter gets
 * one pair of parentheses of its own (jsonpath-plus strips exactly one).
 */
export function toJsonpathPlus(expression: string): string {
  let out = '';
  let i = 0;
  while (i < expression.length) {
    if (expression.startsWith('[?', i)) {
      let depth = 0;
      let quote: string | undefined;
      let j = i + 2;
      for (; j < expression.length; j++) {
        const c = expression[j];
        if (quote) {
          if (c === '\\') j++;
          else if (c === quote) quote = undefined;
        } else if (c === '"' || c === "'") quote = c;
        else if (c === '[') depth++;
        else if (c === ']') {
          if (depth === 0) break;
          depth--;
        }
      }
      if (j >= expression.length) throw new Error('unterminated filter');
      out += `[?(${expression.slice(i + 2, j)})]`;
      i = j + 1;
    } else {
      out += expression[i];
      i++;
    }
  }
  return out;
}

/**
 * The values an expression (jsonpath-ng syntax, extended filters) selects in
 * `document`. A bad expression is a QontractError naming it.
 */
export function jsonpathFind(expression: string, document: unknown): unknown[] {
  try {
    const path = toJsonpathPlus(expression);
    // Parse every filter up front: a malformed one must fail even when there
    // is nothing to filter, as the original's parser does. The parsed filters
    // serve this call only (jsonpath-plus asks for one per node it filters);
    // kept across calls they would grow with every selector ever seen.
    const filters = new Map<string, Expr>();
    const filterOf = (script: string): Expr => {
      let e = filters.get(script);
      if (!e) {
        e = parseFilter(script);
        filters.set(script, e);
      }
      return e;
    };
    for (const m of path.matchAll(/\[\?\((.*?)\)\](?!.\])/g)) {
      filterOf((m[1] ?? '').replaceAll(/@([.\s)[])/gu, '_$_v$1'));
    }
    return JSONPath({
      path,
      json: document as object,
      eval: (script: string, context: object) =>
        evaluate(filterOf(script), (context as { _$_v?: unknown })._$_v),
      wrap: true,
      resultType: 'value',
    }) as unknown as unknown[];
  } catch (e) {
    throw new QontractError(
      `invalid JSONPath expression '${expression}': ${e instanceof Error ? e.message : String(e)}`,
    );
  }
}
