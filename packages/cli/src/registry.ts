import type { AnyIntegration } from '@qontract/core';

/**
 * An integration the CLI offers, loaded only when it runs: `--help` and a run
 * of one integration never import the others (their clients and libraries).
 * `name` and `description` are what `--help` lists; a test checks that they
 * match the loaded definition.
 */
export interface LazyIntegration {
  readonly name: string;
  readonly description: string;
  readonly load: () => Promise<AnyIntegration>;
}

/** A registry entry: lazy, or a definition already imported (tests, the generator's old form). */
export type RegistryEntry = LazyIntegration | AnyIntegration;

function lazy(
  name: string,
  description: string,
  load: () => Promise<AnyIntegration>,
): LazyIntegration {
  let loaded: Promise<AnyIntegration> | undefined;
  return { name, description, load: () => (loaded ??= load()) };
}

/**
 * The static integration registry: every integration the umbrella CLI offers,
 * one line each (name, description, import). `npm run new-integration -- NAME`
 * adds entries here.
 */
// biome-ignore format: one line per integration
export const registry: readonly RegistryEntry[] = [
  lazy('openshift-namespaces', 'Manages OpenShift Namespaces.', async () => (await import('@qontract/integration-openshift-namespaces')).openshiftNamespaces),
  lazy('openshift-rolebindings', 'Configures Rolebindings in OpenShift clusters.', async () => (await import('@qontract/integration-openshift-rolebindings')).openshiftRolebindings),
  lazy('openshift-clusterrolebindings', 'Configures ClusterRolebindings in OpenShift clusters.', async () => (await import('@qontract/integration-openshift-clusterrolebindings')).openshiftClusterrolebindings),
  lazy('openshift-groups', 'Manages OpenShift Groups.', async () => (await import('@qontract/integration-openshift-groups')).openshiftGroups),
  lazy('openshift-namespace-labels', 'Manages labels on OpenShift namespaces.', async () => (await import('@qontract/integration-openshift-namespace-labels')).openshiftNamespaceLabels),
  lazy('openshift-limitranges', 'Manages OpenShift LimitRange objects.', async () => (await import('@qontract/integration-openshift-limitranges')).openshiftLimitranges),
  lazy('openshift-serviceaccount-tokens', 'Use OpenShift ServiceAccount tokens across namespaces/clusters.', async () => (await import('@qontract/integration-openshift-serviceaccount-tokens')).openshiftServiceaccountTokens),
  lazy('openshift-resourcequotas', 'Manages OpenShift ResourceQuota objects.', async () => (await import('@qontract/integration-openshift-resourcequotas')).openshiftResourcequotas),
  lazy('openshift-network-policies', 'Manages OpenShift NetworkPolicies.', async () => (await import('@qontract/integration-openshift-network-policies')).openshiftNetworkPolicies),
  lazy('openshift-resources', 'Manages OpenShift Resources.', async () => (await import('@qontract/integration-openshift-resources')).openshiftResources),
  lazy('openshift-vault-secrets', 'Manages OpenShift Secrets from Vault.', async () => (await import('@qontract/integration-openshift-vault-secrets')).openshiftVaultSecrets),
  lazy('openshift-routes', 'Manages OpenShift Routes.', async () => (await import('@qontract/integration-openshift-routes')).openshiftRoutes),
  lazy('openshift-prometheus-rules', 'Manages OpenShift Prometheus Rules.', async () => (await import('@qontract/integration-openshift-prometheus-rules')).openshiftPrometheusRules),
  // The manager renders every integration's deployment: it loads them all, itself included.
  lazy('integrations-manager', 'Manages Qontract Reconcile integrations.', async () => withEveryIntegration((await import('@qontract/integration-integrations-manager')).integrationsManager)),
  lazy('github', 'Configures the GitHub organisations and teams (membership from roles).', async () => (await import('@qontract/integration-github')).github),
  lazy('gitlab-members', 'Manages the members of GitLab groups from roles and PagerDuty schedules.', async () => (await import('@qontract/integration-gitlab-members')).gitlabMembers),
  lazy('gitlab-projects', 'Creates the GitLab projects requested in app-interface.', async () => (await import('@qontract/integration-gitlab-projects')).gitlabProjects),
  lazy('saas-file-validator', 'Validates Saas files.', async () => (await import('@qontract/integration-saas-file-validator')).saasFileValidator),
  lazy('openshift-saas-deploy', 'Manage OpenShift resources defined in Saas files.', async () => (await import('@qontract/integration-openshift-saas-deploy')).openshiftSaasDeploy),
  lazy('openshift-saas-deploy-change-tester', 'Runs openshift-saas-deploy for each saas-file that changed within a bundle.', async () => (await import('@qontract/integration-openshift-saas-deploy')).openshiftSaasDeployChangeTester),
  lazy('saas-auto-promotions-manager', 'Manage auto-promotions defined in SaaS files', async () => (await import('@qontract/integration-saas-auto-promotions-manager')).saasAutoPromotionsManager),
  lazy('openshift-tekton-resources', 'Manages custom resources for Tekton based deployments.', async () => (await import('@qontract/integration-openshift-tekton-resources')).openshiftTektonResources),
  lazy('openshift-saas-deploy-trigger-configs', 'Trigger deployments when configuration changes.', async () => (await import('@qontract/integration-openshift-saas-deploy-triggers')).openshiftSaasDeployTriggerConfigs),
  lazy('openshift-saas-deploy-trigger-moving-commits', 'Trigger deployments when a commit changed for a ref.', async () => (await import('@qontract/integration-openshift-saas-deploy-triggers')).openshiftSaasDeployTriggerMovingCommits),
  lazy('openshift-saas-deploy-trigger-images', 'Trigger deployments when images are pushed.', async () => (await import('@qontract/integration-openshift-saas-deploy-triggers')).openshiftSaasDeployTriggerImages),
  lazy('openshift-saas-deploy-trigger-upstream-jobs', 'Trigger deployments when upstream job runs.', async () => (await import('@qontract/integration-openshift-saas-deploy-triggers')).openshiftSaasDeployTriggerUpstreamJobs),
  lazy('openshift-saas-deploy-trigger-cleaner', 'Clean up deployment related resources.', async () => (await import('@qontract/integration-openshift-saas-deploy-triggers')).openshiftSaasDeployTriggerCleaner),
  // registry:entries (the generator inserts entries above this line)
];

/** The integrations-manager, knowing every definition of the registry (itself included). */
async function withEveryIntegration(
  manager: (known: () => readonly AnyIntegration[]) => AnyIntegration,
): Promise<AnyIntegration> {
  const self = registry.find((e) => e.name === 'integrations-manager');
  const others = await loadIntegrations(registry.filter((e) => e !== self));
  let known: AnyIntegration[] = [];
  const definition = manager(() => known);
  known = registry.map((e) => (e === self ? definition : others.shift()!));
  return definition;
}

function isLazy(entry: RegistryEntry): entry is LazyIntegration {
  return typeof (entry as Partial<LazyIntegration>).load === 'function';
}

/** The definition of one entry (imports its package the first time). */
export function loadIntegration(entry: RegistryEntry): Promise<AnyIntegration> {
  return isLazy(entry) ? entry.load() : Promise.resolve(entry);
}

/** Every entry's definition, in registry order (tools, README, the integrations-manager). */
export function loadIntegrations(
  entries: readonly RegistryEntry[] = registry,
): Promise<AnyIntegration[]> {
  return Promise.all(entries.map(loadIntegration));
}
