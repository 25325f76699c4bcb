import { gqlClient } from '@qontract/app-interface';
import { defineEngineIntegration } from '@qontract/openshift';
import { OpenshiftClusterrolebindingsClustersDocument } from './clusters.generated.ts';
import { desiredClusterRoleBindings, isManagedCluster } from './desired.ts';
import { OpenshiftClusterrolebindingsRolesDocument } from './roles.generated.ts';

/** The original's module constants: the `qontract.integration` annotation value and version. */
const QONTRACT_INTEGRATION = 'openshift-clusterrolebindings';
const QONTRACT_INTEGRATION_VERSION = '0.1.0';
const MANAGED_TYPE = 'ClusterRoleBinding.rbac.authorization.k8s.io';
/** The original's pseudo namespace of cluster-scoped objects in the inventory and log lines. */
const NAMESPACE_CLUSTER_SCOPE = 'cluster';

export const openshiftClusterrolebindings = defineEngineIntegration({
  name: QONTRACT_INTEGRATION,
  version: QONTRACT_INTEGRATION_VERSION,
  description: 'Configures ClusterRolebindings in OpenShift clusters.',
  load: async (ctx) => {
    const gql = await ctx.client(gqlClient);
    const [{ clusters }, { roles }] = await Promise.all([
      gql.query(OpenshiftClusterrolebindingsClustersDocument),
      gql.query(OpenshiftClusterrolebindingsRolesDocument),
    ]);
    return { managed: (clusters ?? []).filter(isManagedCluster), roles: roles ?? [] };
  },
  targets: { clusters: ({ managed }) => managed },
  nothingToDo: 'no cluster manages its ClusterRoleBindings; nothing to do',
  specs: ({ managed }) =>
    managed.map((cluster) => ({
      cluster: cluster.name,
      namespace: NAMESPACE_CLUSTER_SCOPE,
      kind: MANAGED_TYPE,
      privileged: false,
    })),
  desired: ({ roles }, { clusters, today }) => {
    const { bindings, invalid } = desiredClusterRoleBindings({ roles, clusters, today });
    return {
      objects: bindings.map((binding) => ({
        cluster: binding.cluster,
        namespace: NAMESPACE_CLUSTER_SCOPE,
        source: `role ${binding.role}`,
        body: binding.body,
      })),
      problems: invalid.map((bad) => ({
        scope: `${bad.cluster}/${bad.name}`,
        message: bad.message,
      })),
    };
  },
});
