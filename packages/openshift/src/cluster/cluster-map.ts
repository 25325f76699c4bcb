import { errorMessage, RunGenerations, type SecretReader, type SecretRef } from '@qontract/core';
import pLimit, { type LimitFunction } from 'p-limit';
import { type ApiResource, type ApiResourceCatalog, KindNotFoundError } from './api-resources.ts';
import {
  type ClusterConnection,
  credentialId,
  KubeClient,
  type KubeClientOptions,
  RequestAbortedError,
  RequestStats,
} from './kube-client.ts';

/** The cluster fields the client factory reads (app-interface `Cluster_v1`). */
export interface ClusterInfo {
  readonly name: string;
  readonly serverUrl?: string | null;
  readonly internal?: boolean | null;
  readonly insecureSkipTLSVerify?: boolean | null;
  readonly automationToken?: SecretRef | null;
  readonly clusterAdminAutomationToken?: SecretRef | null;
  readonly automationTokens?: ReadonlyArray<AutomationTokenEntry> | null;
  readonly clusterAdminAutomationTokens?: ReadonlyArray<AutomationTokenEntry> | null;
  readonly disable?: { readonly integrations?: ReadonlyArray<string> | null } | null;
}

interface AutomationTokenEntry {
  readonly active?: boolean | null;
  readonly delete?: boolean | null;
  readonly secret?: SecretRef | null;
}

/** A namespace as far as the client factory cares: its cluster and whether it needs cluster-admin. */
export interface NamespaceClusterInfo {
  readonly cluster: ClusterInfo;
  readonly clusterAdmin?: boolean | null;
}

/** A usable connection to one cluster, with its API resources. */
export interface ClusterHandle {
  readonly name: string;
  readonly privileged: boolean;
  readonly client: KubeClient;
  /** What discovery found; replaced when a discovery kept from an earlier run is repeated. */
  catalog: ApiResourceCatalog;
  /** OpenShift clusters serve `Project.project.openshift.io`. */
  readonly isOpenShift: boolean;
  /**
   * Where the catalog was kept from an earlier run: discovers again (once per
   * run) and replaces the catalog; `apiResourceOf` calls it for a kind the
   * kept catalog does not know (a CRD installed since).
   */
  readonly rediscover?: () => Promise<void>;
}

/**
 * The API resource of `kind` on the handle's cluster. A kind the catalog does
 * not know is looked up again after a new discovery where the catalog was kept
 * from an earlier run; else, and if it is still unknown, KindNotFoundError.
 */
export async function apiResourceOf(handle: ClusterHandle, kind: string): Promise<ApiResource> {
  try {
    return handle.catalog.get(kind);
  } catch (e) {
    if (!(e instanceof KindNotFoundError) || !handle.rediscover) throw e;
    // A discovery that fails now leaves the kind unknown, as it was.
    await handle.rediscover().catch(() => {
      throw e;
    });
  }
  return handle.catalog.get(kind);
}

/**
 * Why a cluster has no client. `error` problems fail the run (the original's
 * OCLogMsg at ERROR); `debug` ones are clusters skipped on purpose.
 */
export interface ClusterProblem {
  readonly name: string;
  readonly level: 'error' | 'debug';
  readonly message: string;
}

export function isClusterProblem(v: ClusterHandle | ClusterProblem): v is ClusterProblem {
  return 'level' in v;
}

export interface ClusterMapSettings {
  /** The integration's name with dashes; clusters listing it in `disable.integrations` are skipped. */
  readonly integration: string;
  readonly secrets: SecretReader;
  /** `--internal` (true) / `--external` (false) / all clusters (undefined). */
  readonly internal?: boolean | undefined;
  /** Make privileged (cluster-admin) clients for every cluster. */
  readonly clusterAdmin?: boolean;
  /**
   * Secret reads (the clusters' tokens) at a time, default 10. Each cluster's
   * own requests (connection, `/version`, discovery) are not limited: one
   * server each, a few requests each.
   */
  readonly concurrency?: number;
  readonly stats?: RequestStats;
  readonly clientOptions?: KubeClientOptions;
  /** Timeout of the reachability check. */
  readonly reachabilityTimeoutMs?: number;
  /**
   * How long reading the current state of one cluster may take in all (every
   * list and get of it); the cluster is given up when it takes longer.
   * Default 300 s.
   */
  readonly readTimeoutMs?: number;
  /** Clients kept from an earlier run of the process, and kept for the next one. */
  readonly kept?: KeptClusters | undefined;
}

