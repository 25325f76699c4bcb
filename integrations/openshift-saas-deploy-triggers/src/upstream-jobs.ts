import { gqlClient } from '@qontract/app-interface';
import { errorMessage } from '@qontract/core';
import { JenkinsRequestError, type JobBuildState, jenkinsMap } from '@qontract/jenkins';
import {
  type SaasFile,
  type UpstreamJobsCurrentState,
  upstreamJobDecision,
  upstreamJobSpecs,
} from '@qontract/saas';
import type { TriggerRun, TriggerType } from './base.ts';
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

const stateOfRun = new WeakMap<TriggerRun, Promise<UpstreamJobsCurrentState>>();

/**
 * `openshift-saas-deploy-trigger-upstream-jobs`: a target with `upstream`
 * whose Jenkins job has a newer successful build than the one stored. The
 * first build seen is stored without a trigger (the configs trigger deploys
 * new targets); a running, failed or aborted build triggers nothing and keeps
 * the stored one. Decisions: `upstreamJobDecision` of `@qontract/saas`.
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
