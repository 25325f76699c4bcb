import { Buffer } from 'node:buffer';
import { AttributeHolder, getAttribute, getItem, sliceValue } from './access.ts';
import type { CallArgs, Expr, FilterCall, MacroParam, Stmt, Target } from './ast.ts';
import type { Budget, Environment, FilterContext } from './context.ts';
import { failure, RenderFailure } from './errors.ts';
import { pyPercentFormat } from './python-format.ts';
import {
  intAdd,
  intDivMod,
  intMul,
  intNeg,
  intPow,
  intSub,
  intTrueDiv,
  type PyInt,
} from './python-int.ts';
import {
  BuiltinFunction,
  dictEntries,
  dictSet,
  floatValue,
  intValue,
  isDict,
  isFloat,
  isInt,
  isNumber,
  isTuple,
  Namespace,
  newDict,
  type PyFloat,
  pyCompare,
  pyContains,
  pyEquals,
  pyFloat,
  pyIterate,
  pyStr,
  TemplateCallable,
  toNumber,
  truthy,
  tuple,
  typeName,
  Undefined,
} from './values.ts';

/** Variables visible at one point of the template; lookups walk outwards. */
export class Frame {
  readonly #vars = new Map<string, unknown>();
  readonly parent: Frame | undefined;

  constructor(parent?: Frame) {
    this.parent = parent;
  }

  lookup(name: string): { found: boolean; value: unknown } {
    for (let f: Frame | undefined = this; f; f = f.parent) {
      if (f.#vars.has(name)) return { found: true, value: f.#vars.get(name) };
    }
    return { found: false, value: undefined };
  }

  set(name: string, value: unknown): void {
    this.#vars.set(name, value);
  }
}

/** Collects rendered text and charges it to the render's output budget. */
class Output {
  readonly #parts: string[] = [];
  readonly #budget: Budget;
  constructor(budget: Budget) {
    this.#budget = budget;
  }
  write(text: string): void {
    if (!text) return;
    this.#budget.chargeOutput(text.length);
    this.#parts.push(text);
  }
  toString(): string {
    return this.#parts.join('');
  }
}

/** The `loop` variable of a `for` block. */
class LoopContext extends AttributeHolder {
  readonly name = 'loop';
  readonly #items: unknown[];
  readonly #depth0: number;
  /** Renders the loop again over other items (`loop(children)` in a `recursive` loop). */
  readonly #recurse: ((items: unknown) => Promise<string>) | undefined;
  index0 = 0;
  #lastChanged: unknown[] | undefined;

  constructor(items: unknown[], depth0: number, recurse?: (items: unknown) => Promise<string>) {
    super();
    this.#items = items;
    this.#depth0 = depth0;
    this.#recurse = recurse;
  }

  call(args: unknown[]): Promise<string> {
    if (!this.#recurse) {
      throw failure.type("The loop must have the 'recursive' marker to be called recursively.");
    }
    if (args.length !== 1)
      throw failure.type(`loop() takes exactly one argument (${args.length} given)`);
    return this.#recurse(args[0]);
  }

