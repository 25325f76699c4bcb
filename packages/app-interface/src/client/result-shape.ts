import type { DocumentNode } from 'graphql';

/**
 * What a query's response must look like, computed by codegen from the
 * operation's selection set and the schema, and carried by each generated
 * document (`resultShape`), so results are checked where they enter.
 *
 * A leaf is its GraphQL type in SDL notation (`String!`, `[String!]`, `JSON`).
 * An object gives its type in the same notation (`t`), its fields by response
 * key (`f`), and the keys that may be absent (`c`: fields selected only in a
 * fragment on a narrower type, or under `@include`/`@skip`).
 */
export type ResultShape = string | ObjectShape;

export interface ObjectShape {
  readonly t: string;
  readonly f: Readonly<Record<string, ResultShape>>;
  readonly c?: readonly string[];
}

/** The top level of a query: the fields of `Query` the operation selects. */
export type OperationShape = Pick<ObjectShape, 'f' | 'c'>;

export class ResultShapeError extends Error {
  readonly path: string;
  constructor(path: string, message: string) {
    super(`${path}: ${message}`);
    this.name = 'ResultShapeError';
    this.path = path;
  }
}

/** The shape a generated document carries, if any (hand-written documents have none). */
export function resultShapeOf(document: DocumentNode): OperationShape | undefined {
  const shape = (document as { resultShape?: unknown }).resultShape;
  if (shape && typeof shape === 'object' && 'f' in shape) return shape as OperationShape;
  return undefined;
}

/**
 * Throws a ResultShapeError naming the path of the first value that does not
 * match the shape (`namespaces[2].cluster.name: expected String!, got null`).
 */
export function assertResultShape(shape: OperationShape, data: unknown): void {
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    throw new ResultShapeError('data', `expected an object, got ${describe(data)}`);
  }
  checkFields(shape, data as Record<string, unknown>, null);
}

/**
 * Where a value sits, built into a string only for an error: the check runs
 * over every value of every answer (hundreds of thousands for the largest
 * queries), and a path string per value cost more than the checks.
 */
interface PathNode {
  readonly parent: PathNode | null;
  /** A field name, or a list index. */
  readonly step: string | number;
}

function pathText(node: PathNode | null): string {
  const steps: Array<string | number> = [];
  for (let n = node; n; n = n.parent) steps.push(n.step);
  let out = '';
  for (const step of steps.reverse()) {
    out += typeof step === 'number' ? `[${step}]` : out ? `.${step}` : step;
  }
  return out;
}

/** A type in SDL notation, taken apart once. */
interface ParsedType {
  readonly nonNull: boolean;
  /** Without the `!`. */
  readonly inner: string;
  /** The item type of a list type, else null. */
  readonly item: string | null;
}

const parsedTypes = new Map<string, ParsedType>();

function parseType(type: string): ParsedType {
  let parsed = parsedTypes.get(type);
  if (!parsed) {
    const nonNull = type.endsWith('!');
    const inner = nonNull ? type.slice(0, -1) : type;
    parsed = { nonNull, inner, item: inner.startsWith('[') ? inner.slice(1, -1) : null };
    parsedTypes.set(type, parsed);
  }
  return parsed;
}

/** The fields of an object shape as entries, made once per shape. */
const fieldEntries = new WeakMap<object, ReadonlyArray<[string, ResultShape]>>();

function entriesOf(shape: OperationShape): ReadonlyArray<[string, ResultShape]> {
  let entries = fieldEntries.get(shape);
  if (!entries) {
    entries = Object.entries(shape.f);
    fieldEntries.set(shape, entries);
  }
  return entries;
}

function checkFields(
  shape: OperationShape,
  obj: Record<string, unknown>,
  path: PathNode | null,
): void {
  for (const [key, fieldShape] of entriesOf(shape)) {
    const at: PathNode = { parent: path, step: key };
    if (!(key in obj)) {
      if (shape.c?.includes(key)) continue;
      throw new ResultShapeError(pathText(at), 'missing');
    }
    checkValue(
      fieldShape,
      typeof fieldShape === 'string' ? fieldShape : fieldShape.t,
      obj[key],
      at,
    );
  }
}

function checkValue(shape: ResultShape, type: string, value: unknown, path: PathNode): void {
  const { nonNull, inner, item } = parseType(type);
  if (value === null || value === undefined) {
    if (nonNull) {
      throw new ResultShapeError(pathText(path), `expected ${type}, got ${describe(value)}`);
    }
    return;
  }
  if (item !== null) {
    if (!Array.isArray(value)) {
      throw new ResultShapeError(pathText(path), `expected ${type}, got ${describe(value)}`);
    }
    for (let i = 0; i < value.length; i++) {
      checkValue(shape, item, value[i], { parent: path, step: i });
    }
    return;
  }
  if (typeof shape !== 'string') {
    if (typeof value !== 'object' || Array.isArray(value)) {
      throw new ResultShapeError(pathText(path), `expected ${type}, got ${describe(value)}`);
    }
    checkFields(shape, value as Record<string, unknown>, path);
    return;
  }
  checkScalar(inner, type, value, path);
}

function checkScalar(name: string, type: string, value: unknown, path: PathNode): void {
  if (!scalarMatches(name, value)) {
    throw new ResultShapeError(pathText(path), `expected ${type}, got ${describe(value)}`);
  }
  if (name !== 'JSON') return;
  // qontract-server serialises JSON fields with JSON.stringify: they arrive as JSON text.
  try {
    JSON.parse(value as string);
  } catch {
    throw new ResultShapeError(pathText(path), 'expected JSON text, got a string that is not JSON');
  }
}

function scalarMatches(name: string, value: unknown): boolean {
  switch (name) {
    case 'String':
    case 'JSON':
      return typeof value === 'string';
    case 'ID':
      return typeof value === 'string' || typeof value === 'number';
    case 'Int':
      return typeof value === 'number' && Number.isInteger(value);
    case 'Float':
      return typeof value === 'number';
    case 'Boolean':
      return typeof value === 'boolean';
    default:
      // Enums and unknown custom scalars: any non-null value.
      return true;
  }
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'a list';
  // Values are not quoted: error messages must not carry data that may be sensitive.
  if (typeof value === 'string') return 'a string';
  if (typeof value === 'object') return 'an object';
  return `${typeof value} ${String(value)}`;
}
