import type { AnyIntegration } from '@qontract/core';
import { github } from '@qontract/integration-github';
import { gitlabMembers } from '@qontract/integration-gitlab-members';
import { gitlabProjects } from '@qontract/integration-gitlab-projects';
import { integrationsManager } from '@qontract/integration-integrations-manager';
import { openshiftClusterrolebindings } from '@qontract/integration-openshift-clusterrolebindings';
import { openshiftGroups } from '@qontract/integration-openshift-groups';
import { openshiftLimitranges } from '@qontract/integration-openshift-limitranges';
import { openshiftNamespaceLabels } from '@qontract/integration-openshift-namespace-labels';
import { openshiftNamespaces } from '@qontract/integration-openshift-namespaces';
import { openshiftNetworkPolicies } from '@qontract/integration-openshift-network-policies';
import { openshiftPrometheusRules } from '@qontract/integration-openshift-prometheus-rules';
import { openshiftResourcequotas } from '@qontract/integration-openshift-resourcequotas';
import { openshiftResources } from '@qontract/integration-openshift-resources';
import { openshiftRolebindings } from '@qontract/integration-openshift-rolebindings';
import { openshiftRoutes } from '@qontract/integration-openshift-routes';
import { openshiftSaasDeploy } from '@qontract/integration-openshift-saas-deploy';
import { openshiftServiceaccountTokens } from '@qontract/integration-openshift-serviceaccount-tokens';
import { openshiftVaultSecrets } from '@qontract/integration-openshift-vault-secrets';
import { saasFileValidator } from '@qontract/integration-saas-file-validator';
// registry:imports (the generator inserts imports above this line)

/**
 * The static integration registry: every integration the umbrella CLI offers.
 * `npm run new-integration -- NAME` adds entries here.
 */
export const integrations: readonly AnyIntegration[] = [
  openshiftNamespaces,
  openshiftRolebindings,
  openshiftClusterrolebindings,
  openshiftGroups,
  openshiftNamespaceLabels,
  openshiftLimitranges,
  openshiftServiceaccountTokens,
  openshiftResourcequotas,
  openshiftNetworkPolicies,
  openshiftResources,
  openshiftVaultSecrets,
  openshiftRoutes,
  openshiftPrometheusRules,
  integrationsManager(() => integrations),
  github,
  gitlabMembers,
  gitlabProjects,
  saasFileValidator,
  openshiftSaasDeploy,
  // registry:entries (the generator inserts entries above this line)
];
