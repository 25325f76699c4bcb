import { gqlClient } from '@qontract/app-interface';
import { commonOptions, defineIntegration } from '@qontract/core';
import {
  clusterMapForNamespaces,
  reconcileResources,
  toDesiredResources,
} from '@qontract/openshift';
import { currentStateSpecs, desiredResourceQuotas, isManagedNamespace } from './desired.ts';
import { OpenshiftResourcequotasNamespacesDocument } from './namespaces.generated.ts';

/** The original's module constants: the `qontract.integration` annotation and its version. */
export const QONTRACT_INTEGRATION = 'openshift-resourcequotas';
export const QONTRACT_INTEGRATION_VERSION = '0.1.0';

export const openshiftResourcequotas = defineIntegration({
  name: 'openshift-resourcequotas',
  version: QONTRACT_INTEGRATION_VERSION,
  description: 'Manages OpenShift ResourceQuota objects.',
  options: {
    threadPoolSize: commonOptions.threadPoolSize(10),
    internal: commonOptions.internal(),
    takeOver: {
      ...commonOptions.takeOver(true),
      describe: 'accepted for compatibility and ignored, as upstream: only own quotas are deleted',
    },
  },
  run: async (ctx, opts) => {
    const gql = await ctx.client(gqlClient);
    const { namespaces } = await gql.query(OpenshiftResourcequotasNamespacesDocument);
    const managed = (namespaces ?? []).filter(isManagedNamespace);
    if (managed.length === 0) {
      ctx.log.debug('No ResourceQuota definition found in app-interface!');
      return;
    }
    const clusters = await clusterMapForNamespaces(ctx, managed, {
      internal: opts.internal,
      concurrency: opts.threadPoolSize,
    });
    const desired = desiredResourceQuotas({
      namespaces: managed,
      clusters: new Set(clusters.clusters()),
    });
    await reconcileResources({
      ctx,
      integration: QONTRACT_INTEGRATION,
      integrationVersion: QONTRACT_INTEGRATION_VERSION,
      clusters,
      specs: currentStateSpecs(managed),
      desired: toDesiredResources(ctx, desired, QONTRACT_INTEGRATION, QONTRACT_INTEGRATION_VERSION),
      // Quirk kept: the original accepts --take-over but never passes it on, so
      // quotas it did not write are never deleted. Users rely on hand-made quotas staying.
      takeOver: false,
      concurrency: opts.threadPoolSize,
    });
  },
});

export default openshiftResourcequotas;
