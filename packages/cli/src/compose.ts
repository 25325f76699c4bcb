import {
  appInterfaceSettings,
  createEarlyExit,
  dumpQueriedSchemas,
  gqlClient,
} from '@qontract/app-interface';
import {
  type AnyIntegration,
  type Config,
  createSecretReader,
  decideEarlyExit,
  type EarlyExitDecision,
  type GlobalOptions,
  type Logger,
  type LoopScope,
  type Metrics,
  type OptionValues,
  type RunContext,
  type RunResult,
  type RunSettings,
  type RuntimeEnv,
  runIntegration,
  type SecretReader,
  type SecretRedactor,
  type ShardConfig,
  type StateStore,
  stateStoreForRun,
  unleashToggles,
} from '@qontract/core';

/**
 * The composition root: the services a run gets, chosen from config and
 * environment. Later layers (app-interface, openshift) plug their pieces in
 * here; integrations only see the RunContext.
 */
export interface RunServices {
  readonly secrets: (ctx: RunContext) => SecretReader | Promise<SecretReader>;
  readonly state?: (ctx: RunContext) => StateStore | Promise<StateStore>;
  readonly earlyExit?: (ctx: RunContext) => Promise<EarlyExitDecision>;
  readonly finally?: (ctx: RunContext) => Promise<void>;
  readonly clients?: ReadonlyMap<string, unknown>;
}

/**
 * The services of a real run: secrets from Vault or config.toml as
 * app-interface settings say (`app_interface_settings_v1.vault`), and the
 * queried schemas written for `--dump-schemas` after the run.
 */
export function defaultServices(
  config: Config,
  redactor: SecretRedactor,
  _globals: GlobalOptions,
  env: Readonly<Record<string, string | undefined>> = {},
): RunServices {
  return {
    secrets: async (ctx) => {
      const settings = await appInterfaceSettings(await ctx.client(gqlClient));
      return createSecretReader({ useVault: settings.vault, config, redactor, env });
    },
    // State: the original's APP_INTERFACE_STATE_* variables, then config.toml [state].
    state: stateStoreForRun(),
    finally: (ctx) => dumpQueriedSchemas(ctx),
  };
}

export interface ExecuteSettings {
  readonly definition: AnyIntegration;
  readonly options: OptionValues;
  readonly globals: GlobalOptions;
  readonly config: Config;
  readonly log: Logger;
  readonly redactor: SecretRedactor;
  readonly env: RuntimeEnv;
  readonly metrics: Metrics;
  readonly shard: ShardConfig;
  readonly signal: AbortSignal;
  readonly loop?: LoopScope;
  readonly services: RunServices;
}

export function executeIntegration(s: ExecuteSettings): Promise<RunResult> {
  return runIntegration(runSettings(s));
}

/**
 * The early-exit decision `executeIntegration` would take first, without the
 * run (null when it would not take one): the merge-request check's
 * in-process answer to which integrations need a process.
 */
export function decideIntegrationEarlyExit(s: ExecuteSettings): Promise<EarlyExitDecision | null> {
  return decideEarlyExit(runSettings(s));
}

function runSettings(s: ExecuteSettings): RunSettings {
  return {
    definition: s.definition,
    options: s.options,
    globals: s.globals,
    config: s.config,
    log: s.log,
    redactor: s.redactor,
    env: s.env,
    metrics: s.metrics,
    shard: s.shard,
    signal: s.signal,
    ...(s.loop ? { loop: s.loop } : {}),
    secrets: s.services.secrets,
    ...(s.services.state ? { state: s.services.state } : {}),
    earlyExit: s.services.earlyExit ?? earlyExitFor(s.definition, s.options),
    // The original's kill switch: an Unleash toggle named after the integration.
    toggleEnabled: () => unleashToggles(s.env.vars).isEnabled(s.definition.name),
    ...(s.services.finally ? { finally: s.services.finally } : {}),
    ...(s.services.clients ? { clients: s.services.clients } : {}),
  };
}

/**
 * `--early-exit-compare-sha` (dry-run only, applied by the runner): exit 0
 * when the integration's desired state is the same in both bundles; with
 * `--check-only-affected-shards`, dry-run only the shards that changed.
 */
function earlyExitFor(
  definition: AnyIntegration,
  options: OptionValues,
): (ctx: RunContext) => Promise<EarlyExitDecision> {
  const decide = createEarlyExit(definition, options);
  return async (ctx) => {
    const decided = ctx.globals.earlyExitAffectedShards;
    if (
      decided &&
      ctx.globals.earlyExitCompareSha &&
      ctx.globals.checkOnlyAffectedShards &&
      definition.shardedDryRun
    ) {
      return { kind: 'shards', shards: decided };
    }
    const decision = await decide(ctx);
    if (decision.kind === 'shards' && !ctx.globals.checkOnlyAffectedShards) return { kind: 'run' };
    return decision;
  };
}
