import { commonOptions, defineIntegration } from '@qontract/core';
import { runTriggers, type TriggerType } from './base.ts';
import { configsTrigger } from './configs.ts';
import { imagesTrigger } from './images.ts';
import { movingCommitsTrigger } from './moving-commits.ts';
import { upstreamJobsTrigger } from './upstream-jobs.ts';

/** The options of every trigger, as upstream's cli.py. */
const triggerOptions = {
  threadPoolSize: commonOptions.threadPoolSize(10),
  internal: commonOptions.internal(),
  includeTriggerTrace: {
    type: 'boolean',
    default: false,
    describe: 'If `true`, include traces of the triggering integration and reason.',
  },
} as const;

function defineTrigger(type: TriggerType, version: string, description: string) {
  return defineIntegration({
    name: type.integration,
    version,
    description,
    options: triggerOptions,
    run: (ctx, opts) => runTriggers(ctx, type, version, opts),
  });
}

// Versions as upstream's make_semver of each module: they go into the PipelineRuns' annotations.
export const openshiftSaasDeployTriggerConfigs = defineTrigger(
  configsTrigger,
  '0.3.0',
  'Trigger deployments when configuration changes.',
);

export const openshiftSaasDeployTriggerMovingCommits = defineTrigger(
  movingCommitsTrigger,
  '0.3.0',
  'Trigger deployments when a commit changed for a ref.',
);

export const openshiftSaasDeployTriggerImages = defineTrigger(
  imagesTrigger,
  '0.1.0',
  'Trigger deployments when images are pushed.',
);
export const openshiftSaasDeployTriggerUpstreamJobs = defineTrigger(
  upstreamJobsTrigger,
  '0.3.0',
  'Trigger deployments when upstream job runs.',
);

export { openshiftSaasDeployTriggerCleaner } from './cleaner.ts';
