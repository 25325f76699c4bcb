import type { Bundle, BundleDiff, SchemaDiff } from '@qontract/app-interface';
import { compareCodePoints } from '@qontract/pycompat';
import { z } from 'zod';

const INTEGRATION_SCHEMA = '/app-sre/integration-1.yml';

/**
 * Changes to resource files select these integrations whatever their
 * `$schema` (upstream's selection script has the same path rule: resources
 * are mostly plain manifests without a schema).
 */
const RESOURCE_READERS: ReadonlySet<string> = new Set([
  'openshift-resources',
  'openshift-routes',
  'openshift-prometheus-rules',
  'openshift-tekton-resources',
]);

/**
 * The `pr_check.cmd` of upstream app-interface's saas check: instead of one
 * full `openshift-saas-deploy` dry-run, one per (saas file, environment)
 * whose targets the MR touches.
 */
export const CHANGE_TESTER = 'openshift-saas-deploy-change-tester';
/** The integration the change tester dry-runs (it must be registered for the mode to exist). */
export const SAAS_DEPLOY = 'openshift-saas-deploy';

/** The command of a `pr_check.cmd` (its first word). */
export function prCheckCommand(pr: PrCheck): string {
  return pr.cmd.trim().split(/\s+/)[0] ?? '';
}

/** Data files of these schemas are "saas file changes" (`run_for_valid_saas_file_changes`). */
const SAAS_FILE_SCHEMA = /^\/app-sre\/saas-file-\d+\.ya?ml$/;

/** `pr_check` of an integration file (qontract-schemas `/app-sre/integration-1.yml`). */
const PrCheckSchema = z.object({
  cmd: z.string().min(1),
  state: z.boolean().optional(),
  sqs: z.boolean().optional(),
  disabled: z.boolean().optional(),
  always_run: z.boolean().optional(),
  no_validate_schemas: z.boolean().optional(),
  run_for_valid_saas_file_changes: z.boolean().optional(),
  early_exit: z.boolean().optional(),
  check_only_affected_shards: z.boolean().optional(),
  run_order: z.number().optional(),
  imageRef: z.string().optional(),
});
export type PrCheck = z.infer<typeof PrCheckSchema>;

const IntegrationFileSchema = z.object({
  name: z.string().min(1),
  schemas: z.array(z.string()).default([]),
  pr_check: PrCheckSchema.nullish(),
});

/** One integration file of the head bundle. */
export interface IntegrationFile {
  readonly path: string;
  readonly name: string;
  readonly schemas: readonly string[];
  readonly prCheck: PrCheck | null;
}

/** The integration files of a bundle, by name; a malformed one is a problem of that file. */
export function integrationFiles(bundle: Bundle): {
  files: IntegrationFile[];
  problems: Array<{ file: string; reason: string }>;
} {
  const files: IntegrationFile[] = [];
  const problems: Array<{ file: string; reason: string }> = [];
  for (const [path, data] of Object.entries(bundle.data)) {
    if (data.$schema !== INTEGRATION_SCHEMA) continue;
    const parsed = IntegrationFileSchema.safeParse(data);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      problems.push({
        file: path,
        reason: `integration file: ${issue?.path.join('.') || '(root)'}: ${issue?.message}`,
      });
      continue;
    }
    files.push({
      path,
      name: parsed.data.name,
      schemas: parsed.data.schemas,
      prCheck: parsed.data.pr_check ?? null,
    });
  }
  files.sort((a, b) => compareCodePoints(a.name, b.name));
  return { files, problems };
}

/** What the MR changed, reduced to what the selection looks at. */
export interface ChangeSummary {
  /** Every `$schema` of a changed data file (old and new side) or resource, with one file each. */
  readonly schemas: ReadonlyMap<string, string>;
  readonly resourcesChanged: readonly string[];
  readonly dataChanged: readonly string[];
  /** JSON schemas or the GraphQL schema changed: upstream runs everything then. */
  readonly schemaFilesChanged: readonly string[];
  /** Only saas files changed (data files of the saas-file schema, nothing else). */
  readonly onlySaasFiles: boolean;
}

