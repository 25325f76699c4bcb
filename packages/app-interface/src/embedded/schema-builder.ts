import {
  GraphQLBoolean,
  type GraphQLFieldConfig,
  type GraphQLFieldConfigArgumentMap,
  type GraphQLFieldResolver,
  GraphQLFloat,
  GraphQLInt,
  GraphQLInterfaceType,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  type GraphQLOutputType,
  GraphQLScalarType,
  GraphQLSchema,
  GraphQLString,
  type GraphQLTypeResolver,
  valueFromASTUntyped,
} from 'graphql';
import type { BundleDatabase } from './database.ts';
import { compileFilter } from './filter.ts';
import { resolveStoredValue } from './refs.ts';
import type { GraphqlFieldConf, GraphqlTypeConf } from './types.ts';

/** Per-request state the resolvers share. */
export interface EngineContext {
  readonly db: BundleDatabase;
  /** `$schema`s of objects read through the default resolver, first encounter first. */
  readonly schemas: string[];
}

type Source = Record<string, unknown>;
type Resolver = GraphQLFieldResolver<Source, EngineContext, Record<string, unknown>>;

/** qontract-server's `JSON` scalar: values leave as JSON text, arguments arrive untyped. */
const JsonScalar = new GraphQLScalarType({
  name: 'JSON',
  serialize: (value) => JSON.stringify(value),
  parseValue: (value) => value,
  parseLiteral: (ast, variables) => valueFromASTUntyped(ast, variables),
});

const SCALARS: Record<string, GraphQLOutputType> = {
  string: GraphQLString,
  int: GraphQLInt,
  float: GraphQLFloat,
  boolean: GraphQLBoolean,
  json: JsonScalar,
};

const RESOURCE_TYPE = 'Resource_v1';
const DATAFILE_OBJECT = 'DatafileObject_v1';

class GraphqlSchemaBuildError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GraphqlSchemaBuildError';
  }
}

/**
 * Builds the executable schema from `schema.yml` confs with qontract-server's
 * rules (upstream qontract-server `src/schema.ts` `generateAppSchema()` and
 * `defaultResolver`). Resolvers read the bundle from the request context, so
 * one schema serves any bundle with the same confs.
 */
export function buildGraphqlSchema(confs: readonly GraphqlTypeConf[]): GraphQLSchema {
  const confsByName = new Map(confs.map((c) => [c.name, c]));
  const objects = new Map<string, GraphQLObjectType>();
  const interfaces = new Map<string, GraphQLInterfaceType>();
  const typeByDatafile = new Map<string, string>();
  for (const c of confs) if (c.datafile) typeByDatafile.set(c.datafile, c.name);

  const namedType = (owner: string, field: GraphqlFieldConf): GraphQLOutputType => {
    const scalar = SCALARS[field.type];
    if (scalar) return scalar;
    const found = field.isInterface ? interfaces.get(field.type) : objects.get(field.type);
    if (!found) {
      const kind = field.isInterface ? 'interface' : 'object type';
      throw new GraphqlSchemaBuildError(`${owner}.${field.name}: unknown ${kind} "${field.type}"`);
    }
    return found;
  };

  const outputType = (owner: string, field: GraphqlFieldConf): GraphQLOutputType => {
    if (isResourcePath(field)) {
      const resource = objects.get(RESOURCE_TYPE);
      if (!resource) {
        throw new GraphqlSchemaBuildError(
          `${owner}.${field.name}: needs the type ${RESOURCE_TYPE}`,
        );
      }
      return resource;
    }
    let t = namedType(owner, field);
    if (field.isList) t = new GraphQLList(new GraphQLNonNull(t));
    if (field.isRequired) t = new GraphQLNonNull(t);
    return t;
  };

  const fieldsOf = (conf: GraphqlTypeConf) => () => {
    const out: Record<string, GraphQLFieldConfig<Source, EngineContext>> = {};
    for (const field of conf.fields) {
      out[field.name] = {
        type: outputType(conf.name, field),
        ...argsAndResolver(field, confsByName),
      };
    }
    return out;
  };

  const resolveTypeOf = (conf: GraphqlTypeConf): GraphQLTypeResolver<Source, EngineContext> => {
    const strategy = conf.interfaceResolve;
    if (strategy?.strategy === 'schema') {
      return (source, context, info, abstractType) => {
        const name = typeByDatafile.get(String(source.$schema));
        const asInterface = name ? interfaces.get(name) : undefined;
        if (asInterface && asInterface !== abstractType) {
          return asInterface.resolveType?.(source, context, info, asInterface) as
            | string
            | undefined;
        }
        return name;
      };
    }
    return (source) => {
      const key = String(source[strategy?.field ?? ''] ?? '');
      const name = strategy?.fieldMap?.[key];
      return name !== undefined && Object.hasOwn(strategy?.fieldMap ?? {}, key) ? name : undefined;
    };
  };

  /*
   * qontract-server gives every conf with an `interface` or a `datafile`,
   * interfaces included, its own interface plus DatafileObject_v1 when the
   * conf or that interface is the type of some `datafile`: so an interface
   * such as Permission_v1 implements DatafileObject_v1 too, and so must each
   * of its implementations (GraphQL requires it, and the server does it).
   */
  const datafileTypes = new Set(typeByDatafile.values());
  const interfacesOf = (conf: GraphqlTypeConf) => (): GraphQLInterfaceType[] => {
    if (!conf.interface && !conf.datafile) return [];
    const own = conf.interface ? interfaces.get(conf.interface) : undefined;
    const list = own ? [own] : [];
    const datafileObject = interfaces.get(DATAFILE_OBJECT);
    const isDatafile = datafileTypes.has(conf.name) || (own && datafileTypes.has(own.name));
    if (datafileObject && isDatafile && !list.includes(datafileObject)) list.push(datafileObject);
    return list;
  };

  for (const conf of confs) {
    if (!conf.isInterface) continue;
    interfaces.set(
      conf.name,
      new GraphQLInterfaceType({
        name: conf.name,
        fields: fieldsOf(conf),
        interfaces: interfacesOf(conf),
        resolveType: resolveTypeOf(conf),
      }),
    );
  }
  for (const conf of confs) {
    if (conf.isInterface) continue;
    objects.set(
      conf.name,
      new GraphQLObjectType({
        name: conf.name,
        fields: fieldsOf(conf),
        interfaces: interfacesOf(conf),
      }),
    );
  }

  const query = objects.get('Query');
  if (!query) throw new GraphqlSchemaBuildError('schema.yml defines no type named "Query"');
  const schema = new GraphQLSchema({ query, types: [...objects.values()] });
  // Surface type errors (unknown type names, bad interfaces) now rather than on the first query.
  schema.getTypeMap();
  for (const t of [...objects.values(), ...interfaces.values()]) t.getFields();
  for (const t of [...objects.values(), ...interfaces.values()]) t.getInterfaces();
  return schema;
}

