import { gqlClient } from '@qontract/app-interface';
import {
  commonOptions,
  defineIntegration,
  errorMessage,
  executeActions,
  type RunContext,
} from '@qontract/core';
import {
  type ClusterMap,
  clusterMapForClusters,
  fieldManagerFor,
  isClusterProblem,
  pyRepr,
} from '@qontract/openshift';
import pLimit from 'p-limit';
import { OpenshiftGroupsClustersDocument } from './clusters.generated.ts';
import { desiredGroupMembers, type GroupMember, withoutOcmGroups } from './desired.ts';
import { applyGroupChange, readManagedGroups, servesGroups } from './groups-api.ts';
import { OpenshiftGroupsManagedGroupsDocument } from './managed-groups.generated.ts';
import { OpenshiftGroupsManagedRolesDocument } from './managed-roles.generated.ts';
import { publishManagedGroupsGauge } from './metrics.ts';
import { type GroupAction, groupSteps, invalidCombinations, planGroupActions } from './plan.ts';
import { clusterScope } from './scope.ts';

/** The original's module constant (it writes no annotations; it names metrics and logs). */
const QONTRACT_INTEGRATION = 'openshift-groups';
/** The original declares no version; the CLI's convention for integrations without one. */
const QONTRACT_INTEGRATION_VERSION = '0.1.0';

export const openshiftGroups = defineIntegration({
  name: 'openshift-groups',
  version: QONTRACT_INTEGRATION_VERSION,
  description: 'Manages OpenShift Groups.',
  options: {
    threadPoolSize: commonOptions.threadPoolSize(10),
    internal: commonOptions.internal(),
  },
  run: async (ctx, opts) => {
    const gql = await ctx.client(gqlClient);
    const [{ clusters: allClusters }, { roles }] = await Promise.all([
      gql.query(OpenshiftGroupsClustersDocument),
      gql.query(OpenshiftGroupsManagedRolesDocument),
    ]);
    // Sharded by cluster name, as upstream.
    const shardClusters = (allClusters ?? []).filter((c) => ctx.isInShard(c.name));
    const ocmClusters = new Set(shardClusters.filter((c) => c.ocm).map((c) => c.name));
    const managedGroups = new Map(shardClusters.map((c) => [c.name, c.managedGroups ?? []]));
    publishManagedGroupsGauge(
      ctx.metrics.registry,
      QONTRACT_INTEGRATION,
      new Map([...managedGroups].map(([c, groups]) => [c, groups.length])),
    );

    const scope = clusterScope(allClusters ?? [], {
      isInShard: ctx.isInShard,
      integration: ctx.integration,
      internal: opts.internal,
    });
    const clusters = await clusterMapForClusters(ctx, scope.managed, {
      internal: opts.internal,
      concurrency: opts.threadPoolSize,
    });
    const { members: current, readable } = await readCurrentMembers(
      ctx,
      clusters,
      managedGroups,
      opts.threadPoolSize,
    );
    const desired = desiredGroupMembers({
      roles: roles ?? [],
      clusters: new Set([...readable, ...scope.unmanaged.map((c) => c.name)]),
      today: new Date(),
    });
    const actions = planGroupActions(
      withoutOcmGroups(current, ocmClusters),
      withoutOcmGroups(desired, ocmClusters),
    );
    if (actions.length === 0) return;

    const { clusters: validation } = await gql.query(OpenshiftGroupsManagedGroupsDocument);
    const invalid = invalidCombinations(actions, validation ?? []);
    if (invalid.length > 0) {
      // Nothing of the plan is printed or applied, as upstream.
      for (const { cluster, group } of invalid) {
        ctx.errors.register(
          `${cluster}/${group}`,
          `invalid cluster/group combination: ${cluster}/${group} (hint: should be added to managedGroups)`,
        );
      }
      return;
    }
    await realize(ctx, clusters, actions, opts.threadPoolSize);
  },
});

/**
 * Members of every managed group of the clusters with a working client. A
 * cluster that cannot be read completely (no Group API, an API error) is
 * reported and left out of both states, so that nothing is planned for it.
 */
async function readCurrentMembers(
  ctx: RunContext,
  clusters: ClusterMap,
  managedGroups: ReadonlyMap<string, readonly string[]>,
  concurrency: number,
): Promise<{ members: GroupMember[]; readable: Set<string> }> {
  const limit = pLimit(Math.max(1, concurrency));
  const readable = new Set<string>();
  const perCluster = await Promise.all(
    clusters.clusters().map(async (name) => {
      const handle = clusters.get(name);
      if (isClusterProblem(handle)) return [];
      const groups = [...new Set(managedGroups.get(name) ?? [])];
      if (groups.length > 0 && !servesGroups(handle)) {
        ctx.errors.register(
          name,
          `[${name}] has managedGroups but serves no Group.user.openshift.io API (not an OpenShift cluster?)`,
          { clusterWide: true },
        );
        return [];
      }
      try {
        const users = await readManagedGroups(handle, groups, limit);
        readable.add(name);
        return groups.flatMap((group) =>
          (users.get(group) ?? []).map((user) => ({ cluster: name, group, user })),
        );
      } catch (e) {
        ctx.errors.register(name, `[${name}] could not get group state: ${errorMessage(e)}`, {
          clusterWide: true,
        });
        return [];
      }
    }),
  );
  return { members: perCluster.flat(), readable };
}

/**
 * Carries out the plan with the run's rules (core's `executeActions`): every
 * line printed as the original does (`[action, cluster, group, user]`), one
 * write per group for its additions, then one for its removals, which are
 * held back once any error is registered in the run. `delete_group` is never
 * executed.
 */
async function realize(
  ctx: RunContext,
  clusters: ClusterMap,
  actions: readonly GroupAction[],
  concurrency: number,
): Promise<void> {
  const fieldManager = fieldManagerFor(ctx.integration);
  await executeActions(
    ctx,
    groupSteps(actions),
    {
      name: (step) => step.actions[0]!.action,
      describe: (step) => step.actions.map((a) => pyRepr([a.action, a.cluster, a.group, a.user])),
      planEntry: (step) => step.actions.map((a) => ({ ...a })),
      counts: (step) => step.actions.map((a) => a.action),
      destructive: (step) => step.removal,
      execute: async (step) => {
        if (!step.change) {
          ctx.log.debug('skipping group deletion');
          return;
        }
        const handle = clusters.get(step.change.cluster);
        if (isClusterProblem(handle)) return 'skipped'; // registered when the cluster map was built
        await applyGroupChange(handle, step.change, fieldManager);
      },
      failure: ({ actions: [first] }, e) => ({
        scope: `${first!.cluster}/${first!.group}`,
        message: `[${first!.cluster}] group ${first!.group}: ${errorMessage(e)}`,
      }),
    },
    { concurrency },
  );
}
