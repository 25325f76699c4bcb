import type { GraphQLSchema } from 'graphql';
import { parseGraphqlSection } from './graphql-conf.ts';
import { buildGraphqlSchema } from './schema-builder.ts';
import { parseYaml11 } from './yaml11.ts';

export {
  type BundleDiff,
  diffBundleSchemas,
  diffBundles,
  type SchemaDiff,
} from './bundle-diff.ts';

export {
  readBundleFile,
  serializeBundle,
  writeBundleFile,
} from './bundle-file.ts';

export {
  createEmbeddedEngine,
  loadEmbeddedEngine,
} from './engine.ts';

export {
  BundleLoadError,
  type BundleProblem,
  compareProblems,
  formatProblem,
} from './problems.ts';

export {
  type AppInterfaceLayout,
  collectBundleFromDirectory,
  collectBundlePair,
} from './read-directory.ts';

export { startBundleServer } from './server.ts';

export type * from './types.ts';
export { validateBundle, validateBundleInSlices } from './validate.ts';

/** The GraphQL schema built from a `schema.yml` document (either form), e.g. for codegen. */
export function graphqlSchemaFromSchemaYml(schemaYmlText: string): GraphQLSchema {
  const section = parseGraphqlSection(parseYaml11(schemaYmlText));
  if (!section.ok) throw new Error(`schema.yml: ${section.reason}`);
  return buildGraphqlSchema(section.confs);
}
