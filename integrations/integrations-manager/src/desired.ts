import type {
  ClusterConnectionFragment,
  IntegrationsManagerQuery,
} from './integrations-manager.generated.ts';
import {
  type IntegrationValues,
  type KubeBody,
  processTemplate,
  renderTemplate,
} from './render.ts';
import { buildShardSpecs, ShardingError, type ShardingObjects } from './sharding.ts';

export const UPSTREAM_DEFAULT = 'https://github.com/app-sre/qontract-reconcile';

/** One target namespace of this manager and the objects the chart renders for it. */
interface NamespaceDeployment {
  readonly path: string;
  readonly name: string;
  readonly cluster: ClusterConnectionFragment;
  readonly objects: readonly KubeBody[];
}

export interface DesiredSettings {
  /** Only `managed` entries of namespaces in this environment (all when unset). */
  readonly environmentName?: string | undefined;
  /** Only integrations with this `upstream` (all when unset). */
  readonly upstream?: string | undefined;
  /** `--image-tag-from-ref ENV=REF`, by environment name. */
  readonly imageTagFromRef?: ReadonlyMap<string, string>;
  /** Resolved refs (`refKey`): the image tag (the sha's first `hashLength` characters) or why not. */
  readonly imageTags?: ReadonlyMap<string, string | Error>;
  /** `IMAGE` of every namespace (`--image`). */
  readonly image?: string | undefined;
  /**
   * The CLI flags of an integration (`--cluster-name`, ...); undefined for one
   * this CLI does not implement (the original's image runs it).
   */
  readonly flagsOf: (integration: string) => ReadonlySet<string> | undefined;
  /** The manager's environment: a variable named like a template parameter sets it. */
  readonly env: Readonly<Record<string, string | undefined>>;
}

export interface DesiredDeployments {
  readonly namespaces: NamespaceDeployment[];
  /** Bad data, each naming the integration file: registered as errors (nothing is deleted). */
  readonly problems: Array<{ readonly scope: string; readonly message: string }>;
}

type Namespace = NonNullable<
  NonNullable<IntegrationsManagerQuery['integrations']>[number]['managed']
>[number]['namespace'];

/**
 * The desired objects of every namespace this manager deploys to: the
 * managed entries grouped by namespace, their shards, the chart's template
 * and its processing with the environment's parameters (spec §8.2–8.6).
 */
export function desiredDeployments(
  data: IntegrationsManagerQuery,
  settings: DesiredSettings,
): DesiredDeployments {
  const objects: ShardingObjects = {
    clusters: data.clusters ?? [],
    awsAccounts: data.awsAccounts ?? [],
    ocmOrganizations: data.ocmOrganizations ?? [],
  };
  const problems: DesiredDeployments['problems'] = [];
  const groups = new Map<string, { namespace: Namespace; values: IntegrationValues[] }>();
  for (const integration of data.integrations ?? []) {
    if (settings.upstream && integration.upstream !== settings.upstream) continue;
    for (const managed of integration.managed ?? []) {
      const ns = managed.namespace;
      if (settings.environmentName && ns.environment.name !== settings.environmentName) continue;
      let shardSpecs: IntegrationValues['shardSpecs'];
      try {
        shardSpecs = managed.spec.cron
          ? []
          : buildShardSpecs(integration.name, settings.flagsOf(integration.name), managed, objects);
      } catch (e) {
        if (!(e instanceof ShardingError)) throw e;
        problems.push({
          scope: integration.path,
          message: `${integration.path}: managed entry for namespace ${ns.path}: ${e.message}`,
        });
        continue;
      }
      const group = groups.get(ns.path) ?? { namespace: ns, values: [] };
      groups.set(ns.path, group);
      group.values.push({ ...managed.spec, name: integration.name, shardSpecs });
    }
  }
  const namespaces = [...groups.values()].flatMap(({ namespace, values }) => {
    const template = renderTemplate({
      integrations: values.filter((v) => !v.cron),
      cronjobs: values.filter((v) => v.cron),
    });
    const ref = refToResolve(namespace, settings);
    const tag = ref ? settings.imageTags?.get(refKey(ref)) : undefined;
    if (ref && typeof tag !== 'string') {
      // Never deploy with a wrong image tag: the namespace is left as it is.
      problems.push({
        scope: namespace.path,
        message: `[${namespace.path}] cannot resolve ${ref.repo}@${ref.ref} (${ref.source}) to a commit: ${tag?.message ?? 'not resolved'}`,
      });
      return [];
    }
    const given = parametersFor(namespace, template.parameters, settings);
    // Above the environment and the process environment; --image (IMAGE) is another key.
    if (typeof tag === 'string') given.IMAGE_TAG = tag;
    return [
      {
        path: namespace.path,
        name: namespace.name,
        cluster: namespace.cluster,
        objects: processTemplate(template, given),
      },
    ];
  });
  return { namespaces, problems };
}

