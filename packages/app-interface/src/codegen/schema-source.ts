import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { buildSchema, type GraphQLSchema } from 'graphql';

/** The schema every document is generated against: the example app-interface's schema.yml. */
export const SCHEMA_YML = 'examples/app-interface/graphql-schemas/schema.yml';

/**
 * Builds the GraphQL schema the way qontract-server does, with the embedded
 * engine's `graphqlSchemaFromSchemaYml`. Until the engine is in the tree,
 * falls back to `fallback-schema.graphqls` beside this file (SDL printed from the same
 * schema.yml).
 */
export async function loadCodegenSchema(repoRoot: string): Promise<GraphQLSchema> {
  const text = await readFile(join(repoRoot, SCHEMA_YML), 'utf8');
  const fromYml = await embeddedSchemaBuilder();
  if (fromYml) return fromYml(text);
  const sdl = await readFile(new URL('./fallback-schema.graphqls', import.meta.url), 'utf8');
  return buildSchema(sdl);
}

async function embeddedSchemaBuilder(): Promise<((text: string) => GraphQLSchema) | undefined> {
  const specifier = '../embedded/index.ts';
  try {
    const m = (await import(specifier)) as {
      graphqlSchemaFromSchemaYml?: (text: string) => GraphQLSchema;
    };
    return m.graphqlSchemaFromSchemaYml;
  } catch (e) {
    if ((e as { code?: string }).code === 'ERR_MODULE_NOT_FOUND') return undefined;
    throw e;
  }
}
