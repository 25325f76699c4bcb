import { pyJsonDumps } from '@qontract/pycompat';
import { sha256Hex } from './data-files.ts';
import { confsOf } from './graphql-conf.ts';
import type { Bundle, GraphqlFieldConf, GraphqlTypeConf, JsonObject, JsonValue } from './types.ts';
import { keysInDocumentOrder } from './yaml11.ts';

/*
 * qontract-bundler's post-processing (upstream qontract-validator
 * `validator/postprocess.py` over the walk of `validator/traverse.py`): it
 * walks every data file's values together with their JSON schema and
 * GraphQL type, and
 * - gives every resource the `backrefs` of the leaves whose JSON schema is the
 *   resource reference, in walk order;
 * - writes `__identifier` (sha256 of the item's context-unique fields) into
 *   every list item, and every datafile referenced from a list, that has
 *   `isContextUnique`/`isUnique` fields, and adds `__identifier` to the
 *   properties of the JSON schemas that describe them so the data still
 *   validates.
 * The walk follows the bundler's rules, quirks included: a `$ref` schema is
 * followed one step, a `oneOf` is resolved only between an inline and a
 * crossref branch or by the `enum` of a fieldMap interface's field, and
 * Python truthiness decides what counts as present.
 */

const RESOURCE_REF = '/common-1.json#/definitions/resourceref';
const IDENTIFIER = '__identifier';

type Schema = JsonValue | undefined | null;

interface SchemaInfo {
  readonly path: string | null;
  readonly schema: Schema;
  readonly oneOfRoot: Schema;
}

/** One GraphQL type as the bundler's lookup holds it: fields by name, last one wins. */
interface GqlType {
  readonly conf: GraphqlTypeConf;
  readonly fields: ReadonlyMap<string, GraphqlFieldConf>;
}

interface WalkNode {
  readonly data: unknown;
  readonly file: string;
  readonly fileSchema: string | null;
  readonly typeName: string | null;
  readonly fieldName: string | null;
  readonly jsonpath: readonly (string | number)[];
  readonly schema: SchemaInfo;
  readonly parent: WalkNode | null;
}

interface ContextUniqueNode {
  readonly schema: Schema;
  readonly oneOfRoot: Schema;
  readonly data: JsonObject;
  readonly props: Set<string>;
}

