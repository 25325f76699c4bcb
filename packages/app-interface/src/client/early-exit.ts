import {
  type AnyIntegration,
  type ClientKey,
  diffDesiredStates,
  type EarlyExitDecision,
  errorMessage,
  type OptionValues,
  type RunContext,
} from '@qontract/core';
import { createRunGqlClient, gqlClient } from './run-client.ts';
import type { GqlClient } from './types.ts';

/**
 * A view of `ctx` whose `client(gqlClient)` is `gql`: the integration's
 * early-exit hook then reads the bundle `gql` is pinned to.
 */
function withGqlClient(ctx: RunContext, gql: GqlClient): RunContext {
  return {
    ...ctx,
    client: <T>(key: ClientKey<T>): Promise<T> =>
      key.id === gqlClient.id ? Promise.resolve(gql as T) : ctx.client(key),
  };
}

/**
 * The `--early-exit-compare-sha` step of a dry run (upstream
 * `reconcile/utils/runtime/runner.py` `run_integration_cfg()`): the
 * integration's early-exit desired state is computed on the comparison bundle
 * and on the current one; no difference ends the run early (exit 0); a
 * difference confined to shards the integration accepts runs only those
 * shards; anything else, including a failure here, runs everything.
 */
export function createEarlyExit(
  definition: AnyIntegration,
  options: OptionValues,
): (ctx: RunContext) => Promise<EarlyExitDecision> {
  return async (ctx) => {
    const compareSha = ctx.globals.earlyExitCompareSha;
    const desiredState = definition.desiredStateForEarlyExit;
    if (!compareSha || !desiredState) return { kind: 'run' };
    let previous: unknown;
    let current: unknown;
    try {
      previous = await desiredStateOn(ctx, compareSha, (c) => desiredState(c, options));
      current = await desiredStateOn(ctx, undefined, (c) => desiredState(c, options));
    } catch (e) {
      ctx.log.warn(
        `cannot compare the desired state with bundle ${compareSha}: ${errorMessage(e)}`,
      );
      return { kind: 'run' };
    }
    if (previous === undefined || previous === null || current === undefined || current === null) {
      return { kind: 'run' };
    }
    const sharded = definition.shardedDryRun;
    const diff = diffDesiredStates(previous, current, sharded?.shardPathSelectors ?? []);
    if (!diff.diffFound) return { kind: 'exit' };
    if (sharded && diff.affectedShards.length > 0 && sharded.review(diff.affectedShards)) {
      return { kind: 'shards', shards: diff.affectedShards };
    }
    return { kind: 'run' };
  };
}

/** Runs `read` with a client pinned to `sha` (the current bundle when undefined). */
async function desiredStateOn(
  ctx: RunContext,
  sha: string | undefined,
  read: (ctx: RunContext) => Promise<unknown>,
): Promise<unknown> {
  const gql = await createRunGqlClient(ctx, sha === undefined ? {} : { sha });
  try {
    return await read(withGqlClient(ctx, gql));
  } finally {
    await gql.close();
  }
}
