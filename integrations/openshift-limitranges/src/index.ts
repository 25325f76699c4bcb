import { gqlClient } from '@qontract/app-interface';
import { commonOptions, defineIntegration } from '@qontract/core';
import {
  clusterMapForNamespaces,
  reconcileResources,
  toDesiredResources,
} from '@qontract/openshift';
import { currentStateSpecs, desiredLimitRanges, isManagedNamespace } from './desired.ts';
import { OpenshiftLimitrangesNamespacesDocument } from './namespaces.generated.ts';

/** The original's module constants: the `qontract.integration` annotation and its version. */
export const QONTRACT_INTEGRATION = 'openshift-limitranges';
export const QONTRACT_INTEGRATION_VERSION = '0.1.0';

export const openshiftLimitranges = defineIntegration({
  name: 'openshift-limitranges',
  version: QONTRACT_INTEGRATION_VERSION,
  description: 'Manages OpenShift LimitRange objects.',
  options: {
    threadPoolSize: commonOptions.threadPoolSize(10),
    internal: commonOptions.internal(),
    takeOver: commonOptions.takeOver(true),
  },
  run: async (ctx, opts) => {
    const gql = await ctx.client(gqlClient);
    const { namespaces } = await gql.query(OpenshiftLimitrangesNamespacesDocument);
    const managed = (namespaces ?? []).filter(isManagedNamespace);
    if (managed.length === 0) {
      ctx.log.debug('No LimitRanges definition found in app-interface!');
      return;
    }
    const clusters = await clusterMapForNamespaces(ctx, managed, {
      internal: opts.internal,
      concurrency: opts.threadPoolSize,
    });
    const desired = desiredLimitRanges({
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
      // As upstream: by default every LimitRange of a managed namespace that is
      // not desired is deleted, unannotated ones (without ownerReferences) included.
      takeOver: opts.takeOver,
      concurrency: opts.threadPoolSize,
    });
  },
});

export default openshiftLimitranges;
