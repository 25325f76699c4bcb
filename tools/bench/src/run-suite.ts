import { loadavg } from 'node:os';
import { isInShard } from '@qontract/core';
import { type FakeKubeApiServer, startFakeKubeApiServer } from '@qontract/fake-kube-apiserver';
import { fieldManagerFor } from '@qontract/openshift';
import { clusterState, objectsPerNamespace } from './cluster-state.ts';
import { chooseDrift, NO_DRIFT } from './drift.ts';
import { createScaleEnvironment, type ScaleEnvironment } from './environment.ts';
import { runGithubScenario } from './github.ts';
import { runLoopScenario } from './loop.ts';
import { type LowerBound, lowerBound } from './lower-bound.ts';
import { measureInChild } from './measure.ts';
import { clusterName, namespaceName, type Scale, scaleLabel } from './model.ts';
import { loopRss, machineInfo, type ScenarioResult, type SuiteReport } from './report.ts';
import { runSaasScenario } from './saas.ts';
import {
  INTEGRATION_OF,
  type IntegrationScenario,
  type Scenario,
  scenarioName,
} from './scenarios.ts';
import { runTriggerScenario } from './triggers.ts';

export interface RunSuiteOptions {
  /** Progress lines (one per scenario). */
  readonly progress?: (line: string) => void;
  readonly cpuProfileDir?: string | undefined;
  readonly suite: string;
}

/** The seed of every drift choice: the same objects drift on every run and machine. */
const DRIFT_SEED = 20_261_121;

/** Runs the scenarios one after the other (never two measured children at once). */
export async function runSuite(
  scenarios: readonly Scenario[],
  options: RunSuiteOptions,
): Promise<SuiteReport> {
  const environments = new Map<string, ScaleEnvironment>();
  const environmentFor = async (scale: Scale) => {
    const key = scaleLabel(scale);
    let env = environments.get(key);
    if (!env) {
      options.progress?.(`generating the ${key} app-interface tree and its GraphQL server`);
      env = await createScaleEnvironment(scale);
      environments.set(key, env);
    }
    return env;
  };
  const results: ScenarioResult[] = [];
  const started = new Date();
  try {
    for (const scenario of scenarios) {
      const name = scenarioName(scenario);
      // Other work on the machine inflates wall times; the load beside each run says how much to trust it.
      const loadAverage = loadavg()[0] ?? 0;
      const result = await runScenario(scenario, environmentFor, options);
      results.push({ ...result, name, loadAverage } as ScenarioResult);
      options.progress?.(`${name}: ${summaryLine(results.at(-1)!)}`);
    }
  } finally {
    for (const env of environments.values()) await env.close();
  }
  return { suite: options.suite, machine: machineInfo(started), scenarios: results };
}

/** A result before it is named (Omit distributed over the union). */
type Measured = ScenarioResult extends infer R
  ? R extends unknown
    ? Omit<R, 'name' | 'loadAverage'>
    : never
  : never;

