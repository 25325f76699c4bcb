/** The syntax tree the parser builds and the evaluator walks. Every node knows its template line. */

export type Expr =
  | { kind: 'const'; line: number; value: unknown }
  | { kind: 'name'; line: number; name: string }
  | { kind: 'tuple'; line: number; items: Expr[] }
  | { kind: 'list'; line: number; items: Expr[] }
  | { kind: 'dict'; line: number; pairs: [Expr, Expr][] }
  | { kind: 'getattr'; line: number; node: Expr; attr: string }
  | { kind: 'getitem'; line: number; node: Expr; key: Expr }
  | { kind: 'slice'; line: number; start?: Expr; stop?: Expr; step?: Expr }
  | ({ kind: 'call'; line: number; node: Expr } & CallArgs)
  | ({ kind: 'filter'; line: number; node: Expr; name: string } & CallArgs)
  | ({ kind: 'test'; line: number; node: Expr; name: string; negated: boolean } & CallArgs)
  | { kind: 'unary'; line: number; op: '-' | '+' | 'not'; node: Expr }
  | { kind: 'binary'; line: number; op: BinaryOp; left: Expr; right: Expr }
  | { kind: 'compare'; line: number; left: Expr; ops: { op: CompareOp; right: Expr }[] }
  | { kind: 'condexpr'; line: number; test: Expr; whenTrue: Expr; whenFalse?: Expr }
  | { kind: 'concat'; line: number; items: Expr[] };

type BinaryOp = '+' | '-' | '*' | '/' | '//' | '%' | '**' | 'and' | 'or';
export type CompareOp = '==' | '!=' | '<' | '<=' | '>' | '>=' | 'in' | 'notin';

export interface CallArgs {
  args: Expr[];
  kwargs: [string, Expr][];
  starArgs?: Expr;
  starKwargs?: Expr;
}

/** Where `set`, `for` and `with` store a value. */
export type Target =
  | { kind: 'name'; name: string }
  | { kind: 'tuple'; items: Target[] }
  | { kind: 'nsattr'; name: string; attr: string };

export interface MacroParam {
  name: string;
  default?: Expr;
}

export type Stmt =
  | { kind: 'data'; line: number; text: string }
  | { kind: 'output'; line: number; expr: Expr }
  | { kind: 'if'; line: number; test: Expr; body: Stmt[]; otherwise: Stmt[] }
  | {
      kind: 'for';
      line: number;
      target: Target;
      iter: Expr;
      filter?: Expr;
      recursive: boolean;
      body: Stmt[];
      otherwise: Stmt[];
    }
  | { kind: 'set'; line: number; target: Target; expr: Expr }
  | { kind: 'setblock'; line: number; target: Target; filters: FilterCall[]; body: Stmt[] }
  | { kind: 'macro'; line: number; name: string; params: MacroParam[]; body: Stmt[] }
  | { kind: 'callblock'; line: number; call: Expr; params: MacroParam[]; body: Stmt[] }
  | { kind: 'filterblock'; line: number; filters: FilterCall[]; body: Stmt[] }
  | { kind: 'with'; line: number; assignments: [Target, Expr][]; body: Stmt[] }
  | { kind: 'b64encode'; line: number; body: Stmt[] }
  | { kind: 'raise_error'; line: number; message: Expr };

export type FilterCall = { name: string; line: number } & CallArgs;