function isDict(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Python's truthiness, which the bundler's walrus checks use. */
function truthy(v: unknown): boolean {
  if (Array.isArray(v)) return v.length > 0;
  if (isDict(v)) return Object.keys(v).length > 0;
  return Boolean(v);
}

function jsonpathText(path: readonly (string | number)[]): string {
  return path.map((p) => (typeof p === 'number' ? `[${p}]` : p)).join('.');
}

class GraphqlLookup {
  readonly #types = new Map<string, GqlType>();
  readonly #typeBySchema = new Map<string, string>();

  constructor(confs: readonly GraphqlTypeConf[]) {
    for (const conf of confs) {
      if (!conf.name) continue;
      const fields = new Map<string, GraphqlFieldConf>();
      for (const f of conf.fields ?? []) if (f.name) fields.set(f.name, f);
      this.#types.set(conf.name, { conf, fields });
    }
    for (const [name, t] of this.#types) {
      if (t.conf.datafile) this.#typeBySchema.set(t.conf.datafile, name);
    }
    // The Query's datafileSchema mapping wins over the types' own `datafile`.
    for (const f of this.#types.get('Query')?.fields.values() ?? []) {
      if (f.datafileSchema) this.#typeBySchema.set(f.datafileSchema, f.type);
    }
  }

  byName(name: string | null | undefined): GqlType | null {
    return (name && this.#types.get(name)) || null;
  }

  bySchema(schema: unknown): GqlType | null {
    return typeof schema === 'string' ? this.byName(this.#typeBySchema.get(schema)) : null;
  }
}

/** The fieldMap field of an interface type, or null. */
function interfaceField(t: GqlType | null): string | null {
  const r = t?.conf.interfaceResolve;
  return t?.conf.isInterface && r?.strategy === 'fieldMap' ? (r.field ?? null) : null;
}

function interfaceFieldValue(t: GqlType | null, data: unknown): unknown {
  const field = interfaceField(t);
  return field && isDict(data) ? data[field] : undefined;
}

function isContextUnique(field: GraphqlFieldConf | null | undefined): boolean {
  return Boolean(field?.isContextUnique || field?.isUnique);
}

class BundlePostprocessor {
  readonly #bundle: Bundle;
  readonly #lookup: GraphqlLookup;
  /** Without any JSON schema, resource fields are known from GraphQL's `isResource` alone. */
  readonly #noSchemas: boolean;
  readonly #backrefs = new Map<
    string,
    { path: string; datafileSchema: string; jsonpath: string }[]
  >();
  readonly #contextUnique = new Map<string, ContextUniqueNode>();

  constructor(bundle: Bundle) {
    this.#bundle = bundle;
    this.#lookup = new GraphqlLookup(confsOf(bundle.graphql));
    this.#noSchemas = Object.keys(bundle.schemas).length === 0;
  }

  /**
   * Fills `backrefs` and writes `__identifier`s, walking the data files in
   * `order` (the order the bundler read them in; it decides the order of
   * each resource's backrefs).
   */
  run(order: readonly string[]): void {
    for (const file of order) {
      const datafile = this.#bundle.data[file];
      if (datafile) this.#walkFile(file, datafile);
    }
    for (const [path, resource] of Object.entries(this.#bundle.resources)) {
      resource.backrefs = this.#backrefs.get(path) ?? [];
    }
    for (const node of this.#contextUnique.values()) patchContextUnique(node);
  }

  #schemaNamed(path: unknown): Schema {
    return typeof path === 'string' && Object.hasOwn(this.#bundle.schemas, path)
      ? this.#bundle.schemas[path]
      : undefined;
  }

  #walkFile(file: string, datafile: JsonObject): void {
    const fileSchema = typeof datafile.$schema === 'string' ? datafile.$schema : null;
    let schema: SchemaInfo = { path: null, schema: null, oneOfRoot: null };
    let typeName: string | null = null;
    if (fileSchema !== null) {
      const type = this.#lookup.bySchema(fileSchema);
      schema = this.#resolveSchema(fileSchema, this.#schemaNamed(fileSchema) ?? {}, datafile, type);
      typeName = this.#resolveInterface(type, datafile)?.conf.name ?? type?.conf.name ?? null;
    }
    this.#walk({
      data: datafile,
      file,
      fileSchema,
      typeName,
      fieldName: null,
      jsonpath: [],
      schema,
      parent: null,
    });
  }

  #walk(node: WalkNode): void {
    const { data } = node;
    if (Array.isArray(data)) {
      data.forEach((item, i) => {
        const s = node.schema.schema;
        const items = truthy(s) && isDict(s) ? s.items : undefined;
        this.#walk(this.#next(node, items, item, i, this.#type(node), this.#field(node)));
      });
    } else if (isDict(data)) {
      for (const key of keysInDocumentOrder(data)) {
        if (key === '$schema') continue;
        const [type, field] = this.#nextGraphql(node, key);
        this.#walk(this.#next(node, this.#nextSchema(node, key), data[key], key, type, field));
      }
    } else {
      this.#leaf(node);
    }
  }

  #type(node: WalkNode): GqlType | null {
    return this.#lookup.byName(node.typeName);
  }

  #field(node: WalkNode): GraphqlFieldConf | null {
    return node.fieldName === null ? null : (this.#type(node)?.fields.get(node.fieldName) ?? null);
  }

  #nextGraphql(node: WalkNode, key: string): [GqlType | null, GraphqlFieldConf | null] {
    const type = this.#type(node);
    if (!type) return [null, null];
    const field = this.#field(node);
    if (key === '$ref') return [type, field];
    if (!field) {
      const own = type.fields.get(key);
      return own ? [type, own] : [null, null];
    }
    const next = this.#lookup.byName(field.type);
    return next ? [next, next.fields.get(key) ?? null] : [null, null];
  }

  #nextSchema(node: WalkNode, key: string): Schema {
    const s = node.schema.schema;
    if (!truthy(s) || !isDict(s)) return null;
    // A crossref's schema stays with its `$ref` key: the target is not entered.
    if (Object.hasOwn(s, '$schemaRef')) return s;
    const props = s.properties;
    return isDict(props) && Object.hasOwn(props, key) ? props[key] : null;
  }

  #next(
    node: WalkNode,
    schema: Schema,
    data: unknown,
    step: string | number,
    type: GqlType | null,
    field: GraphqlFieldConf | null,
  ): WalkNode {
    const fieldType = field ? this.#lookup.byName(field.type) : null;
    const info = this.#resolveSchema(node.schema.path, schema, data, fieldType);
    const resolved = this.#resolveInterface(fieldType, data);
    return {
      data,
      file: node.file,
      fileSchema: node.fileSchema,
      typeName: resolved ? resolved.conf.name : (type?.conf.name ?? null),
      fieldName: resolved ? null : (field?.name ?? null),
      jsonpath: [...node.jsonpath, step],
      schema: info,
      parent: node,
    };
  }

  #resolveInterface(type: GqlType | null, data: unknown): GqlType | null {
    if (!type?.conf.isInterface) return null;
    const fieldMap = type.conf.interfaceResolve?.fieldMap;
    const value = interfaceFieldValue(type, data);
    if (!fieldMap || !truthy(value) || typeof value !== 'string') return null;
    return Object.hasOwn(fieldMap, value) ? this.#lookup.byName(fieldMap[value]) : null;
  }

  #resolveRef(info: SchemaInfo): SchemaInfo {
    const s = info.schema;
    if (!truthy(s) || !isDict(s) || Object.hasOwn(s, '$schemaRef')) return info;
    const target = this.#schemaNamed(s.$ref);
    return truthy(target) ? { path: s.$ref as string, schema: target, oneOfRoot: null } : info;
  }

  #resolveSchema(
    path: string | null,
    schema: Schema,
    data: unknown,
    type: GqlType | null,
  ): SchemaInfo {
    const info = this.#resolveRef({ path, schema, oneOfRoot: null });
    const s = info.schema;
    if (!info.path || !truthy(s) || !isDict(s) || Object.hasOwn(s, '$schemaRef')) return info;
    const branches = s.oneOf;
    if (!truthy(branches) || !Array.isArray(branches)) return info;
    const isCrossref = (b: JsonValue) => isDict(b) && Object.hasOwn(b, '$schemaRef');
    const crossrefs = branches.filter(isCrossref).length;
    if (crossrefs === 1 && branches.length - crossrefs === 1) {
      const wantsCrossref = isDict(data) && Object.hasOwn(data, '$ref');
      const branch = branches.find((b) => isCrossref(b) === wantsCrossref);
      return this.#resolveRef({ path: info.path, schema: branch, oneOfRoot: info.oneOfRoot });
    }
    const field = interfaceField(type);
    const value = interfaceFieldValue(type, data);
    if (!field || !truthy(value)) return info;
    for (const branch of branches) {
      const b = this.#resolveRef({ path: info.path, schema: branch, oneOfRoot: null });
      const props = isDict(b.schema) ? b.schema.properties : undefined;
      const prop = isDict(props) ? props[field] : undefined;
      const allowed = isDict(prop) && Array.isArray(prop.enum) ? prop.enum : [];
      if (truthy(b.schema) && allowed.includes(value as JsonValue)) {
        return { path: b.path, schema: b.schema, oneOfRoot: s };
      }
    }
    return { path: info.path, schema: null, oneOfRoot: null };
  }

  #isResourceRef(node: WalkNode): boolean {
    const s = node.schema.schema;
    if (isDict(s) && s.$ref === RESOURCE_REF) return true;
    if (!this.#noSchemas) return false;
    const field = this.#field(node);
    return field?.isResource === true && field.type === 'string';
  }

  #leaf(node: WalkNode): void {
    if (this.#isResourceRef(node) && truthy(node.data) && node.fileSchema) {
      const list = this.#backrefs.get(String(node.data)) ?? [];
      list.push({
        path: node.file,
        datafileSchema: node.fileSchema,
        jsonpath: jsonpathText(node.jsonpath),
      });
      this.#backrefs.set(String(node.data), list);
    }
    const found = this.#contextUniqueNode(node);
    if (!found) return;
    const [key, unique] = found;
    const existing = this.#contextUnique.get(key);
    if (existing) for (const p of unique.props) existing.props.add(p);
    else this.#contextUnique.set(key, unique);
  }

  /** A leaf right inside a list item (or the `$ref` of a field there, or of the item itself). */
  #contextUniqueNode(node: WalkNode): [string, ContextUniqueNode] | null {
    const path = node.jsonpath;
    const [last, second, third] = [path.at(-1), path.at(-2), path.at(-3)];
    if (typeof last === 'string' && typeof second === 'number') {
      return last === '$ref' ? this.#crossrefItem(node) : this.#itemField(node, last);
    }
    if (last === '$ref' && typeof second === 'string' && typeof third === 'number' && node.parent) {
      return this.#itemField(node.parent, second);
    }
    return null;
  }

  /** A list item that is a crossref: the identifier goes into the referenced datafile. */
  #crossrefItem(node: WalkNode): [string, ContextUniqueNode] | null {
    const target = node.data;
    if (!truthy(target) || typeof target !== 'string') return null;
    const data = Object.hasOwn(this.#bundle.data, target) ? this.#bundle.data[target] : undefined;
    if (!truthy(data) || !isDict(data)) return null;
    const type = this.#lookup.bySchema(data.$schema);
    const schema = this.#schemaNamed(data.$schema);
    if (!truthy(data.$schema) || !type || !truthy(schema)) return null;
    const props = new Set([...type.fields].filter(([, f]) => isContextUnique(f)).map(([n]) => n));
    if (props.size === 0) return null;
    return [JSON.stringify([target, '']), { schema, oneOfRoot: null, data, props }];
  }

  #itemField(node: WalkNode, field: string): [string, ContextUniqueNode] | null {
    const item = node.parent;
    if (!item || !isDict(item.data) || !isContextUnique(this.#field(node))) return null;
    const key = JSON.stringify([node.file, jsonpathText(node.jsonpath.slice(0, -1))]);
    return [
      key,
      {
        schema: item.schema.schema,
        oneOfRoot: item.schema.oneOfRoot,
        data: item.data,
        props: new Set([field]),
      },
    ];
  }
}

