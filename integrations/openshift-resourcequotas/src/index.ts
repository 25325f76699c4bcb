import { gqlClient } from '@qontract/app-interface';
import { commonOptions } from '@qontract/core';
import { defineEngineIntegration } from '@qontract/openshift';
import { currentStateSpecs, desiredResourceQuotas, isManagedNamespace } from './desired.ts';
import { OpenshiftResourcequotasNamespacesDocument } from './namespaces.generated.ts';

/** The original's module constants: the `qontract.integration` annotation and its version. */
export const QONTRACT_INTEGRATION = 'openshift-resourcequotas';
export const QONTRACT_INTEGRATION_VERSION = '0.1.0';

export const openshiftResourcequotas = defineEngineIntegration({
  name: QONTRACT_INTEGRATION,
  version: QONTRACT_INTEGRATION_VERSION,
  description: 'Manages OpenShift ResourceQuota objects.',
  options: {
    takeOver: {
      ...commonOptions.takeOver(true),
      describe: 'accepted for compatibility and ignored, as upstream: only own quotas are deleted',
    },
  },
  load: async (ctx) => {
    const gql = await ctx.client(gqlClient);
    const { namespaces } = await gql.query(OpenshiftResourcequotasNamespacesDocument);
    return (namespaces ?? []).filter(isManagedNamespace);
  },
  targets: { namespaces: (managed) => managed },
  nothingToDo: 'No ResourceQuota definition found in app-interface!',
  specs: currentStateSpecs,
  desired: (managed, { clusters }) => ({
    objects: desiredResourceQuotas({ namespaces: managed, clusters }),
  }),
  // Quirk kept: the original accepts --take-over but never passes it on, so
  // quotas it did not write are never deleted. Users rely on hand-made quotas staying.
  takeOver: () => false,
});