/** A cluster client kept between runs, with what its discovery found. */
interface KeptCluster {
  /** Owns the connections; every run borrows it. */
  readonly owner: KubeClient;
  readonly catalog: ApiResourceCatalog;
  readonly discoveredAt: number;
  /** The last run that used it. */
  usedIn: number;
}

/**
 * Cluster clients a looping process keeps between its runs (one per cluster,
 * server, credential and TLS setting), so that a run does not open new
 * connections and TLS sessions nor repeat the discovery of every cluster.
 * Every run still reads the cluster's token and checks that the cluster
 * answers (`/version`, over the kept connection); a changed token or server
 * makes a new client. Discovery is repeated once it is older than
 * `discoveryMaxAgeMs`, after a failed check, and when a run asks for a kind
 * the kept discovery does not know (`apiResourceOf`). Each cluster map is a
 * run (`beginRun`, `endRun` when the map is closed); once no run is under
 * way, the clients no run since the last such moment used are closed.
 */
export class KeptClusters {
  readonly discoveryMaxAgeMs: number;
  readonly #entries = new Map<string, KeptCluster>();
  readonly #runs = new RunGenerations();

  constructor(options: { discoveryMaxAgeMs?: number } = {}) {
    this.discoveryMaxAgeMs = options.discoveryMaxAgeMs ?? 600_000;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The key of a connection: the token only as a hash. */
  static keyOf(connection: ClusterConnection, privileged: boolean): string {
    return [
      connection.name,
      privileged ? 'admin' : 'user',
      connection.server,
      credentialId(connection),
      connection.insecureSkipTLSVerify ? 'insecure' : 'verify',
      connection.caData ?? '',
    ].join('\u0000');
  }

  /** A run begins (a cluster map is built): its number, for `use`, `keep` and `endRun`. */
  beginRun(): number {
    return this.#runs.begin();
  }

  /** A run ended (its map was closed); when it was the last under way, unused clients are closed. */
  endRun(run: number): void {
    this.#runs.end(run, (epoch) => {
      for (const [key, entry] of this.#entries) if (entry.usedIn < epoch) this.drop(key);
    });
  }

  /** The kept client for `key`, marked as used by `run`. */
  use(key: string, run: number): KeptCluster | undefined {
    const entry = this.#entries.get(key);
    if (entry) entry.usedIn = Math.max(entry.usedIn, run);
    return entry;
  }

  keep(key: string, entry: Omit<KeptCluster, 'usedIn'>, run: number): void {
    const before = this.#entries.get(key);
    if (before && before.owner !== entry.owner) void before.owner.close();
    this.#entries.set(key, { ...entry, usedIn: Math.max(before?.usedIn ?? 0, run) });
  }

  drop(key: string): void {
    const entry = this.#entries.get(key);
    if (!entry) return;
    this.#entries.delete(key);
    void entry.owner.close();
  }