function addIdentifierProperty(schema: Schema): void {
  if (isDict(schema) && truthy(schema.properties) && isDict(schema.properties)) {
    schema.properties[IDENTIFIER] = { type: 'string' };
  }
}

/**
 * The bundler's `__identifier`: sha256 of the compact, key-sorted JSON of the
 * item's context-unique fields (those it has).
 */
function patchContextUnique(node: ContextUniqueNode): void {
  const picked: Record<string, JsonValue> = {};
  for (const key of keysInDocumentOrder(node.data)) {
    if (node.props.has(key)) picked[key] = node.data[key]!;
  }
  if (Object.keys(picked).length === 0) return;
  const identifier = sha256Hex(
    pyJsonDumps(picked, { sortKeys: true, separators: [',', ':'], number: String }),
  );
  addIdentifierProperty(node.schema);
  addIdentifierProperty(node.oneOfRoot);
  if (isDict(node.schema) && Array.isArray(node.schema.oneOf)) {
    for (const branch of node.schema.oneOf) addIdentifierProperty(branch);
  }
  node.data[IDENTIFIER] = identifier;
}

/** Runs the bundler's post-processing on `bundle` in place (see above). */
export function postprocessBundle(bundle: Bundle, order: readonly string[]): void {
  new BundlePostprocessor(bundle).run(order);
}
