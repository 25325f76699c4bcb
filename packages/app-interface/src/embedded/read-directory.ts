import { opendirSync, readFileSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { compareCodePoints } from '@qontract/pycompat';
import {
  decodeFile,
  isObject,
  parseStructured,
  readDataFiles,
  sha256Hex,
  sortObjectKeys,
} from './data-files.ts';
import { readGitCommitInfo } from './git-info.ts';
import { parseGraphqlSection } from './graphql-conf.ts';
import { postprocessBundle } from './postprocess.ts';
import { BundleLoadError, type BundleProblem, ProblemKind } from './problems.ts';
import type { Bundle, GraphqlSection, JsonObject, ResourceRecord, UnloadedFiles } from './types.ts';

/** Where the parts of an app-interface checkout live. */
export interface AppInterfaceLayout {
  dataDir: string;
  resourcesDir: string;
  /** JSON schemas (qontract-schemas `schemas/`); optional. */
  schemasDir: string | null;
  graphqlSchemaFile: string;
}

function defaultLayout(root: string): AppInterfaceLayout {
  return {
    dataDir: join(root, 'data'),
    resourcesDir: join(root, 'resources'),
    schemasDir: join(root, 'schemas'),
    graphqlSchemaFile: join(root, 'graphql-schemas', 'schema.yml'),
  };
}

export interface BuildBundleOptions {
  layout?: Partial<AppInterfaceLayout>;
  /** Record the checkout's HEAD commit and time (default true). */
  git?: boolean;
}

const DATA_EXTENSIONS = /\.(?:ya?ml|json)$/;
const YAML_EXTENSION = /\.ya?ml$/;
// The bundler looks for a `$schema:` line without parsing, because many resources are templates.
const RESOURCE_SCHEMA_LINE = /^\$schema: (.+\.(?:yml|yaml))$/m;

/**
 * Reads an app-interface tree into the bundle qontract-bundler would produce
 * (upstream qontract-validator `validator/bundler.py` `build_bundle()`): data
 * files keyed by `/`-relative path with `$file_sha256sum`, resources with sha
 * and `$schema`, schemas, the GraphQL confs and the git commit. Collects every
 * problem and throws one `BundleLoadError` listing them all.
 */
export async function buildBundleFromDirectory(
  root: string,
  options: BuildBundleOptions = {},
): Promise<Bundle> {
  const { bundle, problems } = await collectBundleFromDirectory(root, options);
  if (problems.length > 0) throw new BundleLoadError(root, problems);
  return bundle;
}

/** What a collected checkout holds, what went wrong, and which files that left out. */
export interface CollectedBundle {
  bundle: Bundle;
  problems: BundleProblem[];
  /** Files that exist but failed to load, so validation can tell them from missing ones. */
  unloaded: UnloadedFiles;
}

/**
 * Like `buildBundleFromDirectory`, but returns the problems beside the bundle
 * of everything that could be read, so validation can report all at once.
 */
export async function collectBundleFromDirectory(
  root: string,
  options: BuildBundleOptions = {},
): Promise<CollectedBundle> {
  const layout = { ...defaultLayout(root), ...options.layout };
  const problems: BundleProblem[] = [];

  if (!(await isDirectory(layout.dataDir))) {
    problems.push({ file: layout.dataDir, reason: 'data directory not found', kind: 'FILE' });
  }
  const [dataFiles, resourceFiles, schemaFiles, git] = await Promise.all([
    problems.length > 0 ? [] : listFiles(layout.dataDir),
    isDirectory(layout.resourcesDir).then((ok) => (ok ? listFiles(layout.resourcesDir) : [])),
    layout.schemasDir
      ? isDirectory(layout.schemasDir).then((ok) => (ok ? listFiles(layout.schemasDir!) : []))
      : [],
    options.git === false ? null : readGitCommitInfo(root),
  ]);

  const data: Record<string, JsonObject> = {};
  const jobs = dataFiles
    .filter((f) => DATA_EXTENSIONS.test(f))
    .map((f) => [f, bundleKey(layout.dataDir, f)] as const);
  const read = readDataFiles(jobs);
  for (const [key, doc] of read.data) data[key] = doc;
  problems.push(...read.problems);

  const schemas: Record<string, JsonObject> = {};
  for (const file of schemaFiles) {
    if (!DATA_EXTENSIONS.test(file)) continue;
    const key = bundleKey(layout.schemasDir!, file);
    const raw = readOrProblem(file, key, problems);
    if (raw === undefined) continue;
    const parsed = parseStructured(key, raw, problems, ProblemKind.SCHEMA);
    if (parsed === undefined) continue;
    if (!isObject(parsed)) {
      problems.push({ file: key, reason: 'a JSON schema must be an object', kind: 'SCHEMA' });
      continue;
    }
    schemas[key] = withChecksumProperty(parsed);
  }

  const resources: Record<string, ResourceRecord> = {};
  for (const file of resourceFiles) {
    const key = bundleKey(layout.resourcesDir, file);
    const raw = readOrProblem(file, key, problems);
    if (raw === undefined) continue;
    const content = decodeFile(key, raw, 'resource', problems);
    if (content === undefined) continue;
    resources[key] = {
      path: key,
      content,
      sha256sum: sha256Hex(raw),
      $schema: YAML_EXTENSION.test(file) ? (RESOURCE_SCHEMA_LINE.exec(content)?.[1] ?? null) : null,
      backrefs: [],
    };
  }

  let graphql: GraphqlSection = { confs: [] };
  const graphqlKey = relative(root, layout.graphqlSchemaFile) || layout.graphqlSchemaFile;
  try {
    const raw = await readFile(layout.graphqlSchemaFile);
    const parsed = parseStructured(graphqlKey, raw, problems, ProblemKind.GRAPHQL);
    if (parsed !== undefined) {
      const section = parseGraphqlSection(parsed);
      if (section.ok) graphql = parsed as unknown as GraphqlSection;
      else problems.push({ file: graphqlKey, reason: section.reason, kind: 'GRAPHQL' });
    }
  } catch {
    problems.push({ file: graphqlKey, reason: 'GraphQL schema file not found', kind: 'FILE' });
  }

  const bundle: Bundle = {
    data: sortRecord(data),
    resources: sortRecord(resources),
    graphql,
    schemas: sortRecord(schemas),
    ...(git ? { git_commit: git.commit, git_commit_timestamp: git.timestamp } : {}),
  };
  // In the order the bundler read the files: it decides the order of each resource's backrefs.
  postprocessBundle(bundle, Object.keys(data));
  const unloaded: UnloadedFiles = {
    data: new Set(jobs.map(([, key]) => key).filter((key) => !(key in data))),
    resources: new Set(
      resourceFiles
        .map((f) => bundleKey(layout.resourcesDir, f))
        .filter((key) => !(key in resources)),
    ),
    schemas: new Set(
      schemaFiles
        .filter((f) => DATA_EXTENSIONS.test(f))
        .map((f) => bundleKey(layout.schemasDir!, f))
        .filter((key) => !(key in schemas)),
    ),
  };
  return { bundle, problems: sortProblems(problems), unloaded };
}

/** The bundler adds `$file_sha256sum` to metaschema-1 schemas so patched data still validates. */
function withChecksumProperty(schema: JsonObject): JsonObject {
  if (schema.$schema !== '/metaschema-1.json' || !isObject(schema.properties)) return schema;
  return {
    ...schema,
    properties: sortObjectKeys({
      ...schema.properties,
      $file_sha256sum: { type: 'string', description: 'sha256sum of the datafile' },
    }),
  };
}

/** A file's bytes, or a problem naming it (a symlink to a directory, a file that went away). */
function readOrProblem(file: string, key: string, problems: BundleProblem[]): Buffer | undefined {
  try {
    return readFileSync(file);
  } catch (e) {
    problems.push({ file: key, reason: `cannot read: ${(e as Error).message}`, kind: 'FILE' });
    return undefined;
  }
}

function sortRecord<T>(rec: Record<string, T>): Record<string, T> {
  const out: Record<string, T> = {};
  for (const k of Object.keys(rec).sort(compareCodePoints)) out[k] = rec[k]!;
  return out;
}

function sortProblems(problems: BundleProblem[]): BundleProblem[] {
  return problems.sort(
    (a, b) => compareCodePoints(a.file, b.file) || compareCodePoints(a.reason, b.reason),
  );
}

function bundleKey(base: string, file: string): string {
  return `/${relative(base, file).split(sep).join('/')}`;
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

/**
 * The files below `dir` in the order qontract-bundler reads them
 * (`Path.walk(top_down=False)`): depth first, a directory's subdirectories
 * before its own files, each directory in the order the file system lists
 * it (os.scandir's order, which `opendir` gives too; not sorted). Names
 * starting with `.` are skipped; symlinks count as files, never entered.
 */
function listFiles(dir: string): string[] {
  const out: string[] = [];
  const visit = (at: string): void => {
    const dirs: string[] = [];
    const files: string[] = [];
    // Synchronous: an async iteration costs a promise per entry, four times the walk.
    const handle = opendirSync(at, { bufferSize: 128 });
    try {
      for (let entry = handle.readSync(); entry !== null; entry = handle.readSync()) {
        if (entry.isDirectory()) dirs.push(entry.name);
        else if (entry.isFile() || entry.isSymbolicLink()) files.push(entry.name);
      }
    } finally {
      handle.closeSync();
    }
    for (const d of dirs) visit(join(at, d));
    for (const f of files) if (!f.startsWith('.')) out.push(join(at, f));
  };
  visit(dir);
  return out;
}

export { isObject, sha256Hex } from './data-files.ts';