  attribute(name: string): { found: boolean; value: unknown } {
    const length = this.#items.length;
    const i = this.index0;
    const values: Record<string, () => unknown> = {
      index: () => i + 1,
      index0: () => i,
      revindex: () => length - i,
      revindex0: () => length - i - 1,
      first: () => i === 0,
      last: () => i === length - 1,
      length: () => length,
      depth: () => this.#depth0 + 1,
      depth0: () => this.#depth0,
      previtem: () =>
        i > 0 ? this.#items[i - 1] : new Undefined('there is no previous item', true),
      nextitem: () =>
        i < length - 1 ? this.#items[i + 1] : new Undefined('there is no next item', true),
      cycle: () =>
        new BuiltinFunction('cycle', (args) => {
          if (args.length === 0) throw failure.type('no items for cycling given');
          return args[i % args.length];
        }),
      changed: () =>
        new BuiltinFunction('changed', (args) => {
          if (this.#lastChanged !== undefined && pyEquals(tuple(this.#lastChanged), tuple(args)))
            return false;
          this.#lastChanged = args;
          return true;
        }),
    };
    const get = Object.hasOwn(values, name) ? values[name] : undefined;
    return get ? { found: true, value: get() } : { found: false, value: undefined };
  }
}

/** Whether a syntax tree reads the variable `name` anywhere. */
function referencesName(node: unknown, name: string): boolean {
  if (Array.isArray(node)) return node.some((n) => referencesName(n, name));
  if (node === null || typeof node !== 'object') return false;
  const n = node as { kind?: string; name?: string };
  if (n.kind === 'name' && n.name === name) return true;
  return Object.values(node).some((v) => referencesName(v, name));
}

/** A `{% macro %}` (or the body of a `{% call %}` block, as `caller`). */
class Macro extends TemplateCallable {
  readonly name: string;
  readonly #params: MacroParam[];
  readonly #body: Stmt[];
  readonly #closure: Frame;
  readonly #evaluator: Evaluator;
  /** Jinja2 accepts extra arguments only when the body uses `varargs` / `kwargs`. */
  readonly #catchVarargs: boolean;
  readonly #catchKwargs: boolean;

  constructor(
    name: string,
    params: MacroParam[],
    body: Stmt[],
    closure: Frame,
    evaluator: Evaluator,
  ) {
    super();
    this.name = name;
    this.#params = params;
    this.#body = body;
    this.#closure = closure;
    this.#evaluator = evaluator;
    this.#catchVarargs = referencesName(body, 'varargs');
    this.#catchKwargs = referencesName(body, 'kwargs');
  }

