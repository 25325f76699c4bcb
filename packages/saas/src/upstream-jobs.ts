/*
 * The decision of `openshift-saas-deploy-trigger-upstream-jobs` (the
 * original's `SaasHerder.get_upstream_jobs_diff_saas_file`,
 * `_build_trigger_spec_upstream_job_reason` and `TriggerSpecUpstreamJob`), as
 * pure functions: the newest build of each target's upstream Jenkins job and
 * what the trigger stored last time → what to trigger and what to store.
 * The trigger framework fetches the builds (`@qontract/jenkins`), reads the
 * stored values, creates the PipelineRuns and writes the state.
 */
import { isDeepStrictEqual } from 'node:util';
import type { SaasFile } from './model.ts';

/**
 * A build as the Jenkins client gives it (`JobBuildState`): the fields the
 * decision reads; the whole object is the state content.
 */
export interface UpstreamJobBuild {
  readonly number: number;
  readonly result?: string | null;
  readonly commit_sha?: string;
}

/** Builds by Jenkins instance name, then job name, newest first (the client's `jobsState`). */
export type UpstreamJobsCurrentState = ReadonlyMap<
  string,
  ReadonlyMap<string, readonly UpstreamJobBuild[]>
>;

/** One target with an upstream job that has builds (the original's `TriggerSpecUpstreamJob`). */
export interface UpstreamJobSpec {
  readonly saasFileName: string;
  readonly envName: string;
  readonly timeout: string | null;
  readonly pipelinesProvider: SaasFile['pipelinesProvider'];
  readonly resourceTemplateName: string;
  readonly clusterName: string;
  readonly namespaceName: string;
  readonly instanceName: string;
  readonly jobName: string;
  /** `<saas file>/<rt>/<cluster>/<namespace>/<env>/<instance>/<job>`, as the original. */
  readonly stateKey: string;
  /** The newest build, as the client answered it. */
  readonly stateContent: UpstreamJobBuild;
  /** With `--include-trigger-trace`: `<repo>/commit/<sha> via <jenkins>/job/<job>/<number>`. */
  readonly reason: string | null;
  /** The build's commit, else the target's ref. */
  readonly targetRef: string;
}

/**
 * The specs of a saas file's targets that name an upstream job with at least
 * one build. An instance missing from `current` (unreachable: the caller logs
 * it and fails the run) or a job it does not list has none.
 */
export function upstreamJobSpecs(
  saasFile: SaasFile,
  current: UpstreamJobsCurrentState,
  includeTriggerTrace: boolean,
): UpstreamJobSpec[] {
  const specs: UpstreamJobSpec[] = [];
  for (const rt of saasFile.resourceTemplates) {
    for (const target of rt.targets) {
      const upstream = target.upstream;
      if (!upstream) continue;
      const last = current.get(upstream.instance.name)?.get(upstream.name)?.[0];
      if (last === undefined) continue;
      const ns = target.namespace;
      const via = `${upstream.instance.serverUrl}/job/${upstream.name}/${last.number}`;
      specs.push({
        saasFileName: saasFile.name,
        envName: ns.environment.name,
        timeout: saasFile.timeout,
        pipelinesProvider: saasFile.pipelinesProvider,
        resourceTemplateName: rt.name,
        clusterName: ns.cluster.name,
        namespaceName: ns.name,
        instanceName: upstream.instance.name,
        jobName: upstream.name,
        stateKey: [
          saasFile.name,
          rt.name,
          ns.cluster.name,
          ns.name,
          ns.environment.name,
          upstream.instance.name,
          upstream.name,
        ].join('/'),
        stateContent: last,
        reason: includeTriggerTrace
          ? last.commit_sha
            ? `${rt.url}/commit/${last.commit_sha} via ${via}`
            : via
          : null,
        targetRef: last.commit_sha || target.ref,
      });
    }
  }
  return specs;
}

/**
 * What to do with a spec given what is stored under its key (null: nothing):
 * - `skip`: the build still runs, or it is the stored one;
 * - `store`: first sight of the job for this target; its build is stored
 *   (outside dry-run) and nothing triggers: the configs trigger deploys new
 *   targets;
 * - `trigger`: the newest build is another one than stored (a cleared history
 *   gives lower numbers) and it succeeded; its state is stored once the
 *   PipelineRun exists.
 * A newer failed or aborted build is a skip and leaves the state as it was,
 * so the next successful build still triggers.
 */
export function upstreamJobDecision(
  spec: Pick<UpstreamJobSpec, 'stateContent'>,
  stored: unknown,
): 'skip' | 'store' | 'trigger' {
  const last = spec.stateContent;
  if (last.result == null || isDeepStrictEqual(last, stored)) return 'skip';
  if (stored === null || stored === undefined) return 'store';
  const storedNumber = (stored as { number?: unknown }).number;
  return last.number !== storedNumber && last.result === 'SUCCESS' ? 'trigger' : 'skip';
}
