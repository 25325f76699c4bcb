import type { GraphQLSchema } from 'graphql';
import { parseGraphqlSection } from './graphql-conf.ts';
import { buildGraphqlSchema } from './schema-builder.ts';
import { parseYaml11 } from './yaml11.ts';

export {
  type LoadedBundle,
  parseBundleText,
  readBundleFile,
  serializeBundle,
  writeBundleFile,
} from './bundle-file.ts';
export { BundleDatabase } from './database.ts';
export {
  createEmbeddedEngine,
  type LoadOptions,
  loadBundle,
  loadEmbeddedEngine,
  pruneEmptyObjects,
} from './engine.ts';
export { confsOf, parseGraphqlSection } from './graphql-conf.ts';
export { BundleLoadError, type BundleProblem, formatProblem, ProblemKind } from './problems.ts';
export { pythonJsonDumps } from './python-json.ts';
export {
  type AppInterfaceLayout,
  type BuildBundleOptions,
  buildBundleFromDirectory,
  type CollectedBundle,
  collectBundleFromDirectory,
  defaultLayout,
} from './read-directory.ts';
export { buildGraphqlSchema, GraphqlSchemaBuildError, JsonScalar } from './schema-builder.ts';
export {
  type BundleServer,
  type BundleServerOptions,
  startBundleServer,
} from './server.ts';
export { computeResourceBackrefs, type DataVisitor, traverseData } from './traverse.ts';
export type * from './types.ts';
export { validateBundle } from './validate.ts';
export { parseYaml11, YamlParseError } from './yaml11.ts';

/** The GraphQL schema built from a `schema.yml` document (either form), e.g. for codegen. */
export function graphqlSchemaFromSchemaYml(schemaYmlText: string): GraphQLSchema {
  const section = parseGraphqlSection(parseYaml11(schemaYmlText));
  if (!section.ok) throw new Error(`schema.yml: ${section.reason}`);
  return buildGraphqlSchema(section.confs);
}
