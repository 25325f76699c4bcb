import { gqlClient } from '@qontract/app-interface';
import { defineEngineIntegration, managesRoleBindings, specsForKind } from '@qontract/openshift';
import { desiredRoleBindings } from './desired.ts';
import { OpenshiftRolebindingsNamespacesDocument } from './namespaces.generated.ts';
import { OpenshiftRolebindingsRolesDocument } from './roles.generated.ts';

/** The original's module constant: the `qontract.integration` annotation value. */
const QONTRACT_INTEGRATION = 'openshift-rolebindings';
const QONTRACT_INTEGRATION_VERSION = '0.3.0';
const MANAGED_TYPE = 'RoleBinding.rbac.authorization.k8s.io';

export const openshiftRolebindings = defineEngineIntegration({
  name: QONTRACT_INTEGRATION,
  version: QONTRACT_INTEGRATION_VERSION,
  description: 'Configures Rolebindings in OpenShift clusters.',
  options: {
    supportRoleRef: {
      type: 'boolean',
      default: false,
      describe:
        'bind a namespaced `role` as a Role (default: as a ClusterRole of that name, as upstream)',
    },
  },
  load: async (ctx) => {
    const gql = await ctx.client(gqlClient);
    const [{ namespaces }, { roles }] = await Promise.all([
      gql.query(OpenshiftRolebindingsNamespacesDocument),
      gql.query(OpenshiftRolebindingsRolesDocument),
    ]);
    return {
      managed: (namespaces ?? []).filter((ns) => managesRoleBindings(ns, ctx.isInShard)),
      roles: roles ?? [],
    };
  },
  targets: { namespaces: ({ managed }) => managed },
  nothingToDo: 'no namespace manages its RoleBindings; nothing to do',
  specs: ({ managed }) => specsForKind(managed, MANAGED_TYPE),
  desired: ({ roles }, { clusters, isInShard, opts, today }) => ({
    objects: desiredRoleBindings({
      roles,
      isInShard,
      clusters,
      supportRoleRef: opts.supportRoleRef,
      today,
    }).map((binding) => ({ ...binding, source: `role ${binding.role}` })),
  }),
});
