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
  checkFields(shape, data as Record<string, unknown>, '');
}

function checkFields(shape: OperationShape, obj: Record<string, unknown>, prefix: string): void {
  const optional = shape.c;
  for (const [key, fieldShape] of Object.entries(shape.f)) {
    const path = prefix ? `${prefix}.${key}` : key;
    if (!(key in obj)) {
      if (optional?.includes(key)) continue;
      throw new ResultShapeError(path, 'missing');
    }
    checkValue(
      fieldShape,
      typeof fieldShape === 'string' ? fieldShape : fieldShape.t,
      obj[key],
      path,
    );
  }
}

function checkValue(shape: ResultShape, type: string, value: unknown, path: string): void {
  const nonNull = type.endsWith('!');
  const inner = nonNull ? type.slice(0, -1) : type;
  if (value === null || value === undefined) {
    if (nonNull) throw new ResultShapeError(path, `expected ${type}, got ${describe(value)}`);
    return;
  }
  if (inner.startsWith('[')) {
    if (!Array.isArray(value)) {
      throw new ResultShapeError(path, `expected ${type}, got ${describe(value)}`);
    }
    const itemType = inner.slice(1, -1);
    value.forEach((item, i) => {
      checkValue(shape, itemType, item, `${path}[${i}]`);
    });
    return;
  }
  if (typeof shape !== 'string') {
    if (typeof value !== 'object' || Array.isArray(value)) {
      throw new ResultShapeError(path, `expected ${type}, got ${describe(value)}`);
    }
    checkFields(shape, value as Record<string, unknown>, path);
    return;
  }
  checkScalar(inner, type, value, path);
}

function checkScalar(name: string, type: string, value: unknown, path: string): void {
  const fail = () => {
    throw new ResultShapeError(path, `expected ${type}, got ${describe(value)}`);
  };
  switch (name) {
    case 'String':
    case 'ID':
      if (typeof value !== 'string' && !(name === 'ID' && typeof value === 'number')) fail();
      return;
    case 'Int':
      if (typeof value !== 'number' || !Number.isInteger(value)) fail();
      return;
    case 'Float':
      if (typeof value !== 'number') fail();
      return;
    case 'Boolean':
      if (typeof value !== 'boolean') fail();
      return;
    case 'JSON':
      // qontract-server serialises JSON fields with JSON.stringify: they arrive as JSON text.
      if (typeof value !== 'string') fail();
      try {
        JSON.parse(value as string);
      } catch {
        throw new ResultShapeError(path, 'expected JSON text, got a string that is not JSON');
      }
      return;
    default:
      // Enums and unknown custom scalars: any non-null value.
      return;
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
