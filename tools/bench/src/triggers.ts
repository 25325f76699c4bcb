import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tektonPipelineName } from '@qontract/saas';
import { startFakeS3 } from '@qontract/testing/fake-s3';
import { parse } from 'yaml';
import type { ChildMeasurement } from './child-tasks.ts';
import {
  type InFlightSummary,
  inFlightSummary,
  type MeasureOptions,
  measureInChild,
} from './measure.ts';
import { namespaceName } from './model.ts';
import { type SaasBench, type SaasScale, startSaasBench } from './saas.ts';
import { REPO_ROOT } from './tree.ts';

/** The trigger integrations the benchmark runs (their CLI names without the common prefix). */
type TriggerKind = 'configs' | 'moving-commits';

/**
 * A dry-run of an `openshift-saas-deploy-trigger-*` integration over the saas
 * tree, after a wet run stored every target's state: nothing to trigger, or
 * `changed` of the targets changed since (their config, or the commit of
 * their ref).
 */
export interface TriggerScenario {
  readonly kind: 'trigger';
  readonly trigger: TriggerKind;
  readonly scale: SaasScale;
  /** Fraction of the targets changed after the wet run (0: steady). */
  readonly changed: number;
  readonly latencyMs: number;
  readonly concurrency: number;
}

export function triggerScenarioName(s: TriggerScenario): string {
  const state = s.changed === 0 ? 'steady' : `changed ${Math.round(s.changed * 1000) / 10}%`;
  return `openshift-saas-deploy-trigger-${s.trigger} ${state} dry-run @${s.latencyMs}ms`;
}

/** Requests at each peer the trigger talks to. */
interface PeerRequests {
  readonly api: number;
  readonly github: number;
  readonly state: number;
}

/** What a trigger scenario measured. */
export interface TriggerResult extends TriggerScenario {
  readonly wallMs: number;
  readonly cpuMs: number;
  readonly peakRssBytes: number;
  readonly exitCode: number;
  /** What the wet run before left: PipelineRuns created, state keys written. */
  readonly seeded: { readonly pipelineRuns: number; readonly stateKeys: number };
  /** Targets changed after the wet run. */
  readonly changedTargets: number;
  /** PipelineRuns the measured dry-run planned, and how many the changes need (one per saas file and env). */
  readonly plannedRuns: number;
  readonly expectedRuns: number;
  /** Requests of the measured run at each peer. */
  readonly requests: PeerRequests;
  /** Writes at any peer during the measured run (a dry-run: none). */
  readonly writes: number;
  /**
   * The fewest requests the run can make, per peer: the state store opened
   * (one bucket check) and read once per state key the trigger compares; one
   * ref resolution per distinct (repository, ref); one Pipeline read per
   * PipelineRun to plan. Its time: all of them over `--thread-pool-size`, but
   * never less than the longest chain of dependent requests.
   */
  readonly lowerBound: PeerRequests & { readonly chain: number; readonly ms: number };
  readonly ratio: number | null;
  /** Requests in flight at GitHub and the state store during the measured run. */
  readonly inFlight: { readonly github: InFlightSummary; readonly state: InFlightSummary };
}

const STATE_BUCKET = 'bench-state';

/** The Pipeline template the pipelines provider's defaults name (the examples'). */
function pipelineTemplateName(): string {
  const defaults = parse(
    readFileSync(
      join(REPO_ROOT, 'examples/app-interface/data/app-sre/tekton-provider-defaults/defaults.yml'),
      'utf8',
    ),
  ) as { pipelineTemplates: { openshiftSaasDeploy: { name: string } } };
  return defaults.pipelineTemplates.openshiftSaasDeploy.name;
}

/** The saas files' Pipelines in the provider namespace, as openshift-tekton-resources leaves them. */
function seedPipelines(bench: SaasBench, scale: SaasScale): void {
  const template = pipelineTemplateName();
  bench.server.seed(
    bench.clusters[0]!,
    Array.from({ length: scale.saasFiles }, (_, f) => ({
      apiVersion: 'tekton.dev/v1',
      kind: 'Pipeline',
      metadata: {
        name: tektonPipelineName(template, `saas-app-${String(f).padStart(4, '0')}`),
        namespace: namespaceName(0),
      },
      spec: { tasks: [] },
    })),
    { manager: 'openshift-tekton-resources' },
  );
}

/**
 * The changed targets: `count` of them, each in its own saas file, spread over
 * the tree. For configs a target's REPLICAS changes; for moving-commits a
 * repository's `main` moves, which moves each of its targets following `main`.
 */
function changedSaasFiles(scale: SaasScale, count: number): number[] {
  const step = Math.max(1, Math.floor(scale.saasFiles / count));
  return Array.from({ length: count }, (_, i) => (i * step) % scale.saasFiles);
}

