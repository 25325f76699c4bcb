import type { GqlClient } from '@qontract/app-interface';
import { QontractError } from '@qontract/core';
import { renderTemplate } from '@qontract/templating';
import { jsonpathFind } from './jsonpath.ts';
import {
  namespaceKey,
  parseJsonObject,
  parseNamespace,
  type RawSaasFile,
  type RawSaasNamespace,
  type RawSaasTarget,
  type SaasFile,
  type SaasNamespace,
  type SaasParameters,
  type SaasResourceTemplate,
  type SaasTarget,
} from './model.ts';
import { SaasFilesDocument } from './saas-files.generated.ts';
import { SaasFileTargetNamespacesDocument } from './saas-target-namespaces.generated.ts';

/** The JSON-typed fields of the SaasTargetNamespace fragment, as paths. */
const NAMESPACE_JSON_FIELDS: readonly (readonly string[])[] = [
  ['labels'],
  ['environment', 'labels'],
  ['environment', 'parameters'],
  ['app', 'labels'],
  ['cluster', 'labels'],
  ['cluster', 'externalConfiguration', 'labels'],
];

function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNulls);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([, v]) => v !== null)
        .map(([k, v]) => [k, withoutNulls(v)]),
    );
  }
  return value;
}

/**
 * What a namespace selector's JSONPath runs over: `{namespace: [...]}` with
 * every namespace as a map, null fields left out and JSON fields parsed (the
 * original's `model_dump(exclude_none=True)`).
 */
function namespaceSelectorDocument(namespaces: readonly RawSaasNamespace[]): {
  namespace: Record<string, unknown>[];
} {
  return {
    namespace: namespaces.map((ns) => {
      const doc = withoutNulls(ns) as Record<string, unknown>;
      for (const path of NAMESPACE_JSON_FIELDS) {
        let parent: Record<string, unknown> | undefined = doc;
        for (const k of path.slice(0, -1)) {
          const next: unknown = parent?.[k];
          parent =
            next !== null && typeof next === 'object'
              ? (next as Record<string, unknown>)
              : undefined;
        }
        const last = path.at(-1) as string;
        const text = parent?.[last];
        if (parent && typeof text === 'string') {
          parent[last] = parseJsonObject(text, `namespace ${ns.path}: ${path.join('.')}`);
        }
      }
      return doc;
    }),
  };
}

interface NamespaceSelector {
  readonly include: readonly string[];
  readonly exclude?: readonly string[] | null;
}

/**
 * Resolves a saas namespace selector over all namespaces: the union of the
 * `include` matches by (cluster, name), minus the `exclude` matches, in the
 * order first included. A selector must select namespaces.
 */
class NamespaceSelectorResolver {
  private readonly byKey: Map<string, SaasNamespace>;
  private document: { namespace: Record<string, unknown>[] } | undefined;
  private readonly matches = new Map<string, string[]>();
  private readonly raw: readonly RawSaasNamespace[];

  constructor(raw: readonly RawSaasNamespace[]) {
    this.raw = raw;
    this.byKey = new Map(raw.map((ns) => [namespaceKey(ns), parseNamespace(ns)]));
  }

  private keysMatching(expression: string): string[] {
    let keys = this.matches.get(expression);
    if (!keys) {
      this.document ??= namespaceSelectorDocument(this.raw);
      keys = jsonpathFind(expression, this.document).map((m) => {
        const v = m as { name?: unknown; cluster?: { name?: unknown } } | null;
        if (typeof v?.name !== 'string' || typeof v.cluster?.name !== 'string') {
          throw new QontractError(
            `namespaceSelector '${expression}' must select namespaces, it selected ${JSON.stringify(m)}`,
          );
        }
        return namespaceKey({ name: v.name, cluster: { name: v.cluster.name } });
      });
      this.matches.set(expression, keys);
    }
    return keys;
  }

