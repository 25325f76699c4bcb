import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { GraphQLSchema } from 'graphql';
import { graphqlSchemaFromSchemaYml } from '../embedded/index.ts';

/** The schema every document is generated against: the example app-interface's schema.yml. */
const SCHEMA_YML = 'examples/app-interface/graphql-schemas/schema.yml';

/** The GraphQL schema built from schema.yml the way qontract-server (and the embedded engine) builds it. */
export async function loadCodegenSchema(repoRoot: string): Promise<GraphQLSchema> {
  return graphqlSchemaFromSchemaYml(await readFile(join(repoRoot, SCHEMA_YML), 'utf8'));
}
