import { randomBytes } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import type { Duplex } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseAllDocuments } from 'yaml';
import { resourceKey } from './catalogue.ts';
import { FakeCluster } from './cluster.ts';
import { handleDiscovery } from './discovery.ts';
import { FaultInjector, type FaultRule, faultStatus } from './faults.ts';
import type { HandlerContext, Outcome } from './handler-context.ts';
import { allowCompression, sendError, sendJson } from './http-io.ts';
import { type InFlightCounts, InFlightGauge } from './in-flight.ts';
import { isObject, type JsonObject } from './json.ts';
import { type KubeconfigObject, kubeconfigObject, kubeconfigYaml } from './kubeconfig.ts';
import { endContainer } from './pod-logs.ts';
import { handleResource } from './resource-handler.ts';
import { MUTATING_VERBS, mediaType, parseRoute, type Verb } from './route.ts';
import { ApiError, unauthorized } from './status.ts';
import { servingCertificate } from './tls.ts';

export interface FakeClusterSpec {
  readonly name: string;
  /** Bearer token the cluster accepts; random when absent. */
  readonly token?: string;
  /** Serve the OpenShift groups (Project, Route, ...). Default false. */
  readonly openshift?: boolean;
  /** Fixed port; random when absent (or `portBase + index` when that is given). */
  readonly port?: number;
}

export interface FakeKubeApiServerOptions {
  readonly clusters: readonly FakeClusterSpec[];
  /** Latency added to every request of every cluster. */
  readonly latencyMs?: number;
  /** Ports `portBase`, `portBase + 1`, ... in cluster order. */
  readonly portBase?: number;
  /**
   * How long after a change the controllers act: workloads report ready,
   * Deployments get their ReplicaSet, token Secrets their token. Negative:
   * never. Default 20.
   */
  readonly workloadReadyDelayMs?: number;
  /** Random source of the fault error rates. */
  readonly random?: () => number;
  /** The request log keeps about this many of the latest entries. Default 100,000. */
  readonly maxLogEntries?: number;
  /**
   * How long a read asking for a resourceVersion ahead of the cluster's waits
   * for it before the 504 `ResourceVersionTooLarge` (a list, or a watch with
   * `sendInitialEvents=true`); kube-apiserver's watch cache waits 3 s. Default 3000.
   */
  readonly tooLargeResourceVersionWaitMs?: number;
  /**
   * Compress answers as kube-apiserver does (gzip from 128 KiB when the client
   * accepts it). Off by default, so that the benchmarks measure what they did
   * before; the client's decoding is tested with it on.
   */
  readonly compression?: boolean;
}

export interface RequestLogEntry {
  readonly cluster: string;
  readonly method: string;
  readonly verb: Verb;
  /** Path and query, as sent. */
  readonly path: string;
  readonly group: string;
  readonly version: string;
  readonly resource: string;
  readonly subresource: string;
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  /** HTTP status; 0 for a dropped connection. */
  readonly status: number;
  readonly dryRun: boolean;
  readonly fieldManager?: string;
  readonly userAgent?: string;
}

export type RequestFilter = Partial<
  Pick<RequestLogEntry, 'cluster' | 'verb' | 'kind' | 'namespace' | 'name' | 'resource' | 'dryRun'>
>;

export interface ClusterHandle {
  readonly name: string;
  readonly url: string;
  readonly token: string;
  readonly openshift: boolean;
  /** PEM of the self-signed serving certificate (also in the kubeconfigs). */
  readonly caCertificate: string;
  /** A kubeconfig (YAML) holding only this cluster. */
  kubeconfig(): string;
  readonly kubeconfigObject: KubeconfigObject;
  /** The in-process state, for assertions beyond the helpers. */
  readonly state: FakeCluster;
}

interface FaultControl {
  /** Adds a rule; rules apply in the order added. */
  set(cluster: string, rule: FaultRule): void;
  /** Removes the rules of one cluster, or of all. */
  clear(cluster?: string): void;
  /** The cluster stops listening: connections are refused, open ones reset. */
  down(cluster: string): Promise<void>;
  /** Listens again on the same port. */
  up(cluster: string): Promise<void>;
}

