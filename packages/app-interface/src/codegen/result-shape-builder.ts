import {
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLField,
  type GraphQLOutputType,
  type GraphQLSchema,
  getNamedType,
  isAbstractType,
  isCompositeType,
  isObjectType,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
  TypeNameMetaFieldDef,
  typeFromAST,
} from 'graphql';
import type { ObjectShape, OperationShape, ResultShape } from '../client/result-shape.ts';

interface CollectedField {
  readonly type: GraphQLOutputType;
  readonly selectionSets: SelectionSetNode[];
  /** Present only for some runtime types, or under @include/@skip. */
  conditional: boolean;
}

/**
 * The shape a response to `operation` must have: every selected field by
 * response key, with its GraphQL type, fragments merged in. Fields of a
 * fragment on a narrower type than its parent (an interface implementation)
 * are conditional: absent when the object is of another type.
 */
export function operationResultShape(
  schema: GraphQLSchema,
  operation: OperationDefinitionNode,
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
): OperationShape {
  const root = schema.getRootType(operation.operation);
  if (!root) throw new Error(`the schema has no ${operation.operation} type`);
  const shape = objectShape(schema, root, [operation.selectionSet], fragments);
  return shape.c ? { f: shape.f, c: shape.c } : { f: shape.f };
}

function objectShape(
  schema: GraphQLSchema,
  parent: GraphQLCompositeType,
  selectionSets: readonly SelectionSetNode[],
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
): Omit<ObjectShape, 't'> {
  const collected = new Map<string, CollectedField>();
  for (const set of selectionSets)
    collect(schema, parent, parent, set, false, fragments, collected);
  const f: Record<string, ResultShape> = {};
  const c: string[] = [];
  for (const [key, field] of collected) {
    const named = getNamedType(field.type);
    f[key] = isCompositeType(named)
      ? { t: String(field.type), ...objectShape(schema, named, field.selectionSets, fragments) }
      : String(field.type);
    if (field.conditional) c.push(key);
  }
  return c.length ? { f, c } : { f };
}

function collect(
  schema: GraphQLSchema,
  parent: GraphQLCompositeType,
  scope: GraphQLCompositeType,
  selectionSet: SelectionSetNode,
  conditional: boolean,
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
  out: Map<string, CollectedField>,
): void {
  for (const selection of selectionSet.selections) {
    const directed = conditional || Boolean(selection.directives?.some(isInclusionDirective));
    if (selection.kind === Kind.FIELD) {
      const def = fieldDefinition(scope, selection);
      const key = selection.alias?.value ?? selection.name.value;
      const existing = out.get(key);
      if (existing) {
        existing.conditional &&= directed;
        if (selection.selectionSet) existing.selectionSets.push(selection.selectionSet);
      } else {
        out.set(key, {
          type: def.type,
          selectionSets: selection.selectionSet ? [selection.selectionSet] : [],
          conditional: directed,
        });
      }
      continue;
    }
    let typeCondition: GraphQLCompositeType = scope;
    let set: SelectionSetNode;
    if (selection.kind === Kind.INLINE_FRAGMENT) {
      if (selection.typeCondition) typeCondition = compositeType(schema, selection.typeCondition);
      set = selection.selectionSet;
    } else {
      const fragment = fragments.get(selection.name.value);
      if (!fragment) throw new Error(`unknown fragment ${selection.name.value}`);
      typeCondition = compositeType(schema, fragment.typeCondition);
      set = fragment.selectionSet;
    }
    const narrower = !alwaysApplies(schema, typeCondition, parent);
    collect(schema, parent, typeCondition, set, directed || narrower, fragments, out);
  }
}

function isInclusionDirective(d: { name: { value: string } }): boolean {
  return d.name.value === 'include' || d.name.value === 'skip';
}

function fieldDefinition(
  scope: GraphQLCompositeType,
  node: FieldNode,
): GraphQLField<unknown, unknown> | typeof TypeNameMetaFieldDef {
  const name = node.name.value;
  if (name === '__typename') return TypeNameMetaFieldDef;
  const fields = 'getFields' in scope ? scope.getFields() : {};
  const def = fields[name];
  if (!def) throw new Error(`field ${name} is not defined on ${scope.name}`);
  return def;
}

function compositeType(
  schema: GraphQLSchema,
  node: Parameters<typeof typeFromAST>[1],
): GraphQLCompositeType {
  const type = typeFromAST(schema, node);
  if (!type || !isCompositeType(type)) throw new Error('fragment on an unknown type');
  return type;
}

/** Whether every object that can appear where `parent` is expected is a `condition`. */
function alwaysApplies(
  schema: GraphQLSchema,
  condition: GraphQLCompositeType,
  parent: GraphQLCompositeType,
): boolean {
  if (condition === parent) return true;
  if (!isAbstractType(condition)) return false;
  if (isObjectType(parent)) return schema.isSubType(condition, parent);
  if (!isAbstractType(parent)) return false;
  return schema.getPossibleTypes(parent).every((t) => schema.isSubType(condition, t));
}
