import { failure } from './errors.ts';
import { parseIntText } from './python-int.ts';
import { dictGet, isDict, pyCompare, pyEquals } from './values.ts';

type Token = { kind: 'name' | 'string' | 'number' | 'op'; text: string };

const TOKEN_RE =
  /\s*(?:(_\$_[A-Za-z]+|[A-Za-z_][A-Za-z0-9_]*)|'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)"|(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)|(===|!==|==|!=|<=|>=|&&|\|\||[<>!&.[\]()]))/y;

function tokenize(script: string): Token[] {
  const tokens: Token[] = [];
  let pos = 0;
  while (pos < script.length) {
    if (/^\s*$/.test(script.slice(pos))) break;
    TOKEN_RE.lastIndex = pos;
    const m = TOKEN_RE.exec(script);
    if (!m) throw failure.value(`unsupported JSONPath filter expression: ${script}`);
    pos = TOKEN_RE.lastIndex;
    if (m[1] !== undefined) tokens.push({ kind: 'name', text: m[1] });
    else if (m[2] !== undefined || m[3] !== undefined) {
      tokens.push({ kind: 'string', text: (m[2] ?? m[3] ?? '').replace(/\\(.)/g, '$1') });
    } else if (m[4] !== undefined) tokens.push({ kind: 'number', text: m[4] });
    else tokens.push({ kind: 'op', text: m[5]! });
  }
  return tokens;
}

const MISSING = Symbol('missing');
const ROOTS: Record<string, string> = {
  _$_v: '_$_v',
  _$_root: '_$_root',
  _$_parent: '_$_parent',
  _$_property: '_$_property',
};

/**
 * Evaluates a JSONPath filter (`[?(@.kind == 'x' && @.n > 1)]`) without any
 * JavaScript: comparisons, `&&`/`&`, `||`, `!`, parentheses, literals and
 * `@`-paths over plain data. Used as jsonpath-plus's `eval` callback in place
 * of its script engines, so a template author's path can never run code.
 * A bare path tests existence, as jsonpath-ng's filters do.
 */
export function evaluateJsonpathFilter(script: string, context: Record<string, unknown>): boolean {
  const tokens = tokenize(script);
  let i = 0;
  const peek = () => tokens[i];
  const isOp = (text: string) => peek()?.kind === 'op' && peek()?.text === text;
  const unsupported = () => failure.value(`unsupported JSONPath filter expression: ${script}`);

  const operand = (): { value: unknown; path: boolean } => {
    const t = tokens[i++];
    if (!t) throw unsupported();
    if (t.kind === 'string') return { value: t.text, path: false };
    if (t.kind === 'number') {
      // jsonpath-ng reads integer literals as Python ints: exact at any size.
      const exact = /^-?\d+$/.test(t.text) ? parseIntText(t.text, 10) : undefined;
      return { value: exact ?? Number(t.text), path: false };
    }
    if (t.kind === 'op' && t.text === '(') {
      const value = or();
      if (!isOp(')')) throw unsupported();
      i++;
      return { value, path: false };
    }
    if (t.kind !== 'name') throw unsupported();
    if (t.text === 'true' || t.text === 'false') return { value: t.text === 'true', path: false };
    if (t.text === 'null') return { value: null, path: false };
    if (!Object.hasOwn(ROOTS, t.text)) throw unsupported();
    let value: unknown = context[t.text];
    for (;;) {
      let key: string | number;
      if (isOp('.')) {
        i++;
        const n = tokens[i++];
        if (n?.kind !== 'name') throw unsupported();
        key = n.text;
      } else if (isOp('[')) {
        i++;
        const k = tokens[i++];
        if (k?.kind === 'string') key = k.text;
        else if (k?.kind === 'number' && Number.isInteger(Number(k.text))) key = Number(k.text);
        else throw unsupported();
        if (!isOp(']')) throw unsupported();
        i++;
      } else break;
      if (Array.isArray(value) && typeof key === 'number') {
        value = key >= 0 && key < value.length ? value[key] : MISSING;
      } else if (isDict(value)) {
        const hit = dictGet(value, String(key));
        value = hit.found ? hit.value : MISSING;
      } else value = MISSING;
    }
    return { value, path: true };
  };

  const comparison = (): unknown => {
    const left = operand();
    const t = peek();
    if (t?.kind === 'op' && ['==', '===', '!=', '!==', '<', '<=', '>', '>='].includes(t.text)) {
      i++;
      const right = operand();
      if (left.value === MISSING || right.value === MISSING) return false;
      if (t.text === '==' || t.text === '===') return pyEquals(left.value, right.value);
      if (t.text === '!=' || t.text === '!==') return !pyEquals(left.value, right.value);
      let order: number;
      try {
        order = pyCompare(left.value, right.value);
      } catch {
        return false;
      }
      return t.text === '<'
        ? order < 0
        : t.text === '<='
          ? order <= 0
          : t.text === '>'
            ? order > 0
            : order >= 0;
    }
    return left.path ? left.value !== MISSING : Boolean(left.value);
  };

  const not = (): unknown => {
    if (isOp('!')) {
      i++;
      return !not();
    }
    return comparison();
  };

  const and = (): unknown => {
    let result = not();
    while (isOp('&&') || isOp('&')) {
      i++;
      const right = not();
      result = Boolean(result) && Boolean(right);
    }
    return result;
  };

  function or(): unknown {
    let result = and();
    while (isOp('||')) {
      i++;
      const right = and();
      result = Boolean(result) || Boolean(right);
    }
    return result;
  }

  const result = or();
  if (i !== tokens.length) throw unsupported();
  return Boolean(result);
}
