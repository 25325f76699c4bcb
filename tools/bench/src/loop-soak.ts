import { isDeepStrictEqual } from 'node:util';
import { HEAP_SIZE_ENV, heapSizeForMemoryLimit } from '@qontract/core/launch';
import type { FakeKubeApiServer } from '@qontract/fake-kube-apiserver';
import { fieldManagerFor } from '@qontract/openshift';
import { type ClusterState, clusterState, Workload } from './cluster-state.ts';
import { NO_DRIFT } from './drift.ts';
import { createScaleEnvironment } from './environment.ts';
import { runLoopProcess } from './loop.ts';
import {
  appliedObject,
  type BenchObject,
  clusterName,
  desiredBody,
  MANAGED_KINDS,
  type Scale,
} from './model.ts';
import { INTEGRATION_OF } from './scenarios.ts';

/** Three clusters of three namespaces of five resources: small runs, many of them. */
const SOAK_SCALE: Scale = { clusters: 3, namespaces: 3, resources: 5 };
/** The cluster that goes down and comes back. */
const FLAPPING = clusterName(SOAK_SCALE.clusters - 1);
/**
 * Which iterations find the flapping cluster down (D) or up (U), repeated:
 * single and back-to-back outages, each followed by a recovery.
 */
const PATTERN = 'UDUUDDUU';
/** Long enough for the hook between two runs to stop the process before the next one starts. */
const SLEEP_SECONDS = '1';

interface SoakIteration {
  readonly index: number;
  readonly clusterUp: boolean;
  readonly exitCode: number;
  readonly errors: number;
  readonly rssBytes: number;
  readonly openFds: number;
  /** Successful DELETE requests of the run, all clusters. */
  readonly deletes: number;
  /** What broke the soak's rules in this iteration (empty: it kept them). */
  readonly violations: readonly string[];
}

export interface SoakReport {
  readonly iterations: readonly SoakIteration[];
  /** Least-squares slope of the RSS after each run, bytes per iteration. */
  readonly rssSlope: number;
  /** The same over the second half of the iterations (after the warm-up). */
  readonly rssSlopeSecondHalf: number;
  /** Least-squares slope of the open file descriptors after each run, per iteration. */
  readonly fdSlope: number;
  readonly flappingCluster: string;
}

/** Least-squares slope of `ys` against 1, 2, 3, ... */
export function slope(ys: readonly number[]): number {
  const n = ys.length;
  if (n < 2) return 0;
  const meanX = (n + 1) / 2;
  const meanY = ys.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  ys.forEach((y, i) => {
    num += (i + 1 - meanX) * (y - meanY);
    den += (i + 1 - meanX) ** 2;
  });
  return num / den;
}

const isUp = (index: number) => PATTERN[(index - 1) % PATTERN.length] === 'U';

/**
 * The soak of `run-integration` in loop mode: openshift-resources, wet, over
 * many iterations in one process against simulated clusters, one of which
 * goes down and comes back. Before every run each reachable cluster gets
 * drift (one managed object edited by hand) and one stale object of ours
 * that is no longer desired. After every run (the process stopped meanwhile):
 * - cluster up: exit 0, nothing left to do on any cluster (edits undone,
 *   stale objects deleted);
 * - cluster down: exit 1 with the error naming the cluster, no DELETE on
 *   any cluster, the healthy clusters' edits still undone.
 * The RSS and open file descriptors after each run give the slopes.
 */