  closeAll(): void {
    for (const key of [...this.#entries.keys()]) this.drop(key);
  }
}

type Key = `${string}\u0000${'admin' | 'user'}`;

/** A cluster map's run of the kept clients. */
interface KeptRun {
  readonly store: KeptClusters;
  readonly run: number;
}

/**
 * Cluster clients for a run, built from app-interface cluster data, with the
 * original's OC_Map rules: disabled and internal/external-filtered clusters are
 * skipped silently; a missing token or serverUrl, a missing secret, a server
 * URL mismatch and an unreachable cluster become problems of that cluster
 * while the others proceed.
 */
export class ClusterMap {
  readonly stats: RequestStats;
  /** How long reading the current state of one cluster may take (`readTimeoutMs`). */
  readonly readTimeoutMs: number;
  readonly #entries = new Map<Key, ClusterHandle | ClusterProblem>();
  /** The kept clients this map borrows from, and its run of them; ended with the map. */
  #kept: KeptRun | undefined;

  private constructor(stats: RequestStats, readTimeoutMs: number) {
    this.stats = stats;
    this.readTimeoutMs = readTimeoutMs;
  }

  /** Clients for the clusters of `namespaces` (privileged ones too where a namespace asks for it). */
  static async fromNamespaces(
    namespaces: ReadonlyArray<NamespaceClusterInfo>,
    settings: ClusterMapSettings,
  ): Promise<ClusterMap> {
    const wanted = new Map<Key, { info: ClusterInfo; privileged: boolean }>();
    for (const ns of namespaces) {
      const admin = Boolean(ns.clusterAdmin) || Boolean(settings.clusterAdmin);
      // The last namespace's cluster data wins, as upstream.
      wanted.set(`${ns.cluster.name}\u0000user`, { info: ns.cluster, privileged: false });
      if (admin)
        wanted.set(`${ns.cluster.name}\u0000admin`, { info: ns.cluster, privileged: true });
    }
    return ClusterMap.#build([...wanted.values()], settings);
  }

  /** Clients for `clusters` (privileged only, when `clusterAdmin` is set, as upstream). */
  static async fromClusters(
    clusters: ReadonlyArray<ClusterInfo>,
    settings: ClusterMapSettings,
  ): Promise<ClusterMap> {
    return ClusterMap.#build(
      clusters.map((info) => ({ info, privileged: Boolean(settings.clusterAdmin) })),
      settings,
    );
  }

  static async #build(
    wanted: ReadonlyArray<{ info: ClusterInfo; privileged: boolean }>,
    settings: ClusterMapSettings,
  ): Promise<ClusterMap> {
    const map = new ClusterMap(
      settings.stats ?? new RequestStats(),
      settings.readTimeoutMs ?? 300_000,
    );
    const secretSlots = pLimit(Math.max(1, settings.concurrency ?? 10));
    const kept = settings.kept
      ? { store: settings.kept, run: settings.kept.beginRun() }
      : undefined;
    map.#kept = kept;
    try {
      await Promise.all(
        wanted.map(async ({ info, privileged }) => {
          const entry = await connect(info, privileged, settings, map.stats, kept, secretSlots);
          if (entry) map.#entries.set(`${info.name}\u0000${privileged ? 'admin' : 'user'}`, entry);
        }),
      );
    } catch (e) {
      await map.close();
      throw e;
    }
    return map;
  }

  /** The client for `cluster`, or why there is none. */
  get(cluster: string, privileged = false): ClusterHandle | ClusterProblem {
    return (
      this.#entries.get(`${cluster}\u0000${privileged ? 'admin' : 'user'}`) ?? {
        name: cluster,
        level: 'debug',
        message: `[${cluster}] cluster skipped`,
      }
    );
  }

  /** Names of clusters with a working client. */
  clusters(options: { privileged?: boolean; includeErrors?: boolean } = {}): string[] {
    const suffix = options.privileged ? 'admin' : 'user';
    const names: string[] = [];
    for (const [key, value] of this.#entries) {
      const [name, kind] = key.split('\u0000') as [string, string];
      if (kind !== suffix) continue;
      if (options.includeErrors || !isClusterProblem(value)) names.push(name);
    }
    return names.sort();
  }

  /** Closes the connections of every client of the map (the end of a run). */
  async close(): Promise<void> {
    const kept = this.#kept;
    this.#kept = undefined;
    kept?.store.endRun(kept.run);
    await Promise.all(
      [...this.#entries.values()].map((entry) =>
        isClusterProblem(entry) ? undefined : entry.client.close(),
      ),
    );
  }

  /** Every error-level problem (missing tokens, unreachable clusters, ...). */
  problems(): ClusterProblem[] {
    return [...this.#entries.values()].filter(
      (v): v is ClusterProblem => isClusterProblem(v) && v.level === 'error',
    );
  }
}

/**
 * Whether a cluster map leaves this cluster out without a word: the
 * integration is disabled on it (`disable.integrations`), or `--internal` /
 * `--external` excludes it.
 */
export function leavesOut(
  info: ClusterInfo,
  settings: Pick<ClusterMapSettings, 'integration' | 'internal'>,
): boolean {
  if (info.disable?.integrations?.includes(settings.integration)) return true;
  return settings.internal !== undefined && Boolean(info.internal) !== settings.internal;
}