/**
 * Variables that run-integration reads for the manager's own process (its log
 * level, its loop): they configure the manager, not the pods it renders, which
 * take them from their environment's `parameters`. The original passes them
 * down like any other; its bootstrap template always sets them on the manager,
 * so an environment's `LOG_LEVEL` never reached a pod there.
 */
const MANAGER_OWN_SETTINGS: ReadonlySet<string> = new Set(['LOG_LEVEL', 'SLEEP_DURATION_SECS']);

/**
 * The processing parameters of one namespace (§8.6), lowest first: the
 * environment's `parameters`, then any template parameter set (non-empty) in
 * the manager's environment, except its own settings, then `--image`.
 */
function parametersFor(
  namespace: Namespace,
  declared: ReadonlyArray<{ readonly name: string }>,
  settings: DesiredSettings,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(environmentParameters(namespace.environment.parameters))) {
    out[k] = typeof v === 'string' ? v : JSON.stringify(v);
  }
  for (const { name } of declared) {
    const v = settings.env[name];
    // Empty is unset, as run-integration reads DRY_RUN: an image or template default of ""
    // must never render a wet pod over the environment's (or the chart's) --dry-run.
    if (v !== undefined && v !== '' && !MANAGER_OWN_SETTINGS.has(name)) out[name] = v;
  }
  if (settings.image) out.IMAGE = settings.image;
  return out;
}

/** A git ref whose commit sha becomes a namespace's `IMAGE_TAG`. */
export interface RefRequest {
  /** `owner/name` on GitHub. */
  readonly repo: string;
  readonly ref: string;
  /** Where it was asked for, for error messages. */
  readonly source: string;
}

/** The key of a resolved ref in `DesiredSettings.imageTags`. */
export const refKey = (r: Pick<RefRequest, 'repo' | 'ref'>) => `${r.repo}@${r.ref}`;

/**
 * The ref whose commit gives the namespace's `IMAGE_TAG` (§8.6): an
 * `INTEGRATION_UPSTREAM_REPOS` entry of the environment for the effective
 * upstream, overridden by `--image-tag-from-ref` for the environment.
 */
function refToResolve(
  namespace: Namespace,
  settings: Pick<DesiredSettings, 'upstream' | 'imageTagFromRef'>,
): RefRequest | undefined {
  const upstream = settings.upstream ?? UPSTREAM_DEFAULT;
  const repo = upstream.replace(/^https:\/\/github\.com\//, '');
  const params = environmentParameters(namespace.environment.parameters);
  const repos = params.INTEGRATION_UPSTREAM_REPOS;
  let found: RefRequest | undefined;
  if (Array.isArray(repos)) {
    const entry = repos.find((r) => (r as { repo?: unknown })?.repo === upstream) as
      | { ref?: unknown }
      | undefined;
    if (entry) {
      found = {
        repo,
        ref: String(entry.ref),
        source: `INTEGRATION_UPSTREAM_REPOS of environment ${namespace.environment.name}`,
      };
    }
  }
  const fromFlag = settings.imageTagFromRef?.get(namespace.environment.name);
  if (fromFlag) {
    found = {
      repo,
      ref: fromFlag,
      source: `--image-tag-from-ref ${namespace.environment.name}=${fromFlag}`,
    };
  }
  return found;
}

/** Every ref the selected namespaces need resolved (before `desiredDeployments`). */
export function refsToResolve(
  data: IntegrationsManagerQuery,
  settings: Omit<DesiredSettings, 'flagsOf' | 'env'>,
): RefRequest[] {
  const out = new Map<string, RefRequest>();
  for (const integration of data.integrations ?? []) {
    if (settings.upstream && integration.upstream !== settings.upstream) continue;
    for (const { namespace } of integration.managed ?? []) {
      if (settings.environmentName && namespace.environment.name !== settings.environmentName)
        continue;
      const r = refToResolve(namespace, settings);
      if (r) out.set(refKey(r), r);
    }
  }
  return [...out.values()];
}

/** `parameters` is JSON: an object from the embedded engine, its text from some servers. */
export function environmentParameters(raw: unknown): Record<string, unknown> {
  if (raw == null) return {};
  const parsed: unknown = typeof raw === 'string' ? JSON.parse(raw) : raw;
  return parsed && typeof parsed === 'object' && !Array.isArray(parsed)
    ? (parsed as Record<string, unknown>)
    : {};
}
