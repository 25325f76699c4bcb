import { z } from 'zod';
import type { GraphqlSection, GraphqlTypeConf } from './types.ts';

const fieldConfSchema = z.looseObject({
  name: z.string(),
  type: z.string(),
  isRequired: z.boolean().optional(),
  isList: z.boolean().optional(),
  isInterface: z.boolean().optional(),
  isUnique: z.boolean().optional(),
  isContextUnique: z.boolean().optional(),
  isSearchable: z.boolean().optional(),
  isResource: z.boolean().optional(),
  resolveResource: z.boolean().optional(),
  synthetic: z.object({ schema: z.string(), subAttr: z.string() }).optional(),
  datafileSchema: z.string().optional(),
});

const typeConfSchema = z.looseObject({
  name: z.string(),
  fields: z.array(fieldConfSchema),
  datafile: z.string().optional(),
  isInterface: z.boolean().optional(),
  interface: z.string().optional(),
  interfaceResolve: z
    .object({
      strategy: z.enum(['fieldMap', 'schema']),
      field: z.string().optional(),
      fieldMap: z.record(z.string(), z.string()).optional(),
    })
    .optional(),
});

const currentForm = z.looseObject({
  $schema: z.string().optional(),
  confs: z.array(typeConfSchema),
});
const legacyForm = z.array(typeConfSchema);

export type ParsedGraphqlSection =
  | { ok: true; confs: GraphqlTypeConf[] }
  | { ok: false; reason: string };

/** Checks that a parsed `schema.yml` (either form) has the shape the schema builder needs. */
export function parseGraphqlSection(value: unknown): ParsedGraphqlSection {
  // Pick the form first, so the issues name the conf and field that is wrong.
  const parsed = Array.isArray(value) ? legacyForm.safeParse(value) : currentForm.safeParse(value);
  if (!parsed.success) {
    const issues = parsed.error.issues
      .slice(0, 5)
      .map((i) => `${i.path.length ? i.path.join('.') : '(root)'}: ${i.message}`);
    return { ok: false, reason: `not a GraphQL type description: ${issues.join('; ')}` };
  }
  return { ok: true, confs: confsOf(parsed.data as GraphqlSection) };
}

export function confsOf(section: GraphqlSection): GraphqlTypeConf[] {
  return Array.isArray(section) ? section : section.confs;
}
