import { gqlClient } from '@qontract/app-interface';
import { commonOptions, defineIntegration } from '@qontract/core';
import {
  clusterMapForNamespaces,
  reconcileResources,
  specsForKind,
  toDesiredResources,
} from '@qontract/openshift';
import { desiredRoleBindings, isManagedNamespace } from './desired.ts';
import { OpenshiftRolebindingsNamespacesDocument } from './namespaces.generated.ts';
import { OpenshiftRolebindingsRolesDocument } from './roles.generated.ts';

/** The original's module constant: the `qontract.integration` annotation value. */
export const QONTRACT_INTEGRATION = 'openshift-rolebindings';
export const QONTRACT_INTEGRATION_VERSION = '0.3.0';
const MANAGED_TYPE = 'RoleBinding.rbac.authorization.k8s.io';

export const openshiftRolebindings = defineIntegration({
  name: 'openshift-rolebindings',
  version: QONTRACT_INTEGRATION_VERSION,
  description: 'Configures Rolebindings in OpenShift clusters.',
  options: {
    threadPoolSize: commonOptions.threadPoolSize(10),
    internal: commonOptions.internal(),
    supportRoleRef: {
      type: 'boolean',
      default: false,
      describe:
        'bind a namespaced `role` as a Role (default: as a ClusterRole of that name, as upstream)',
    },
  },
  run: async (ctx, opts) => {
    const gql = await ctx.client(gqlClient);
    const [{ namespaces }, { roles }] = await Promise.all([
      gql.query(OpenshiftRolebindingsNamespacesDocument),
      gql.query(OpenshiftRolebindingsRolesDocument),
    ]);
    const managed = (namespaces ?? []).filter((ns) => isManagedNamespace(ns, ctx.isInShard));
    if (managed.length === 0) {
      ctx.log.info('no namespace manages its RoleBindings; nothing to do');
      return;
    }
    const clusters = await clusterMapForNamespaces(ctx, managed, {
      internal: opts.internal,
      concurrency: opts.threadPoolSize,
    });
    const specs = specsForKind(managed, MANAGED_TYPE);
    const bindings = desiredRoleBindings({
      roles: roles ?? [],
      isInShard: ctx.isInShard,
      clusters: new Set(clusters.clusters()),
      supportRoleRef: opts.supportRoleRef,
      today: new Date(),
    });
    const desired = toDesiredResources(
      ctx,
      bindings.map((b) => ({ ...b, source: `role ${b.role}` })),
      QONTRACT_INTEGRATION,
      QONTRACT_INTEGRATION_VERSION,
    );
    await reconcileResources({
      ctx,
      integration: QONTRACT_INTEGRATION,
      integrationVersion: QONTRACT_INTEGRATION_VERSION,
      clusters,
      specs,
      desired,
      takeOver: false,
      concurrency: opts.threadPoolSize,
    });
  },
});

export default openshiftRolebindings;
