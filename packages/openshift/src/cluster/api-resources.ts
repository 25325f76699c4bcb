/** One API resource of a cluster, as discovery reports it. */
export interface ApiResource {
  readonly kind: string;
  /** '' for the core group. */
  readonly group: string;
  readonly version: string;
  /** The plural used in URLs (`deployments`). */
  readonly name: string;
  readonly namespaced: boolean;
  readonly verbs: readonly string[];
}

/** The `apiVersion` of objects of `r` (`v1`, `apps/v1`). */
export function apiVersionOf(r: ApiResource): string {
  return r.group ? `${r.group}/${r.version}` : r.version;
}

/** The REST path of a collection or object of `r`. */
export function resourcePath(r: ApiResource, namespace?: string, name?: string): string {
  const base = r.group ? `/apis/${r.group}/${r.version}` : `/api/${r.version}`;
  const ns = r.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : '';
  return `${base}${ns}/${r.name}${name === undefined ? '' : `/${encodeURIComponent(name)}`}`;
}

export class KindNotFoundError extends Error {}
export class AmbiguousResourceTypeError extends Error {}

const KIND_STRING = /^(?<kind>[^./]+)(?:\.(?<group>[^/]+))?(?:\/(?<version>.+))?$/;

/**
 * The original's kind strings: `Kind`, `Kind.group` or `Kind.group/version`
 * (`Secret.core` names the core group).
 */
export function parseKind(kindString: string): { kind: string; group: string; version: string } {
  const m = KIND_STRING.exec(kindString);
  if (!m?.groups) throw new Error(`invalid kind string '${kindString}'`);
  return { kind: m.groups.kind!, group: m.groups.group ?? '', version: m.groups.version ?? '' };
}

/**
 * The API resources of one cluster by kind, with the original's resolution
 * rules: a bare kind served by several groups is ambiguous; the version part of
 * a kind string is ignored for the lookup.
 */
export class ApiResourceCatalog {
  readonly #byKind = new Map<string, ApiResource[]>();

  constructor(resources: Iterable<ApiResource>) {
    for (const r of resources) {
      const list = this.#byKind.get(r.kind) ?? [];
      // Discovery lists a resource once per served version; keep the first
      // (preferred) version of each group.
      if (!list.some((x) => x.group === r.group)) list.push(r);
      this.#byKind.set(r.kind, list);
    }
  }

  get(kindString: string): ApiResource {
    const { kind, group } = parseKind(kindString);
    const entries = this.#byKind.get(kind);
    if (!entries || entries.length === 0) {
      throw new KindNotFoundError(`Unsupported resource type: ${kind}`);
    }
    const wanted = group === 'core' ? '' : group;
    if (!group) {
      if (entries.length === 1) return entries[0]!;
      throw new AmbiguousResourceTypeError(
        `Ambiguous resource type: ${kind}. Please fully qualify it with its API group. E.g., ClusterRoleBinding -> ClusterRoleBinding.rbac.authorization.k8s.io`,
      );
    }
    const match = entries.find((e) => e.group === wanted);
    if (!match) throw new KindNotFoundError(`Unsupported resource type: ${kindString}`);
    return match;
  }

  isKindSupported(kindString: string): boolean {
    try {
      this.get(kindString);
      return true;
    } catch (e) {
      if (e instanceof KindNotFoundError) return false;
      throw e;
    }
  }

  has(kind: string, group: string): boolean {
    return this.#byKind.get(kind)?.some((e) => e.group === group) ?? false;
  }

  get size(): number {
    return this.#byKind.size;
  }
}
