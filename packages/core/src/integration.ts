import type { Config } from './config.ts';
import type { ErrorRegistry } from './errors.ts';
import type { GlobalOptions } from './globals.ts';
import type { Logger } from './logging.ts';
import type { LoopScope } from './loop-scope.ts';
import type { Metrics } from './metrics.ts';
import type { InferOptions, OptionSpecs } from './options.ts';
import type { SecretRedactor } from './redaction.ts';
import type { SecretReader } from './secrets/types.ts';
import type { ShardConfig } from './sharding.ts';
import type { StateStore } from './state/types.ts';

/**
 * A client an integration can ask its run context for (GraphQL, clusters,
 * GitHub, ...). Packages above core define their clients with `defineClient`;
 * the context creates each one lazily, once per run, and closes it at the end.
 */
export interface ClientKey<T> {
  readonly id: string;
  readonly create: (ctx: RunContext) => T | Promise<T>;
  readonly close?: (client: T) => void | Promise<void>;
}

export function defineClient<T>(
  id: string,
  create: (ctx: RunContext) => T | Promise<T>,
  close?: (client: T) => void | Promise<void>,
): ClientKey<T> {
  return close ? { id, create, close } : { id, create };
}

/** What a run did, for the end-of-run summary line and `--plan-out`. */
export interface RunReport {
  /** Counts by action name (`apply`, `delete`, `create`, ...). */
  readonly actions: Record<string, number>;
  count(action: string, n?: number): void;
  /** The actions the executor took, with their outcomes, as `--plan-out` writes them. */
  readonly planned?: readonly PlanEntry[];
  /** Records one of them (the executor does, for a handler with `planEntry`). */
  plan?(entry: PlanEntry): void;
}

/** One action of `--plan-out`: the handler's plain data and what the executor did with it. */
export type PlanEntry = Record<string, unknown> & {
  /** `done`, `dry-run`, `skipped`, `failed`, or `disabled`: held back by the deletion gate. */
  readonly outcome: string;
};

/** Values the CLI read from the process environment; integrations never read `process.env`. */
export interface RuntimeEnv {
  readonly vars: Readonly<Record<string, string | undefined>>;
}

/** Everything one run of one integration needs. Built by the runner, never global. */
export interface RunContext {
  readonly integration: string;
  readonly integrationVersion: string;
  readonly dryRun: boolean;
  /** The umbrella command's global options of this run. */
  readonly globals: GlobalOptions;
  readonly log: Logger;
  readonly metrics: Metrics;
  readonly config: Config;
  readonly errors: ErrorRegistry;
  /** Aborted on SIGTERM/SIGINT: finish the current step, start no new one. */
  readonly signal: AbortSignal;
  readonly shard: ShardConfig;
  readonly env: RuntimeEnv;
  /** What the runs of this run's loop share (a single run: an empty scope of its own). */
  readonly loop: LoopScope;
  readonly redactor: SecretRedactor;
  readonly secrets: SecretReader;
  readonly report: RunReport;
  /**
   * The state store; created on first use (S3 or a local directory). With
   * `integration`, that integration's keys in the same store (an original
   * integration reading another's state, as saas-auto-promotions-manager
   * reads openshift-saas-deploy's promotions).
   */
  state(integration?: string): Promise<StateStore>;
  /** A client defined with `defineClient`, created once per run. */
  client<T>(key: ClientKey<T>): Promise<T>;
  /** The original's legacy shard membership for `key` (`SHARDS` / `SHARD_ID`). */
  isInShard(key: string): boolean;
}

/** How the runner decides which shards a sharded dry-run covers (the original's DesiredStateShardConfig). */
interface ShardedDryRunConfig<O> {
  /** Dotted paths with `*` wildcards into the early-exit state whose values name shards, e.g. `state.*.shard`. */
  readonly shardPathSelectors: readonly string[];
  /** Returns the options for one shard's run. */
  readonly optionsForShard: (opts: O, shard: string) => O;
  /** Whether the proposed shards may be run separately (upstream: at most 2 shards). */
  readonly review: (shards: readonly string[]) => boolean;
}

export interface IntegrationDefinition<O extends OptionSpecs = OptionSpecs> {
  /** CLI name, with dashes (`openshift-namespaces`). */
  readonly name: string;
  /** The original's `QONTRACT_INTEGRATION_VERSION` (semver); written into annotations. */
  readonly version: string;
  /** One line, shown in `--help` and the README. */
  readonly description: string;
  readonly options: O;
  readonly run: (ctx: RunContext, opts: InferOptions<O>) => Promise<void>;
  /** The desired state compared between two bundles for `--early-exit-compare-sha`. */
  readonly desiredStateForEarlyExit?: (ctx: RunContext, opts: InferOptions<O>) => Promise<unknown>;
  readonly shardedDryRun?: ShardedDryRunConfig<InferOptions<O>>;
  /**
   * Starts, without waiting for it, work the run will need and that can
   * overlap its first round trips: importing a large client library while the
   * run waits for app-interface's answer (the Kubernetes client takes about a
   * second). Called when the run begins, after the early-exit decision (a
   * dry-run that exits early needs none of it); never for `--help`, a usage
   * or config error. Must not fail the run: what it starts is awaited, and
   * its errors surface, where it is used.
   */
  readonly warmUp?: () => void;
}

/** Declares an integration. Types of `opts` follow from `options`. */
export function defineIntegration<const O extends OptionSpecs>(
  definition: IntegrationDefinition<O>,
): IntegrationDefinition<O> {
  if (!/^[a-z][a-z0-9-]*$/.test(definition.name)) {
    throw new Error(`invalid integration name '${definition.name}': use lowercase and dashes`);
  }
  return definition;
}

/** Any integration, whatever its options (for registries). */
// biome-ignore lint/suspicious/noExplicitAny: a registry holds definitions of every option shape
export type AnyIntegration = IntegrationDefinition<any>;
