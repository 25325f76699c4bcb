import { Workload } from './cluster-state.ts';
import type { Scale } from './model.ts';

export const LARGE_SCALE: Scale = { clusters: 20, namespaces: 50, resources: 50 };
export const SMALL_SCALE: Scale = { clusters: 2, namespaces: 3, resources: 5 };
/** 20 clusters × 50 namespaces × 9 resources: 1,000 namespace and 9,000 resource files. */
export const ENGINE_LARGE_SCALE: Scale = { clusters: 20, namespaces: 50, resources: 9 };

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
}

/** Canonicalise + sha256 + three-way compare, objects per CPU second. */
export interface ComputeScenario {
  readonly kind: 'compute';
  readonly objects: number;
}

/** Load the generated tree into the embedded engine and answer the openshift-resources query. */
export interface EmbeddedLoadScenario {
  readonly kind: 'embedded-load';
  readonly scale: Scale;
}

/** The openshift-resources query against `qontract-bundle serve`'s server (startBundleServer). */
export interface RemoteQueryScenario {
  readonly kind: 'remote-query';
  readonly scale: Scale;
}

/** The engine's API client: many small requests, and how many connections they take. */
export interface ConnectionsScenario {
  readonly kind: 'connections';
  readonly requests: number;
  readonly concurrency: number;
}

export type Scenario =
  | IntegrationScenario
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
      return `${s.workload} ${state} ${s.dryRun ? 'dry-run' : 'wet'} @${s.latencyMs}ms`;
    }
    case 'compute':
      return `hash + compare (${s.objects} objects)`;
    case 'embedded-load':
      return 'embedded engine: load tree + query';
    case 'remote-query':
      return 'remote backend: query via bundle server';
    case 'connections':
      return `API client: ${s.requests} GETs, ${s.concurrency} at a time`;
  }
}

export interface SuiteOptions {
  readonly latencies?: readonly number[];
  readonly concurrency?: number;
}

/** The default set: the large case at 5 ms and 50 ms. */
export function largeSuite(options: SuiteOptions = {}): Scenario[] {
  return suite(
    LARGE_SCALE,
    ENGINE_LARGE_SCALE,
    100_000,
    2_000,
    options.latencies ?? [5, 50],
    options,
  );
}

/** A tiny set that runs in seconds: keeps the harness working in CI (no timing asserted). */
export function smallSuite(options: SuiteOptions = {}): Scenario[] {
  return suite(SMALL_SCALE, SMALL_SCALE, 2_000, 50, options.latencies ?? [5], options);
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
  return out;
}
