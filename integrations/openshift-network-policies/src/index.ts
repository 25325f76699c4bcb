import { gqlClient } from '@qontract/app-interface';
import { commonOptions, defineIntegration } from '@qontract/core';
import {
  clusterMapForNamespaces,
  reconcileResources,
  toDesiredResources,
} from '@qontract/openshift';
import { currentStateSpecs, desiredNetworkPolicies, isManagedNamespace } from './desired.ts';
import { OpenshiftNetworkPoliciesNamespacesDocument } from './namespaces.generated.ts';

/** The original's module constants: the `qontract.integration` annotation and its version. */
export const QONTRACT_INTEGRATION = 'openshift-network-policies';
export const QONTRACT_INTEGRATION_VERSION = '0.1.0';

export const openshiftNetworkPolicies = defineIntegration({
  name: 'openshift-network-policies',
  version: QONTRACT_INTEGRATION_VERSION,
  description: 'Manages OpenShift NetworkPolicies.',
  options: {
    threadPoolSize: commonOptions.threadPoolSize(10),
    internal: commonOptions.internal(),
  },
  run: async (ctx, opts) => {
    const gql = await ctx.client(gqlClient);
    const { namespaces } = await gql.query(OpenshiftNetworkPoliciesNamespacesDocument);
    const managed = (namespaces ?? []).filter((ns) => isManagedNamespace(ns, ctx.isInShard));
    // The original crashes here (its engine refuses an empty namespace list); nothing to do is not an error.
    if (managed.length === 0) {
      ctx.log.debug('No networkPoliciesAllow definition found in app-interface!');
      return;
    }
    const clusters = await clusterMapForNamespaces(ctx, managed, {
      internal: opts.internal,
      concurrency: opts.threadPoolSize,
    });
    const { desired, problems } = desiredNetworkPolicies({
      namespaces: managed,
      clusters: new Set(clusters.clusters()),
    });
    for (const p of problems) ctx.errors.register(p.scope, p.message);
    await reconcileResources({
      ctx,
      integration: QONTRACT_INTEGRATION,
      integrationVersion: QONTRACT_INTEGRATION_VERSION,
      clusters,
      specs: currentStateSpecs(managed),
      desired: toDesiredResources(ctx, desired, QONTRACT_INTEGRATION, QONTRACT_INTEGRATION_VERSION),
      takeOver: false,
      concurrency: opts.threadPoolSize,
    });
  },
});

export default openshiftNetworkPolicies;
