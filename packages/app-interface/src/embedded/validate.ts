import { EventLoopSlices } from '@qontract/core';
import { compareCodePoints } from '@qontract/pycompat';
import { Ajv, type ErrorObject, type SchemaValidateFunction, type ValidateFunction } from 'ajv';
import draft6MetaSchema from 'ajv/dist/refs/json-schema-draft-06.json' with { type: 'json' };
import { confsOf } from './graphql-conf.ts';
import { type BundleProblem, compareProblems, ProblemKind } from './problems.ts';
import { errorExplainer, formatErrorDetail } from './schema-errors.ts';
import { traverseData } from './traverse.ts';
import type { Bundle, GraphqlTypeConf, JsonObject, JsonValue, UnloadedFiles } from './types.ts';
import { parseYaml11 } from './yaml11.ts';

/*
 * qontract-validator's checks (its `validator/validator.py`
 * `validate_bundle()`), as far as our bundles need them: every datafile (and
 * every resource with a `$schema` line) against its JSON schema, `$schemaRef`
 * targets, dangling `$ref`s and resource paths, and `isUnique` and
 * context-unique fields, `isUnique` placement in schema.yml. The bundler's
 * `__identifier`s and schema patches are written before, by postprocess.ts.
 */

/**
 * The validator matches patterns with Python's `re.search`; one common
 * pattern starts with the inline `(?i)` flag, which JS RegExp lacks, so it
 * becomes the `i` flag here.
 */
const pythonRegExp = Object.assign(
  (pattern: string, flags: string) =>
    pattern.startsWith('(?i)')
      ? new RegExp(pattern.slice(4), `${flags}i`)
      : new RegExp(pattern, flags),
  { code: 'pythonRegExp' },
);

const DRAFT_06 = /^https?:\/\/json-schema\.org\/draft-06\/schema#?$/;
const DRAFT_06_ID = 'http://json-schema.org/draft-06/schema';

/** qontract-validator reports schema.yml problems under this name. */
const GRAPHQL_SCHEMA_FILE = 'graphql-schemas/schema.yml';

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function crossRefTarget(v: unknown): string | null {
  if (!isObject(v)) return null;
  const keys = Object.keys(v);
  return keys.length === 1 && keys[0] === '$ref' && typeof v.$ref === 'string' ? v.$ref : null;
}

function normalizeSchemaPath(s: string): string {
  return s.startsWith('/') ? s : `/${s}`;
}

const NOTHING_UNLOADED: UnloadedFiles = {
  data: new Set(),
  resources: new Set(),
  schemas: new Set(),
};

/**
 * All problems of a bundle, sorted by file; empty when it is valid.
 * `unloaded`: files of the checkout that failed to load. A reference to one
 * says so instead of "does not exist", and documents of a JSON schema that
 * failed to load are not checked against it (one problem per file that uses
 * it would bury the cause).
 */
export function validateBundle(
  bundle: Bundle,
  unloaded: UnloadedFiles = NOTHING_UNLOADED,
): BundleProblem[] {
  const problems: BundleProblem[] = [];
  for (const _ of validationSteps(bundle, unloaded, problems));
  return problems.sort(byFileThenSpecificity);
}

/**
 * `validateBundle` in slices of about `sliceMs` of work, letting the event
 * loop run between them: a process that serves the bundle (the merge-request
 * check) keeps answering while it validates. Same problems, same order.
 */
export async function validateBundleInSlices(
  bundle: Bundle,
  unloaded: UnloadedFiles = NOTHING_UNLOADED,
  sliceMs = 10,
): Promise<BundleProblem[]> {
  const problems: BundleProblem[] = [];
  const slices = new EventLoopSlices(sliceMs);
  for (const _ of validationSteps(bundle, unloaded, problems)) {
    const pause = slices.due();
    if (pause) await pause;
  }
  return problems.sort(byFileThenSpecificity);
}

