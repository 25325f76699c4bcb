/**
 * library-go `pkg/legacyapi/legacygroupification`: `oc process` moves the
 * OpenShift kinds of the old group-less `v1` API into their API groups, so
 * `apiVersion: v1, kind: Route` comes out as `route.openshift.io/v1`. Kinds of
 * the core group (Service, ConfigMap, ...) are not in the table and stay `v1`.
 */
const GROUP_OF_LEGACY_KIND: ReadonlyMap<string, string> = new Map(
  Object.entries({
    'apps.openshift.io': [
      'DeploymentConfig',
      'DeploymentConfigList',
      'DeploymentConfigRollback',
      'DeploymentLog',
      'DeploymentRequest',
    ],
    'authorization.openshift.io': [
      'ClusterRoleBinding',
      'ClusterRoleBindingList',
      'ClusterRole',
      'ClusterRoleList',
      'RoleBindingRestriction',
      'RoleBindingRestrictionList',
      'RoleBinding',
      'RoleBindingList',
      'Role',
      'RoleList',
      'SubjectRulesReview',
      'SelfSubjectRulesReview',
      'ResourceAccessReview',
      'LocalResourceAccessReview',
      'SubjectAccessReview',
      'LocalSubjectAccessReview',
    ],
    'build.openshift.io': [
      'BuildConfig',
      'BuildConfigList',
      'Build',
      'BuildList',
      'BinaryBuildRequestOptions',
      'BuildLog',
      'BuildRequest',
    ],
    'image.openshift.io': [
      'Image',
      'ImageList',
      'ImageSignature',
      'ImageStreamImage',
      'ImageStreamImport',
      'ImageStreamMapping',
      'ImageStream',
      'ImageStreamList',
      'ImageStreamTag',
      'ImageStreamTagList',
    ],
    'network.openshift.io': [
      'ClusterNetwork',
      'ClusterNetworkList',
      'EgressNetworkPolicy',
      'EgressNetworkPolicyList',
      'HostSubnet',
      'HostSubnetList',
      'NetNamespace',
      'NetNamespaceList',
    ],
    'oauth.openshift.io': [
      'OAuthAccessToken',
      'OAuthAccessTokenList',
      'OAuthAuthorizeToken',
      'OAuthAuthorizeTokenList',
      'OAuthClientAuthorization',
      'OAuthClientAuthorizationList',
      'OAuthClient',
      'OAuthClientList',
    ],
    'project.openshift.io': ['Project', 'ProjectList', 'ProjectRequest'],
    'quota.openshift.io': [
      'ClusterResourceQuota',
      'ClusterResourceQuotaList',
      'AppliedClusterResourceQuota',
      'AppliedClusterResourceQuotaList',
    ],
    'route.openshift.io': ['Route', 'RouteList'],
    'security.openshift.io': [
      'SecurityContextConstraints',
      'SecurityContextConstraintsList',
      'PodSecurityPolicySubjectReview',
      'PodSecurityPolicySelfSubjectReview',
      'PodSecurityPolicyReview',
    ],
    'template.openshift.io': ['Template', 'TemplateList'],
    'user.openshift.io': [
      'Group',
      'GroupList',
      'Identity',
      'IdentityList',
      'UserIdentityMapping',
      'User',
      'UserList',
    ],
  }).flatMap(([group, kinds]) => kinds.map((kind) => [kind, group] as const)),
);

/**
 * The apiVersion and kind template.go writes back onto each processed object
 * (Unstructured.GroupVersionKind → OAPIToGroupifiedGVK → SetGroupVersionKind):
 * a group is added to a group-less legacy kind; a missing apiVersion becomes
 * `''`; an apiVersion with more than one `/` does not parse, and both become `''`.
 */
export function groupifiedApiVersion(
  apiVersion: unknown,
  kind: unknown,
): { apiVersion: string; kind: string } {
  const text = typeof apiVersion === 'string' ? apiVersion : '';
  const parts = text === '/' ? [''] : text.split('/');
  if (parts.length > 2) return { apiVersion: '', kind: '' };
  const [group, version] = parts.length === 2 ? parts : ['', parts[0]];
  const kindText = typeof kind === 'string' ? kind : '';
  const resolved = group || GROUP_OF_LEGACY_KIND.get(kindText) || '';
  return { apiVersion: resolved ? `${resolved}/${version}` : (version ?? ''), kind: kindText };
}
