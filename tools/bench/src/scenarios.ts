import { Workload } from './cluster-state.ts';
import {
  GITHUB_LARGE_SCALE,
  GITHUB_SMALL_SCALE,
  type GithubScenario,
  githubScenarioName,
} from './github.ts';
import { type Scale, scaleLabel } from './model.ts';
import { SAAS_LARGE_SCALE, SAAS_SMALL_SCALE, type SaasScenario, saasScenarioName } from './saas.ts';
import { type TriggerScenario, triggerScenarioName } from './triggers.ts';

const LARGE_SCALE: Scale = { clusters: 20, namespaces: 50, resources: 50 };
export const SMALL_SCALE: Scale = { clusters: 2, namespaces: 3, resources: 5 };
/** 20 clusters × 50 namespaces × 9 resources: 1,000 namespace and 9,000 resource files. */
const ENGINE_LARGE_SCALE: Scale = { clusters: 20, namespaces: 50, resources: 9 };
/** The loop of the large set: 5 clusters × 20 namespaces × 20 resources (2,000), many runs. */
const LOOP_LARGE_SCALE: Scale = { clusters: 5, namespaces: 20, resources: 20 };
/**
 * How cost grows (issue 19): about 5k, 50k and 200k objects, more clusters
 * rather than more per namespace, as production app-interface instances grow.
 */
const SCALING_SCALES: readonly Scale[] = [
  { clusters: 2, namespaces: 50, resources: 50 },
  { clusters: 20, namespaces: 50, resources: 50 },
  { clusters: 80, namespaces: 50, resources: 50 },
];
/** The same shape in seconds: 30, 60 and 120 objects (the harness test). */
const SCALING_SMALL_SCALES: readonly Scale[] = [
  { clusters: 1, namespaces: 3, resources: 10 },
  { clusters: 2, namespaces: 3, resources: 10 },
  { clusters: 4, namespaces: 3, resources: 10 },
];
/** The pod the loop's second variant emulates: the launcher's heap size for this limit. */
export const LOOP_POD_MEMORY_LIMIT_MIB = 512;

/** A run of one integration against simulated clusters. */
export interface IntegrationScenario {
  readonly kind: 'integration';
  readonly workload: Workload;
  readonly scale: Scale;
  /** Fraction of the objects changed or missing on the clusters (0: everything in sync). */
  readonly drift: number;
  readonly dryRun: boolean;
  /** Added by the simulated API server to every request. */
  readonly latencyMs: number;
  /** `--thread-pool-size`. */
  readonly concurrency: number;
  /**
   * Namespaces per cluster that no integration manages, holding what an
   * OpenShift cluster's own namespaces hold of the listed kinds (CA bundles,
   * pull secrets, a serving certificate, an operator): what cluster-wide lists
   * also return.
   */
  readonly otherNamespaces?: number;
  /**
   * Run as the first of this many shards (`SHARDS`, `SHARD_ID=0`): its
   * namespaces are those whose `cluster/namespace` key falls in the shard, and
   * every cluster still holds (and lists) all of them.
   */
  readonly shards?: number;
}

/** Canonicalise + sha256 + three-way compare, objects per CPU second. */
interface ComputeScenario {
  readonly kind: 'compute';
  readonly objects: number;
}

/** Load the generated tree into the embedded engine and answer the openshift-resources query. */
interface EmbeddedLoadScenario {
  readonly kind: 'embedded-load';
  readonly scale: Scale;
}

/** The openshift-resources query against `qontract-bundle serve`'s server (startBundleServer). */
interface RemoteQueryScenario {
  readonly kind: 'remote-query';
  readonly scale: Scale;
}

/** The engine's API client: many small requests, and how many connections they take. */
interface ConnectionsScenario {
  readonly kind: 'connections';
  readonly requests: number;
  readonly concurrency: number;
}

/**
 * `run-integration` (the real bin) looping over a steady dry-run: the RSS
 * after each of `iterations` runs in one process.
 */
export interface LoopScenario {
  readonly kind: 'loop';
  readonly workload: Workload;
  readonly scale: Scale;
  readonly iterations: number;
  readonly latencyMs: number;
  readonly concurrency: number;
  /** Emulated container memory limit (the heap the launcher derives from it); none: Node's default heap. */
  readonly memoryLimitMiB?: number;
  /**
   * 'cold-warm': the loop-mode scenario of issue 19 (the first run is cold, the
   * others warm, each against the lower bound); default 'rss': the RSS watch.
   */
  readonly mode?: 'rss' | 'cold-warm';
  /** Run with the pipeline's desired cache turned off (QONTRACT_DESIRED_CACHE=off): the comparison. */
  readonly desiredCacheOff?: boolean;
  /**
   * Run as an operator (WATCH=true): the runs after the first read the
   * clusters from the list+watch caches the first one filled, nothing is
   * listed again.
   */
  readonly watchCaches?: boolean;
}

