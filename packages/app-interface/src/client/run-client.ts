import { writeFile } from 'node:fs/promises';
import { defineClient, type GlobalOptions, type RunContext } from '@qontract/core';
import { createGqlClient } from './client.ts';
import { gqlDeadlineFromEnv } from './deadline.ts';
import type { GqlClient, GqlTransport } from './types.ts';

/**
 * Schemas queried during a CLI invocation, shared by every client created for
 * it (the original keeps one process-wide set); keyed by the invocation's
 * global options, which all contexts of one invocation share.
 */
const schemasByInvocation = new WeakMap<GlobalOptions, Set<string>>();

function schemaSinkFor(globals: GlobalOptions): Set<string> {
  let sink = schemasByInvocation.get(globals);
  if (!sink) {
    sink = new Set();
    schemasByInvocation.set(globals, sink);
  }
  return sink;
}

/** The run's app-interface client: `await ctx.client(gqlClient)`. */
/** The commit (sha, Unix seconds) of the bundle each invocation's run client reads. */
const commitByInvocation = new WeakMap<GlobalOptions, BundleCommit>();

/** The commit of the bundle a run reads. */
export interface BundleCommit {
  readonly sha: string;
  /** Unix seconds. */
  readonly time: number;
}

export const gqlClient = defineClient<GqlClient>(
  'gql',
  async (ctx) => {
    const client = await createRunGqlClient(ctx);
    const seconds = Number(client.gitCommit?.timestamp);
    if (client.gitCommit && Number.isFinite(seconds))
      commitByInvocation.set(ctx.globals, { sha: client.gitCommit.commit, time: seconds });
    return client;
  },
  (client) => client.close(),
);

/**
 * The commit of the bundle this run reads (its sha and when it was made), once
 * the run's `gqlClient` exists and the backend told it (`/git-commit-info`, or
 * the bundle's git data); undefined otherwise. For the original's
 * `function_elapsed_seconds_since_bundle_commit`.
 */
export function bundleCommit(ctx: Pick<RunContext, 'globals'>): BundleCommit | undefined {
  return commitByInvocation.get(ctx.globals);
}

/**
 * Where a run's app-interface clients get their answers when not from the
 * backend `[graphql] server` names: a transport for a bundle sha (undefined:
 * the current bundle). Runs leave it unset; the merge-request check sets it
 * (`RunServices.clients`) to answer from the bundles it holds in memory.
 */
export type GqlTransportSource = (sha: string | undefined) => Promise<GqlTransport>;

export const gqlTransportSource = defineClient<GqlTransportSource | null>(
  'gql-transport-source',
  () => null,
);

/**
 * A client for this run's integration, like `gqlClient` creates, optionally
 * pinned to another bundle (`--early-exit-compare-sha`: the comparison run
 * reads the desired state of bundle `sha`). The caller closes it.
 */
export async function createRunGqlClient(
  ctx: Pick<RunContext, 'config' | 'globals' | 'integration' | 'log'> &
    Partial<Pick<RunContext, 'signal' | 'client' | 'env'>>,
  options: { readonly sha?: string } = {},
): Promise<GqlClient> {
  const source = ctx.client ? await ctx.client(gqlTransportSource) : null;
  return createGqlClient(ctx.config, ctx.globals, ctx.integration, ctx.log, {
    schemaSink: schemaSinkFor(ctx.globals),
    sha: options.sha,
    signal: ctx.signal,
    remote: { deadlineMs: gqlDeadlineFromEnv(ctx.env?.vars ?? {}) },
    ...(source ? { transport: await source(options.sha) } : {}),
  });
}

/** Every schema the run's responses reported so far (empty when no query was sent). */
export function queriedSchemas(ctx: Pick<RunContext, 'globals'>): readonly string[] {
  return [...(schemasByInvocation.get(ctx.globals) ?? [])];
}

/**
 * `--dump-schemas FILE`: writes the queried schemas as a JSON array, as the
 * original does in its `finally` (so also after a failed run). Wire it as the
 * runner's `finally` step.
 */
export async function dumpQueriedSchemas(ctx: Pick<RunContext, 'globals'>): Promise<void> {
  const file = ctx.globals.dumpSchemas;
  if (!file) return;
  await writeFile(file, JSON.stringify(queriedSchemas(ctx)));
}
