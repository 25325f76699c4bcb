import type { Config } from './config.ts';
import { ErrorRegistry, ExitCode, ExitRequest, errorMessage, QontractError } from './errors.ts';
import type { GlobalOptions } from './globals.ts';
import type {
  AnyIntegration,
  ClientKey,
  PlanEntry,
  RunContext,
  RunReport,
  RuntimeEnv,
} from './integration.ts';
import type { Logger } from './logging.ts';
import { LoopScope } from './loop-scope.ts';
import { createMetrics, type Metrics } from './metrics.ts';
import type { OptionValues } from './options.ts';
import { writePlanOut } from './plan-out.ts';
import type { SecretRedactor } from './redaction.ts';
import type { SecretPathRef, SecretReader, SecretRef } from './secrets/types.ts';
import { isInShard, type ShardConfig, SINGLE_SHARD } from './sharding.ts';
import type { StateStore } from './state/types.ts';

/** What the early-exit step decided for a dry-run. */
export type EarlyExitDecision =
  | { readonly kind: 'exit' }
  | { readonly kind: 'run' }
  | { readonly kind: 'shards'; readonly shards: readonly string[] };

export interface RunSettings {
  readonly definition: AnyIntegration;
  readonly options: OptionValues;
  readonly globals: GlobalOptions;
  readonly config: Config;
  readonly log: Logger;
  readonly redactor: SecretRedactor;
  readonly env: RuntimeEnv;
  readonly metrics?: Metrics;
  readonly shard?: ShardConfig;
  readonly signal?: AbortSignal;
  /** The loop the run is one of (run-integration's); default: a scope of the run's own, closed with it. */
  readonly loop?: LoopScope;
  /** Creates the secret reader on first use (Vault or config file, per app-interface settings). */
  readonly secrets: (ctx: RunContext) => SecretReader | Promise<SecretReader>;
  /** Opens the state store of `integration` (the run's own, or another's its original reads). */
  readonly state?: (ctx: RunContext, integration: string) => StateStore | Promise<StateStore>;
  /** Pre-built clients by client id, used instead of the key's factory (tests, the demo). */
  readonly clients?: ReadonlyMap<string, unknown>;
  /** The `--early-exit-compare-sha` step; only consulted in dry-run. */
  readonly earlyExit?: (ctx: RunContext) => Promise<EarlyExitDecision>;
  /** The integration's kill switch (Unleash toggle named after it); enabled when absent. */
  readonly toggleEnabled?: () => Promise<boolean>;
  /** Runs after the integration, even when it failed (e.g. `--dump-schemas`). */
  readonly finally?: (ctx: RunContext) => Promise<void>;
}

export interface RunResult {
  readonly exitCode: number;
  readonly durationMs: number;
  readonly errors: ErrorRegistry;
  /**
   * What the summary line reports: the registered errors plus what ended the
   * run or failed outside the registry (an exception with a non-zero exit
   * code, a failing after-run step, the errors and crashes of failed shards).
   * Never 0 when `exitCode` is not.
   */
  readonly errorCount: number;
  readonly actions: Readonly<Record<string, number>>;
  /** True when the integration threw an unexpected error (the loop sleeps SLEEP_ON_ERROR). */
  readonly crashed: boolean;
}

/** Shards of a sharded dry-run run at most this many at a time, as upstream. */
const MAX_PARALLEL_SHARDS = 10;

/**
 * Runs one integration once and maps the outcome to the original's exit codes:
 * 0 success; 1 registered errors or an unexpected exception; the code of an
 * ExitRequest or QontractError (4 integration not found, 5 forbidden schema);
 * in a sharded dry-run, the number of failed shards.
 */
