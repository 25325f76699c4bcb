import type { CallArgs, CompareOp, Expr, FilterCall, MacroParam, Stmt, Target } from './ast.ts';
import { failure } from './errors.ts';
import type { Token } from './lexer.ts';
import { type PyInt, parseIntText } from './python-int.ts';
import { pyFloat } from './values.ts';

/** Nesting beyond this is refused, so a hostile template cannot overflow the parser's stack. */
const MAX_NESTING = 100;

const COMPARE_OPS: ReadonlySet<string> = new Set(['==', '!=', '<', '<=', '>', '>=']);
const RESERVED_AFTER_TEST: ReadonlySet<string> = new Set(['else', 'or', 'and']);

/**
 * Recursive-descent parser with Jinja2's grammar and operator precedence
 * (condexpr < or < and < not < compare < +,- < ~ < *,/,//,% < ** < unary <
 * postfix/filters/tests).
 */
export class Parser {
  readonly #tokens: Token[];
  #pos = 0;
  #depth = 0;

  constructor(tokens: Token[]) {
    this.#tokens = tokens;
  }

  parseTemplate(): Stmt[] {
    const { body, endTag } = this.#subparse([]);
    if (endTag !== undefined) throw failure.syntax(`Unexpected '${endTag}'`, this.#current.line);
    return body;
  }

  get #current(): Token {
    return this.#tokens[this.#pos] ?? this.#tokens[this.#tokens.length - 1]!;
  }

