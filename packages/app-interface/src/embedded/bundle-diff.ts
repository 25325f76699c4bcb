import { isDeepStrictEqual } from 'node:util';
import { compareCodePoints } from '@qontract/pycompat';
import { confsOf } from './graphql-conf.ts';
import type { Bundle, JsonObject, ResourceRecord } from './types.ts';

/** A data file as qontract-server holds it: the bundle's object plus its own `path`. */
type ServedDatafile = JsonObject & { path: string };

/** One changed data file in qontract-server's `/diff/<base>/<head>` answer. */
interface DatafileChange {
  datafilepath: string;
  /** The head's `$schema`, or the base's when the file was removed. */
  datafileschema: string;
  /** Absent when the file was added. */
  old?: ServedDatafile;
  /** Absent when the file was removed. */
  new?: ServedDatafile;
}

/** One changed resource file (its `sha256sum` differs, or it was added or removed). */
interface ResourceChange {
  resourcepath: string;
  old?: ResourceRecord;
  new?: ResourceRecord;
}

/**
 * qontract-server's `/diff/<base sha>/<head sha>` answer (upstream `src/server.ts`):
 * every data file whose content differs in any way and every resource whose
 * sha256sum differs, keyed by path. Unchanged files are not listed.
 */
export interface BundleDiff {
  datafiles: Record<string, DatafileChange>;
  resources: Record<string, ResourceChange>;
}

/** A JSON schema (`schemas/`) that was added, removed or changed. */
interface SchemaChange {
  path: string;
  change: 'added' | 'removed' | 'changed';
}

/**
 * What `qontract-mr-check` needs beyond qontract-server's answer: the changed
 * JSON schemas and whether the GraphQL schema (`graphql-schemas/schema.yml`)
 * changed — changes outside `data/` and `resources/`, which the original's
 * MR check answers by running every integration.
 */
export interface SchemaDiff {
  schemas: SchemaChange[];
  graphqlChanged: boolean;
}

function served(path: string, data: JsonObject): ServedDatafile {
  // qontract-server adds the key as `path` to every data file it loads.
  return { ...data, path };
}

function sortedUnion(a: object, b: object): string[] {
  return [...new Set([...Object.keys(a), ...Object.keys(b)])].sort(compareCodePoints);
}

/** The changed data files and resources between two bundles, as qontract-server's `/diff`. */
export function diffBundles(base: Bundle, head: Bundle): BundleDiff {
  const diff: BundleDiff = { datafiles: {}, resources: {} };
  for (const path of sortedUnion(base.resources, head.resources)) {
    const oldRes = base.resources[path];
    const newRes = head.resources[path];
    if (oldRes?.sha256sum === newRes?.sha256sum) continue;
    diff.resources[path] = {
      resourcepath: path,
      ...(oldRes ? { old: { ...oldRes, path } } : {}),
      ...(newRes ? { new: { ...newRes, path } } : {}),
    };
  }
  for (const path of sortedUnion(base.data, head.data)) {
    const oldData = base.data[path];
    const newData = head.data[path];
    // Whole objects, as qontract-server compares them: equal bytes ($file_sha256sum)
    // do not make equal documents, since the bundler writes `__identifier` into a
    // file that another file lists in a context-unique array.
    if (oldData && newData && isDeepStrictEqual(oldData, newData)) continue;
    const schemaOf = newData ?? oldData;
    diff.datafiles[path] = {
      datafilepath: path,
      datafileschema: String(schemaOf?.$schema ?? ''),
      ...(oldData ? { old: served(path, oldData) } : {}),
      ...(newData ? { new: served(path, newData) } : {}),
    };
  }
  return diff;
}

/** The JSON schemas and the GraphQL schema that differ between two bundles. */
export function diffBundleSchemas(base: Bundle, head: Bundle): SchemaDiff {
  const schemas: SchemaChange[] = [];
  for (const path of sortedUnion(base.schemas, head.schemas)) {
    const oldSchema = base.schemas[path];
    const newSchema = head.schemas[path];
    if (!oldSchema) schemas.push({ path, change: 'added' });
    else if (!newSchema) schemas.push({ path, change: 'removed' });
    else if (!isDeepStrictEqual(oldSchema, newSchema)) schemas.push({ path, change: 'changed' });
  }
  // Only the type definitions matter: the legacy bare-list form and the
  // `{ $schema, confs }` form of the same types are the same schema.
  const graphqlChanged = !isDeepStrictEqual(confsOf(base.graphql), confsOf(head.graphql));
  return { schemas, graphqlChanged };
}
