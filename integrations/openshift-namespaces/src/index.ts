import { gqlClient } from '@qontract/app-interface';
import {
  arrivals,
  commonOptions,
  defineIntegration,
  errorMessage,
  executeActions,
} from '@qontract/core';
import {
  type ClusterHandle,
  clusterMapForNamespaces,
  isClusterProblem,
  pyRepr,
  reconcileTimeObserver,
} from '@qontract/openshift';
import { desiredNamespaces, type NamespaceAction, planNamespaceActions } from './desired.ts';
import { OpenshiftNamespacesDocument } from './openshift-namespaces.generated.ts';

const QONTRACT_INTEGRATION_VERSION = '0.1.0';

export const openshiftNamespaces = defineIntegration({
  name: 'openshift-namespaces',
  version: QONTRACT_INTEGRATION_VERSION,
  description: 'Manages OpenShift Namespaces.',
  options: {
    threadPoolSize: commonOptions.threadPoolSize(10),
    internal: commonOptions.internal(),
    clusterName: commonOptions.clusterName(),
    namespaceName: commonOptions.namespaceName(),
  },
  run: async (ctx, opts) => {
    const gql = await ctx.client(gqlClient);
    const { namespaces } = await gql.query(OpenshiftNamespacesDocument);
    const { desired, duplicates } = desiredNamespaces(namespaces ?? [], {
      isInShard: ctx.isInShard,
      clusterNames: opts.clusterName,
      namespaceName: opts.namespaceName,
    });
    for (const key of duplicates) {
      // The data files, so the author knows which ones to reconcile.
      const paths = (namespaces ?? [])
        .filter((n) => `${n.cluster.name}/${n.name}` === key)
        .map((n) => n.path)
        .sort();
      ctx.errors.register(
        key,
        `Found multiple definitions for the namespace ${key}: ${paths.join(', ')}`,
      );
    }
    const clusters = await clusterMapForNamespaces(
      ctx,
      desired.map((d) => ({ cluster: d.source.cluster, clusterAdmin: d.clusterAdmin })),
      { internal: opts.internal, concurrency: opts.threadPoolSize },
    );

    // One paginated list of namespaces per cluster is cheaper than a GET per namespace. A wet
    // run creates a cluster's namespaces as soon as its list is in (a slow cluster does not hold
    // the others); deletions wait for every cluster (executeActions), a dry-run plans once all
    // are read so that its lines keep their order.
    const existing = new Map<string, Set<string>>();
    const listed = arrivals<string>();
    const reading = Promise.all(
      clusters.clusters().map(async (name) => {
        const handle = clusters.get(name);
        if (isClusterProblem(handle)) return;
        try {
          const items = await handle.client.list(handle.catalog.get('Namespace'));
          existing.set(name, new Set(items.map((i) => i.metadata?.name ?? '')));
          if (!ctx.dryRun) listed.push(name);
        } catch (e) {
          ctx.errors.register(name, `[${name}] ${errorMessage(e)}`, { clusterWide: true });
        }
      }),
    );
    reading.then(listed.end, listed.end);
    const exists = (c: string, ns: string) => existing.get(c)?.has(ns) ?? false;
    const byCluster = Map.groupBy(desired, (d) => d.cluster);
    async function* batches(): AsyncGenerator<NamespaceAction[]> {
      const streamed = new Set<string>();
      for await (const cluster of listed) {
        streamed.add(cluster);
        const creates = planNamespaceActions(byCluster.get(cluster) ?? [], exists).filter(
          (a) => a.action !== 'delete',
        );
        if (creates.length > 0) yield creates;
      }
      await reading;
      const actions = planNamespaceActions(
        desired.filter((d) => existing.has(d.cluster)),
        exists,
      );
      yield actions.filter((a) => a.action === 'delete' || !streamed.has(a.cluster));
    }

    const onWritten = await reconcileTimeObserver(ctx);
    await executeActions(
      ctx,
      batches(),
      {
        name: (action) => action.action,
        describe: (action) => pyRepr([action.action, action.cluster, action.namespace]),
        planEntry: (action) => ({ ...action }),
        destructive: (action) => action.action === 'delete',
        execute: async (action) => {
          const handle = clusters.get(action.cluster, action.privileged);
          if (isClusterProblem(handle)) {
            if (handle.level === 'error')
              ctx.errors.register(action.cluster, handle.message, { clusterWide: true });
            return 'skipped';
          }
          await applyNamespaceAction(handle, action);
          const { cluster, namespace } = action;
          const fn = action.action === 'delete' ? 'delete_project' : 'new_project';
          onWritten?.({ fn, cluster, namespace, kind: 'Namespace', name: namespace });
        },
        failure: (action, e) => ({
          scope: `${action.cluster}/${action.namespace}`,
          message: `cluster: ${action.cluster}, namespace: ${action.namespace}: ${errorMessage(e)}`,
        }),
      },
      { concurrency: opts.threadPoolSize },
    );
  },
});

/**
 * Creates a namespace as `oc new-project` does (a ProjectRequest on OpenShift,
 * except for `openshift-*` names), or deletes its Project/Namespace without
 * waiting for termination. An existing namespace on create is fine.
 */
async function applyNamespaceAction(handle: ClusterHandle, action: NamespaceAction): Promise<void> {
  const useProject = handle.isOpenShift && !action.namespace.startsWith('openshift-');
  if (action.action === 'create') {
    const kind = useProject ? 'ProjectRequest.project.openshift.io' : 'Namespace';
    const resource = handle.catalog.get(kind);
    try {
      await handle.client.create(resource, undefined, {
        apiVersion: useProject ? 'project.openshift.io/v1' : 'v1',
        kind: useProject ? 'ProjectRequest' : 'Namespace',
        metadata: { name: action.namespace },
      });
    } catch (e) {
      if ((e as { reason?: string }).reason !== 'AlreadyExists') throw e;
    }
    return;
  }
  const resource = handle.catalog.get(useProject ? 'Project.project.openshift.io' : 'Namespace');
  await handle.client.delete(resource, undefined, action.namespace);
}