/** The checks of `validateBundle`, pausing (`yield`) after each document or check. */
function* validationSteps(
  bundle: Bundle,
  unloaded: UnloadedFiles,
  problems: BundleProblem[],
): Generator<void, void, void> {
  if (Object.keys(bundle.schemas).length > 0)
    yield* validateJsonSchemas(bundle, unloaded, problems);
  checkCrossRefs(bundle, unloaded, problems);
  yield;
  checkTypedData(bundle, unloaded, problems);
  yield;
  checkGraphqlUniqueFields(bundle, problems);
}

/**
 * The schema violations of one document, in the order the explainer put
 * them (most specific first); everything else stays sorted by reason.
 */
const explainedOrder = new WeakMap<BundleProblem, { document: string; rank: number }>();

function byFileThenSpecificity(a: BundleProblem, b: BundleProblem): number {
  const byFile = compareProblems(a, b);
  if (byFile !== 0) return byFile;
  const ra = explainedOrder.get(a);
  const rb = explainedOrder.get(b);
  // One document's violations share their reason's `schema X:` prefix, so
  // ranking them inside that block keeps the order consistent.
  if (ra && rb && ra.document === rb.document) return ra.rank - rb.rank;
  return compareCodePoints(a.reason, b.reason);
}

function* validateJsonSchemas(
  bundle: Bundle,
  unloaded: UnloadedFiles,
  problems: BundleProblem[],
): Generator<void, void, void> {
  const ajv = new Ajv({
    strict: false,
    validateSchema: false,
    allErrors: true,
    // Errors carry their schema object, so a failed oneOf can be explained by its branches.
    verbose: true,
    meta: false,
    unicodeRegExp: false,
    // qontract-validator's Draft6Validator has no format checker: `format` is
    // documentation there, so it is not checked (nor warned about) here either.
    validateFormats: false,
    code: { regExp: pythonRegExp },
  });
  ajv.addMetaSchema(draft6MetaSchema);

  const knownSchema = (declared: string) =>
    normalizeSchemaPath(declared) in bundle.schemas ||
    unloaded.schemas.has(normalizeSchemaPath(declared));
  const checkSchemaRef: SchemaValidateFunction = function schemaRef(
    expected: unknown,
    data: unknown,
  ) {
    const target = crossRefTarget(data);
    const targetFile = target === null ? undefined : bundle.data[target];
    // A missing target is reported by the crossref check, with both file names.
    if (target === null || targetFile === undefined) return true;
    if (typeof expected === 'string') {
      if (targetFile.$schema === expected) return true;
      const actual = String(targetFile.$schema);
      // The target's own problem (listed first) is the cause: say so here.
      const unknown = knownSchema(actual) ? '' : ' (not found)';
      checkSchemaRef.errors = [
        {
          keyword: '$schemaRef',
          message: `$ref ${target} has $schema ${actual}${unknown}, expected ${expected}`,
          params: {},
        },
      ];
      return false;
    }
    if (isObject(expected)) {
      const validateTarget = ajv.compile(expected);
      if (validateTarget(targetFile)) return true;
      checkSchemaRef.errors = [
        {
          keyword: '$schemaRef',
          message: `$ref ${target} does not match the expected schema: ${formatErrors(validateTarget.errors)}`,
          params: {},
        },
      ];
      return false;
    }
    return true;
  };
  ajv.addKeyword({ keyword: '$schemaRef', validate: checkSchemaRef, errors: true });

  for (const [key, schema] of Object.entries(bundle.schemas)) {
    try {
      ajv.addSchema(schema as object, key);
    } catch (e) {
      problems.push({
        file: key,
        reason: `invalid JSON schema: ${(e as Error).message}`,
        kind: 'SCHEMA',
      });
    }
  }

  const compiled = new Map<string, ValidateFunction | null>();
  const validatorFor = (schemaPath: string): ValidateFunction | null => {
    if (compiled.has(schemaPath)) return compiled.get(schemaPath)!;
    let fn: ValidateFunction | null = null;
    try {
      fn = ajv.getSchema(schemaPath) ?? null;
    } catch (e) {
      problems.push({
        file: schemaPath,
        reason: `the JSON schema does not compile: ${(e as Error).message}`,
        kind: 'SCHEMA',
      });
    }
    compiled.set(schemaPath, fn);
    return fn;
  };

  // Every schema against its meta-schema (a bundle schema such as
  // /metaschema-1.json, or Draft-06 itself), like qontract-validator's SCHEMA checks.
  for (const [key, schema] of Object.entries(bundle.schemas)) {
    const meta = schema.$schema;
    if (typeof meta !== 'string' || meta === '') {
      problems.push({ file: key, reason: 'the JSON schema has no $schema', kind: 'SCHEMA' });
      continue;
    }
    let validateMeta: ValidateFunction | null | undefined;
    if (DRAFT_06.test(meta)) validateMeta = ajv.getSchema(DRAFT_06_ID);
    else if (normalizeSchemaPath(meta) in bundle.schemas)
      validateMeta = validatorFor(normalizeSchemaPath(meta));
    // Deviation: qontract-validator fails a missing meta-schema; trees that
    // carry only the schemas they use (like examples/) would never load.
    else continue;
    if (validateMeta && !validateMeta(schema)) {
      for (const e of validateMeta.errors ?? []) {
        problems.push({
          file: key,
          reason: `meta-schema ${meta}: ${formatError(e)}`,
          kind: 'SCHEMA',
        });
      }
    }
  }

  const explainer = errorExplainer(ajv, bundle.schemas);
  const validateDocument = (file: string, doc: JsonValue, declared: string, isData = false) => {
    const schemaPath = normalizeSchemaPath(declared);
    if (unloaded.schemas.has(schemaPath)) return;
    if (!(schemaPath in bundle.schemas)) {
      problems.push({
        file,
        reason: `schema ${declared} not found`,
        kind: ProblemKind.SCHEMA,
        // A data file's: each $schemaRef to it then fails too.
        ...(isData ? { rootCause: true as const } : {}),
      });
      return;
    }
    const validate = validatorFor(schemaPath);
    if (validate && !validate(doc)) {
      for (const [rank, reason] of explainer.explain(validate.errors ?? []).entries()) {
        const problem: BundleProblem = {
          file,
          reason: `schema ${schemaPath}: ${reason}`,
          kind: 'SCHEMA',
        };
        explainedOrder.set(problem, { document: `${file}\0${schemaPath}`, rank });
        problems.push(problem);
      }
    }
  };

  for (const [file, df] of Object.entries(bundle.data)) {
    if (typeof df.$schema === 'string') validateDocument(file, df, df.$schema, true);
    yield;
  }
  for (const [file, resource] of Object.entries(bundle.resources)) {
    if (!resource.$schema) continue;
    let doc: JsonValue;
    try {
      doc = parseYaml11(resource.content);
    } catch {
      // Like qontract-validator: a resource that is not plain YAML (a template) is skipped.
      continue;
    }
    validateDocument(file, doc, resource.$schema);
    yield;
  }
  // Like qontract-validator: schema.yml itself, when it names its schema.
  const graphql: unknown = bundle.graphql;
  if (isObject(graphql) && typeof graphql.$schema === 'string' && graphql.$schema !== '') {
    validateDocument(GRAPHQL_SCHEMA_FILE, graphql, graphql.$schema);
  }
}

