import { gqlClient } from '@qontract/app-interface';
import { commonOptions } from '@qontract/core';
import { defineEngineIntegration } from '@qontract/openshift';
import { currentStateSpecs, desiredLimitRanges, isManagedNamespace } from './desired.ts';
import { OpenshiftLimitrangesNamespacesDocument } from './namespaces.generated.ts';

/** The original's module constants: the `qontract.integration` annotation and its version. */
export const QONTRACT_INTEGRATION = 'openshift-limitranges';
export const QONTRACT_INTEGRATION_VERSION = '0.1.0';

export const openshiftLimitranges = defineEngineIntegration({
  name: QONTRACT_INTEGRATION,
  version: QONTRACT_INTEGRATION_VERSION,
  description: 'Manages OpenShift LimitRange objects.',
  options: { takeOver: commonOptions.takeOver(true) },
  load: async (ctx) => {
    const gql = await ctx.client(gqlClient);
    const { namespaces } = await gql.query(OpenshiftLimitrangesNamespacesDocument);
    return (namespaces ?? []).filter(isManagedNamespace);
  },
  targets: { namespaces: (managed) => managed },
  nothingToDo: 'No LimitRanges definition found in app-interface!',
  specs: currentStateSpecs,
  desired: (managed, { clusters }) => ({
    objects: desiredLimitRanges({ namespaces: managed, clusters }),
  }),
  // As upstream: by default every LimitRange of a managed namespace that is
  // not desired is deleted, unannotated ones (without ownerReferences) included.
  takeOver: (opts) => opts.takeOver,
});
