import { defineIntegration } from '@qontract/core';
import {
  earlyExitDesiredState,
  type PipelineConfig,
  pipelineShardedDryRun,
  runOpenshiftResourcesPipeline,
  siblingPipelineOptions,
  templateRendererFor,
} from '@qontract/openshift-resources';

/** The original's module constant: the `qontract.integration` annotation value. */
export const QONTRACT_INTEGRATION = 'openshift-prometheus-rules';
export const QONTRACT_INTEGRATION_VERSION = '1.0.0';

const pipeline: PipelineConfig = {
  identity: QONTRACT_INTEGRATION,
  version: QONTRACT_INTEGRATION_VERSION,
  providers: ['prometheus-rule'],
  overrideManagedTypes: ['PrometheusRule.monitoring.coreos.com', 'PrometheusRule.monitoring.rhobs'],
  render: templateRendererFor,
};

export const openshiftPrometheusRules = defineIntegration({
  name: 'openshift-prometheus-rules',
  version: QONTRACT_INTEGRATION_VERSION,
  description: 'Manages OpenShift Prometheus Rules.',
  options: siblingPipelineOptions,
  run: (ctx, opts) => runOpenshiftResourcesPipeline(ctx, { excludeCluster: [], ...opts }, pipeline),
  desiredStateForEarlyExit: (ctx, opts) =>
    earlyExitDesiredState(ctx, { excludeCluster: [], ...opts }, pipeline),
  shardedDryRun: pipelineShardedDryRun,
});

export default openshiftPrometheusRules;