function tokenRef(info: ClusterInfo, privileged: boolean): SecretRef | undefined {
  const list = privileged ? info.clusterAdminAutomationTokens : info.automationTokens;
  const active = list?.find((t) => t.active && !t.delete && t.secret)?.secret;
  return (
    active ?? (privileged ? info.clusterAdminAutomationToken : info.automationToken) ?? undefined
  );
}

async function connect(
  info: ClusterInfo,
  privileged: boolean,
  settings: ClusterMapSettings,
  stats: RequestStats,
  kept: KeptRun | undefined,
  secretSlots: LimitFunction,
): Promise<ClusterHandle | ClusterProblem | undefined> {
  const name = info.name;
  const problem = (message: string): ClusterProblem => ({
    name,
    level: 'error',
    message: `[${name}] ${message}`,
  });
  if (leavesOut(info, settings)) return undefined;
  const ref = tokenRef(info, privileged);
  if (!ref)
    return problem(privileged ? 'has no clusterAdminAutomationToken' : 'has no automationToken');
  if (!info.serverUrl) return problem('has no serverUrl');
  let secret: Record<string, string>;
  try {
    // The secret store (Vault) is one server for every cluster: `concurrency` reads at a
    // time. What follows goes to the cluster's own server (a few requests), so the clusters
    // are connected to and checked side by side.
    secret = await secretSlots(() =>
      settings.secrets.readAll({ path: ref.path, version: ref.version }),
    );
  } catch (e) {
    // A missing secret says "secret not found: <path>" itself; an unreachable
    // Vault, a refused login or a 403 name their own problem.
    return problem(errorMessage(e));
  }
  if (secret.server === undefined) {
    return problem(`secret ${ref.path} has no key 'server' (expected ${info.serverUrl})`);
  }
  if (secret.server !== info.serverUrl) {
    return problem(
      `server URL mismatch: secret ${ref.path} says ${secret.server}, the cluster's serverUrl is ${info.serverUrl}`,
    );
  }
  const token = secret[ref.field];
  if (!token) return problem(`secret ${ref.path} has no field '${ref.field}'`);
  const connection: ClusterConnection = {
    name,
    server: info.serverUrl,
    token,
    insecureSkipTLSVerify: Boolean(info.insecureSkipTLSVerify),
  };
  const key = KeptClusters.keyOf(connection, privileged);
  const options = { ...settings.clientOptions, stats };
  const prior = kept?.store.use(key, kept.run);
  // Kept clients are lent to the run: closing the run's map leaves their connections open.
  const owner = kept ? (prior?.owner ?? new KubeClient(connection, options)) : undefined;
  const client = owner ? owner.borrow(options) : new KubeClient(connection, options);
  try {
    await client.version(settings.reachabilityTimeoutMs ?? 5_000);
    const now = Date.now();
    const fresh = prior && now - prior.discoveredAt < (kept?.store.discoveryMaxAgeMs ?? 0);
    const catalog = fresh ? prior.catalog : await client.discover();
    if (kept && owner) {
      kept.store.keep(
        key,
        { owner, catalog, discoveredAt: fresh ? prior.discoveredAt : now },
        kept.run,
      );
    }
    // A kept discovery may predate a CRD the run asks for: discovered again, once, if so.
    let again: Promise<void> | undefined;
    const discoverAgain = async () => {
      const found = await client.discover();
      handle.catalog = found;
      if (kept && owner)
        kept.store.keep(key, { owner, catalog: found, discoveredAt: Date.now() }, kept.run);
    };
    const handle: ClusterHandle = {
      name,
      privileged,
      client,
      catalog,
      isOpenShift: catalog.has('Project', 'project.openshift.io'),
      ...(fresh && kept && owner ? { rediscover: () => (again ??= discoverAgain()) } : {}),
    };
    return handle;
  } catch (e) {
    // The next run starts afresh: new connections, a new discovery.
    if (kept) {
      if (prior) kept.store.drop(key);
      else void owner?.close();
    }
    // A stopped run is not the cluster's fault: it ends the run instead.
    if (e instanceof RequestAbortedError) throw e;
    return problem(`is unreachable: ${errorMessage(e)}`);
  }
}
