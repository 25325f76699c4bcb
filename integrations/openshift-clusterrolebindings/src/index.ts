import { gqlClient } from '@qontract/app-interface';
import { commonOptions, defineIntegration } from '@qontract/core';
import {
  type CurrentStateSpec,
  clusterMapForClusters,
  OpenshiftResource,
  reconcileResources,
} from '@qontract/openshift';
import { OpenshiftClusterrolebindingsClustersDocument } from './clusters.generated.ts';
import { desiredClusterRoleBindings, isManagedCluster } from './desired.ts';
import { OpenshiftClusterrolebindingsRolesDocument } from './roles.generated.ts';

/** The original's module constants: the `qontract.integration` annotation value and version. */
export const QONTRACT_INTEGRATION = 'openshift-clusterrolebindings';
export const QONTRACT_INTEGRATION_VERSION = '0.1.0';
const MANAGED_TYPE = 'ClusterRoleBinding.rbac.authorization.k8s.io';
/** The original's pseudo namespace of cluster-scoped objects in the inventory and log lines. */
const NAMESPACE_CLUSTER_SCOPE = 'cluster';

export const openshiftClusterrolebindings = defineIntegration({
  name: 'openshift-clusterrolebindings',
  version: QONTRACT_INTEGRATION_VERSION,
  description: 'Configures ClusterRolebindings in OpenShift clusters.',
  options: {
    threadPoolSize: commonOptions.threadPoolSize(10),
    internal: commonOptions.internal(),
  },
  run: async (ctx, opts) => {
    const gql = await ctx.client(gqlClient);
    const [{ clusters: allClusters }, { roles }] = await Promise.all([
      gql.query(OpenshiftClusterrolebindingsClustersDocument),
      gql.query(OpenshiftClusterrolebindingsRolesDocument),
    ]);
    const managed = (allClusters ?? []).filter(isManagedCluster);
    if (managed.length === 0) {
      ctx.log.info('no cluster manages its ClusterRoleBindings; nothing to do');
      return;
    }
    const clusters = await clusterMapForClusters(ctx, managed, {
      internal: opts.internal,
      concurrency: opts.threadPoolSize,
    });
    const specs: CurrentStateSpec[] = managed.map((c) => ({
      cluster: c.name,
      namespace: NAMESPACE_CLUSTER_SCOPE,
      kind: MANAGED_TYPE,
      privileged: false,
    }));
    const { bindings, invalid } = desiredClusterRoleBindings({
      roles: roles ?? [],
      clusters: new Set(clusters.clusters()),
      today: new Date(),
    });
    for (const bad of invalid) ctx.errors.register(`${bad.cluster}/${bad.name}`, bad.message);
    await reconcileResources({
      ctx,
      integration: QONTRACT_INTEGRATION,
      integrationVersion: QONTRACT_INTEGRATION_VERSION,
      clusters,
      specs,
      desired: bindings.map((b) => ({
        cluster: b.cluster,
        namespace: NAMESPACE_CLUSTER_SCOPE,
        source: `role ${b.role}`,
        resource: new OpenshiftResource(b.body, QONTRACT_INTEGRATION, QONTRACT_INTEGRATION_VERSION),
      })),
      takeOver: false,
      concurrency: opts.threadPoolSize,
    });
  },
});

export default openshiftClusterrolebindings;
