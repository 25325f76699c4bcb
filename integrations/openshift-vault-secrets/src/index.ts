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
export const QONTRACT_INTEGRATION = 'openshift-vault-secrets';
export const QONTRACT_INTEGRATION_VERSION = '1.9.3';

const pipeline: PipelineConfig = {
  identity: QONTRACT_INTEGRATION,
  version: QONTRACT_INTEGRATION_VERSION,
  providers: ['vault-secret'],
  overrideManagedTypes: ['Secret'],
  render: templateRendererFor,
};

export const openshiftVaultSecrets = defineIntegration({
  name: 'openshift-vault-secrets',
  version: QONTRACT_INTEGRATION_VERSION,
  description: 'Manages OpenShift Secrets from Vault.',
  options: siblingPipelineOptions,
  run: (ctx, opts) => runOpenshiftResourcesPipeline(ctx, { excludeCluster: [], ...opts }, pipeline),
  desiredStateForEarlyExit: (ctx, opts) =>
    earlyExitDesiredState(ctx, { excludeCluster: [], ...opts }, pipeline),
  shardedDryRun: pipelineShardedDryRun,
});

export default openshiftVaultSecrets;