export async function runIntegration(settings: RunSettings): Promise<RunResult> {
  const started = performance.now();
  const log = settings.log;
  const errors = new ErrorRegistry((e) => log.error({ scope: e.scope }, e.message));
  const ctx = createRunContext(settings, errors);
  // Failures that are logged but not registered (the run is over when they happen).
  const unregistered = { count: 0 };
  let exitCode: number = ExitCode.SUCCESS;
  let crashed = false;
  try {
    exitCode = await execute(settings, ctx, unregistered);
  } catch (e) {
    if (e instanceof ExitRequest) {
      exitCode = e.exitCode;
    } else if (e instanceof QontractError) {
      log.error(e.message);
      exitCode = e.exitCode;
    } else if (ctx.signal.aborted) {
      // The stop signal aborted what the run waited on: an interruption (reported below), not a crash.
      log.debug({ err: e }, `stopped: ${errorMessage(e)}`);
      exitCode = ExitCode.ERROR;
    } else {
      crashed = true;
      log.error({ err: e }, `unexpected error: ${errorMessage(e)}`);
      exitCode = ExitCode.ERROR;
    }
    if (exitCode !== ExitCode.SUCCESS) unregistered.count += 1;
  } finally {
    try {
      await settings.finally?.(ctx);
    } catch (e) {
      log.error(`after-run step failed: ${errorMessage(e)}`);
      unregistered.count += 1;
      if (exitCode === ExitCode.SUCCESS) exitCode = ExitCode.ERROR;
    }
    await closeClients(ctx, log);
    if (!settings.loop) ctx.loop.close();
  }
  if (exitCode === ExitCode.SUCCESS && errors.hasErrors) exitCode = ExitCode.ERROR;
  if (ctx.signal.aborted) {
    // Stopped mid-run (SIGTERM/SIGINT): requests were aborted and no new action
    // started, so work was left undone: the run failed, and deleted nothing more.
    log.error(
      `${settings.definition.name} was interrupted by a stop signal (${errorMessage(ctx.signal.reason)}); what it had not done is left for the next run`,
    );
    if (exitCode === ExitCode.SUCCESS) exitCode = ExitCode.ERROR;
  }
  // The summary and the exit code tell the same story: a failed run has at least one error.
  const errorCount = Math.max(
    errors.errors.length + unregistered.count,
    exitCode === ExitCode.SUCCESS ? 0 : 1,
  );
  const durationMs = performance.now() - started;
  log.info(
    {
      summary: {
        exit_code: exitCode,
        duration_seconds: Number((durationMs / 1000).toFixed(3)),
        errors: errorCount,
        actions: ctx.report.actions,
        dry_run: settings.globals.dryRun,
      },
    },
    `${settings.definition.name} finished: ${exitCode === 0 ? 'success' : `failed (exit code ${exitCode})`}, ` +
      `${errorCount} error(s), ${describeActions(ctx.report.actions)} in ${(durationMs / 1000).toFixed(2)}s`,
  );
  return { exitCode, durationMs, errors, errorCount, actions: ctx.report.actions, crashed };
}

/**
 * Only the early-exit step of a dry-run, as `runIntegration` would take it:
 * the decision, or null when the runner would not consult it (not a
 * dry-run, no early-exit step, the integration's toggle off). Nothing of the
 * integration's own run happens. The merge-request check uses it to answer
 * in its own process which integrations need a process at all.
 */
export async function decideEarlyExit(settings: RunSettings): Promise<EarlyExitDecision | null> {
  if (!settings.globals.dryRun || !settings.earlyExit) return null;
  const errors = new ErrorRegistry((e) => settings.log.error({ scope: e.scope }, e.message));
  const ctx = createRunContext(settings, errors);
  try {
    if (settings.toggleEnabled && !(await settings.toggleEnabled())) return null;
    return await settings.earlyExit(ctx);
  } finally {
    await closeClients(ctx, settings.log);
    if (!settings.loop) ctx.loop.close();
  }
}

async function execute(
  settings: RunSettings,
  ctx: InternalContext,
  unregistered: { count: number },
): Promise<number> {
  const def = settings.definition;
  if (settings.toggleEnabled && !(await settings.toggleEnabled())) {
    ctx.log.info('Integration toggle is disabled, skipping integration.');
    return ExitCode.SUCCESS;
  }
  if (settings.globals.dryRun && settings.earlyExit) {
    const decision = await settings.earlyExit(ctx);
    if (decision.kind === 'exit') {
      ctx.log.info('No changes in desired state. Exit PR check early.');
      return ExitCode.SUCCESS;
    }
    if (decision.kind === 'shards' && def.shardedDryRun) {
      const failed = await runShards(settings, ctx, decision.shards, unregistered);
      await writeRunPlan(ctx);
      return failed;
    }
  }
  startWarmUp(def, ctx);
  await def.run(ctx, settings.options);
  await writeRunPlan(ctx);
  return ExitCode.SUCCESS;
}

/**
 * `--plan-out FILE`: what the run's executor did, written once the integration
 * has run (not after an early exit, a disabled toggle or a crash): each action
 * with its outcome, and how many the deletion gate held back.
 */
async function writeRunPlan(ctx: RunContext): Promise<void> {
  const planned = ctx.report.planned ?? [];
  const heldBack = planned.filter((e) => e.outcome === 'disabled').length;
  await writePlanOut(ctx, planned, { heldBack });
}

/**
 * Runs the integration once per affected shard; the exit code is the number of
 * failed shards. Each shard has its own registry, so its errors (and its crash)
 * are added to `unregistered` for the run's summary.
 */