export interface FakeKubeApiServer {
  readonly clusters: ReadonlyMap<string, ClusterHandle>;
  cluster(name: string): ClusterHandle;
  /** A kubeconfig (YAML) with one context per cluster. */
  kubeconfig(): string;
  kubeconfigObject(): KubeconfigObject;
  /** Stores objects (or multi-document YAML) as they are, creating missing namespaces. */
  seed(
    cluster: string,
    objects: readonly JsonObject[] | string,
    options?: { manager?: string },
  ): void;
  get(
    cluster: string,
    apiVersion: string,
    kind: string,
    namespace: string,
    name: string,
  ): JsonObject | undefined;
  list(cluster: string, apiVersion: string, kind: string, namespace?: string): JsonObject[];
  /**
   * Lines a pod's container writes (a string is split at newlines), served by
   * `pods/log`; open `follow` requests get them at once. The pod need not exist yet.
   */
  appendPodLog(
    cluster: string,
    namespace: string,
    pod: string,
    container: string,
    lines: string | readonly string[],
  ): void;
  /**
   * The container exits with `exitCode` (default 0): its `follow` requests end,
   * its status says `terminated`, and once every container has ended the pod's
   * phase is `Succeeded` (`Failed` if one exited non-zero).
   */
  endContainer(
    cluster: string,
    namespace: string,
    pod: string,
    container: string,
    exitCode?: number,
  ): void;
  readonly requestLog: readonly RequestLogEntry[];
  requests(filter?: RequestFilter): RequestLogEntry[];
  /** Writes that changed state: dry-run writes are left out unless `dryRun` is in the filter. */
  mutatingRequests(filter?: RequestFilter): RequestLogEntry[];
  resetLog(): void;
  /** Requests in flight over every cluster (all the clusters' servers together). */
  readonly inFlight: InFlightCounts;
  readonly faults: FaultControl;
  close(): Promise<void>;
}

interface Listener {
  readonly cluster: FakeCluster;
  server: Server;
  port: number;
  readonly sockets: Set<Duplex>;
  readonly watches: Set<ServerResponse>;
}

function listen(server: Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      const address = server.address();
      resolve(typeof address === 'object' && address ? address.port : port);
    });
  });
}

function matchesFilter(entry: RequestLogEntry, filter: RequestFilter): boolean {
  return Object.entries(filter).every(
    ([k, v]) => v === undefined || entry[k as keyof RequestLogEntry] === v,
  );
}

export function parseSeedYaml(text: string): JsonObject[] {
  const out: JsonObject[] = [];
  for (const doc of parseAllDocuments(text)) {
    if (doc.errors.length > 0) throw new Error(`invalid seed YAML: ${doc.errors[0]?.message}`);
    const value: unknown = doc.toJS();
    if (!isObject(value)) continue;
    if (
      typeof value.kind === 'string' &&
      value.kind.endsWith('List') &&
      Array.isArray(value.items)
    ) {
      out.push(...value.items.filter(isObject));
    } else out.push(value);
  }
  return out;
}

