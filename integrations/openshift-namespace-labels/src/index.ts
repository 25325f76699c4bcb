import { gqlClient } from '@qontract/app-interface';
import {
  commonOptions,
  defineIntegration,
  errorMessage,
  executeActions,
  type RunContext,
  type StateStore,
} from '@qontract/core';
import {
  type ClusterMap,
  clusterMapForNamespaces,
  isClusterProblem,
  pyRepr,
  reconcileTimeObserver,
} from '@qontract/openshift';
import pLimit from 'p-limit';
import {
  type DesiredNamespaceLabels,
  desiredNamespaceLabels,
  namespacesInScope,
} from './desired.ts';
import { OpenshiftNamespaceLabelsNamespacesDocument } from './namespaces.generated.ts';
import { managedLabelsStateKey, type NamespaceLabelPlan, planNamespaceLabels } from './plan.ts';

/** The original's module constant: also the state store's folder (`state/openshift-namespace-labels/`). */
const QONTRACT_INTEGRATION = 'openshift-namespace-labels';
/** The original has no version constant (it writes no annotations); this is ours. */
const QONTRACT_INTEGRATION_VERSION = '0.1.0';

export const openshiftNamespaceLabels = defineIntegration({
  name: 'openshift-namespace-labels',
  version: QONTRACT_INTEGRATION_VERSION,
  description: 'Manages labels on OpenShift namespaces.',
  options: {
    threadPoolSize: commonOptions.threadPoolSize(10),
    internal: commonOptions.internal(),
  },
  run: async (ctx, opts) => {
    const gql = await ctx.client(gqlClient);
    const { namespaces } = await gql.query(OpenshiftNamespaceLabelsNamespacesDocument);
    const labelled = namespacesInScope(namespaces ?? [], ctx.isInShard).filter(
      (ns) => ns.labels !== null && ns.labels !== undefined,
    );
    if (labelled.length === 0) {
      ctx.log.info('no namespace of this shard defines labels; nothing to do');
      return;
    }
    const clusters = await clusterMapForNamespaces(ctx, labelled, {
      internal: opts.internal,
      concurrency: opts.threadPoolSize,
    });
    const { desired, errors } = desiredNamespaceLabels(labelled, new Set(clusters.clusters()));
    for (const e of errors) {
      ctx.errors.register(
        `${e.cluster}/${e.namespace}`,
        `${e.cluster}/${e.namespace}: ${e.message}`,
      );
    }
    if (desired.length === 0) return;

    const state = await ctx.state();
    const managed = await readManagedKeys(ctx, state, desired);
    const current = await readCurrentLabels(ctx, clusters, desired, opts.threadPoolSize);

    const plans: NamespaceLabelPlan[] = [];
    for (const d of desired) {
      const key = `${d.cluster}/${d.namespace}`;
      const labels = current.get(d.cluster)?.get(d.namespace);
      if (!current.has(d.cluster) || !managed.has(key)) continue; // error already registered
      if (!labels) {
        ctx.log.warn(
          `${key}: namespace does not exist on the cluster; its labels are set once it does`,
        );
        continue;
      }
      const plan = planNamespaceLabels({
        cluster: d.cluster,
        namespace: d.namespace,
        desired: d.labels,
        managed: managed.get(key) ?? [],
        current: labels,
      });
      if (plan.conflicts.length > 0) {
        for (const c of plan.conflicts) ctx.errors.register(key, `${key}: ${c}`);
        continue;
      }
      plans.push(plan);
    }
    await realize(ctx, state, clusters, plans, opts.threadPoolSize);
  },
});

/**
 * The keys each namespace's labels were set under by earlier runs. Only keys
 * the store lists are read, as upstream (one listing, then one read each).
 */
async function readManagedKeys(
  ctx: RunContext,
  state: StateStore,
  desired: readonly DesiredNamespaceLabels[],
): Promise<Map<string, string[]>> {
  const listed = new Set(await state.ls());
  const out = new Map<string, string[]>();
  for (const d of desired) {
    const key = managedLabelsStateKey(d.cluster, d.namespace);
    const where = `${d.cluster}/${d.namespace}`;
    if (!listed.has(`/${key}`)) {
      out.set(where, []);
      continue;
    }
    const value = await state.get<unknown>(key, []);
    if (!Array.isArray(value) || value.some((k) => typeof k !== 'string')) {
      ctx.errors.register(where, `${where}: state ${key} is not a list of label keys`);
      continue;
    }
    out.set(where, value as string[]);
  }
  return out;
}