export function summarizeChanges(diff: BundleDiff, schemaDiff: SchemaDiff): ChangeSummary {
  const schemas = new Map<string, string>();
  const note = (schema: unknown, file: string) => {
    if (typeof schema === 'string' && schema && !schemas.has(schema)) schemas.set(schema, file);
  };
  for (const [path, change] of Object.entries(diff.datafiles)) {
    note(change.old?.$schema, `data${path}`);
    note(change.new?.$schema, `data${path}`);
  }
  for (const [path, change] of Object.entries(diff.resources)) {
    note(change.old?.$schema, `resources${path}`);
    note(change.new?.$schema, `resources${path}`);
  }
  const dataChanged = Object.keys(diff.datafiles);
  const resourcesChanged = Object.keys(diff.resources);
  const schemaFilesChanged = [
    ...schemaDiff.schemas.map((s) => `schemas${s.path}`),
    ...(schemaDiff.graphqlChanged ? ['graphql-schemas/schema.yml'] : []),
  ];
  const onlySaasFiles =
    dataChanged.length > 0 &&
    resourcesChanged.length === 0 &&
    schemaFilesChanged.length === 0 &&
    Object.values(diff.datafiles).every((c) => SAAS_FILE_SCHEMA.test(c.datafileschema));
  return { schemas, resourcesChanged, dataChanged, schemaFilesChanged, onlySaasFiles };
}

export type Selection =
  | { readonly kind: 'run'; readonly reason: string; readonly prCheck: PrCheck }
  | { readonly kind: 'skip'; readonly reason: string };

/**
 * Whether an integration runs for this MR, and why (upstream app-interface's
 * selection, spec §11.2): never without `pr_check` or when it is `disabled`
 * or not an integration of this qontract-reconcile; always with
 * `always_run` or when schemas changed; not for an MR of valid saas-file
 * changes only unless `run_for_valid_saas_file_changes`; otherwise when a
 * changed file's `$schema` is one it reads, or a resource changed and it
 * reads resource files.
 */
export function selectIntegration(
  file: IntegrationFile,
  changes: ChangeSummary,
  registered: ReadonlySet<string>,
): Selection {
  const pr = file.prCheck;
  if (!pr) return { kind: 'skip', reason: 'no `pr_check` in its integration file' };
  if (pr.disabled) return { kind: 'skip', reason: '`pr_check.disabled`' };
  const command = prCheckCommand(pr);
  // The change tester is a mode of this check, there when the integration it dry-runs is.
  if (!registered.has(command === CHANGE_TESTER ? SAAS_DEPLOY : command)) {
    return {
      kind: 'skip',
      reason: `\`${command}\` is not an integration of this qontract-reconcile`,
    };
  }
  if (pr.always_run) return { kind: 'run', reason: '`pr_check.always_run`', prCheck: pr };
  const nothing = changes.dataChanged.length + changes.resourcesChanged.length === 0;
  if (changes.schemaFilesChanged.length > 0) {
    return {
      kind: 'run',
      reason: `schemas changed (${changes.schemaFilesChanged[0]}): every integration runs`,
      prCheck: pr,
    };
  }
  if (nothing) return { kind: 'skip', reason: 'the MR changes no data file or resource' };
  if (changes.onlySaasFiles && !pr.run_for_valid_saas_file_changes) {
    return {
      kind: 'skip',
      reason: 'only saas files changed and `pr_check.run_for_valid_saas_file_changes` is not set',
    };
  }
  for (const schema of file.schemas) {
    const changed = changes.schemas.get(schema);
    if (changed) return { kind: 'run', reason: `reads ${schema} (${changed})`, prCheck: pr };
  }
  if (changes.resourcesChanged.length > 0 && RESOURCE_READERS.has(file.name)) {
    return {
      kind: 'run',
      reason: `reads resource files (resources${changes.resourcesChanged[0]})`,
      prCheck: pr,
    };
  }
  return { kind: 'skip', reason: 'nothing it reads changed' };
}
