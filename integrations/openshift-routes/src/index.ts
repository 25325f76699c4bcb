import { definePipelineIntegration } from '@qontract/resource-pipeline';

/** The original's module constant: the `qontract.integration` annotation value. */
const QONTRACT_INTEGRATION = 'openshift-routes';
const QONTRACT_INTEGRATION_VERSION = '1.9.3';

export const openshiftRoutes = definePipelineIntegration({
  name: 'openshift-routes',
  description: 'Manages OpenShift Routes.',
  identity: QONTRACT_INTEGRATION,
  version: QONTRACT_INTEGRATION_VERSION,
  providers: ['route'],
  overrideManagedTypes: ['Route'],
});