function isResourcePath(field: GraphqlFieldConf): boolean {
  return field.isResource === true && field.type === 'string' && field.resolveResource === true;
}

function argsAndResolver(
  field: GraphqlFieldConf,
  confsByName: ReadonlyMap<string, GraphqlTypeConf>,
): { args?: GraphQLFieldConfigArgumentMap; resolve: Resolver } {
  if (field.datafileSchema) return datafileListField(field, confsByName);
  if (field.synthetic) {
    const { schema, subAttr } = field.synthetic;
    return { resolve: (root, _args, ctx) => ctx.db.syntheticBackRefs(schema, subAttr, root.path) };
  }
  if (isResourcePath(field)) {
    return {
      resolve: (root, _args, ctx) => ctx.db.resources.get(String(root[field.name])) ?? null,
    };
  }
  if (field.isResource && field.type === RESOURCE_TYPE) {
    return {
      args: { path: { type: GraphQLString }, schema: { type: GraphQLString } },
      resolve: (_root, args, ctx) => {
        if (args.path !== undefined && args.path !== null) {
          // A missing path yields [undefined]: a non-null error, as upstream.
          return [ctx.db.resources.get(String(args.path))];
        }
        if (args.schema !== undefined && args.schema !== null) {
          return ctx.db.resourceList.filter((r) => r.$schema === args.schema);
        }
        return ctx.db.resourceList;
      },
    };
  }
  const isList = field.isList === true;
  return {
    resolve: (root, _args, ctx, info) => {
      const schema = root.$schema;
      if (schema && !ctx.schemas.includes(String(schema))) ctx.schemas.push(String(schema));
      if (info.fieldName === 'schema') return schema;
      return resolveStoredValue(ctx.db, root[info.fieldName], isList);
    },
  };
}

function datafileListField(
  field: GraphqlFieldConf,
  confsByName: ReadonlyMap<string, GraphqlTypeConf>,
): { args: GraphQLFieldConfigArgumentMap; resolve: Resolver } {
  const datafileSchema = field.datafileSchema!;
  const searchable = (confsByName.get(field.type)?.fields ?? [])
    .filter((f) => f.isSearchable)
    .map((f) => f.name);
  const args: GraphQLFieldConfigArgumentMap = {};
  for (const name of searchable) args[name] = { type: GraphQLString };
  args.path = { type: GraphQLString };
  args.filter = { type: JsonScalar };
  const exact = [...searchable.filter((n) => n !== 'path'), 'path'];
  return {
    args,
    resolve: (_root, args, ctx) => {
      const filter =
        args.filter === undefined || args.filter === null
          ? null
          : compileFilter(args.filter, field.type, confsByName, ctx.db);
      let list = ctx.db.datafilesBySchema.get(datafileSchema) ?? [];
      for (const name of exact) {
        const wanted = args[name];
        if (wanted === undefined || wanted === null) continue;
        list = list.filter((df) => (df[name] ?? null) === wanted);
      }
      return filter ? list.filter(filter) : list;
    },
  };
}