  resolve(selector: NamespaceSelector): SaasNamespace[] {
    const selected = new Map<string, SaasNamespace>();
    for (const include of selector.include) {
      for (const key of this.keysMatching(include)) {
        const ns = this.byKey.get(key);
        if (ns) selected.set(key, ns);
      }
    }
    for (const exclude of selector.exclude ?? []) {
      for (const key of this.keysMatching(exclude)) selected.delete(key);
    }
    return [...selected.values()];
  }
}

function resolveTarget(
  target: RawSaasTarget,
  where: string,
): Omit<SaasTarget, 'namespace'> & { namespace: SaasNamespace | null } {
  const { namespaceSelector: _s, provider: _p, namespace, parameters, ...rest } = target;
  return {
    ...rest,
    namespace: namespace ? parseNamespace(namespace) : null,
    parameters: parseJsonObject(parameters, `${where}: target parameters`),
  };
}

/**
 * Whether a target's namespace selector selects `namespace` (the original's
 * `is_namespace_addressed_by_selector`): one `include` expression finds it
 * and no `exclude` one does, over `{namespace: [namespace]}` without nulls.
 */
export function namespaceSelectedBy(
  namespace: SaasNamespace,
  selector: NamespaceSelector,
): boolean {
  const document = { namespace: [withoutNulls(namespace)] };
  const finds = (expressions: readonly string[] | null | undefined) =>
    (expressions ?? []).some((e) => jsonpathFind(e, document).length > 0);
  return finds(selector.include) && !finds(selector.exclude);
}

/**
 * The original's `SaasFileList`: every saas file with its dynamic targets
 * (`namespaceSelector`, `provider: dynamic`) replaced by one copy per selected
 * namespace, appended after the static targets of their resource template.
 * A target with both `namespace` and `namespaceSelector`, a selector without
 * `provider: dynamic`, a target without a namespace or an invalid JSONPath is
 * a QontractError naming the saas file (the original stops there too).
 */
export function resolveSaasFiles(
  saasFiles: readonly RawSaasFile[],
  namespaces: readonly RawSaasNamespace[],
): SaasFile[] {
  const resolver = new NamespaceSelectorResolver(namespaces);
  return saasFiles.map((sf) => {
    const where = `saas file ${sf.name} (${sf.path})`;
    const resourceTemplates = sf.resourceTemplates.map((rt): SaasResourceTemplate => {
      const rtWhere = `${where}, resource template ${rt.name}`;
      const statics: SaasTarget[] = [];
      const dynamics: SaasTarget[] = [];
      for (const [index, target] of rt.targets.entries()) {
        const tWhere = `${rtWhere}, target ${target.name ?? index}`;
        if (target.namespace && target.namespaceSelector) {
          throw new QontractError(
            `SaasFile ${sf.name}: namespace and namespaceSelector are mutually exclusive (${tWhere})`,
          );
        }
        const provider = target.provider || 'static';
        if (target.namespaceSelector && provider !== 'dynamic') {
          throw new QontractError(
            `SaasFile ${sf.name}: namespaceSelector can only be used with 'provider: dynamic' (${tWhere})`,
          );
        }
        const resolved = resolveTarget(target, tWhere);
        if (target.namespaceSelector) {
          let selected: SaasNamespace[];
          try {
            selected = resolver.resolve(target.namespaceSelector.jsonPathSelectors);
          } catch (e) {
            throw new QontractError(
              `SaasFile ${sf.name}: ${e instanceof Error ? e.message : String(e)} (${tWhere})`,
            );
          }
          for (const namespace of selected) dynamics.push({ ...resolved, namespace });
        } else if (resolved.namespace) {
          statics.push({ ...resolved, namespace: resolved.namespace });
        } else {
          throw new QontractError(
            `SaasFile ${sf.name}: a target needs a namespace or a namespaceSelector (${tWhere})`,
          );
        }
      }
      return {
        ...rt,
        parameters: parseJsonObject(rt.parameters, `${rtWhere}: parameters`),
        targets: [...statics, ...dynamics],
      };
    });
    return {
      ...sf,
      labels: parseJsonObject(sf.labels, `${where}: labels`),
      parameters: parseJsonObject(sf.parameters, `${where}: parameters`),
      resourceTemplates,
    };
  });
}

