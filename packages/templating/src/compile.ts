import type { Stmt } from './ast.ts';
import type { Environment } from './context.ts';
import { failure } from './errors.ts';
import { DEFAULT_WHITESPACE, type Delimiters, tokenize, type WhitespaceOptions } from './lexer.ts';
import { Parser } from './parser.ts';

/**
 * Filter and test names are checked when compiling, as Jinja2 does, except
 * inside `if` branches and inline ifs, where Jinja2 defers the check to the
 * moment the branch runs (so `{% if 'x' is filter %}` guards work).
 */
function checkNames(node: unknown, env: Environment): void {
  const n0 = node as { kind?: string } | null;
  if (n0 && typeof n0 === 'object' && (n0.kind === 'if' || n0.kind === 'condexpr')) {
    checkNames((node as { test: unknown }).test, env);
    return;
  }
  if (Array.isArray(node)) {
    for (const n of node) checkNames(n, env);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  const n = node as { kind?: string; name?: string; line?: number; filters?: unknown };
  if (n.kind === 'filter' && !Object.hasOwn(env.filters, n.name!)) {
    throw failure.assertion(`No filter named '${n.name}'.`, n.line);
  }
  if (n.kind === 'test' && !Object.hasOwn(env.tests, n.name!)) {
    throw failure.assertion(`No test named '${n.name}'.`, n.line);
  }
  if ((n.kind === 'filterblock' || n.kind === 'setblock') && Array.isArray(n.filters)) {
    for (const f of n.filters as { name: string; line: number }[]) {
      if (!Object.hasOwn(env.filters, f.name))
        throw failure.assertion(`No filter named '${f.name}'.`, f.line);
    }
  }
  for (const value of Object.values(node)) checkNames(value, env);
}

/** Compiled templates by (flavour, body); bounded so hostile input cannot grow it forever. */
export class CompileCache {
  readonly #entries = new Map<string, Stmt[]>();
  readonly #maxEntries: number;

  constructor(maxEntries = 2000) {
    this.#maxEntries = maxEntries;
  }

  compile(
    body: string,
    flavour: string,
    delimiters: Delimiters,
    env: Environment,
    whitespace: WhitespaceOptions = DEFAULT_WHITESPACE,
  ): Stmt[] {
    const key = `${flavour}\u0000${whitespace.trimBlocks}${whitespace.lstripBlocks}${whitespace.keepTrailingNewline}\u0000${body}`;
    const hit = this.#entries.get(key);
    if (hit) return hit;
    const tree = new Parser(tokenize(body, delimiters, whitespace)).parseTemplate();
    checkNames(tree, env);
    if (this.#entries.size >= this.#maxEntries) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
    this.#entries.set(key, tree);
    return tree;
  }

  get size(): number {
    return this.#entries.size;
  }

  clear(): void {
    this.#entries.clear();
  }
}
