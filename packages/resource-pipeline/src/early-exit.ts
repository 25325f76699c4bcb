import { hash } from 'node:crypto';
import { gqlClient } from '@qontract/app-interface';
import type { RunContext } from '@qontract/core';
import { describeResource, fields } from './model.ts';
import { OpenshiftResourcesNamespacesDocument } from './namespaces.generated.ts';
import type { PipelineConfig, PipelineOptions } from './run.ts';
import { selectNamespaces } from './select.ts';

/**
 * The early-exit desired state (upstream
 * `reconcile/openshift_resources_base.py` `early_exit_desired_state()`): per
 * cluster, a hash of its selected namespaces and the content of their
 * resources. Equal states → the MR check exits early; the changed clusters are
 * the shards of a sharded dry-run.
 */
export async function earlyExitDesiredState(
  ctx: RunContext,
  opts: PipelineOptions,
  config: Pick<PipelineConfig, 'providers'>,
): Promise<unknown> {
  const gql = await ctx.client(gqlClient);
  const { namespaces } = await gql.query(OpenshiftResourcesNamespacesDocument);
  const selected = selectNamespaces(namespaces ?? [], {
    isInShard: () => true,
    clusterNames: opts.clusterName,
    excludeClusters: opts.excludeCluster,
    namespaceName: opts.namespaceName,
    providers: config.providers,
  });
  const byCluster = new Map<string, unknown[]>();
  for (const sel of selected) {
    const cluster = sel.namespace.cluster.name;
    const { sharedResources: _shared, openshiftResources: _own, ...ns } = sel.namespace;
    const items = byCluster.get(cluster) ?? [];
    items.push({
      namespace: ns,
      resources: sel.openshiftResources.map((r) => ({
        id: `${cluster}/${sel.namespace.name}/${fields(r).provider}/${describeResource(r)}`,
        content_sha: contentSha(r),
      })),
    });
    byCluster.set(cluster, items);
  }
  const state: Record<string, { shard: string; hash: string }> = {};
  for (const [cluster, items] of [...byCluster].sort(([a], [b]) => a.localeCompare(b))) {
    state[cluster] = {
      shard: cluster,
      hash: hash('sha256', JSON.stringify(items)),
    };
  }
  return { state };
}

/**
 * Digests of frozen resource entries: an answer shared by several readers
 * (the merge-request check decides the early exit of the whole family from
 * one memoized answer per bundle) is digested once. A mutable entry may
 * change, so it is digested every time.
 */
const contentShas = new WeakMap<object, string>();

function contentSha(r: object): string {
  const known = contentShas.get(r);
  if (known !== undefined) return known;
  const sha = hash('md5', JSON.stringify(r));
  if (Object.isFrozen(r)) contentShas.set(r, sha);
  return sha;
}

/** The sharded dry-run of the pipeline: one run per changed cluster, accepted for at most two. */
export const pipelineShardedDryRun = {
  shardPathSelectors: ['state.*.shard'],
  optionsForShard: <O extends { clusterName: string[] }>(o: O, shard: string): O => ({
    ...o,
    clusterName: [shard],
  }),
  review: (shards: readonly string[]) => shards.length <= 2,
};