export type Scenario =
  | IntegrationScenario
  | GithubScenario
  | SaasScenario
  | TriggerScenario
  | LoopScenario
  | ConnectionsScenario
  | ComputeScenario
  | EmbeddedLoadScenario
  | RemoteQueryScenario;

/** The integration (CLI name) each workload runs; each must be in run-in-process.ts's registry. */
export const INTEGRATION_OF: Record<Workload, string> = {
  [Workload.resources]: 'openshift-resources',
  [Workload.namespaces]: 'openshift-namespaces',
  [Workload.rolebindings]: 'openshift-rolebindings',
};

export function scenarioName(s: Scenario): string {
  switch (s.kind) {
    case 'integration': {
      const state = s.drift === 0 ? 'steady' : `drift ${Math.round(s.drift * 1000) / 10}%`;
      const others = s.otherNamespaces ? `, ${s.otherNamespaces} other namespaces per cluster` : '';
      const shard = s.shards ? `, shard 1 of ${s.shards}` : '';
      return `${s.workload} ${state} ${s.dryRun ? 'dry-run' : 'wet'} @${s.latencyMs}ms${others}${shard}`;
    }
    case 'github':
      return githubScenarioName(s);
    case 'saas':
      return saasScenarioName(s);
    case 'trigger':
      return triggerScenarioName(s);
    case 'compute':
      return `hash + compare (${s.objects} objects)`;
    case 'embedded-load':
      return 'embedded engine: load tree + query';
    case 'remote-query':
      return 'remote backend: query via bundle server';
    case 'connections':
      return `API client: ${s.requests} GETs, ${s.concurrency} at a time`;
    case 'loop':
      if (s.mode === 'cold-warm') {
        return `run-integration loop mode: ${s.workload} steady dry-run ${scaleLabel(s.scale)}, cold + ${s.iterations - 1} warm @${s.latencyMs}ms${s.desiredCacheOff ? ', desired cache off' : ''}${s.watchCaches ? ', watch caches (WATCH=true)' : ''}`;
      }
      return (
        `run-integration loop: ${s.workload} steady dry-run ×${s.iterations} @${s.latencyMs}ms, ` +
        (s.memoryLimitMiB === undefined
          ? "Node's default heap"
          : `heap for a ${s.memoryLimitMiB} MiB pod`)
      );
  }
}

export interface SuiteOptions {
  readonly latencies?: readonly number[];
  readonly concurrency?: number;
  /** Runs of each loop scenario. */
  readonly loopIterations?: number;
  /** Runs of the loop-mode (cold + warm) scenario: the first cold, the others warm. */
  readonly loopModeIterations?: number;
}

/** The default set: the large case at 5 ms and 50 ms. */
export function largeSuite(options: SuiteOptions = {}): Scenario[] {
  return [
    ...suite(
      LARGE_SCALE,
      ENGINE_LARGE_SCALE,
      100_000,
      2_000,
      options.latencies ?? [5, 50],
      options,
    ),
    ...loops(LOOP_LARGE_SCALE, options.loopIterations ?? 60, options),
    ...loopMode(LARGE_SCALE, options.loopModeIterations ?? 6, 50, options),
    ...githubRuns(GITHUB_LARGE_SCALE, 0.01, options.latencies ?? [5, 50], options),
    ...saasRuns(SAAS_LARGE_SCALE, options.latencies ?? [50], options),
    ...triggerRuns(SAAS_LARGE_SCALE, options.latencies ?? [50], options),
  ];
}

/** A tiny set that runs in seconds: keeps the harness working in CI (no timing asserted). */
export function smallSuite(options: SuiteOptions = {}): Scenario[] {
  return [
    ...suite(SMALL_SCALE, SMALL_SCALE, 2_000, 50, options.latencies ?? [5], options),
    ...loops(SMALL_SCALE, options.loopIterations ?? 30, options),
    ...loopMode(SMALL_SCALE, options.loopModeIterations ?? 3, options.latencies?.[0] ?? 5, options),
    // 20 %: the small scale's 30 memberships would leave 1 % nothing to drift.
    ...githubRuns(GITHUB_SMALL_SCALE, 0.2, options.latencies ?? [5], options),
    ...saasRuns(SAAS_SMALL_SCALE, options.latencies ?? [5], options),
    ...triggerRuns(SAAS_SMALL_SCALE, options.latencies ?? [5], options),
  ];
}

/**
 * `--scaling`: the loop-mode scenario (one cold run, then warm ones in the same
 * process) at three scales, so that wall, CPU, RSS and requests can be seen
 * to grow with the number of objects.
 */
export function scalingSuite(small: boolean, options: SuiteOptions = {}): LoopScenario[] {
  const latencyMs = options.latencies?.at(-1) ?? (small ? 5 : 50);
  const iterations = options.loopModeIterations ?? 3;
  // The loop-mode scenario with the cache on (loopMode's first), one per scale.
  return (small ? SCALING_SMALL_SCALES : SCALING_SCALES).map(
    (scale) => loopMode(scale, iterations, latencyMs, options)[0]!,
  );
}

