import { readFile, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { compareCodePoints } from '@qontract/pycompat';
import { BundleTextCache, serializeBundle } from './bundle-file.ts';
import {
  decodeFile,
  FileMemo,
  isObject,
  type MemoUse,
  parsedOnce,
  parseStructured,
  readDataFiles,
  readOrProblem,
  sha256Hex,
  sortObjectKeys,
} from './data-files.ts';
import { readGitCommitInfo } from './git-info.ts';
import { parseGraphqlSection } from './graphql-conf.ts';
import { postprocessBundle } from './postprocess.ts';
import { BundleLoadError, type BundleProblem, ProblemKind } from './problems.ts';
import {
  type DirectoryFiles,
  LOCAL_FILES,
  readDirectoriesInWorker,
  type TreeSource,
} from './tree-files.ts';
import type {
  Bundle,
  GraphqlSection,
  JsonObject,
  JsonValue,
  ResourceRecord,
  UnloadedFiles,
} from './types.ts';

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
export function collectBundleFromDirectory(
  root: string,
  options: BuildBundleOptions = {},
): Promise<CollectedBundle> {
  return collect(root, options, LOCAL_FILES, {});
}

/** A collected checkout with the sha256 of its bundle text (`serializeBundle`). */
interface SerializedCollectedBundle extends CollectedBundle {
  readonly sha256: string;
}

/**
 * Collects two checkouts that share most of their files, such as the target
 * branch and a merge request, each exactly as `collectBundleFromDirectory`
 * and `serializeBundle` would, in less time than two builds: `head` is built
 * first, and `base` reuses its work for every file whose bytes are the same
 * (the parse of a data file or JSON schema, the decoded text and sha of a
 * resource, the JSON text of a bundle entry that came out the same). Every
 * file of `base` is still read (on a worker thread, like most of `head`'s,
 * beside the parsing), and post-processing runs on each bundle on its own:
 * it depends on all of a tree's files and schemas, and writes into the data.
 */
export async function collectBundlePair(
  baseRoot: string,
  headRoot: string,
  options: Pick<BuildBundleOptions, 'git'> = {},
): Promise<{ base: SerializedCollectedBundle; head: SerializedCollectedBundle }> {
  const memo: TreeMemo = {
    data: new FileMemo(),
    schemas: new FileMemo(),
    resources: new FileMemo(),
    graphql: new FileMemo(),
  };
  const texts = new BundleTextCache();
  const [headLayout, baseLayout] = [defaultLayout(headRoot), defaultLayout(baseRoot)];
  // The files are read on another thread, in the order the builds need them, all
  // but the head's data files: this thread reads those while that one starts.
  const files = readDirectoriesInWorker([
    headLayout.schemasDir!,
    headLayout.resourcesDir,
    baseLayout.dataDir,
    baseLayout.schemasDir!,
    baseLayout.resourcesDir,
  ]);
  try {
    const head = await collect(headRoot, options, files, use(memo, 'keep'));
    const headSha = serializeBundle(head.bundle, texts).sha256;
    const base = await collect(baseRoot, options, files, use(memo, 'reuse'));
    const baseSha = serializeBundle(base.bundle, texts).sha256;
    return { base: { ...base, sha256: baseSha }, head: { ...head, sha256: headSha } };
  } finally {
    files.close();
  }
}

/** What a resource record holds that depends on its bytes only (backrefs depend on the tree). */
type ResourceContent = Pick<ResourceRecord, 'content' | 'sha256sum' | '$schema'>;

interface TreeMemo {
  data: FileMemo<JsonObject>;
  schemas: FileMemo<JsonObject>;
  resources: FileMemo<ResourceContent>;
  graphql: FileMemo<JsonValue>;
}

type TreeMemoUse = {
  [K in keyof TreeMemo]?: MemoUse<TreeMemo[K] extends FileMemo<infer T> ? T : never>;
};

/** Every memo of `memo` in one role: the first build keeps, the second reuses. */
function use(memo: TreeMemo, role: 'keep' | 'reuse'): TreeMemoUse {
  return {
    data: { [role]: memo.data },
    schemas: { [role]: memo.schemas },
    resources: { [role]: memo.resources },
    graphql: { [role]: memo.graphql },
  };
}

async function collect(
  root: string,
  options: BuildBundleOptions,
  source: TreeSource,
  memo: TreeMemoUse,
): Promise<CollectedBundle> {
  const layout = { ...defaultLayout(root), ...options.layout };
  const problems: BundleProblem[] = [];
  const git = options.git === false ? null : readGitCommitInfo(root);
  const filesOf = async (dir: string | null): Promise<DirectoryFiles> =>
    dir && (await isDirectory(dir)) ? source.directory(dir) : NO_FILES;

  if (!(await isDirectory(layout.dataDir))) {
    problems.push({ file: layout.dataDir, reason: 'data directory not found', kind: 'FILE' });
  }
  // One directory after the other: the data can be parsed while the rest is still being read.
  const dataFiles = problems.length > 0 ? NO_FILES : await source.directory(layout.dataDir);
  const data: Record<string, JsonObject> = {};
  const read = readDataFiles(dataFiles, (key) => DATA_EXTENSIONS.test(key), memo.data);
  for (const [key, doc] of read.data) data[key] = doc;
  problems.push(...read.problems);

  const schemas: Record<string, JsonObject> = {};
  const schemaFiles = await filesOf(layout.schemasDir);
  const schemaKeys: string[] = [];
  schemaFiles.files.forEach(([, key], i) => {
    if (!DATA_EXTENSIONS.test(key)) return;
    schemaKeys.push(key);
    const raw = readOrProblem(schemaFiles, i, problems);
    if (raw === undefined) return;
    const schema = parsedOnce(memo.schemas ?? {}, key, raw, () => {
      const parsed = parseStructured(key, raw, problems, ProblemKind.SCHEMA);
      if (parsed === undefined) return undefined;
      if (!isObject(parsed)) {
        problems.push({ file: key, reason: 'a JSON schema must be an object', kind: 'SCHEMA' });
        return undefined;
      }
      return withChecksumProperty(parsed);
    });
    if (schema) schemas[key] = schema;
  });

  const resources: Record<string, ResourceRecord> = {};
  const resourceFiles = await filesOf(layout.resourcesDir);
  resourceFiles.files.forEach(([, key], i) => {
    const raw = readOrProblem(resourceFiles, i, problems);
    if (raw === undefined) return;
    let record = memo.resources?.reuse?.take(key, raw);
    if (!record) {
      const content = decodeFile(key, raw, 'resource', problems);
      if (content === undefined) return;
      record = {
        content,
        sha256sum: sha256Hex(raw),
        $schema: YAML_EXTENSION.test(key)
          ? (RESOURCE_SCHEMA_LINE.exec(content)?.[1] ?? null)
          : null,
      };
      memo.resources?.keep?.keep(key, raw, record);
    }
    resources[key] = {
      path: key,
      content: record.content,
      sha256sum: record.sha256sum,
      $schema: record.$schema,
      backrefs: [],
    };
  });

  let graphql: GraphqlSection = { confs: [] };
  const graphqlKey = relative(root, layout.graphqlSchemaFile) || layout.graphqlSchemaFile;
  let graphqlRaw: Buffer | undefined;
  try {
    graphqlRaw = await readFile(layout.graphqlSchemaFile);
  } catch {
    problems.push({ file: graphqlKey, reason: 'GraphQL schema file not found', kind: 'FILE' });
  }
  if (graphqlRaw !== undefined) {
    // Keyed by the file's place in the tree, as the problems name it.
    const raw = graphqlRaw;
    const parsed = parsedOnce(memo.graphql ?? {}, graphqlKey, raw, () => {
      const value = parseStructured(graphqlKey, raw, problems, ProblemKind.GRAPHQL);
      if (value === undefined) return undefined;
      const section = parseGraphqlSection(value);
      if (section.ok) return value;
      problems.push({ file: graphqlKey, reason: section.reason, kind: 'GRAPHQL' });
      return undefined;
    });
    if (parsed !== undefined) graphql = parsed as unknown as GraphqlSection;
  }

  const gitInfo = await git;
  const bundle: Bundle = {
    data: sortRecord(data),
    resources: sortRecord(resources),
    graphql,
    schemas: sortRecord(schemas),
    ...(gitInfo ? { git_commit: gitInfo.commit, git_commit_timestamp: gitInfo.timestamp } : {}),
  };
  // In the order the bundler read the files: it decides the order of each resource's backrefs.
  postprocessBundle(bundle, Object.keys(data));
  const unloaded: UnloadedFiles = {
    data: new Set(
      dataFiles.files
        .map(([, key]) => key)
        .filter((key) => DATA_EXTENSIONS.test(key) && !(key in data)),
    ),
    resources: new Set(
      resourceFiles.files.map(([, key]) => key).filter((key) => !(key in resources)),
    ),
    schemas: new Set(schemaKeys.filter((key) => !(key in schemas))),
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

const NO_FILES: DirectoryFiles = { files: [], read: () => Buffer.alloc(0) };

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

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}