async function renderExtraCurly(
  body: string,
  namespace: SaasNamespace,
  path: string,
): Promise<string> {
  return renderTemplate(body, {
    type: 'extracurlyjinja2',
    path,
    variables: { resource: { namespace } },
    helpers: {},
  });
}

/**
 * Renders the templated values of every target, as the original does before
 * anything else: string `parameters` and the `path`/`field` of target
 * `secretParameters` are extra-curly Jinja2 (`{{{ resource.namespace.name }}}`)
 * with the target namespace as `resource.namespace`. A render failure is a
 * QontractError naming the saas file and target.
 */
export async function renderTargetTemplates(saasFiles: readonly SaasFile[]): Promise<SaasFile[]> {
  const out: SaasFile[] = [];
  for (const sf of saasFiles) {
    const resourceTemplates: SaasResourceTemplate[] = [];
    for (const rt of sf.resourceTemplates) {
      const targets: SaasTarget[] = [];
      for (const t of rt.targets) {
        const where = `${sf.path}: ${rt.name} → ${namespaceKey(t.namespace)}`;
        let parameters: SaasParameters | null = t.parameters;
        if (parameters) {
          parameters = { ...parameters };
          for (const [k, v] of Object.entries(parameters)) {
            if (typeof v === 'string')
              parameters[k] = await renderExtraCurly(v, t.namespace, `${where} parameter ${k}`);
          }
        }
        const secretParameters = t.secretParameters
          ? await Promise.all(
              t.secretParameters.map(async (sp) => ({
                ...sp,
                secret: {
                  ...sp.secret,
                  field: await renderExtraCurly(
                    sp.secret.field,
                    t.namespace,
                    `${where} ${sp.name}`,
                  ),
                  path: await renderExtraCurly(sp.secret.path, t.namespace, `${where} ${sp.name}`),
                },
              })),
            )
          : t.secretParameters;
        targets.push({ ...t, parameters, secretParameters });
      }
      resourceTemplates.push({ ...rt, targets });
    }
    out.push({ ...sf, resourceTemplates });
  }
  return out;
}

export interface SaasFileFilter {
  readonly name?: string | undefined;
  readonly envName?: string | undefined;
  readonly appName?: string | undefined;
}

/**
 * The original's `SaasFileList.where`: no filter keeps everything; an empty
 * string filter keeps nothing; `envName` keeps the targets in that
 * environment and drops resource templates, then saas files, left empty.
 */
export function selectSaasFiles(
  saasFiles: readonly SaasFile[],
  { name, envName, appName }: SaasFileFilter,
): SaasFile[] {
  if (name === undefined && envName === undefined && appName === undefined) return [...saasFiles];
  if (name === '' || envName === '' || appName === '') return [];
  const out: SaasFile[] = [];
  for (const sf of saasFiles) {
    if (name && sf.name !== name) continue;
    if (appName && sf.app.name !== appName) continue;
    if (!envName) {
      out.push(sf);
      continue;
    }
    const resourceTemplates = sf.resourceTemplates
      .map((rt) => ({
        ...rt,
        targets: rt.targets.filter((t) => t.namespace.environment.name === envName),
      }))
      .filter((rt) => rt.targets.length > 0);
    if (resourceTemplates.length > 0) out.push({ ...sf, resourceTemplates });
  }
  return out;
}

/**
 * Every saas file of app-interface (or only `filter.name`'s) with selectors
 * resolved and target templates rendered, then narrowed by `filter`, as the
 * original's `get_saas_files` + `resolve_templated_parameters`.
 */
export async function loadSaasFiles(
  gql: GqlClient,
  filter: SaasFileFilter = {},
): Promise<SaasFile[]> {
  const [{ saas_files }, { namespaces }] = await Promise.all([
    gql.query(SaasFilesDocument),
    gql.query(SaasFileTargetNamespacesDocument),
  ]);
  const named = (saas_files ?? []).filter((sf) => !filter.name || sf.name === filter.name);
  const resolved = resolveSaasFiles(named, namespaces ?? []);
  return renderTargetTemplates(selectSaasFiles(resolved, { ...filter, name: undefined }));
}
