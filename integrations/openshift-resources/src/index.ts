import { defineIntegration } from '@qontract/core';
import {
  earlyExitDesiredState,
  type PipelineConfig,
  pipelineOptions,
  pipelineShardedDryRun,
  runOpenshiftResourcesPipeline,
  templateRendererFor,
} from '@qontract/openshift-resources';

/** The original's module constant: the `qontract.integration` annotation value. */
export const QONTRACT_INTEGRATION = 'openshift_resources';
export const QONTRACT_INTEGRATION_VERSION = '1.9.3';

const pipeline: PipelineConfig = {
  identity: QONTRACT_INTEGRATION,
  version: QONTRACT_INTEGRATION_VERSION,
  providers: ['resource', 'resource-template'],
  render: templateRendererFor,
};

export const openshiftResources = defineIntegration({
  name: 'openshift-resources',
  version: QONTRACT_INTEGRATION_VERSION,
  description: 'Manages OpenShift Resources.',
  options: pipelineOptions,
  run: (ctx, opts) => runOpenshiftResourcesPipeline(ctx, opts, pipeline),
  desiredStateForEarlyExit: (ctx, opts) => earlyExitDesiredState(ctx, opts, pipeline),
  shardedDryRun: pipelineShardedDryRun,
});

export default openshiftResources;