/** Starts one HTTP server per cluster on 127.0.0.1. */
export async function startFakeKubeApiServer(
  options: FakeKubeApiServerOptions,
): Promise<FakeKubeApiServer> {
  const faults = new FaultInjector(options.random);
  const log: RequestLogEntry[] = [];
  const maxLog = options.maxLogEntries ?? 100_000;
  const baseLatency = options.latencyMs ?? 0;
  const listeners = new Map<string, Listener>();
  const inFlight = new InFlightGauge();
  const handles = new Map<string, ClusterHandle>();

  const record = (entry: RequestLogEntry) => {
    log.push(entry);
    // Trimmed in batches: shifting the whole log on every request would cost O(n) each.
    if (log.length > maxLog + Math.max(100, maxLog >> 4)) log.splice(0, log.length - maxLog);
  };

  const handle = async (listener: Listener, req: IncomingMessage, res: ServerResponse) => {
    const { cluster } = listener;
    const url = new URL(req.url ?? '/', 'http://localhost');
    const contentType = mediaType(req.headers['content-type']);
    const route = parseRoute(req.method ?? 'GET', url.pathname, url.searchParams, contentType);
    const type =
      route.area === 'resource'
        ? cluster.findType(route.group, route.version, route.plural)
        : undefined;
    const base = {
      cluster: cluster.name,
      method: req.method ?? 'GET',
      verb: route.verb,
      path: req.url ?? '/',
      group: route.group,
      version: route.version,
      resource: route.plural,
      subresource: route.subresource,
      kind: type?.kind ?? '',
      namespace: route.namespace,
      name: route.name,
      dryRun: url.searchParams.has('dryRun'),
      ...(req.headers['user-agent'] ? { userAgent: req.headers['user-agent'] } : {}),
    };
    const decision = faults.decide(cluster.name, route.verb, {
      resource: route.plural,
      namespace: route.namespace,
      name: route.name,
      continued: url.searchParams.has('continue'),
    });
    if (options.compression) allowCompression(req, res);
    const latency = baseLatency + decision.latencyMs;
    if (latency > 0) await sleep(latency);
    if (decision.action === 'hang') {
      // Never answered; close() and faults.down() destroy the socket.
      record({ ...base, status: 0 });
      return;
    }
    if (decision.action === 'drop') {
      record({ ...base, status: 0 });
      req.socket.destroy();
      return;
    }
    if (decision.action === 'fail') {
      const headers: Record<string, string> =
        decision.retryAfter !== undefined ? { 'Retry-After': String(decision.retryAfter) } : {};
      sendJson(
        res,
        decision.status,
        JSON.stringify(faultStatus(decision.status, decision.retryAfter)),
        headers,
      );
      record({ ...base, status: decision.status });
      return;
    }
    const auth = req.headers.authorization;
    if (auth !== `Bearer ${cluster.token}`) {
      sendError(res, unauthorized());
      record({ ...base, status: 401 });
      return;
    }
    const ctx: HandlerContext = {
      cluster,
      req,
      res,
      route,
      query: url.searchParams,
      pathname: url.pathname,
      watches: listener.watches,
    };
    try {
      if (route.area === 'resource') {
        const outcome: Outcome = await handleResource(ctx);
        record({
          ...base,
          status: outcome.status,
          dryRun: outcome.dryRun,
          ...(outcome.fieldManager !== undefined ? { fieldManager: outcome.fieldManager } : {}),
        });
      } else {
        handleDiscovery(ctx);
        record({ ...base, status: 200 });
      }
    } catch (error) {
      const apiError =
        error instanceof ApiError
          ? error
          : new ApiError(
              500,
              'InternalError',
              `Internal error occurred: ${error instanceof Error ? error.message : String(error)}`,
            );
      if (!res.headersSent) sendError(res, apiError);
      else res.end();
      record({ ...base, status: apiError.code });
    }
  };

  const tls = await servingCertificate();
  const caData = Buffer.from(tls.cert).toString('base64');
  const makeServer = (listener: Listener) => {
    const server = createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
      inFlight.track(res);
      handle(listener, req, res).catch(() => res.destroy());
    });
    server.keepAliveTimeout = 30_000;
    server.on('connection', (socket) => {
      listener.sockets.add(socket);
      socket.on('close', () => listener.sockets.delete(socket));
    });
    return server;
  };

  const ready = options.workloadReadyDelayMs ?? 20;
  try {
    for (const [index, spec] of options.clusters.entries()) {
      if (listeners.has(spec.name)) throw new Error(`cluster ${spec.name} is given twice`);
      const cluster = new FakeCluster({
        name: spec.name,
        token: spec.token ?? randomBytes(24).toString('base64url'),
        openshift: spec.openshift ?? false,
        workloadReadyDelayMs: ready,
        caCertificate: tls.cert,
        ...(options.tooLargeResourceVersionWaitMs !== undefined
          ? { tooLargeResourceVersionWaitMs: options.tooLargeResourceVersionWaitMs }
          : {}),
      });
      const listener: Listener = {
        cluster,
        server: undefined as unknown as Server,
        port: 0,
        sockets: new Set(),
        watches: new Set(),
      };
      listener.server = makeServer(listener);
      const wanted = spec.port ?? (options.portBase !== undefined ? options.portBase + index : 0);
      listener.port = await listen(listener.server, wanted);
      listeners.set(spec.name, listener);
      const url = `https://127.0.0.1:${listener.port}`;
      const entry = { name: spec.name, url, token: cluster.token, caData };
      handles.set(spec.name, {
        name: spec.name,
        url,
        token: cluster.token,
        openshift: cluster.openshift,
        caCertificate: tls.cert,
        kubeconfig: () => kubeconfigYaml([entry]),
        kubeconfigObject: kubeconfigObject([entry]),
        state: cluster,
      });
    }
  } catch (error) {
    for (const l of listeners.values()) l.server.close();
    throw error;
  }

  const listenerOf = (name: string) => {
    const l = listeners.get(name);
    if (!l) throw new Error(`no fake cluster named ${name}`);
    return l;
  };

  const shutdown = (l: Listener) =>
    new Promise<void>((resolve) => {
      for (const w of l.watches) w.destroy();
      l.watches.clear();
      l.server.close(() => resolve());
      for (const s of l.sockets) s.destroy();
      l.sockets.clear();
    });

  const entries = () =>
    [...handles.values()].map((h) => ({ name: h.name, url: h.url, token: h.token, caData }));
  const typeFor = (cluster: string, apiVersion: string, kind: string) => {
    const state = listenerOf(cluster).cluster;
    const type = state.findKind(apiVersion, kind);
    if (!type) throw new Error(`cluster ${cluster}: no resource serves ${apiVersion} ${kind}`);
    return { state, type };
  };

  return {
    clusters: handles,
    cluster(name) {
      const h = handles.get(name);
      if (!h) throw new Error(`no fake cluster named ${name}`);
      return h;
    },
    kubeconfig: () => kubeconfigYaml(entries()),
    kubeconfigObject: () => kubeconfigObject(entries()),
    seed(cluster, objects, seedOptions) {
      const list = typeof objects === 'string' ? parseSeedYaml(objects) : objects;
      listenerOf(cluster).cluster.seed(list, seedOptions?.manager ?? 'fake-kube-apiserver-seed');
    },
    get(cluster, apiVersion, kind, namespace, name) {
      const { state, type } = typeFor(cluster, apiVersion, kind);
      if (type.virtual) return undefined;
      return state.store.read(resourceKey(type), type.namespaced ? namespace : '', name);
    },
    list(cluster, apiVersion, kind, namespace) {
      const { state, type } = typeFor(cluster, apiVersion, kind);
      return state.store
        .all(resourceKey(type), namespace !== undefined && type.namespaced ? { namespace } : {})
        .map((o) => JSON.parse(o.json) as JsonObject);
    },
    appendPodLog(cluster, namespace, pod, container, lines) {
      listenerOf(cluster).cluster.podLogs.append(namespace, pod, container, lines);
    },
    endContainer(cluster, namespace, pod, container, exitCode = 0) {
      endContainer(listenerOf(cluster).cluster, namespace, pod, container, exitCode);
    },
    get requestLog() {
      return log;
    },
    requests: (filter = {}) => log.filter((e) => matchesFilter(e, filter)),
    mutatingRequests: (filter = {}) =>
      log.filter(
        (e) =>
          MUTATING_VERBS.has(e.verb) &&
          (filter.dryRun !== undefined || !e.dryRun) &&
          matchesFilter(e, filter),
      ),
    resetLog() {
      log.length = 0;
    },
    inFlight,
    faults: {
      set: (cluster, rule) => {
        listenerOf(cluster);
        faults.add(cluster, rule);
      },
      clear: (cluster) => faults.clear(cluster),
      down: async (cluster) => {
        const l = listenerOf(cluster);
        if (!l.server.listening) return;
        await shutdown(l);
      },
      up: async (cluster) => {
        const l = listenerOf(cluster);
        if (l.server.listening) return;
        l.server = makeServer(l);
        await listen(l.server, l.port);
      },
    },
    async close() {
      await Promise.all(
        [...listeners.values()].map((l) => (l.server.listening ? shutdown(l) : Promise.resolve())),
      );
      for (const l of listeners.values()) l.cluster.close();
    },
  };
}
