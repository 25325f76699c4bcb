import { definePipelineIntegration } from '@qontract/resource-pipeline';

/** The original's module constant: the `qontract.integration` annotation value. */
const QONTRACT_INTEGRATION = 'openshift-vault-secrets';
const QONTRACT_INTEGRATION_VERSION = '1.9.3';

export const openshiftVaultSecrets = definePipelineIntegration({
  name: 'openshift-vault-secrets',
  description: 'Manages OpenShift Secrets from Vault.',
  identity: QONTRACT_INTEGRATION,
  version: QONTRACT_INTEGRATION_VERSION,
  providers: ['vault-secret'],
  overrideManagedTypes: ['Secret'],
});