  call(args: unknown[], kwargs: Record<string, unknown>, caller?: Macro): Promise<unknown> {
    const ev = this.#evaluator;
    return ev.budget.nested(async () => {
      const frame = new Frame(this.#closure);
      if (args.length > this.#params.length && !this.#catchVarargs) {
        throw failure.type(
          `macro '${this.name}' takes not more than ${this.#params.length} argument(s)`,
        );
      }
      const extraKwargs = newDict();
      const given = new Set<string>();
      this.#params.forEach((p, i) => {
        if (i < args.length) {
          frame.set(p.name, args[i]);
          given.add(p.name);
        }
      });
      for (const [k, v] of Object.entries(kwargs)) {
        if (this.#params.some((p) => p.name === k)) {
          if (given.has(k))
            throw failure.type(`macro '${this.name}' got multiple values for argument '${k}'`);
          frame.set(k, v);
          given.add(k);
        } else if (this.#catchKwargs) dictSet(extraKwargs, k, v);
        else throw failure.type(`macro '${this.name}' takes no keyword argument '${k}'`);
      }
      for (const p of this.#params) {
        if (given.has(p.name)) continue;
        if (p.default) frame.set(p.name, await ev.evalExpr(p.default, frame));
        else frame.set(p.name, new Undefined(`parameter '${p.name}' was not provided`, ev.strict));
      }
      frame.set('varargs', tuple(args.slice(this.#params.length)));
      frame.set('kwargs', extraKwargs);
      if (caller) frame.set('caller', caller);
      const out = new Output(ev.budget);
      await ev.execBody(this.#body, frame, out);
      return out.toString();
    });
  }
}

/**
 * Walks the syntax tree and renders it. Asynchronous so that helpers (Vault,
 * GitHub, GraphQL, HTTP, S3) can be awaited where the template calls them.
 * It never compiles code: values are read only through `access.ts`, and only
 * engine-made `TemplateCallable`s can be called.
 */
export class Evaluator implements FilterContext {
  readonly env: Environment;
  readonly strict: boolean;
  readonly budget: Budget;
  readonly #renderString: (body: string, variables: Record<string, unknown>) => Promise<string>;

  constructor(options: {
    env: Environment;
    strict: boolean;
    budget: Budget;
    renderString: (body: string, variables: Record<string, unknown>) => Promise<string>;
  }) {
    this.env = options.env;
    this.strict = options.strict;
    this.budget = options.budget;
    this.#renderString = options.renderString;
  }

  async render(body: Stmt[], frame: Frame): Promise<string> {
    const out = new Output(this.budget);
    await this.execBody(body, frame, out);
    return out.toString();
  }

  renderString(body: string, variables: Record<string, unknown>): Promise<string> {
    return this.#renderString(body, variables);
  }

  hasFilter(name: string): boolean {
    return Object.hasOwn(this.env.filters, name);
  }

  hasTest(name: string): boolean {
    return Object.hasOwn(this.env.tests, name);
  }

  getAttribute(obj: unknown, name: string): unknown {
    return getAttribute(obj, name, this.strict);
  }

  async callFilter(
    name: string,
    value: unknown,
    args: unknown[],
    kwargs: Record<string, unknown>,
  ): Promise<unknown> {
    const filter = Object.hasOwn(this.env.filters, name) ? this.env.filters[name] : undefined;
    if (!filter) throw failure.runtime(`No filter named '${name}' found.`);
    return await filter(this, value, args, kwargs);
  }

  async callTest(
    name: string,
    value: unknown,
    args: unknown[],
    kwargs: Record<string, unknown>,
  ): Promise<boolean> {
    const test = Object.hasOwn(this.env.tests, name) ? this.env.tests[name] : undefined;
    if (!test) throw failure.runtime(`No test named '${name}' found.`);
    return await test(this, value, args, kwargs);
  }

  async execBody(body: Stmt[], frame: Frame, out: Output): Promise<void> {
    for (const stmt of body) {
      this.budget.checkTime();
      try {
        await this.#exec(stmt, frame, out);
      } catch (e) {
        throw withLine(e, stmt.line);
      }
    }
  }

  async #exec(stmt: Stmt, frame: Frame, out: Output): Promise<void> {
    switch (stmt.kind) {
      case 'data':
        out.write(stmt.text);
        return;
      case 'output':
        out.write(pyStr(await this.evalExpr(stmt.expr, frame)));
        return;
      case 'if':
        if (truthy(await this.evalExpr(stmt.test, frame)))
          await this.execBody(stmt.body, frame, out);
        else await this.execBody(stmt.otherwise, frame, out);
        return;
      case 'for':
        await this.#execFor(stmt, frame, out);
        return;
      case 'set':
        this.#assign(stmt.target, await this.evalExpr(stmt.expr, frame), frame);
        return;
      case 'setblock': {
        const inner = new Output(this.budget);
        await this.execBody(stmt.body, frame, inner);
        let value: unknown = inner.toString();
        value = await this.#applyFilters(stmt.filters, value, frame);
        this.#assign(stmt.target, value, frame);
        return;
      }
      case 'macro':
        frame.set(stmt.name, new Macro(stmt.name, stmt.params, stmt.body, frame, this));
        return;
      case 'callblock': {
        const call = stmt.call;
        if (call.kind !== 'call') throw failure.syntax('expected call');
        const callee = await this.evalExpr(call.node, frame);
        if (!(callee instanceof Macro))
          throw failure.type(`'${typeName(callee)}' object is not a macro`);
        const { args, kwargs } = await this.#evalArgs(call, frame);
        const caller = new Macro('caller', stmt.params, stmt.body, frame, this);
        out.write(pyStr(await callee.call(args, kwargs, caller)));
        return;
      }
      case 'filterblock': {
        const inner = new Output(this.budget);
        await this.execBody(stmt.body, frame, inner);
        out.write(pyStr(await this.#applyFilters(stmt.filters, inner.toString(), frame)));
        return;
      }
      case 'with': {
        const inner = new Frame(frame);
        for (const [target, expr] of stmt.assignments)
          this.#assign(target, await this.evalExpr(expr, frame), inner);
        await this.execBody(stmt.body, inner, out);
        return;
      }
      case 'b64encode': {
        const inner = new Output(this.budget);
        await this.execBody(stmt.body, frame, inner);
        out.write(Buffer.from(dedent(inner.toString()), 'utf8').toString('base64'));
        return;
      }
      case 'raise_error':
        throw failure.runtime(pyStr(await this.evalExpr(stmt.message, frame)));
    }
  }

  async #execFor(stmt: Extract<Stmt, { kind: 'for' }>, frame: Frame, out: Output): Promise<void> {
    await this.#runLoop(stmt, frame, await this.evalExpr(stmt.iter, frame), 0, out);
  }

  async #runLoop(
    stmt: Extract<Stmt, { kind: 'for' }>,
    frame: Frame,
    iterable: unknown,
    depth0: number,
    out: Output,
  ): Promise<void> {
    let items = [...pyIterate(iterable)];
    if (stmt.filter) {
      const kept: unknown[] = [];
      for (const item of items) {
        this.budget.chargeIteration();
        const probe = new Frame(frame);
        this.#assign(stmt.target, item, probe);
        if (truthy(await this.evalExpr(stmt.filter, probe))) kept.push(item);
      }
      items = kept;
    }
    if (items.length === 0) {
      await this.execBody(stmt.otherwise, frame, out);
      return;
    }
    const recurse = stmt.recursive
      ? (children: unknown) =>
          this.budget.nested(async () => {
            const inner = new Output(this.budget);
            await this.#runLoop(stmt, frame, children, depth0 + 1, inner);
            return inner.toString();
          })
      : undefined;
    const loop = new LoopContext(items, depth0, recurse);
    for (let i = 0; i < items.length; i++) {
      this.budget.chargeIteration();
      loop.index0 = i;
      const inner = new Frame(frame);
      inner.set('loop', loop);
      this.#assign(stmt.target, items[i], inner);
      await this.execBody(stmt.body, inner, out);
    }
  }

  #assign(target: Target, value: unknown, frame: Frame): void {
    if (target.kind === 'name') {
      frame.set(target.name, value);
      return;
    }
    if (target.kind === 'nsattr') {
      const ns = frame.lookup(target.name).value;
      if (!(ns instanceof Namespace))
        throw failure.runtime('cannot assign attribute on non-namespace object');
      dictSet(ns.attrs, target.attr, value);
      return;
    }
    const items = pyIterate(value);
    if (items.length !== target.items.length) {
      throw failure.value(
        items.length > target.items.length
          ? `too many values to unpack (expected ${target.items.length})`
          : `not enough values to unpack (expected ${target.items.length}, got ${items.length})`,
      );
    }
    target.items.forEach((t, i) => {
      this.#assign(t, items[i], frame);
    });
  }

  async #applyFilters(filters: FilterCall[], start: unknown, frame: Frame): Promise<unknown> {
    let value = start;
    for (const f of filters) {
      const { args, kwargs } = await this.#evalArgs(f, frame);
      value = await this.callFilter(f.name, value, args, kwargs);
    }
    return value;
  }

  async #evalArgs(
    call: CallArgs,
    frame: Frame,
  ): Promise<{ args: unknown[]; kwargs: Record<string, unknown> }> {
    const args: unknown[] = [];
    for (const a of call.args) args.push(await this.evalExpr(a, frame));
    const kwargs: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
    for (const [k, e] of call.kwargs) kwargs[k] = await this.evalExpr(e, frame);
    if (call.starArgs) args.push(...pyIterate(await this.evalExpr(call.starArgs, frame)));
    if (call.starKwargs) {
      const extra = await this.evalExpr(call.starKwargs, frame);
      if (!isDict(extra))
        throw failure.type(`argument after ** must be a mapping, not ${typeName(extra)}`);
      for (const [k, v] of dictEntries(extra)) kwargs[k] = v;
    }
    return { args, kwargs };
  }

