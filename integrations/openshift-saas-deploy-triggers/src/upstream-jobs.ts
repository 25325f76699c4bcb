import { isDeepStrictEqual } from 'node:util';
import { gqlClient } from '@qontract/app-interface';
import { errorMessage } from '@qontract/core';
import { JenkinsRequestError, type JobBuildState, jenkinsMap } from '@qontract/jenkins';
import type { SaasFile } from '@qontract/saas';
import { type TriggerRun, type TriggerSpec, type TriggerType, targetSpec } from './base.ts';
import { TriggerJenkinsInstancesDocument } from './triggers.generated.ts';

const UPSTREAM_JOBS_INTEGRATION = 'openshift-saas-deploy-trigger-upstream-jobs';

/**
 * The newest build of every job of every Jenkins instance (upstream
 * `_get_upstream_jobs_current_state`), read once per run. An instance that
 * cannot be read is the original's `instance unreachable: <name>` error (the
 * run exits 1) and has no builds, so its targets trigger nothing.
 */
async function currentState(run: TriggerRun): Promise<UpstreamJobsCurrentState> {
  const { ctx } = run;
  let jenkins: Awaited<ReturnType<typeof jenkinsMap>>;
  try {
    const gql = await ctx.client(gqlClient);
    const { instances } = await gql.query(TriggerJenkinsInstancesDocument);
    jenkins = await jenkinsMap(ctx, instances ?? []);
  } catch (e) {
    // Said once, not once per saas file: no upstream target can be decided this run.
    ctx.errors.register('jenkins_instances_v1', errorMessage(e));
    return new Map();
  }
  const entries = await Promise.all(
    [...jenkins].map(async ([name, api]) => {
      try {
        return [name, await api.jobsState()] as const;
      } catch (e) {
        if (!(e instanceof JenkinsRequestError)) throw e;
        ctx.log.debug(`jenkins instance ${name}: ${e.message}`);
        ctx.errors.register(name, `instance unreachable: ${name}`);
        return [name, new Map<string, JobBuildState[]>()] as const;
      }
    }),
  );
  return new Map(entries);
}

/** Builds by Jenkins instance name, then job name, newest first (the client's `jobsState`). */
export type UpstreamJobsCurrentState = ReadonlyMap<
  string,
  ReadonlyMap<string, readonly JobBuildState[]>
>;

/** One target with an upstream job that has builds (the original's `TriggerSpecUpstreamJob`). */
export interface UpstreamJobSpec extends TriggerSpec {
  readonly instanceName: string;
  readonly jobName: string;
  /** The newest build, as the client answered it. */
  readonly stateContent: JobBuildState;
}

/**
 * The specs of a saas file's targets that name an upstream job with at least
 * one build (the original's `get_upstream_jobs_diff_saas_file` and
 * `_build_trigger_spec_upstream_job_reason`): state key
 * `<saas>/<rt>/<cluster>/<namespace>/<env>/<instance>/<job>`, content the newest
 * build, target ref its commit (else the target's ref), reason
 * `<repo>/commit/<sha> via <jenkins>/job/<job>/<number>`. An instance missing
 * from `current` (unreachable: logged, the run fails) or a job it does not
 * list has none.
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
      const { keyPrefix, ...base } = targetSpec(saasFile, rt, target);
      const via = `${upstream.instance.serverUrl}/job/${upstream.name}/${last.number}`;
      specs.push({
        ...base,
        instanceName: upstream.instance.name,
        jobName: upstream.name,
        stateKey: `${keyPrefix}/${upstream.instance.name}/${upstream.name}`,
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

const stateOfRun = new WeakMap<TriggerRun, Promise<UpstreamJobsCurrentState>>();

/**
 * `openshift-saas-deploy-trigger-upstream-jobs`: a target with `upstream`
 * whose Jenkins job has a newer successful build than the one stored. The
 * first build seen is stored without a trigger (the configs trigger deploys
 * new targets); a running, failed or aborted build triggers nothing and keeps
 * the stored one (`upstreamJobDecision`).
 */
export const upstreamJobsTrigger: TriggerType = {
  integration: UPSTREAM_JOBS_INTEGRATION,
  async diff(saasFile: SaasFile, run: TriggerRun) {
    let current = stateOfRun.get(run);
    if (!current) {
      current = currentState(run);
      stateOfRun.set(run, current);
    }
    const specs = upstreamJobSpecs(saasFile, await current, run.includeTriggerTrace);
    const decided = await Promise.all(
      specs.map(async (spec) => {
        const decision = upstreamJobDecision(spec, await run.stored(spec.stateKey));
        if (decision === 'store') await run.store(spec);
        return decision === 'trigger' ? spec : undefined;
      }),
    );
    return decided.filter((s) => s !== undefined);
  },
};
