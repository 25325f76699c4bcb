import { definePipelineIntegration } from '@qontract/resource-pipeline';

/** The original's module constant: the `qontract.integration` annotation value. */
const QONTRACT_INTEGRATION = 'openshift-prometheus-rules';
const QONTRACT_INTEGRATION_VERSION = '1.0.0';

export const openshiftPrometheusRules = definePipelineIntegration({
  name: 'openshift-prometheus-rules',
  description: 'Manages OpenShift Prometheus Rules.',
  identity: QONTRACT_INTEGRATION,
  version: QONTRACT_INTEGRATION_VERSION,
  providers: ['prometheus-rule'],
  overrideManagedTypes: ['PrometheusRule.monitoring.coreos.com', 'PrometheusRule.monitoring.rhobs'],
});
