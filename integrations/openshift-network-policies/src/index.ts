import { gqlClient } from '@qontract/app-interface';
import { defineEngineIntegration } from '@qontract/openshift';
import { currentStateSpecs, desiredNetworkPolicies, isManagedNamespace } from './desired.ts';
import { OpenshiftNetworkPoliciesNamespacesDocument } from './namespaces.generated.ts';

/** The original's module constants: the `qontract.integration` annotation and its version. */
export const QONTRACT_INTEGRATION = 'openshift-network-policies';
export const QONTRACT_INTEGRATION_VERSION = '0.1.0';

export const openshiftNetworkPolicies = defineEngineIntegration({
  name: QONTRACT_INTEGRATION,
  version: QONTRACT_INTEGRATION_VERSION,
  description: 'Manages OpenShift NetworkPolicies.',
  load: async (ctx) => {
    const gql = await ctx.client(gqlClient);
    const { namespaces } = await gql.query(OpenshiftNetworkPoliciesNamespacesDocument);
    return (namespaces ?? []).filter((ns) => isManagedNamespace(ns, ctx.isInShard));
  },
  targets: { namespaces: (managed) => managed },
  // The original crashes here (its engine refuses an empty namespace list); nothing to do is not an error.
  nothingToDo: 'No networkPoliciesAllow definition found in app-interface!',
  specs: currentStateSpecs,
  desired: (managed, { clusters }) => {
    const { desired, problems } = desiredNetworkPolicies({ namespaces: managed, clusters });
    return { objects: desired, problems };
  },
});