async function runShards(
  settings: RunSettings,
  ctx: InternalContext,
  shards: readonly string[],
  unregistered: { count: number },
): Promise<number> {
  const def = settings.definition;
  const sharded = def.shardedDryRun!;
  ctx.log.info(`run ${def.name} for shards [${shards.map((s) => `'${s}'`).join(', ')}]`);
  let failed = 0;
  startWarmUp(def, ctx);
  const queue = [...shards];
  const worker = async () => {
    for (let shard = queue.shift(); shard !== undefined; shard = queue.shift()) {
      const shardErrors = new ErrorRegistry((e) =>
        ctx.log.error({ scope: e.scope, shard }, e.message),
      );
      const shardCtx = createRunContext(settings, shardErrors, ctx);
      try {
        await def.run(shardCtx, sharded.optionsForShard(settings.options, shard));
      } catch (e) {
        if (e instanceof ExitRequest && e.exitCode === 0) continue;
        failed += 1;
        unregistered.count += shardErrors.errors.length + 1;
        ctx.log.error(`Failed to run integration shard ${shard}: ${errorMessage(e)}`);
        continue;
      }
      if (shardErrors.hasErrors) {
        failed += 1;
        unregistered.count += shardErrors.errors.length;
        ctx.log.error(
          `Failed to run integration shard ${shard}: ${shardErrors.errors.length} error(s) registered`,
        );
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(shards.length, MAX_PARALLEL_SHARDS) }, worker));
  return failed;
}

/** The integration's warm-up, when its run begins; it only saves time, so a failure is logged at debug. */
function startWarmUp(def: RunSettings['definition'], ctx: RunContext): void {
  try {
    def.warmUp?.();
  } catch (e) {
    ctx.log.debug(`warm-up failed: ${errorMessage(e)}`);
  }
}

interface InternalContext extends RunContext {
  readonly clientCache: Map<string, { key: ClientKey<unknown>; value: Promise<unknown> }>;
}

function createRunContext(
  settings: RunSettings,
  errors: ErrorRegistry,
  parent?: InternalContext,
): InternalContext {
  const shard = settings.shard ?? SINGLE_SHARD;
  // A shard's run reports into its parent's: one summary, one plan.
  const actions: Record<string, number> = parent ? parent.report.actions : {};
  const planned: PlanEntry[] = parent ? (parent.report.planned as PlanEntry[]) : [];
  const report: RunReport = {
    actions,
    count(action, n = 1) {
      actions[action] = (actions[action] ?? 0) + n;
    },
    planned,
    // Recorded only for `--plan-out`: a watch run lasting days would otherwise keep every action.
    ...(settings.globals.planOut
      ? {
          plan(entry: PlanEntry) {
            planned.push(entry);
          },
        }
      : {}),
  };
  const clientCache = parent?.clientCache ?? new Map();
  const statePromises = new Map<string, Promise<StateStore>>();
  let secretsPromise: Promise<SecretReader> | undefined;
  const ctx: InternalContext = {
    integration: settings.definition.name,
    integrationVersion: settings.definition.version,
    dryRun: settings.globals.dryRun,
    globals: settings.globals,
    log: settings.log,
    metrics: settings.metrics ?? createMetrics(),
    config: settings.config,
    errors,
    signal: settings.signal ?? new AbortController().signal,
    shard,
    env: settings.env,
    loop:
      parent?.loop ?? settings.loop ?? new LoopScope({ repeats: false, env: settings.env.vars }),
    redactor: settings.redactor,
    report,
    clientCache,
    secrets: {
      read: async (ref: SecretRef) => (await getSecrets()).read(ref),
      readAll: async (ref: SecretPathRef) => (await getSecrets()).readAll(ref),
    },
    state(integration = settings.definition.name) {
      const open = settings.state;
      if (!open) {
        return Promise.reject(new QontractError('no state store is configured for this run'));
      }
      let store = statePromises.get(integration);
      if (!store) {
        store = Promise.resolve(open(ctx, integration));
        statePromises.set(integration, store);
      }
      return store;
    },
    client<T>(key: ClientKey<T>): Promise<T> {
      let entry = clientCache.get(key.id);
      if (!entry) {
        const value = settings.clients?.has(key.id)
          ? Promise.resolve(settings.clients.get(key.id))
          : Promise.resolve().then(() => key.create(ctx));
        entry = { key: key as ClientKey<unknown>, value };
        clientCache.set(key.id, entry);
      }
      return entry.value as Promise<T>;
    },
    isInShard: (key: string) => isInShard(key, shard),
  };
  function getSecrets(): Promise<SecretReader> {
    secretsPromise ??= Promise.resolve().then(() => settings.secrets(ctx));
    return secretsPromise;
  }
  return ctx;
}

async function closeClients(ctx: InternalContext, log: Logger): Promise<void> {
  for (const { key, value } of ctx.clientCache.values()) {
    if (!key.close) continue;
    try {
      await key.close(await value);
    } catch (e) {
      log.debug(`closing client ${key.id} failed: ${errorMessage(e)}`);
    }
  }
  ctx.clientCache.clear();
}

function describeActions(actions: Readonly<Record<string, number>>): string {
  const entries = Object.entries(actions);
  if (entries.length === 0) return 'no actions';
  return entries.map(([k, v]) => `${v} ${k}`).join(', ');
}