/** Labels of the namespaces of every cluster with desired labels: one paginated list per cluster. */
async function readCurrentLabels(
  ctx: RunContext,
  clusters: ClusterMap,
  desired: readonly DesiredNamespaceLabels[],
  concurrency: number,
): Promise<Map<string, Map<string, Record<string, string>>>> {
  const out = new Map<string, Map<string, Record<string, string>>>();
  const limit = pLimit(Math.max(1, concurrency));
  await Promise.all(
    [...new Set(desired.map((d) => d.cluster))].map((cluster) =>
      limit(async () => {
        const handle = clusters.get(cluster);
        if (isClusterProblem(handle)) return;
        try {
          const items = await handle.client.list(handle.catalog.get('Namespace'));
          const byName = new Map<string, Record<string, string>>();
          for (const item of items) {
            const labels = (item.metadata?.labels ?? {}) as Record<string, string>;
            byName.set(item.metadata?.name ?? '', labels);
          }
          out.set(cluster, byName);
        } catch (e) {
          ctx.errors.register(cluster, `cluster: ${cluster}, exception: ${errorMessage(e)}`, {
            clusterWide: true,
          });
        }
      }),
    ),
  );
  return out;
}

/**
 * Stores the new managed-key lists first, then labels the namespaces. The
 * order is upstream's and the safe one: a key recorded as managed whose label
 * failed is simply set again next run, while a label set without its key
 * recorded would look like someone else's label (a conflict) forever.
 */
async function realize(
  ctx: RunContext,
  state: StateStore,
  clusters: ClusterMap,
  plans: readonly NamespaceLabelPlan[],
  concurrency: number,
): Promise<void> {
  // The state records are side effects: the executor decides dry-run for them as for the labels.
  const key = (plan: NamespaceLabelPlan) => managedLabelsStateKey(plan.cluster, plan.namespace);
  await executeActions(
    ctx,
    plans.filter((plan) => plan.managed),
    {
      name: () => 'update_state',
      sideEffect: true,
      describe: (plan) => `Updating state store: ${key(plan)}: ${pyRepr(plan.managed)}`,
      destructive: () => false,
      execute: (plan) => state.add(key(plan), plan.managed, { force: true }),
      failure: (plan, e) => ({
        scope: `${plan.cluster}/${plan.namespace}`,
        message: `${key(plan)}: ${errorMessage(e)}`,
      }),
    },
    { concurrency },
  );
  const onWritten = await reconcileTimeObserver(ctx);
  // Label changes write, never destroy: removing a label is part of the patch.
  await executeActions(
    ctx,
    plans.filter((plan) => Object.keys(plan.changes).length > 0),
    {
      name: () => 'label',
      planEntry: (plan) => ({
        action: 'label',
        cluster: plan.cluster,
        namespace: plan.namespace,
        kind: 'Namespace',
        name: plan.namespace,
        labels: plan.changes,
      }),
      describe: (plan) =>
        `${ctx.dryRun ? '[dry-run] ' : ''}Updating labels on ${plan.cluster}/${plan.namespace}: ${pyRepr(plan.changes)}`,
      destructive: () => false,
      execute: async (plan) => {
        const handle = clusters.get(plan.cluster);
        if (isClusterProblem(handle)) return 'skipped';
        // A JSON merge patch sets the given labels and removes the `null` ones,
        // as `oc label --overwrite k=v k-` does.
        await handle.client.patch(
          handle.catalog.get('Namespace'),
          undefined,
          plan.namespace,
          { metadata: { labels: plan.changes } },
          'merge',
          { fieldManager: `qontract-reconcile-${QONTRACT_INTEGRATION}` },
        );
        onWritten?.({
          fn: 'label',
          cluster: plan.cluster,
          namespace: plan.namespace,
          kind: 'Namespace',
          name: plan.namespace,
        });
      },
      failure: (plan, e) => {
        const where = `${plan.cluster}/${plan.namespace}`;
        return { scope: where, message: `${where}: ${errorMessage(e)}` };
      },
    },
    { concurrency },
  );
}
