import type { GraphQLSchema } from 'graphql';

/** A JSON value as it sits in a bundle (parsed YAML or JSON). */
export type JsonValue = string | number | boolean | null | JsonValue[] | JsonObject;
export interface JsonObject {
  [key: string]: JsonValue;
}

/** One field of a `schema.yml` type conf (`/app-interface/graphql-schemas-1.yml`). */
export interface GraphqlFieldConf {
  name: string;
  type: string;
  isRequired?: boolean;
  isList?: boolean;
  isInterface?: boolean;
  isUnique?: boolean;
  isContextUnique?: boolean;
  isSearchable?: boolean;
  isResource?: boolean;
  resolveResource?: boolean;
  synthetic?: { schema: string; subAttr: string };
  datafileSchema?: string;
}

interface GraphqlInterfaceResolve {
  strategy: 'fieldMap' | 'schema';
  field?: string;
  fieldMap?: Record<string, string>;
}

/** One type conf of `schema.yml`. */
export interface GraphqlTypeConf {
  name: string;
  fields: GraphqlFieldConf[];
  datafile?: string;
  isInterface?: boolean;
  interface?: string;
  interfaceResolve?: GraphqlInterfaceResolve;
}

/** The `graphql` section of a bundle: the current `{ $schema, confs }` form or the legacy bare list. */
export type GraphqlSection = { $schema?: string; confs: GraphqlTypeConf[] } | GraphqlTypeConf[];

/** A resource file as the bundler records it. */
export interface ResourceRecord {
  path: string;
  content: string;
  sha256sum: string;
  /** The `$schema:` line of a YAML resource, or null. */
  $schema: string | null;
  backrefs: ResourceBackref[];
}

interface ResourceBackref {
  path: string;
  datafileSchema: string;
  jsonpath: string;
}

/**
 * The qontract-validator bundle (written by its `validator/bundler.py`, loaded
 * by qontract-server's `src/db.ts`).
 */
export interface Bundle {
  data: Record<string, JsonObject>;
  resources: Record<string, ResourceRecord>;
  graphql: GraphqlSection;
  schemas: Record<string, JsonObject>;
  git_commit?: string;
  git_commit_timestamp?: string;
}

/**
 * Bundle keys of the files of a checkout that exist but failed to load (their
 * problems name the cause): references to them are follow-on problems.
 */
export interface UnloadedFiles {
  readonly data: ReadonlySet<string>;
  readonly resources: ReadonlySet<string>;
  readonly schemas: ReadonlySet<string>;
}

export interface GraphqlErrorEntry {
  message: string;
  path?: ReadonlyArray<string | number>;
  locations?: ReadonlyArray<{ line: number; column: number }>;
  extensions?: Record<string, unknown>;
}

export interface GraphqlExecutionResult {
  data?: Record<string, unknown> | null;
  errors?: ReadonlyArray<GraphqlErrorEntry>;
  extensions?: { schemas: string[] };
}

/**
 * How far a request got: `parse` and `validate` failures, and `request`
 * (variables that do not coerce, an unknown operation) never execute; the
 * HTTP server answers those with 400.
 */
export type ExecutionPhase = 'parse' | 'validate' | 'request' | 'execute';

export interface EmbeddedEngine {
  /** Bundle sha, as `/sha256` serves it. */
  readonly sha256: string;
  readonly gitCommit: { commit: string; timestamp: string } | null;
  readonly schema: GraphQLSchema;
  /** The bundle answered (the bundle server's `/diff` compares two of them). */
  readonly bundle?: Bundle;
  execute(
    query: string,
    variables?: Record<string, unknown> | null,
    operationName?: string | null,
  ): Promise<GraphqlExecutionResult>;
  /** Like `execute`, also telling which phase produced the errors (for HTTP status codes). */
  executeWithPhase(
    query: string,
    variables?: Record<string, unknown> | null,
    operationName?: string | null,
  ): Promise<{ result: GraphqlExecutionResult; phase: ExecutionPhase }>;
}
