import { definePipelineIntegration } from '@qontract/resource-pipeline';

/** The original's module constant: the `qontract.integration` annotation value. */
const QONTRACT_INTEGRATION = 'openshift_resources';
const QONTRACT_INTEGRATION_VERSION = '1.9.3';

export const openshiftResources = definePipelineIntegration({
  name: 'openshift-resources',
  description: 'Manages OpenShift Resources.',
  identity: QONTRACT_INTEGRATION,
  version: QONTRACT_INTEGRATION_VERSION,
  providers: ['resource', 'resource-template'],
  excludeCluster: true,
});
