import { commonOptions, defineIntegration } from '@qontract/core';
import { desiredOpenshiftServiceaccountTokens } from './desired.ts';

export const QONTRACT_INTEGRATION = 'openshift_serviceaccount_tokens';
export const QONTRACT_INTEGRATION_VERSION = '0.1.0';

export const openshiftServiceaccountTokens = defineIntegration({
  name: 'openshift-serviceaccount-tokens',
  version: QONTRACT_INTEGRATION_VERSION,
  description: "Use OpenShift ServiceAccount tokens across namespaces/clusters.",
  options: {
    threadPoolSize: commonOptions.threadPoolSize(10),
  },
  run: async (ctx, _opts) => {
    // 1. read the desired state from app-interface (typed query, see openshift-serviceaccount-tokens.graphql)
    // 2. read the current state of the system from a client of ctx
    // 3. plan = pure diff; 4. apply unless ctx.dryRun
    const desired = desiredOpenshiftServiceaccountTokens({ namespaces: [] });
    ctx.log.info(`${desired.length} desired item(s)`);
  },
});

export default openshiftServiceaccountTokens;
