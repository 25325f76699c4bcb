import { gqlClient } from '@qontract/app-interface';
import { commonOptions, defineIntegration, errorMessage, executeActions } from '@qontract/core';
import { clusterMapForNamespaces, isClusterProblem, pyRepr } from '@qontract/openshift';
import { TektonPipelineProvidersDocument } from './cleaner.generated.ts';

export interface Retention {
  readonly days: number | null;
  readonly minimum: number | null;
  readonly maximum: number | null;
}

interface PipelineRunMeta {
  readonly metadata?: { readonly name?: string; readonly creationTimestamp?: string };
}

const DAY_MS = 86_400_000;

/**
 * The PipelineRuns to delete, newest first as listed (the original's
 * `get_pipeline_runs_to_delete`): with `minimum`, the newest `minimum` are
 * kept and the others go once older than `days`; else with `maximum`, all
 * beyond the newest `maximum` go, and those older than `days`. Without
 * `days`, every run not kept by `minimum` / `maximum` goes.
 */
export function pipelineRunsToDelete<R extends PipelineRunMeta>(
  runs: readonly R[],
  retention: Retention,
  now: Date,
): R[] {
  const newestFirst = [...runs].sort((a, b) =>
    (b.metadata?.creationTimestamp ?? '').localeCompare(a.metadata?.creationTimestamp ?? ''),
  );
  let candidates = newestFirst;
  const doomed: R[] = [];
  if (retention.minimum) {
    candidates = newestFirst.slice(retention.minimum);
  } else if (retention.maximum) {
    doomed.push(...newestFirst.slice(retention.maximum));
    candidates = newestFirst.slice(0, retention.maximum);
  }
  for (const run of candidates) {
    const created = Date.parse(run.metadata?.creationTimestamp ?? '');
    if (retention.days && now.getTime() - created < retention.days * DAY_MS) continue;
    doomed.push(run);
  }
  return doomed;
}

/**
 * `openshift-saas-deploy-trigger-cleaner` (decommissioned upstream in April
 * 2026, cf746b622): deletes the old PipelineRuns of every Tekton pipelines
 * provider namespace per its `retention` (or its defaults').
 */
export const openshiftSaasDeployTriggerCleaner = defineIntegration({
  name: 'openshift-saas-deploy-trigger-cleaner',
  version: '0.1.0',
  description: 'Clean up deployment related resources.',
  options: {
    threadPoolSize: commonOptions.threadPoolSize(10),
    internal: commonOptions.internal(),
  },
  run: async (ctx, opts) => {
    const now = new Date();
    const gql = await ctx.client(gqlClient);
    const { pipelines_providers } = await gql.query(TektonPipelineProvidersDocument);
    const providers = (pipelines_providers ?? []).flatMap((p) => ('namespace' in p ? [p] : []));
    const clusters = await clusterMapForNamespaces(
      ctx,
      providers.map((p) => ({ cluster: p.namespace.cluster })),
      { internal: opts.internal, concurrency: opts.threadPoolSize },
    );
    const deletes: { cluster: string; namespace: string; name: string }[] = [];
    for (const p of providers) {
      const retention = p.retention ?? p.defaults.retention;
      const cluster = p.namespace.cluster.name;
      const namespace = p.namespace.name;
      const handle = clusters.get(cluster);
      if (isClusterProblem(handle) || !retention) continue;
      try {
        const runs = await handle.client.list(
          handle.catalog.get('PipelineRun.tekton.dev'),
          namespace,
        );
        for (const run of pipelineRunsToDelete(runs as PipelineRunMeta[], retention, now)) {
          deletes.push({ cluster, namespace, name: run.metadata?.name ?? '' });
        }
      } catch (e) {
        ctx.errors.register(
          `${cluster}/${namespace}`,
          `[${cluster}/${namespace}] ${errorMessage(e)}`,
        );
      }
    }
    await executeActions(
      ctx,
      deletes,
      {
        name: () => 'delete_trigger',
        describe: (d) => pyRepr(['delete_trigger', d.cluster, d.namespace, 'PipelineRun', d.name]),
        planEntry: (d) => ({ action: 'delete_trigger', ...d, kind: 'PipelineRun' }),
        destructive: () => true,
        execute: async (d) => {
          const handle = clusters.get(d.cluster);
          if (isClusterProblem(handle)) return 'skipped';
          await handle.client.delete(
            handle.catalog.get('PipelineRun.tekton.dev'),
            d.namespace,
            d.name,
          );
        },
        failure: (d, e) => ({
          scope: `${d.cluster}/${d.namespace}`,
          message: `[${d.cluster}/${d.namespace}] PipelineRun ${d.name}: ${errorMessage(e)}`,
        }),
      },
      { concurrency: opts.threadPoolSize },
    );
  },
});