/** Targets of a saas file following `main` (the others pin a commit). */
const mainTargets = (scale: SaasScale) => Math.ceil(scale.targets / 2);

export async function runTriggerScenario(
  s: TriggerScenario,
  measure: MeasureOptions = {},
): Promise<TriggerResult> {
  const s3 = await startFakeS3({ buckets: [STATE_BUCKET] });
  const bench = await startSaasBench(s.scale, {
    state: {
      provider: 's3',
      bucket: STATE_BUCKET,
      region: s3.region,
      endpoint: s3.endpoint,
      access_key_id: s3.credentials.accessKeyId,
      secret_access_key: s3.credentials.secretAccessKey,
    },
  }).catch(async (e) => {
    await s3.close();
    throw e;
  });
  const { server, github } = bench;
  const integration = `openshift-saas-deploy-trigger-${s.trigger}`;
  try {
    seedPipelines(bench, s.scale);
    const created = () =>
      server.mutatingRequests().filter((r) => r.verb === 'create' && r.kind === 'PipelineRun')
        .length;
    const seeded = await measureInChild(bench.task(integration, false, s.concurrency));
    if (seeded.exitCode !== 0)
      throw new Error(
        `seeding ${integration} run exited ${seeded.exitCode}: ${seeded.details.firstError ?? ''}`,
      );
    const seededRuns = created();
    const stateKeys = s3.requestLog.filter((r) => r.method === 'PUT').length;

    const all = s.scale.saasFiles * s.scale.targets;
    const changedFiles =
      s.changed === 0
        ? []
        : changedSaasFiles(
            s.scale,
            Math.max(
              1,
              Math.round((all * s.changed) / (s.trigger === 'configs' ? 1 : mainTargets(s.scale))),
            ),
          );
    if (s.trigger === 'configs') {
      await bench.rewriteSaasFiles(new Set(changedFiles.map((f) => `${f}/0`)));
    } else {
      for (const f of changedFiles) bench.moveMain(f);
    }

    bench.setLatency(s.latencyMs);
    s3.latencyMs = s.latencyMs;
    const marks = {
      api: server.requests().length,
      github: github.requestLog.length,
      state: s3.requestLog.length,
      writes: server.mutatingRequests().length + github.mutatingRequests().length,
    };
    github.inFlight.reset();
    s3.inFlight.reset();
    const m = await measureInChild(bench.task(integration, true, s.concurrency), measure);
    const apiLog = server.requests().slice(marks.api);
    const stateLog = s3.requestLog.slice(marks.state);
    const githubLog = github.requestLog.slice(marks.github);
    const stateWrites = stateLog.filter((r) => r.method !== 'GET' && r.method !== 'HEAD').length;

    // One read per compared state key: every target for configs, the targets
    // following a branch for moving-commits (a pinned commit never moves).
    const comparedKeys = s.trigger === 'configs' ? all : s.scale.saasFiles * mainTargets(s.scale);
    const bound = {
      api: changedFiles.length,
      github: s.trigger === 'configs' ? 0 : s.scale.saasFiles * Math.min(2, s.scale.targets),
      state: 1 + comparedKeys,
    };
    // bucket check → (ref resolution →) state read → (Pipeline read of a changed target)
    const chain = 2 + (s.trigger === 'configs' ? 0 : 1) + (changedFiles.length > 0 ? 1 : 0);
    const total = bound.api + bound.github + bound.state;
    const ms = Math.max(total / Math.max(1, s.concurrency), chain) * s.latencyMs;
    return {
      kind: 'trigger',
      trigger: s.trigger,
      scale: s.scale,
      changed: s.changed,
      latencyMs: s.latencyMs,
      concurrency: s.concurrency,
      ...measured(m),
      seeded: { pipelineRuns: seededRuns, stateKeys },
      changedTargets: changedFiles.length * (s.trigger === 'configs' ? 1 : mainTargets(s.scale)),
      plannedRuns: Number(m.details['actions.create'] ?? 0),
      expectedRuns: changedFiles.length,
      requests: { api: apiLog.length, github: githubLog.length, state: stateLog.length },
      writes:
        server.mutatingRequests().length +
        github.mutatingRequests().length -
        marks.writes +
        stateWrites,
      lowerBound: { ...bound, chain, ms },
      ratio: ms > 0 ? m.wallMs / ms : null,
      inFlight: { github: inFlightSummary(github.inFlight), state: inFlightSummary(s3.inFlight) },
    };
  } finally {
    await bench.close();
    await s3.close();
  }
}

function measured(m: ChildMeasurement) {
  return { wallMs: m.wallMs, cpuMs: m.cpuMs, peakRssBytes: m.peakRssBytes, exitCode: m.exitCode };
}