function formatError(e: ErrorObject): string {
  return `${e.instancePath || '(root)'} ${formatErrorDetail(e)}`;
}

function formatErrors(errors: ErrorObject[] | null | undefined): string {
  return (errors ?? []).map(formatError).join('; ');
}

/** Every `{$ref}` anywhere in a datafile must name an existing datafile. */
function checkCrossRefs(bundle: Bundle, unloaded: UnloadedFiles, problems: BundleProblem[]): void {
  const visit = (file: string, value: unknown, path: string) => {
    const target = crossRefTarget(value);
    if (target !== null) {
      if (!(target in bundle.data)) {
        const why = unloaded.data.has(target) ? 'failed to load' : 'does not exist';
        problems.push({
          file,
          reason: `${path || '(root)'}: $ref ${target} ${why}`,
          kind: ProblemKind.REF,
        });
      }
      return;
    }
    if (Array.isArray(value)) {
      for (const [i, v] of value.entries()) visit(file, v, `${path}.[${i}]`);
    } else if (isObject(value)) {
      for (const [k, v] of Object.entries(value)) visit(file, v, path ? `${path}.${k}` : k);
    }
  };
  for (const [file, df] of Object.entries(bundle.data)) visit(file, df, '');
}

/**
 * Resource paths must exist; `isUnique` values must be unique per type; list
 * items must differ in their context-unique fields.
 */