async function runScenario(
  s: Scenario,
  environmentFor: (scale: Scale) => Promise<ScaleEnvironment>,
  options: RunSuiteOptions,
): Promise<Measured> {
  const profile = { cpuProfileDir: options.cpuProfileDir };
  switch (s.kind) {
    case 'compute': {
      const m = await measureInChild({ kind: 'compute', objects: s.objects }, profile);
      return {
        kind: s.kind,
        ...base(m),
        objectsPerSecond: Number(m.details.objectsPerSecond),
        yamlObjectsPerSecond: Number(m.details.yamlObjectsPerSecond),
      };
    }
    case 'embedded-load': {
      const env = await environmentFor(s.scale);
      const m = await measureInChild({ kind: 'embedded-load', dir: env.tree.dir }, profile);
      return {
        kind: s.kind,
        scale: s.scale,
        ...base(m),
        files: env.tree.files,
        loadMs: Number(m.details.loadMs),
      };
    }
    case 'remote-query': {
      const env = await environmentFor(s.scale);
      const m = await measureInChild({ kind: 'remote-query', url: env.graphqlUrl }, profile);
      return { kind: s.kind, scale: s.scale, ...base(m), files: env.tree.files };
    }
    case 'integration':
      return runIntegrationScenario(s, await environmentFor(s.scale), options);
    case 'github':
      return runGithubScenario(s, profile);
    case 'saas':
      return runSaasScenario(s, profile);
    case 'trigger':
      return runTriggerScenario(s, profile);
    case 'loop': {
      let bound: LowerBound | undefined;
      const m = await runLoopScenario(
        s,
        await environmentFor(s.scale),
        (fake, state) => {
          bound = lowerBound({
            listed: listedObjects(fake, state, namespacesRead(s.scale, 1)).listed,
            writes: 0,
            latencyMs: s.latencyMs,
            concurrency: s.concurrency,
          });
        },
        options.cpuProfileDir,
      );
      return {
        kind: s.kind,
        workload: s.workload,
        integration: INTEGRATION_OF[s.workload],
        scale: s.scale,
        iterations: s.iterations,
        latencyMs: s.latencyMs,
        ...(s.memoryLimitMiB !== undefined ? { memoryLimitMiB: s.memoryLimitMiB } : {}),
        heapFlag: m.heapFlag,
        wallMs: m.wallMs,
        cpuMs: m.cpuMs,
        peakRssBytes: m.peakRssBytes,
        exitCode: m.exitCode,
        rssBytes: m.rssBytes,
        runSeconds: m.runSeconds,
        runCpuMs: m.runCpuMs,
        openFds: m.openFds,
        ...(s.mode ? { mode: s.mode } : {}),
        ...(s.desiredCacheOff ? { desiredCacheOff: true } : {}),
        ...(s.watchCaches ? { watchCaches: true } : {}),
        ...(bound ? { lowerBound: bound } : {}),
        requests: m.requests,
      };
    }
    case 'connections': {
      const fake = await startFakeKubeApiServer({ clusters: [{ name: 'bench' }] });
      try {
        const cluster = fake.cluster('bench');
        const m = await measureInChild(
          {
            kind: 'connections',
            url: cluster.url,
            token: cluster.token,
            requests: s.requests,
            concurrency: s.concurrency,
          },
          profile,
        );
        return {
          kind: s.kind,
          ...base(m),
          requests: s.requests,
          connections: Number(m.details.connections),
          requestsWallMs: Number(m.details.requestsWallMs),
          requestsCpuMs: Number(m.details.requestsCpuMs),
        };
      } finally {
        await fake.close();
      }
    }
  }
}