  async evalExpr(expr: Expr, frame: Frame): Promise<unknown> {
    try {
      return await this.#eval(expr, frame);
    } catch (e) {
      throw withLine(e, expr.line);
    }
  }

  async #eval(expr: Expr, frame: Frame): Promise<unknown> {
    switch (expr.kind) {
      case 'const':
        return expr.value;
      case 'name': {
        const hit = frame.lookup(expr.name);
        return hit.found ? hit.value : new Undefined(`'${expr.name}' is undefined`, this.strict);
      }
      case 'tuple': {
        const items: unknown[] = [];
        for (const e of expr.items) items.push(await this.evalExpr(e, frame));
        return tuple(items);
      }
      case 'list': {
        const items: unknown[] = [];
        for (const e of expr.items) items.push(await this.evalExpr(e, frame));
        return items;
      }
      case 'dict': {
        const d = newDict();
        for (const [k, v] of expr.pairs) {
          const key = await this.evalExpr(k, frame);
          if (key instanceof Undefined) key.fail();
          dictSet(d, pyStr(key), await this.evalExpr(v, frame));
        }
        return d;
      }
      case 'getattr':
        return getAttribute(await this.evalExpr(expr.node, frame), expr.attr, this.strict);
      case 'getitem': {
        const obj = await this.evalExpr(expr.node, frame);
        if (expr.key.kind === 'slice') {
          const s = expr.key;
          return sliceValue(obj, {
            start: s.start ? await this.evalExpr(s.start, frame) : null,
            stop: s.stop ? await this.evalExpr(s.stop, frame) : null,
            step: s.step ? await this.evalExpr(s.step, frame) : null,
          });
        }
        return getItem(obj, await this.evalExpr(expr.key, frame), this.strict);
      }
      case 'slice':
        throw failure.syntax('slice outside a subscript');
      case 'call': {
        const callee = await this.evalExpr(expr.node, frame);
        const { args, kwargs } = await this.#evalArgs(expr, frame);
        if (callee instanceof Undefined) callee.fail();
        if (!(callee instanceof TemplateCallable))
          throw failure.type(`'${typeName(callee)}' object is not callable`);
        return await callee.call(args, kwargs);
      }
      case 'filter': {
        const value = await this.evalExpr(expr.node, frame);
        const { args, kwargs } = await this.#evalArgs(expr, frame);
        return await this.callFilter(expr.name, value, args, kwargs);
      }
      case 'test': {
        const value = await this.evalExpr(expr.node, frame);
        const { args, kwargs } = await this.#evalArgs(expr, frame);
        const result = await this.callTest(expr.name, value, args, kwargs);
        return expr.negated ? !result : result;
      }
      case 'unary': {
        const value = await this.evalExpr(expr.node, frame);
        if (expr.op === 'not') return !truthy(value);
        if (value instanceof Undefined) value.fail();
        if (!isNumber(value) && typeof value !== 'boolean') {
          throw failure.type(`bad operand type for unary ${expr.op}: '${typeName(value)}'`);
        }
        if (isFloat(value)) {
          const n = toNumber(value);
          return pyFloat(expr.op === '-' ? -n : n);
        }
        const n = intValue(value as PyInt | boolean);
        return expr.op === '-' ? intNeg(n) : n;
      }
      case 'binary': {
        if (expr.op === 'and' || expr.op === 'or') {
          const left = await this.evalExpr(expr.left, frame);
          const l = truthy(left);
          if (expr.op === 'and' ? !l : l) return left;
          return await this.evalExpr(expr.right, frame);
        }
        const left = await this.evalExpr(expr.left, frame);
        const right = await this.evalExpr(expr.right, frame);
        return binaryOp(expr.op, left, right, this.budget);
      }
      case 'compare': {
        let left = await this.evalExpr(expr.left, frame);
        for (const { op, right: rightExpr } of expr.ops) {
          const right = await this.evalExpr(rightExpr, frame);
          if (!compare(op, left, right)) return false;
          left = right;
        }
        return true;
      }
      case 'condexpr':
        if (truthy(await this.evalExpr(expr.test, frame)))
          return await this.evalExpr(expr.whenTrue, frame);
        if (expr.whenFalse) return await this.evalExpr(expr.whenFalse, frame);
        return new Undefined(
          `the inline if-expression on line ${expr.line} evaluated to false and no else section was defined.`,
          // Jinja2 uses its lenient Undefined here even with StrictUndefined configured.
          false,
        );
      case 'concat': {
        let text = '';
        for (const e of expr.items) text += pyStr(await this.evalExpr(e, frame));
        this.budget.checkStringLength(text.length);
        return text;
      }
    }
  }
}

function withLine(e: unknown, line: number): RenderFailure {
  if (e instanceof RenderFailure) {
    if (e.line === undefined) e.line = line;
    return e;
  }
  if (e instanceof RangeError && /call stack/i.test(e.message)) {
    return new RenderFailure('LimitExceeded', 'template nesting too deep', line);
  }
  const message = e instanceof Error ? e.message : String(e);
  const kind = e instanceof Error && e.name && e.name !== 'Error' ? e.name : 'Error';
  return new RenderFailure(kind, message, line);
}

function compare(op: string, a: unknown, b: unknown): boolean {
  switch (op) {
    case '==':
      return pyEquals(a, b);
    case '!=':
      return !pyEquals(a, b);
    case '<':
      return pyCompare(a, b, op) < 0;
    case '<=':
      return pyCompare(a, b, op) <= 0;
    case '>':
      return pyCompare(a, b, op) > 0;
    case '>=':
      return pyCompare(a, b, op) >= 0;
    case 'in':
      return pyContains(b, a);
    case 'notin':
      return !pyContains(b, a);
    default:
      throw failure.syntax(`unknown operator ${op}`);
  }
}

function operandError(op: string, a: unknown, b: unknown): RenderFailure {
  if (op === '+' && typeof a === 'string') {
    return failure.type(`can only concatenate str (not "${typeName(b)}") to str`);
  }
  if (op === '+' && Array.isArray(a) && !isTuple(a)) {
    return failure.type(`can only concatenate list (not "${typeName(b)}") to list`);
  }
  return failure.type(
    `unsupported operand type(s) for ${op}: '${typeName(a)}' and '${typeName(b)}'`,
  );
}

/** How often `seq * n` repeats: Python refuses counts beyond a machine index (2^63). */
function repeatCount(n: PyInt): number {
  if (typeof n === 'bigint' && (n >= 2n ** 63n || n < -(2n ** 63n))) {
    throw new RenderFailure('OverflowError', "cannot fit 'int' into an index-sized integer");
  }
  return Math.max(0, Number(n));
}

function repeat<T>(seq: T[], times: number, budget: Budget): T[] {
  budget.checkLength(seq.length * Math.max(0, times), 'list');
  const out: T[] = [];
  for (let i = 0; i < times; i++) out.push(...seq);
  return out;
}

/** Python arithmetic on template values, including the int/float result types. */
export function binaryOp(op: string, a: unknown, b: unknown, budget: Budget): unknown {
  if (a instanceof Undefined) a.fail();
  if (b instanceof Undefined) b.fail();
  const numeric = (v: unknown) => isNumber(v) || typeof v === 'boolean';
  if (numeric(a) && numeric(b)) {
    if (isFloat(a) || isFloat(b)) {
      const r = floatOp(op, floatValue(a), floatValue(b));
      if (r !== undefined) return pyFloat(r);
    } else {
      const r = intOp(op, intValue(a as PyInt | boolean), intValue(b as PyInt | boolean));
      if (r !== undefined) return r;
    }
  }
  if (op === '+') {
    if (typeof a === 'string' && typeof b === 'string') {
      budget.checkStringLength(a.length + b.length);
      return a + b;
    }
    if (Array.isArray(a) && Array.isArray(b) && isTuple(a) === isTuple(b)) {
      budget.checkLength(a.length + b.length, 'list');
      return isTuple(a) ? tuple([...a, ...b]) : [...a, ...b];
    }
  }
  if (op === '*') {
    const intLike = (v: unknown): v is PyInt | boolean => isInt(v) || typeof v === 'boolean';
    const [seq, count] = intLike(b) ? [a, b] : intLike(a) ? [b, a] : [undefined, undefined];
    if (count !== undefined && (typeof seq === 'string' || Array.isArray(seq))) {
      const times = repeatCount(intValue(count));
      if (typeof seq === 'string') {
        budget.checkStringLength(seq.length * times);
        return seq.repeat(times);
      }
      if (Array.isArray(seq)) {
        const out = repeat(seq, times, budget);
        return isTuple(seq) ? tuple(out) : out;
      }
    }
  }
  if (op === '%' && typeof a === 'string') return pyPercentFormat(a, b);
  throw operandError(op, a, b);
}

/** Python arithmetic on two ints (bools already 1/0): exact, `/` and negative `**` give floats. */
function intOp(op: string, x: PyInt, y: PyInt): PyInt | PyFloat | number | undefined {
  switch (op) {
    case '+':
      return intAdd(x, y);
    case '-':
      return intSub(x, y);
    case '*':
      return intMul(x, y);
    case '/':
      return pyFloat(intTrueDiv(x, y));
    case '//':
      return intDivMod(x, y)[0];
    case '%':
      if (y === 0) throw new RenderFailure('ZeroDivisionError', 'integer modulo by zero');
      return intDivMod(x, y)[1];
    case '**': {
      if (y >= 0) return intPow(x, y);
      // Python computes a negative power of ints in floats.
      const r = floatOp('**', floatValue(x), floatValue(y));
      return r === undefined ? undefined : pyFloat(r);
    }
  }
  return undefined;
}

/** Python arithmetic on two floats (an int operand already converted, as Python converts it). */
function floatOp(op: string, x: number, y: number): number | undefined {
  switch (op) {
    case '+':
      return x + y;
    case '-':
      return x - y;
    case '*':
      return x * y;
    case '/':
      if (y === 0) throw new RenderFailure('ZeroDivisionError', 'float division by zero');
      return x / y;
    case '//':
      if (y === 0) throw new RenderFailure('ZeroDivisionError', 'float floor division by zero');
      return pyFloorDiv(x, y);
    case '%':
      if (y === 0) throw new RenderFailure('ZeroDivisionError', 'float modulo');
      return pyMod(x, y);
    case '**': {
      if (x === 0 && y < 0) {
        throw new RenderFailure('ZeroDivisionError', '0.0 cannot be raised to a negative power');
      }
      const r = x ** y;
      if (Number.isNaN(r) && !Number.isNaN(x) && !Number.isNaN(y)) {
        throw failure.value('complex results are not supported');
      }
      if (!Number.isFinite(r) && Number.isFinite(x) && Number.isFinite(y)) {
        throw new RenderFailure('OverflowError', "(34, 'Numerical result out of range')");
      }
      return r;
    }
  }
  return undefined;
}

/** Python's `%` on floats: fmod, moved to the divisor's sign (a zero takes the divisor's sign). */
function pyMod(x: number, y: number): number {
  let m = x % y;
  if (m !== 0 && y < 0 !== m < 0) m += y;
  if (m === 0) return y < 0 ? -0 : 0;
  return m;
}

/** Python's `//` on floats, consistent with `pyMod` (Python's `float_floor_div`). */
function pyFloorDiv(x: number, y: number): number {
  const mod = x % y;
  let div = (x - mod) / y;
  if (mod !== 0 && y < 0 !== mod < 0) div -= 1;
  // Python keeps the sign of a zero quotient (`0 // -3.25` is `-0.0`).
  if (div === 0) return x / y < 0 || Object.is(x / y, -0) ? -0 : 0;
  const floor = Math.floor(div);
  return div - floor > 0.5 ? floor + 1 : floor;
}

/** Python's `textwrap.dedent`: removes the common leading whitespace of all non-blank lines. */
function dedent(text: string): string {
  const lines = text.split('\n');
  let margin: string | undefined;
  for (const line of lines) {
    if (line.trim() === '') continue;
    const indent = /^[ \t]*/.exec(line)![0];
    if (margin === undefined) margin = indent;
    else {
      let i = 0;
      while (i < margin.length && i < indent.length && margin[i] === indent[i]) i++;
      margin = margin.slice(0, i);
    }
  }
  return lines
    .map((line) =>
      line.trim() === '' ? line.replace(/^[ \t]+$/, '') : line.slice(margin?.length ?? 0),
    )
    .join('\n');
}
