import { stat } from 'node:fs/promises';
import { deepFreeze } from '@qontract/core';
import {
  type DocumentNode,
  type ExecutionResult,
  execute,
  GraphQLError,
  type GraphQLSchema,
  Kind,
  type OperationDefinitionNode,
  parse,
  validate,
} from 'graphql';
import { type LoadedBundle, readBundleFile, serializeBundle } from './bundle-file.ts';
import { BundleDatabase } from './database.ts';
import { confsOf } from './graphql-conf.ts';
import { BundleLoadError, ProblemKind } from './problems.ts';
import { type BuildBundleOptions, collectBundleFromDirectory } from './read-directory.ts';
import { buildGraphqlSchema, type EngineContext } from './schema-builder.ts';
import type {
  Bundle,
  EmbeddedEngine,
  ExecutionPhase,
  GraphqlErrorEntry,
  GraphqlExecutionResult,
} from './types.ts';
import { validateBundle } from './validate.ts';

/**
 * Loads an app-interface directory (data/, resources/, graphql-schemas/schema.yml,
 * optional schemas/) or a bundle.json and returns an engine that answers
 * GraphQL documents in-process with qontract-server's semantics. For a
 * directory, the sha is that of the bundle `qontract-bundle build` would write.
 */
export interface LoadOptions extends BuildBundleOptions {
  /**
   * Check JSON schemas, crossrefs, resource paths and unique fields before
   * serving. Default: on for a directory, off for a bundle.json (which was
   * validated when it was built, and qontract-server does not re-check).
   */
  validate?: boolean;
}

export async function loadEmbeddedEngine(
  source: string,
  options: LoadOptions = {},
): Promise<EmbeddedEngine> {
  const loaded = await loadBundle(source, options);
  return createEmbeddedEngine(loaded.bundle, loaded.sha256, source);
}

/** Reads a directory or bundle.json into a bundle and its sha. */
export async function loadBundle(source: string, options: LoadOptions = {}): Promise<LoadedBundle> {
  let isDir: boolean;
  try {
    isDir = (await stat(source)).isDirectory();
  } catch {
    throw new BundleLoadError(source, [
      { file: source, reason: 'no such file or directory', kind: ProblemKind.FILE },
    ]);
  }
  if (isDir) {
    const { bundle, problems, unloaded } = await collectBundleFromDirectory(source, options);
    // Files that failed to load first: they are the causes, and validation
    // problems (a $ref to such a file) are often their consequences.
    if (options.validate !== false) problems.push(...validateBundle(bundle, unloaded));
    if (problems.length > 0) throw new BundleLoadError(source, problems);
    return serializeBundle(bundle);
  }
  const loaded = await readBundleFile(source);
  if (options.validate === true) {
    const problems = validateBundle(loaded.bundle);
    if (problems.length > 0) throw new BundleLoadError(source, problems);
  }
  return loaded;
}

interface EngineOptions {
  /**
   * Answer a request asked before from memory: the same result object, deep
   * frozen, for the same query, variables and operation. A bundle never
   * changes, so only the memory is at stake: for a short-lived process that
   * asks the same big queries many times (the merge-request check, whose
   * integrations share their documents).
   */
  readonly memoize?: boolean;
}