/** openshift-saas-deploy's steady dry-run at each latency (the last one of the large suite's: 50 ms). */
function saasRuns(
  scale: SaasScenario['scale'],
  latencies: readonly number[],
  options: SuiteOptions,
): SaasScenario[] {
  const concurrency = options.concurrency ?? 10;
  return latencies.slice(-1).map((latencyMs) => ({ kind: 'saas', scale, latencyMs, concurrency }));
}

/**
 * The configs and moving-commits triggers over the saas tree at the last
 * latency: steady (nothing to trigger) and with 1 % of the targets changed.
 */
function triggerRuns(
  scale: TriggerScenario['scale'],
  latencies: readonly number[],
  options: SuiteOptions,
): TriggerScenario[] {
  const concurrency = options.concurrency ?? 10;
  return latencies.slice(-1).flatMap((latencyMs) =>
    (['configs', 'moving-commits'] as const).flatMap((trigger) =>
      [0, 0.01].map((changed) => ({
        kind: 'trigger' as const,
        trigger,
        scale,
        changed,
        latencyMs,
        concurrency,
      })),
    ),
  );
}

/** `github` at each latency: a steady dry-run and a drift wet run. */
function githubRuns(
  scale: GithubScenario['scale'],
  drift: number,
  latencies: readonly number[],
  options: SuiteOptions,
): GithubScenario[] {
  const concurrency = options.concurrency ?? 10;
  return latencies.flatMap((latencyMs) => [
    { kind: 'github', scale, drift: 0, dryRun: true, latencyMs, concurrency },
    { kind: 'github', scale, drift, dryRun: false, latencyMs, concurrency },
  ]);
}

/** The loop twice: with Node's default heap, and with the heap the launcher gives a small pod. */
function loops(scale: Scale, iterations: number, options: SuiteOptions): LoopScenario[] {
  const common = {
    kind: 'loop',
    workload: Workload.resources,
    scale,
    iterations,
    latencyMs: options.latencies?.[0] ?? 5,
    concurrency: options.concurrency ?? 10,
  } as const;
  return [common, { ...common, memoryLimitMiB: LOOP_POD_MEMORY_LIMIT_MIB }];
}

/**
 * Loop mode at the scale of the integration runs: N steady dry-runs in one
 * `run-integration` process, the first cold (nothing cached), the others warm
 * (same bundle), each reported beside the lower bound; then the same with the
 * desired cache off, and as an operator (watch caches).
 */
function loopMode(
  scale: Scale,
  iterations: number,
  latencyMs: number,
  options: SuiteOptions,
): LoopScenario[] {
  const withCache: LoopScenario = {
    kind: 'loop',
    mode: 'cold-warm',
    workload: Workload.resources,
    scale,
    iterations: Math.max(2, iterations),
    latencyMs,
    concurrency: options.concurrency ?? 10,
  };
  // The same loop building everything on every run: what the cache saves;
  // and the loop of an operator, whose later runs list nothing.
  return [withCache, { ...withCache, desiredCacheOff: true }, { ...withCache, watchCaches: true }];
}

function suite(
  scale: Scale,
  engineScale: Scale,
  computeObjects: number,
  clientRequests: number,
  latencies: readonly number[],
  options: SuiteOptions,
): Scenario[] {
  const concurrency = options.concurrency ?? 10;
  const out: Scenario[] = [{ kind: 'compute', objects: computeObjects }];
  out.push({ kind: 'embedded-load', scale: engineScale });
  out.push({ kind: 'remote-query', scale });
  out.push({ kind: 'connections', requests: clientRequests, concurrency });
  for (const latencyMs of latencies) {
    const run = (workload: Workload, drift: number, dryRun: boolean) =>
      out.push({ kind: 'integration', workload, scale, drift, dryRun, latencyMs, concurrency });
    for (const drift of [0, 0.01, 0.1]) {
      run(Workload.resources, drift, true);
      run(Workload.resources, drift, false);
    }
    for (const workload of [Workload.namespaces, Workload.rolebindings]) {
      run(workload, 0, true);
      run(workload, 0.01, false);
      run(workload, 0.1, false);
    }
  }
  // The steady dry-run at the last latency on clusters that also hold their
  // own namespaces, and as one of five shards of the same namespaces.
  const latencyMs = latencies.at(-1);
  if (latencyMs !== undefined) {
    const steady = {
      kind: 'integration',
      workload: Workload.resources,
      scale,
      drift: 0,
      dryRun: true,
      latencyMs,
      concurrency,
    } as const;
    out.push({ ...steady, otherNamespaces: otherNamespacesFor(scale) });
    out.push({ ...steady, shards: 5 });
  }
  return out;
}

/** An OpenShift cluster's own namespaces: about a hundred (a few at the small scale). */
function otherNamespacesFor(scale: Scale): number {
  return scale.namespaces >= 50 ? 100 : 3;
}