export async function runLoopSoak(
  iterations: number,
  /** The pod memory limit whose heap size the launcher gives the process; none: Node's default heap. */
  memoryLimitMiB?: number,
): Promise<SoakReport> {
  const workload = Workload.resources;
  const integration = INTEGRATION_OF[workload];
  const manager = fieldManagerFor(integration);
  const desired = clusterState(workload, SOAK_SCALE, NO_DRIFT);
  const env = await createScaleEnvironment(SOAK_SCALE);
  try {
    const fake = await env.startClusters(0);
    try {
      for (const [cluster, list] of desired.objects) fake.seed(cluster, list, { manager });
      const prepare = async (index: number) => {
        if (isUp(index)) await fake.faults.up(FLAPPING);
        else await fake.faults.down(FLAPPING);
        for (const [cluster, list] of desired.objects) {
          fake.seed(cluster, driftFor(cluster, list, index), { manager });
        }
        fake.resetLog();
      };
      await prepare(1);
      const iterationsOut: SoakIteration[] = [];
      await runLoopProcess({
        iterations,
        env: {
          [HEAP_SIZE_ENV]: String(
            memoryLimitMiB === undefined ? 0 : heapSizeForMemoryLimit(memoryLimitMiB * 2 ** 20),
          ),
          INTEGRATION_NAME: integration,
          INTEGRATION_EXTRA_ARGS: '--thread-pool-size 10 --no-validate-schemas',
          CONFIG: env.configPath,
          DRY_RUN: '--no-dry-run',
          SLEEP_DURATION_SECS: SLEEP_SECONDS,
          SLEEP_ON_ERROR: SLEEP_SECONDS,
          PROMETHEUS_PORT: '0',
          LOG_FORMAT: 'json',
          LOG_LEVEL: 'INFO',
          // A refused connection is given up at once; the retries of other failures stay short.
          QONTRACT_CLUSTER_RETRY_UNIT_MS: '5',
        },
        afterRun: async (run) => {
          const up = isUp(run.index);
          const deletes = fake
            .mutatingRequests({ verb: 'delete' })
            .filter((r) => r.status >= 200 && r.status < 300).length;
          const violations: string[] = [];
          if (up) {
            if (run.exitCode !== 0 || run.errors !== 0) {
              violations.push(`exit ${run.exitCode} with ${run.errors} error(s), expected 0`);
            }
            for (const cluster of desired.objects.keys()) {
              violations.push(...leftToDo(fake, desired, cluster, true));
            }
          } else {
            if (run.exitCode !== 1 || run.errors === 0) {
              violations.push(`exit ${run.exitCode} with ${run.errors} error(s), expected 1`);
            }
            const named = run.lines.some(
              (l) => l.includes(FLAPPING) && /"level":("error"|50)/.test(l),
            );
            if (!named) violations.push(`no error names ${FLAPPING}`);
            if (deletes > 0) violations.push(`${deletes} DELETE(s) after an error`);
            for (const cluster of desired.objects.keys()) {
              if (cluster !== FLAPPING) violations.push(...leftToDo(fake, desired, cluster, false));
            }
          }
          iterationsOut.push({
            index: run.index,
            clusterUp: up,
            exitCode: run.exitCode,
            errors: run.errors,
            rssBytes: run.rssBytes,
            openFds: run.openFds,
            deletes,
            violations: violations.map(
              (v) => `iteration ${run.index} (${FLAPPING} ${up ? 'up' : 'down'}): ${v}`,
            ),
          });
          if (run.index < iterations) await prepare(run.index + 1);
        },
      });
      return {
        iterations: iterationsOut,
        rssSlope: slope(iterationsOut.map((i) => i.rssBytes)),
        rssSlopeSecondHalf: slope(
          iterationsOut.slice(Math.floor(iterationsOut.length / 2)).map((i) => i.rssBytes),
        ),
        fdSlope: slope(iterationsOut.map((i) => i.openFds)),
        flappingCluster: FLAPPING,
      };
    } finally {
      await fake.faults.up(FLAPPING).catch(() => {});
      await fake.close();
    }
  } finally {
    await env.close();
  }
}

const managed = (o: BenchObject) => (MANAGED_KINDS as readonly string[]).includes(o.kind);

/**
 * This iteration's drift on one cluster: one managed object edited by hand
 * (a different one each time) and one stale object of ours, annotated as
 * our engine applies it but desired nowhere.
 */
function driftFor(cluster: string, list: readonly BenchObject[], index: number): BenchObject[] {
  const objects = list.filter(managed);
  const target = structuredClone(objects[index % objects.length]!);
  if (target.kind === 'Deployment') (target.spec as { replicas: number }).replicas = 9;
  else {
    // A value changed, as a hand edit does (a key added is not drift: the comparison, like the
    // original's, is an intersection of the desired fields).
    const data = target.data as Record<string, string>;
    const first = Object.keys(data)[0]!;
    data[first] = Buffer.from(`edited by hand ${index}`).toString('base64');
  }
  const namespace = String(target.metadata.namespace);
  const body = desiredBody(cluster, namespace, 0);
  body.metadata = { ...body.metadata, name: `stale-${index}` };
  return [target, appliedObject(body, namespace)];
}

/**
 * What a run would still have to do on `cluster`: desired objects missing or
 * differing from what was applied, and (when `deletesDue`) stale objects of
 * ours left. Without `deletesDue` stale objects must all still be there.
 */
function leftToDo(
  fake: FakeKubeApiServer,
  desired: ClusterState,
  cluster: string,
  deletesDue: boolean,
): string[] {
  const out: string[] = [];
  const wanted = (desired.objects.get(cluster) ?? []).filter(managed);
  const wantedKeys = new Set(wanted.map(keyOf));
  for (const o of wanted) {
    const stored = fake.get(
      cluster,
      o.apiVersion,
      o.kind,
      String(o.metadata.namespace),
      o.metadata.name,
    );
    if (!stored) out.push(`${cluster}: ${keyOf(o)} missing`);
    else if (!sameContent(stored, o)) out.push(`${cluster}: ${keyOf(o)} not restored`);
  }
  const stale = MANAGED_KINDS.flatMap((kind) =>
    fake
      .list(cluster, kind === 'Deployment' ? 'apps/v1' : 'v1', kind)
      .filter((o) => !wantedKeys.has(keyOf(o as BenchObject))),
  );
  if (deletesDue && stale.length > 0) {
    out.push(
      `${cluster}: ${stale.length} stale object(s) left, e.g. ${keyOf(stale[0] as BenchObject)}`,
    );
  }
  if (!deletesDue && stale.length === 0)
    out.push(`${cluster}: stale objects deleted after an error`);
  return out;
}

function keyOf(o: { kind: unknown; metadata?: unknown }): string {
  const m = (o.metadata ?? {}) as { namespace?: string; name?: string };
  return `${String(o.kind)} ${m.namespace}/${m.name}`;
}

/** The parts the drift edits: the data, or a Deployment's replicas. */
function sameContent(stored: Record<string, unknown>, wanted: BenchObject): boolean {
  if (wanted.kind === 'Deployment') {
    return (
      (stored.spec as { replicas?: number } | undefined)?.replicas ===
      (wanted.spec as { replicas: number }).replicas
    );
  }
  return isDeepStrictEqual(stored.data, wanted.data);
}
