import { confsOf } from './graphql-conf.ts';
import { BundleLoadError, type BundleProblem, ProblemKind } from './problems.ts';
import type { Bundle, GraphqlTypeConf, JsonObject, ResourceRecord } from './types.ts';

/** A datafile as the server holds it: the bundle entry plus `path` (= its key). */
export type LoadedDatafile = JsonObject & { $schema: string; path: string };

/**
 * The in-memory indexes a bundle is queried through, built once at load
 * (upstream qontract-server `src/db.ts` `parseBundle()` and
 * `src/syntheticBackRefTrie.ts`). Lists keep bundle order, which is path order.
 */
export class BundleDatabase {
  readonly datafiles: ReadonlyMap<string, LoadedDatafile>;
  readonly datafilesBySchema: ReadonlyMap<string, readonly LoadedDatafile[]>;
  readonly resources: ReadonlyMap<string, ResourceRecord>;
  readonly resourceList: readonly ResourceRecord[];
  readonly confs: readonly GraphqlTypeConf[];
  readonly #backRefs: Map<string, Map<string, LoadedDatafile[]>>;

  constructor(bundle: Bundle, source = 'bundle') {
    const problems: BundleProblem[] = [];
    const datafiles = new Map<string, LoadedDatafile>();
    const bySchema = new Map<string, LoadedDatafile[]>();
    for (const [key, entry] of Object.entries(bundle.data)) {
      if (typeof entry !== 'object' || entry === null || Object.keys(entry).length === 0) {
        problems.push({ file: key, reason: 'the data file is empty', kind: ProblemKind.FILE });
        continue;
      }
      if (!entry.$schema || typeof entry.$schema !== 'string') {
        problems.push({
          file: key,
          reason: 'the data file has no $schema',
          kind: ProblemKind.FILE,
        });
        continue;
      }
      const df = { ...entry, path: key } as LoadedDatafile;
      datafiles.set(key, df);
      const list = bySchema.get(df.$schema);
      if (list) list.push(df);
      else bySchema.set(df.$schema, [df]);
    }
    const resources = new Map<string, ResourceRecord>();
    for (const [key, entry] of Object.entries(bundle.resources)) {
      if (typeof entry?.content !== 'string' || typeof entry.sha256sum !== 'string') {
        problems.push({
          file: key,
          reason: 'the resource record needs content and sha256sum',
          kind: ProblemKind.FILE,
        });
        continue;
      }
      resources.set(key, { ...entry, path: key });
    }
    if (problems.length > 0) throw new BundleLoadError(source, problems);

    this.datafiles = datafiles;
    this.datafilesBySchema = bySchema;
    this.resources = resources;
    this.resourceList = [...resources.values()];
    this.confs = confsOf(bundle.graphql);
    this.#backRefs = buildBackRefIndex(this.confs, bySchema);
  }

  /**
   * The datafiles of `schema` in which some value at `subAttr` (dot path,
   * arrays fan out, no crossref following) is `{$ref: targetPath}`.
   */
  syntheticBackRefs(schema: string, subAttr: string, targetPath: unknown): LoadedDatafile[] {
    if (typeof targetPath !== 'string') return [];
    return this.#backRefs.get(backRefKey(schema, subAttr))?.get(targetPath) ?? [];
  }
}

function backRefKey(schema: string, subAttr: string): string {
  return `${schema}\u0000${subAttr}`;
}

function buildBackRefIndex(
  confs: readonly GraphqlTypeConf[],
  bySchema: ReadonlyMap<string, readonly LoadedDatafile[]>,
): Map<string, Map<string, LoadedDatafile[]>> {
  const index = new Map<string, Map<string, LoadedDatafile[]>>();
  for (const conf of confs) {
    for (const field of conf.fields) {
      if (!field.synthetic) continue;
      const { schema, subAttr } = field.synthetic;
      const key = backRefKey(schema, subAttr);
      if (index.has(key)) continue;
      const byTarget = new Map<string, LoadedDatafile[]>();
      const attrs = subAttr.split('.');
      for (const df of bySchema.get(schema) ?? []) {
        const refs = new Set<string>();
        collectRefs(df, attrs, 0, refs);
        for (const ref of refs) {
          const list = byTarget.get(ref);
          if (list) list.push(df);
          else byTarget.set(ref, [df]);
        }
      }
      index.set(key, byTarget);
    }
  }
  return index;
}

function collectRefs(value: unknown, attrs: readonly string[], i: number, out: Set<string>): void {
  if (Array.isArray(value)) {
    for (const v of value) collectRefs(v, attrs, i, out);
    return;
  }
  if (value === null || typeof value !== 'object') return;
  const obj = value as Record<string, unknown>;
  if (i === attrs.length) {
    if (typeof obj.$ref === 'string' && obj.$ref !== '') out.add(obj.$ref);
    return;
  }
  const next = obj[attrs[i]!];
  if (next !== undefined) collectRefs(next, attrs, i + 1, out);
}