async function runIntegrationScenario(
  s: IntegrationScenario,
  env: ScaleEnvironment,
  options: RunSuiteOptions,
): Promise<Measured> {
  const all = s.scale.clusters * s.scale.namespaces * objectsPerNamespace(s.workload, s.scale);
  const drift = s.drift > 0 ? chooseDrift(all, s.drift, DRIFT_SEED) : NO_DRIFT;
  const read = namespacesRead(s.scale, s.shards ?? 1);
  let objects = 0;
  for (const names of read.values())
    objects += names.length * objectsPerNamespace(s.workload, s.scale);
  const state = clusterState(s.workload, s.scale, drift, s.otherNamespaces);
  const fake = await env.startClusters(s.latencyMs);
  try {
    const integration = INTEGRATION_OF[s.workload];
    // Seeded as if our last run had written them.
    const manager = fieldManagerFor(integration);
    for (const [cluster, list] of state.objects) fake.seed(cluster, list, { manager });
    // The cluster's own objects, written by its controllers.
    for (const [cluster, list] of state.others)
      fake.seed(cluster, list, { manager: 'kube-controller-manager' });
    const { listed, listedPerNamespace } = listedObjects(fake, state, read);
    fake.resetLog();
    const m = await measureInChild(
      {
        kind: 'integration',
        integration,
        configPath: env.configPath,
        dryRun: s.dryRun,
        threadPoolSize: s.concurrency,
        ...(s.shards ? { shards: s.shards } : {}),
      },
      { cpuProfileDir: options.cpuProfileDir },
    );
    const byVerb: Record<string, number> = {};
    const byCluster: Record<string, Record<string, number>> = {};
    for (const r of fake.requestLog) {
      byVerb[r.verb] = (byVerb[r.verb] ?? 0) + 1;
      const c = byCluster[r.cluster] ?? {};
      byCluster[r.cluster] = c;
      c[r.verb] = (c[r.verb] ?? 0) + 1;
    }
    const writes = fake.mutatingRequests().length;
    const expectedWrites = s.dryRun ? 0 : state.expectedWrites;
    const boundOf = (l: typeof listed) =>
      lowerBound({
        listed: l,
        writes: expectedWrites,
        latencyMs: s.latencyMs,
        concurrency: s.concurrency,
      });
    const bound = boundOf(listed);
    const perNamespaceBound = boundOf(listedPerNamespace);
    return {
      kind: s.kind,
      workload: s.workload,
      integration,
      scale: s.scale,
      drift: s.drift,
      driftedObjects: state.expectedWrites,
      objects,
      dryRun: s.dryRun,
      latencyMs: s.latencyMs,
      concurrency: s.concurrency,
      ...base(m),
      requests: { total: fake.requestLog.length, byVerb, byCluster },
      connections: Number(m.details.connections),
      phases: {
        graphqlMs: Number(m.details.graphqlMs ?? 0),
        beforeApiMs: Number(m.details.beforeApiMs ?? 0),
        apiPhaseMs: Number(m.details.apiPhaseMs ?? 0),
        afterApiMs: Number(m.details.afterApiMs ?? 0),
      },
      writes,
      expectedWrites,
      lowerBound: bound,
      perNamespaceLowerBound: perNamespaceBound,
      ratio: bound.ms > 0 ? m.wallMs / bound.ms : null,
    };
  } finally {
    await fake.close();
  }
}

/**
 * The namespaces the run of shard 1 of `shards` reads, per cluster: those
 * whose `cluster/namespace` key is in the shard (all of them for one shard).
 */
function namespacesRead(scale: Scale, shards: number): Map<string, string[]> {
  const shard = { shards, shardId: 0 };
  const read = new Map<string, string[]>();
  for (let c = 0; c < scale.clusters; c++) {
    const cluster = clusterName(c);
    read.set(
      cluster,
      Array.from({ length: scale.namespaces }, (_, n) => namespaceName(n)).filter((ns) =>
        isInShard(`${cluster}/${ns}`, shard),
      ),
    );
  }
  return read;
}

/**
 * What the lists really return (the seeded objects plus the server's own, e.g.
 * namespaces), cluster-wide as we list, and per namespace as the original
 * lists; only for the clusters and namespaces the run reads (`read`).
 */
function listedObjects(
  fake: FakeKubeApiServer,
  state: ReturnType<typeof clusterState>,
  read: ReadonlyMap<string, readonly string[]>,
): {
  listed: Map<string, Map<string, number>>;
  listedPerNamespace: Map<string, Map<string, number>>;
} {
  const listed = new Map<string, Map<string, number>>();
  const listedPerNamespace = new Map<string, Map<string, number>>();
  for (const cluster of state.objects.keys()) {
    const namespaces = read.get(cluster) ?? [];
    if (namespaces.length === 0) continue;
    const counts = new Map<string, number>();
    const perNamespace = new Map<string, number>();
    for (const kind of state.listedKinds) {
      const items = fake.list(cluster, ...apiOf(kind));
      counts.set(kind, items.length);
      if (kind === 'Namespace') {
        perNamespace.set(kind, items.length);
        continue;
      }
      for (const ns of namespaces) perNamespace.set(`${kind}/${ns}`, 0);
      for (const item of items) {
        const key = `${kind}/${(item.metadata as { namespace?: string }).namespace}`;
        if (perNamespace.has(key)) perNamespace.set(key, perNamespace.get(key)! + 1);
      }
    }
    listed.set(cluster, counts);
    listedPerNamespace.set(cluster, perNamespace);
  }
  return { listed, listedPerNamespace };
}