export function createEmbeddedEngine(
  bundle: Bundle,
  sha256: string,
  source = 'bundle',
  options: EngineOptions = {},
): EmbeddedEngine {
  const db = new BundleDatabase(bundle, source);
  let schema: GraphQLSchema;
  try {
    schema = buildGraphqlSchema(confsOf(bundle.graphql));
  } catch (e) {
    throw new BundleLoadError(source, [
      { file: 'graphql-schemas/schema.yml', reason: (e as Error).message, kind: 'GRAPHQL' },
    ]);
  }
  const gitCommit =
    bundle.git_commit !== undefined
      ? { commit: bundle.git_commit, timestamp: bundle.git_commit_timestamp ?? '' }
      : null;

  const run = async (
    query: string,
    variables?: Record<string, unknown> | null,
    operationName?: string | null,
    freeze = false,
  ): Promise<{ result: GraphqlExecutionResult; phase: ExecutionPhase }> => {
    let document: DocumentNode;
    try {
      document = parse(query);
    } catch (e) {
      return failed('parse', [e instanceof GraphQLError ? e : new GraphQLError(String(e))]);
    }
    const invalid = validate(schema, document);
    if (invalid.length > 0) return failed('validate', invalid);
    const context: EngineContext = { db, schemas: [] };
    const executed: ExecutionResult = await execute({
      schema,
      document,
      rootValue: {},
      contextValue: context,
      variableValues: variables ?? undefined,
      operationName: operationName ?? undefined,
    });
    // Without `data` the request never started (bad variables, unknown operation).
    const started = 'data' in executed;
    const result: GraphqlExecutionResult = {
      ...(started
        ? {
            data: pruneEmptyObjects(executed.data ?? null, freeze) as Record<
              string,
              unknown
            > | null,
          }
        : {}),
      ...(executed.errors?.length ? { errors: executed.errors.map(toErrorEntry) } : {}),
      extensions: { schemas: context.schemas },
    };
    const phase: ExecutionPhase = started ? 'execute' : 'request';
    return { result, phase };
  };

  const answers = options.memoize
    ? new Map<string, Promise<{ result: GraphqlExecutionResult; phase: ExecutionPhase }>>()
    : null;
  const soleOperations = new Map<string, string | null>();
  const answer: typeof run = answers
    ? (query, variables, operationName) => {
        // A client may name the document's only operation or not (the
        // integrations' processes do, the in-process readers do not): the
        // same request either way, so one answer.
        let operation = operationName ?? soleOperations.get(query);
        if (operation === undefined) {
          operation = soleOperationName(query);
          soleOperations.set(query, operation);
        }
        const key = JSON.stringify([query, variables ?? null, operation]);
        let pending = answers.get(key);
        if (!pending) {
          // The data comes out frozen from its copy; the rest is frozen here.
          pending = run(query, variables, operationName, true).then(deepFreeze);
          answers.set(key, pending);
        }
        return pending;
      }
    : run;

  return {
    sha256,
    gitCommit,
    schema,
    bundle,
    execute: async (query, variables, operationName) =>
      (await answer(query, variables, operationName)).result,
    executeWithPhase: answer,
  };
}

/** The name of a document's only operation; null when it has none or several, or does not parse. */
function soleOperationName(query: string): string | null {
  try {
    const operations = parse(query).definitions.filter(
      (d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION,
    );
    return operations.length === 1 ? (operations[0]!.name?.value ?? null) : null;
  } catch (e) {
    // A document that does not parse fails when it runs.
    if (e instanceof GraphQLError) return null;
    throw e;
  }
}

function failed(
  phase: ExecutionPhase,
  errors: readonly GraphQLError[],
): { result: GraphqlExecutionResult; phase: ExecutionPhase } {
  return { phase, result: { errors: errors.map(toErrorEntry), extensions: { schemas: [] } } };
}

function toErrorEntry(error: GraphQLError): GraphqlErrorEntry {
  const json = error.toJSON();
  return {
    message: json.message,
    ...(json.locations ? { locations: json.locations } : {}),
    ...(json.path ? { path: json.path } : {}),
    ...(json.extensions && Object.keys(json.extensions).length > 0
      ? { extensions: { ...json.extensions } }
      : {}),
  };
}

/**
 * qontract-server removes every `{}` from every list in the response
 * (interface items that matched no fragment), recursively. The copy is made
 * of plain objects (graphql-js builds null-prototype ones); with `freeze`
 * each is frozen as it is made (a memoized answer, shared by its readers).
 */
function pruneEmptyObjects(value: unknown, freeze: boolean): unknown {
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (const item of value) {
      if (isEmptyObject(item)) continue;
      out.push(pruneEmptyObjects(item, freeze));
    }
    return freeze ? Object.freeze(out) : out;
  }
  if (value !== null && typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(obj)) out[key] = pruneEmptyObjects(obj[key], freeze);
    return freeze ? Object.freeze(out) : out;
  }
  return value;
}

function isEmptyObject(v: unknown): boolean {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 0;
}