function checkTypedData(bundle: Bundle, unloaded: UnloadedFiles, problems: BundleProblem[]): void {
  const unique = new Map<
    string,
    { typeName: string; field: string; value: JsonValue; files: string[] }
  >();
  traverseData(bundle, {
    resourceRef(file, _schema, jsonpath, resource) {
      if (!(resource in bundle.resources)) {
        const why = unloaded.resources.has(resource) ? 'failed to load' : 'does not exist';
        problems.push({
          file,
          reason: `${jsonpath}: resource ${resource} ${why}`,
          kind: ProblemKind.REF,
        });
      }
    },
    contextUniqueDuplicate(file, jsonpath, fields, indexes) {
      problems.push({
        file,
        reason: `${jsonpath}: items ${indexes.map((i) => `[${i}]`).join(', ')} repeat the same ${fields.join(', ')}`,
        kind: ProblemKind.UNIQUE,
      });
    },
    uniqueValue(file, typeName, field, value) {
      const key = JSON.stringify([typeName, field, value]);
      const seen = unique.get(key);
      if (seen) seen.files.push(file);
      else unique.set(key, { typeName, field, value, files: [file] });
    },
  });
  for (const { typeName, field, value, files } of unique.values()) {
    const distinct = [...new Set(files)].sort(compareCodePoints);
    if (files.length < 2) continue;
    problems.push({
      file: distinct[0]!,
      reason: `${typeName}.${field} ${JSON.stringify(value)} must be unique, but is used in ${distinct.join(', ')}`,
      kind: ProblemKind.UNIQUE,
    });
  }
}

/**
 * `isUnique` only makes sense on scalar fields of top-level types: those
 * mapped to a datafile schema, or implementing an interface that is.
 */
function checkGraphqlUniqueFields(bundle: Bundle, problems: BundleProblem[]): void {
  const confs = confsOf(bundle.graphql);
  const byName = new Map(confs.map((c) => [c.name, c]));
  const topLevel = new Set<string>();
  for (const c of confs) {
    if (c.datafile) topLevel.add(c.name);
    for (const f of c.fields) if (f.datafileSchema) topLevel.add(f.type);
  }
  const isTopLevel = (c: GraphqlTypeConf) =>
    topLevel.has(c.name) || (c.interface !== undefined && topLevel.has(c.interface));
  for (const conf of confs) {
    for (const field of conf.fields) {
      if (!field.isUnique) continue;
      const at = `${conf.name}.${field.name}`;
      if (!isTopLevel(conf)) {
        problems.push({
          file: GRAPHQL_SCHEMA_FILE,
          reason: `${at}: isUnique on a type that is not top-level`,
          kind: ProblemKind.GRAPHQL,
        });
      }
      if (byName.has(field.type)) {
        problems.push({
          file: GRAPHQL_SCHEMA_FILE,
          reason: `${at}: isUnique on a field of object type ${field.type}`,
          kind: ProblemKind.GRAPHQL,
        });
      }
    }
  }
}
