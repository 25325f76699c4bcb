import type { AnyIntegration } from '@qontract/core';
import { openshiftNamespaces } from '@qontract/integration-openshift-namespaces';
import { openshiftRolebindings } from '@qontract/integration-openshift-rolebindings';
// registry:imports (the generator inserts imports above this line)

/**
 * The static integration registry: every integration the umbrella CLI offers.
 * `npm run new-integration -- NAME` adds entries here.
 */
export const integrations: readonly AnyIntegration[] = [
  openshiftNamespaces,
  openshiftRolebindings,
  // registry:entries (the generator inserts entries above this line)
];