function apiOf(kind: string): [string, string] {
  switch (kind) {
    case 'Deployment':
      return ['apps/v1', kind];
    case 'RoleBinding':
      return ['rbac.authorization.k8s.io/v1', kind];
    default:
      return ['v1', kind];
  }
}

function base(m: Awaited<ReturnType<typeof measureInChild>>) {
  return {
    wallMs: m.wallMs,
    cpuMs: m.cpuMs,
    peakRssBytes: m.peakRssBytes,
    exitCode: m.exitCode,
    ...(m.details.errorLines !== undefined ? { errorLogLines: Number(m.details.errorLines) } : {}),
  };
}

function summaryLine(r: ScenarioResult): string {
  const parts = [
    `wall ${(r.wallMs / 1000).toFixed(2)}s`,
    `cpu ${(r.cpuMs / 1000).toFixed(2)}s`,
    `rss ${Math.round(r.peakRssBytes / 2 ** 20)}MiB`,
  ];
  if (r.kind === 'integration') {
    parts.push(`${r.requests.total} requests`, `${r.writes}/${r.expectedWrites} writes`);
    if (r.ratio !== null) parts.push(`ratio ${r.ratio.toFixed(2)}`);
    if (r.exitCode !== 0) parts.push(`EXIT ${r.exitCode}`);
  }
  if (r.kind === 'github') {
    parts.push(
      `${r.reads} reads (bound ${r.lowerBound.reads})`,
      `${r.writes}/${r.expectedWrites} writes`,
    );
    if (r.ratio !== null) parts.push(`ratio ${r.ratio.toFixed(2)}`);
    if (r.exitCode !== 0) parts.push(`EXIT ${r.exitCode}`);
  }
  if (r.kind === 'saas') {
    parts.push(
      `github ${r.github.commits}+${r.github.contents} (bound ${r.lowerBound.commits}+${r.lowerBound.contents})`,
      `${r.manifests} manifests (bound ${r.lowerBound.manifests}, +${r.challenged} challenged)`,
      `${r.writes} writes`,
    );
    if (r.ratio !== null) parts.push(`ratio ${r.ratio.toFixed(2)}`);
    if (r.exitCode !== 0) parts.push(`EXIT ${r.exitCode}`);
  }
  if (r.kind === 'trigger') {
    const b = r.lowerBound;
    parts.push(
      `api ${r.requests.api} (bound ${b.api}), github ${r.requests.github} (bound ${b.github}), state ${r.requests.state} (bound ${b.state})`,
      `${r.plannedRuns}/${r.expectedRuns} PipelineRuns planned`,
      `${r.writes} writes`,
    );
    if (r.ratio !== null) parts.push(`ratio ${r.ratio.toFixed(2)}`);
    if (r.exitCode !== 0) parts.push(`EXIT ${r.exitCode}`);
  }
  if (r.kind === 'compute') parts.push(`${r.objectsPerSecond} objects/s`);
  if (r.kind === 'connections')
    parts.push(`${r.requests} requests over ${r.connections} connections`);
  if (r.kind === 'embedded-load') parts.push(`${r.files} files loaded in ${r.loadMs}ms`);
  if (r.kind === 'loop' && r.mode === 'cold-warm') {
    parts.push(
      `runs ${r.runSeconds.map((x) => x.toFixed(2)).join(' / ')} s`,
      `CPU ${r.runCpuMs.map((x) => (x / 1000).toFixed(2)).join(' / ')} s`,
      `bound ${((r.lowerBound?.ms ?? 0) / 1000).toFixed(2)} s`,
    );
  }
  if (r.kind === 'loop') {
    const rss = loopRss(r);
    parts.push(
      `RSS first/max/last ${rss.first}/${rss.max}/${rss.last} MiB`,
      `${r.heapFlag ?? 'no heap flag'}`,
    );
    if (r.exitCode !== 0) parts.push(`EXIT ${r.exitCode}`);
  }
  return parts.join(', ');
}
