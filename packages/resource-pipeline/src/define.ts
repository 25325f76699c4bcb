import {
  type AnyIntegration,
  defineIntegration,
  type OptionSpecs,
  type OptionValues,
} from '@qontract/core';
import { earlyExitDesiredState, pipelineShardedDryRun } from './early-exit.ts';
import type { Provider } from './model.ts';
import {
  type PipelineOptions,
  pipelineOptions,
  runOpenshiftResourcesPipeline,
  siblingPipelineOptions,
} from './run.ts';
import { templateRendererFor } from './templates.ts';

export interface PipelineIntegration {
  /** CLI name (`openshift-routes`). */
  readonly name: string;
  readonly description: string;
  /** The original's module constant: the `qontract.integration` annotation value. */
  readonly identity: string;
  readonly version: string;
  readonly providers: readonly Provider[];
  /** Managed kinds instead of the namespaces' `managedResourceTypes`. */
  readonly overrideManagedTypes?: readonly string[];
  /** Whether the integration has `--exclude-cluster` (only openshift-resources does upstream). */
  readonly excludeCluster?: boolean;
}

/**
 * One integration of the openshift-resources pipeline: its CLI options, run,
 * early-exit state and sharded dry-run, all from the shared pipeline.
 */
export function definePipelineIntegration(p: PipelineIntegration): AnyIntegration {
  const pipeline = {
    identity: p.identity,
    version: p.version,
    providers: p.providers,
    ...(p.overrideManagedTypes ? { overrideManagedTypes: p.overrideManagedTypes } : {}),
    render: templateRendererFor,
  };
  // Without `--exclude-cluster` the option is simply empty.
  const asPipelineOptions = (opts: OptionValues): PipelineOptions =>
    ({ excludeCluster: [], ...opts }) as unknown as PipelineOptions;
  return defineIntegration({
    name: p.name,
    version: p.version,
    description: p.description,
    options: (p.excludeCluster ? pipelineOptions : siblingPipelineOptions) as OptionSpecs,
    run: (ctx, opts) => runOpenshiftResourcesPipeline(ctx, asPipelineOptions(opts), pipeline),
    desiredStateForEarlyExit: (ctx, opts) =>
      earlyExitDesiredState(ctx, asPipelineOptions(opts), pipeline),
    shardedDryRun: {
      ...pipelineShardedDryRun,
      optionsForShard: (opts: OptionValues, shard: string) => ({ ...opts, clusterName: [shard] }),
    },
  });
}