  #peek(offset = 1): Token {
    return this.#tokens[this.#pos + offset] ?? this.#tokens[this.#tokens.length - 1]!;
  }

  #next(): Token {
    const t = this.#current;
    if (this.#pos < this.#tokens.length - 1) this.#pos++;
    return t;
  }

  #isOp(value: string): boolean {
    return this.#current.type === 'operator' && this.#current.value === value;
  }

  #isName(value?: string): boolean {
    return this.#current.type === 'name' && (value === undefined || this.#current.value === value);
  }

  #skipOp(value: string): boolean {
    if (this.#isOp(value)) {
      this.#next();
      return true;
    }
    return false;
  }

  #skipName(value: string): boolean {
    if (this.#isName(value)) {
      this.#next();
      return true;
    }
    return false;
  }

  #expectOp(value: string): Token {
    if (!this.#isOp(value)) throw this.#unexpected(`'${value}'`);
    return this.#next();
  }

  #expectName(value?: string): Token {
    if (!this.#isName(value)) throw this.#unexpected(value === undefined ? 'a name' : `'${value}'`);
    return this.#next();
  }

  #expect(type: Token['type']): Token {
    if (this.#current.type !== type) throw this.#unexpected(`'${type}'`);
    return this.#next();
  }

  #unexpected(expected: string) {
    const t = this.#current;
    const got = t.type === 'eof' ? 'end of template' : t.value || t.type;
    return failure.syntax(`expected ${expected}, got '${got}'`, t.line);
  }

  #enter(): void {
    if (++this.#depth > MAX_NESTING) {
      throw failure.limit(`template nesting deeper than ${MAX_NESTING} levels`);
    }
  }

  #leave(): void {
    this.#depth--;
  }

  /** Statements up to (not including) a block whose tag name is one of `endTags`. */
  #subparse(endTags: string[]): { body: Stmt[]; endTag: string | undefined } {
    const body: Stmt[] = [];
    for (;;) {
      const t = this.#current;
      if (t.type === 'eof') {
        if (endTags.length) {
          throw failure.syntax(
            `Unexpected end of template. Jinja was looking for the following tags: ${endTags.map((e) => `'${e}'`).join(' or ')}.`,
            t.line,
          );
        }
        return { body, endTag: undefined };
      }
      if (t.type === 'data') {
        this.#next();
        body.push({ kind: 'data', line: t.line, text: t.value });
      } else if (t.type === 'variable_begin') {
        this.#next();
        const expr = this.#parseTuple();
        this.#expect('variable_end');
        body.push({ kind: 'output', line: t.line, expr });
      } else if (t.type === 'block_begin') {
        const tag = this.#peek();
        if (tag.type === 'name' && endTags.includes(tag.value)) {
          this.#next();
          return { body, endTag: tag.value };
        }
        this.#next();
        this.#enter();
        body.push(this.#parseStatement());
        this.#leave();
      } else {
        throw this.#unexpected('template data or a tag');
      }
    }
  }

  /** Consumes `name %}` after `#subparse` stopped at it. */
  #endTag(): void {
    this.#next();
    this.#expect('block_end');
  }

  #parseStatement(): Stmt {
    const tag = this.#current;
    if (tag.type !== 'name') throw failure.syntax('tag name expected', tag.line);
    this.#next();
    const line = tag.line;
    switch (tag.value) {
      case 'if':
        return this.#parseIf(line);
      case 'for':
        return this.#parseFor(line);
      case 'set':
        return this.#parseSet(line);
      case 'macro':
        return this.#parseMacro(line);
      case 'call':
        return this.#parseCallBlock(line);
      case 'filter': {
        const filters = this.#parseFilterChain();
        this.#expect('block_end');
        const { body } = this.#subparse(['endfilter']);
        this.#endTag();
        return { kind: 'filterblock', line, filters, body };
      }
      case 'with':
        return this.#parseWith(line);
      case 'b64encode': {
        this.#expect('block_end');
        const { body } = this.#subparse(['endb64encode']);
        this.#endTag();
        return { kind: 'b64encode', line, body };
      }
      case 'raise_error': {
        const message = this.#parseExpression();
        this.#expect('block_end');
        return { kind: 'raise_error', line, message };
      }
      default:
        // No loader is configured upstream either; include/import/extends/blocks fail there too.
        throw failure.syntax(`Encountered unknown tag '${tag.value}'.`, line);
    }
  }

  #parseIf(line: number): Stmt {
    // As in Jinja2, `{% if a if b else c %}` is a syntax error: the test takes no inline if.
    const test = this.#parseTuple({ withCondexpr: false });
    this.#expect('block_end');
    const { body, endTag } = this.#subparse(['elif', 'else', 'endif']);
    let otherwise: Stmt[] = [];
    if (endTag === 'elif') {
      this.#next();
      const elifLine = this.#current.line;
      otherwise = [this.#parseIf(elifLine)];
      return { kind: 'if', line, test, body, otherwise };
    }
    if (endTag === 'else') {
      this.#endTag();
      otherwise = this.#subparse(['endif']).body;
    }
    this.#endTag();
    return { kind: 'if', line, test, body, otherwise };
  }

  #parseFor(line: number): Stmt {
    const target = this.#parseAssignTarget(['in']);
    this.#expectName('in');
    const iter = this.#parseTuple({ withCondexpr: false, extraEnd: ['recursive'] });
    let filter: Expr | undefined;
    if (this.#skipName('if')) filter = this.#parseExpression();
    const recursive = this.#skipName('recursive');
    this.#expect('block_end');
    const { body, endTag } = this.#subparse(['endfor', 'else']);
    let otherwise: Stmt[] = [];
    if (endTag === 'else') {
      this.#endTag();
      otherwise = this.#subparse(['endfor']).body;
    }
    this.#endTag();
    return {
      kind: 'for',
      line,
      target,
      iter,
      ...(filter ? { filter } : {}),
      recursive,
      body,
      otherwise,
    };
  }

  #parseSet(line: number): Stmt {
    const target = this.#parseAssignTarget([], true);
    if (this.#skipOp('=')) {
      const expr = this.#parseTuple();
      this.#expect('block_end');
      return { kind: 'set', line, target, expr };
    }
    const filters = this.#skipOp('|') ? this.#parseFilterChain() : [];
    this.#expect('block_end');
    const { body } = this.#subparse(['endset']);
    this.#endTag();
    return { kind: 'setblock', line, target, filters, body };
  }

  #parseMacro(line: number): Stmt {
    const name = this.#expectName().value;
    const params = this.#parseSignature();
    this.#expect('block_end');
    const { body } = this.#subparse(['endmacro']);
    this.#endTag();
    return { kind: 'macro', line, name, params, body };
  }

  #parseCallBlock(line: number): Stmt {
    const params = this.#isOp('(') ? this.#parseSignature() : [];
    const call = this.#parseExpression();
    if (call.kind !== 'call') throw failure.syntax('expected call', line);
    this.#expect('block_end');
    const { body } = this.#subparse(['endcall']);
    this.#endTag();
    return { kind: 'callblock', line, call, params, body };
  }

  #parseWith(line: number): Stmt {
    const assignments: [Target, Expr][] = [];
    while (this.#current.type !== 'block_end') {
      if (assignments.length) this.#expectOp(',');
      const target = this.#parseAssignTarget([]);
      this.#expectOp('=');
      assignments.push([target, this.#parseExpression()]);
    }
    this.#expect('block_end');
    const { body } = this.#subparse(['endwith']);
    this.#endTag();
    return { kind: 'with', line, assignments, body };
  }

  #parseSignature(): MacroParam[] {
    const params: MacroParam[] = [];
    this.#expectOp('(');
    while (!this.#isOp(')')) {
      if (params.length) this.#expectOp(',');
      const name = this.#expectName().value;
      if (this.#skipOp('=')) params.push({ name, default: this.#parseExpression() });
      else if (params.some((p) => p.default)) {
        throw failure.syntax('non-default argument follows default argument', this.#current.line);
      } else params.push({ name });
    }
    this.#expectOp(')');
    return params;
  }

  #parseAssignTarget(extraEnd: string[], allowNamespace = false): Target {
    if (allowNamespace && this.#current.type === 'name' && this.#peek().value === '.') {
      const name = this.#next().value;
      this.#next();
      return { kind: 'nsattr', name, attr: this.#expectName().value };
    }
    const items: Target[] = [];
    let isTuple = false;
    for (;;) {
      if (items.length) {
        if (!this.#skipOp(',')) break;
        isTuple = true;
      }
      if (this.#isName() && extraEnd.includes(this.#current.value)) break;
      if (this.#skipOp('(')) {
        items.push(this.#parseAssignTarget(extraEnd));
        this.#expectOp(')');
      } else {
        const name = this.#expectName().value;
        if (['true', 'false', 'none', 'True', 'False', 'None'].includes(name)) {
          throw failure.syntax(`can't assign to '${name}'`, this.#current.line);
        }
        items.push({ kind: 'name', name });
      }
    }
    if (!isTuple && items.length === 1) return items[0]!;
    return { kind: 'tuple', items };
  }

  #parseFilterChain(): FilterCall[] {
    const filters: FilterCall[] = [];
    let first = true;
    while (first || this.#isOp('|')) {
      if (!first) this.#next();
      first = false;
      const t = this.#expectName();
      const args = this.#isOp('(') ? this.#parseCallArgs() : { args: [], kwargs: [] };
      filters.push({ name: t.value, line: t.line, ...args });
    }
    return filters;
  }

  #parseExpression(withCondexpr = true): Expr {
    return withCondexpr ? this.#parseCondexpr() : this.#parseOr();
  }

  #parseTuple(options?: { withCondexpr?: boolean; extraEnd?: string[] }): Expr {
    const line = this.#current.line;
    const withCondexpr = options?.withCondexpr ?? true;
    const items: Expr[] = [];
    let isTuple = false;
    for (;;) {
      if (items.length) {
        if (!this.#skipOp(',')) break;
        isTuple = true;
      }
      if (this.#isTupleEnd(options?.extraEnd ?? [])) break;
      items.push(this.#parseExpression(withCondexpr));
    }
    if (!isTuple) {
      if (items.length === 0) throw this.#unexpected('an expression');
      return items[0]!;
    }
    return { kind: 'tuple', line, items };
  }

  #isTupleEnd(extraEnd: string[]): boolean {
    const t = this.#current;
    if (t.type === 'variable_end' || t.type === 'block_end' || t.type === 'eof') return true;
    if (t.type === 'operator' && (t.value === ')' || t.value === ']' || t.value === '}'))
      return true;
    return t.type === 'name' && extraEnd.includes(t.value);
  }

  #parseCondexpr(): Expr {
    const line = this.#current.line;
    let expr = this.#parseOr();
    while (this.#skipName('if')) {
      const test = this.#parseOr();
      const otherwise = this.#skipName('else') ? this.#parseCondexpr() : undefined;
      expr = {
        kind: 'condexpr',
        line,
        test,
        whenTrue: expr,
        ...(otherwise ? { whenFalse: otherwise } : {}),
      };
    }
    return expr;
  }

  #parseOr(): Expr {
    let left = this.#parseAnd();
    while (this.#isName('or')) {
      const line = this.#next().line;
      left = { kind: 'binary', line, op: 'or', left, right: this.#parseAnd() };
    }
    return left;
  }

  #parseAnd(): Expr {
    let left = this.#parseNot();
    while (this.#isName('and')) {
      const line = this.#next().line;
      left = { kind: 'binary', line, op: 'and', left, right: this.#parseNot() };
    }
    return left;
  }

  #parseNot(): Expr {
    if (this.#isName('not')) {
      const line = this.#next().line;
      this.#enter();
      const node = this.#parseNot();
      this.#leave();
      return { kind: 'unary', line, op: 'not', node };
    }
    return this.#parseCompare();
  }

  #parseCompare(): Expr {
    const line = this.#current.line;
    const left = this.#parseMath1();
    const ops: { op: CompareOp; right: Expr }[] = [];
    for (;;) {
      const t = this.#current;
      if (t.type === 'operator' && COMPARE_OPS.has(t.value)) {
        this.#next();
        ops.push({ op: t.value as CompareOp, right: this.#parseMath1() });
      } else if (this.#isName('in')) {
        this.#next();
        ops.push({ op: 'in', right: this.#parseMath1() });
      } else if (
        this.#isName('not') &&
        this.#peek().type === 'name' &&
        this.#peek().value === 'in'
      ) {
        this.#next();
        this.#next();
        ops.push({ op: 'notin', right: this.#parseMath1() });
      } else break;
    }
    return ops.length ? { kind: 'compare', line, left, ops } : left;
  }

  #parseMath1(): Expr {
    let left = this.#parseConcat();
    while (this.#isOp('+') || this.#isOp('-')) {
      const t = this.#next();
      left = {
        kind: 'binary',
        line: t.line,
        op: t.value as '+' | '-',
        left,
        right: this.#parseConcat(),
      };
    }
    return left;
  }

  #parseConcat(): Expr {
    const line = this.#current.line;
    const items = [this.#parseMath2()];
    while (this.#skipOp('~')) items.push(this.#parseMath2());
    return items.length === 1 ? items[0]! : { kind: 'concat', line, items };
  }

  #parseMath2(): Expr {
    let left = this.#parsePow();
    while (this.#isOp('*') || this.#isOp('/') || this.#isOp('//') || this.#isOp('%')) {
      const t = this.#next();
      left = {
        kind: 'binary',
        line: t.line,
        op: t.value as '*' | '/' | '//' | '%',
        left,
        right: this.#parsePow(),
      };
    }
    return left;
  }

  #parsePow(): Expr {
    let left = this.#parseUnary();
    while (this.#isOp('**')) {
      const t = this.#next();
      const right = this.#parseUnary();
      left = negativeLiteralPower(left, right, t.line);
    }
    return left;
  }

  #parseUnary(withFilter = true): Expr {
    const t = this.#current;
    this.#enter();
    let node: Expr;
    if (this.#isOp('-') || this.#isOp('+')) {
      this.#next();
      node = {
        kind: 'unary',
        line: t.line,
        op: t.value as '-' | '+',
        node: this.#parseUnary(false),
      };
    } else {
      node = this.#parsePrimary();
    }
    node = this.#parsePostfix(node);
    if (withFilter) node = this.#parseFilterExpr(node);
    this.#leave();
    return node;
  }

  #parsePrimary(): Expr {
    const t = this.#current;
    const line = t.line;
    if (t.type === 'name') {
      this.#next();
      if (t.value === 'true' || t.value === 'True') return { kind: 'const', line, value: true };
      if (t.value === 'false' || t.value === 'False') return { kind: 'const', line, value: false };
      if (t.value === 'none' || t.value === 'None') return { kind: 'const', line, value: null };
      return { kind: 'name', line, name: t.value };
    }
    if (t.type === 'string') {
      let value = this.#next().value;
      while (this.#current.type === 'string') value += this.#next().value;
      return { kind: 'const', line, value };
    }
    if (t.type === 'integer') {
      this.#next();
      return { kind: 'const', line, value: parseInteger(t.value) };
    }
    if (t.type === 'float') {
      this.#next();
      return { kind: 'const', line, value: pyFloat(Number(t.value)) };
    }
    if (this.#skipOp('(')) {
      if (this.#skipOp(')')) return { kind: 'tuple', line, items: [] };
      const inner = this.#parseTuple({ withCondexpr: true });
      this.#expectOp(')');
      return inner;
    }
    if (this.#skipOp('[')) {
      const items: Expr[] = [];
      while (!this.#isOp(']')) {
        if (items.length) this.#expectOp(',');
        if (this.#isOp(']')) break;
        items.push(this.#parseExpression());
      }
      this.#expectOp(']');
      return { kind: 'list', line, items };
    }
    if (this.#skipOp('{')) {
      const pairs: [Expr, Expr][] = [];
      while (!this.#isOp('}')) {
        if (pairs.length) this.#expectOp(',');
        if (this.#isOp('}')) break;
        const key = this.#parseExpression();
        this.#expectOp(':');
        pairs.push([key, this.#parseExpression()]);
      }
      this.#expectOp('}');
      return { kind: 'dict', line, pairs };
    }
    throw this.#unexpected('an expression');
  }

  #parsePostfix(start: Expr): Expr {
    let node = start;
    for (;;) {
      const t = this.#current;
      if (this.#isOp('.')) {
        this.#next();
        const attr = this.#current;
        if (attr.type === 'name') {
          this.#next();
          node = { kind: 'getattr', line: t.line, node, attr: attr.value };
        } else if (attr.type === 'integer') {
          this.#next();
          node = {
            kind: 'getitem',
            line: t.line,
            node,
            key: { kind: 'const', line: t.line, value: parseInteger(attr.value) },
          };
        } else throw this.#unexpected('an attribute name');
      } else if (this.#isOp('[')) {
        this.#next();
        node = { kind: 'getitem', line: t.line, node, key: this.#parseSubscript() };
        this.#expectOp(']');
      } else if (this.#isOp('(')) {
        node = { kind: 'call', line: t.line, node, ...this.#parseCallArgs() };
      } else return node;
    }
  }

  #parseSubscript(): Expr {
    const line = this.#current.line;
    const items: Expr[] = [];
    let isTuple = false;
    const one = (): Expr => {
      let start: Expr | undefined;
      if (!this.#isOp(':')) {
        start = this.#parseExpression();
        if (!this.#isOp(':')) return start;
      }
      this.#next();
      const stop =
        this.#isOp(']') || this.#isOp(',') || this.#isOp(':') ? undefined : this.#parseExpression();
      let step: Expr | undefined;
      if (this.#skipOp(':') && !this.#isOp(']') && !this.#isOp(',')) step = this.#parseExpression();
      return {
        kind: 'slice',
        line,
        ...(start ? { start } : {}),
        ...(stop ? { stop } : {}),
        ...(step ? { step } : {}),
      };
    };
    items.push(one());
    while (this.#skipOp(',')) {
      isTuple = true;
      if (this.#isOp(']')) break;
      items.push(one());
    }
    return isTuple ? { kind: 'tuple', line, items } : items[0]!;
  }

  #parseCallArgs(): CallArgs {
    this.#expectOp('(');
    const result: CallArgs = { args: [], kwargs: [] };
    let first = true;
    while (!this.#isOp(')')) {
      if (!first) {
        this.#expectOp(',');
        if (this.#isOp(')')) break;
      }
      first = false;
      if (this.#skipOp('**')) {
        result.starKwargs = this.#parseExpression();
      } else if (this.#skipOp('*')) {
        result.starArgs = this.#parseExpression();
      } else if (
        this.#current.type === 'name' &&
        this.#peek().value === '=' &&
        this.#peek().type === 'operator'
      ) {
        const key = this.#next().value;
        this.#next();
        result.kwargs.push([key, this.#parseExpression()]);
      } else {
        if (result.kwargs.length || result.starKwargs) {
          throw failure.syntax('positional argument follows keyword argument', this.#current.line);
        }
        result.args.push(this.#parseExpression());
      }
    }
    this.#expectOp(')');
    return result;
  }

  #parseFilterExpr(start: Expr): Expr {
    let node = start;
    for (;;) {
      if (this.#isOp('|')) {
        const t = this.#next();
        const name = this.#expectName().value;
        const args = this.#isOp('(') ? this.#parseCallArgs() : { args: [], kwargs: [] };
        node = { kind: 'filter', line: t.line, node, name, ...args };
      } else if (this.#isName('is')) {
        const t = this.#next();
        const negated = this.#skipName('not');
        const name = this.#expectName().value;
        let args: CallArgs = { args: [], kwargs: [] };
        const c = this.#current;
        if (this.#isOp('(')) args = this.#parseCallArgs();
        else if (
          (c.type === 'name' && !RESERVED_AFTER_TEST.has(c.value)) ||
          c.type === 'string' ||
          c.type === 'integer' ||
          c.type === 'float' ||
          this.#isOp('[') ||
          this.#isOp('{')
        ) {
          if (c.type === 'name' && c.value === 'is')
            throw failure.syntax('You cannot chain multiple tests with is', c.line);
          args = { args: [this.#parsePostfix(this.#parsePrimary())], kwargs: [] };
        }
        node = { kind: 'test', line: t.line, node, name, negated, ...args };
      } else if (this.#isOp('(')) {
        node = { kind: 'call', line: this.#current.line, node, ...this.#parseCallArgs() };
      } else return node;
    }
  }
}

function isConstant(e: Expr): boolean {
  if (e.kind === 'const') return true;
  if (e.kind === 'unary') return isConstant(e.node);
  if (e.kind === 'binary') return isConstant(e.left) && isConstant(e.right);
  return false;
}

/**
 * `-1 ** x` as Jinja2 computes it. Jinja2 folds `-1` into a constant and
 * writes it unparenthesised into generated Python, so with a non-constant
 * exponent Python evaluates `-(1 ** x)`; with a constant exponent the whole
 * expression is folded as `(-1) ** x`. Templates rarely meet this, but the
 * result must be the original's.
 */
function negativeLiteralPower(left: Expr, right: Expr, line: number): Expr {
  if (
    left.kind === 'unary' &&
    left.op === '-' &&
    left.node.kind === 'const' &&
    !isConstant(right)
  ) {
    return {
      kind: 'unary',
      line: left.line,
      op: '-',
      node: { kind: 'binary', line, op: '**', left: left.node, right },
    };
  }
  return { kind: 'binary', line, op: '**', left, right };
}

/** An integer literal (underscores already removed), exact at any size. */
function parseInteger(text: string): PyInt {
  const lower = text.toLowerCase();
  const base = lower.startsWith('0b')
    ? 2
    : lower.startsWith('0o')
      ? 8
      : lower.startsWith('0x')
        ? 16
        : 10;
  const value = parseIntText(base === 10 ? lower : lower.slice(2), base);
  if (value === undefined) throw failure.syntax(`invalid integer literal ${text}`);
  return value;
}
