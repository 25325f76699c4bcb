import {
  createLogger,
  createMetrics,
  errorMessage,
  installStopSignals,
  type Metrics,
  parseLogLevel,
  pushgatewayFromEnv,
  runLoop,
  SecretRedactor,
  serveMetrics,
} from '@qontract/core';
import { parseArgsStringToArgv } from 'string-argv';
import { type CliDeps, runCli } from './main.ts';

/**
 * The container entry point (`run-integration`), driven by the original's
 * environment variables: INTEGRATION_NAME, INTEGRATION_EXTRA_ARGS, CONFIG,
 * DRY_RUN, RUN_ONCE, SLEEP_DURATION_SECS, SLEEP_ON_ERROR, LOG_LEVEL,
 * PROMETHEUS_PORT (`/metrics`, `/healthz`), SHARDS, SHARD_ID, SHARD_KEY; WATCH=true runs an
 * engine-based integration as an operator (`--watch`); PUSHGATEWAY_ENABLED (with
 * PUSHGATEWAY_URL, _USERNAME, _PASSWORD) pushes each run's duration and status.
 */
export async function runIntegrationLoop(
  env: Readonly<Record<string, string | undefined>> = process.env,
  deps: Omit<CliDeps, 'env' | 'signal' | 'metrics'> & {
    signal?: AbortSignal;
    metrics?: Metrics;
  } = {},
): Promise<number> {
  const io = deps.io ?? { stdout: process.stdout, stderr: process.stderr };
  const pushgateway = pushgatewayFromEnv(env);
  const redactor = new SecretRedactor();
  if (pushgateway && 'password' in pushgateway) redactor.add(pushgateway.password);
  const log = createLogger({
    level: parseLogLevel(env.LOG_LEVEL) ?? 'INFO',
    format: env.LOG_FORMAT === 'text' || env.LOG_FORMAT === 'json' ? env.LOG_FORMAT : undefined,
    dryRun: env.DRY_RUN === '--dry-run',
    integration: env.INTEGRATION_NAME,
    redactor,
    destination: io.stderr,
  });
  let argv: string[];
  try {
    argv = buildEntryPointArgs(env);
  } catch (e) {
    log.fatal(errorMessage(e));
    return 1;
  }
  const metrics = deps.metrics ?? createMetrics();
  const controller = new AbortController();
  deps.signal?.addEventListener('abort', () => controller.abort(deps.signal?.reason), {
    once: true,
  });
  const uninstall = deps.signal ? () => {} : installStopSignals(controller, log);
  const runOnce = Boolean(env.RUN_ONCE);
  const server = runOnce
    ? undefined
    : // /healthz answers 200 while the loop runs, 503 once a stop signal ends it.
      await serveMetrics(
        metrics.registry,
        Number(env.PROMETHEUS_PORT ?? 9090),
        undefined,
        () => !controller.signal.aborted,
      );
  try {
    return await runLoop({
      runOnce,
      // In watch mode a run itself lasts SLEEP_DURATION_SECS (reacting to events): no sleep between.
      sleepSeconds: isWatchMode(env, argv) ? 0 : Number(env.SLEEP_DURATION_SECS ?? 600),
      sleepOnErrorSeconds: Number(env.SLEEP_ON_ERROR ?? 10),
      pushgateway,
      signal: controller.signal,
      log,
      metrics,
      labels: {
        integration: env.INTEGRATION_NAME ?? '',
        shards: env.SHARDS ?? '1',
        shard_id: env.SHARD_KEY || (env.SHARD_ID ?? '0'),
      },
      execute: async () => {
        try {
          const exitCode = await runCli(argv, { ...deps, env, signal: controller.signal, metrics });
          return { exitCode, crashed: false };
        } catch (e) {
          log.error({ err: e }, `Error running ${env.COMMAND_NAME ?? 'qontract-reconcile'}`);
          return { exitCode: 1, crashed: true };
        }
      },
    });
  } finally {
    // Ends what outlives a run on this signal (watch mode's caches and their connections).
    if (!controller.signal.aborted) controller.abort(new Error('run-integration is done'));
    uninstall();
    await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  }
}

/** The argv one loop iteration passes to the umbrella command. */
export function buildEntryPointArgs(env: Readonly<Record<string, string | undefined>>): string[] {
  const integration = env.INTEGRATION_NAME;
  if (!integration) throw new Error('INTEGRATION_NAME is required');
  const dryRunVar = integration === 'integrations-manager' ? 'MANAGER_DRY_RUN' : 'DRY_RUN';
  const dryRun = env[dryRunVar];
  const args = ['--config', env.CONFIG ?? '/config/config.toml'];
  if (dryRun !== undefined && dryRun !== '') {
    if (dryRun !== '--dry-run' && dryRun !== '--no-dry-run') {
      throw new Error(`${dryRunVar} must be '--dry-run' or '--no-dry-run', got '${dryRun}'`);
    }
    args.push(dryRun);
  }
  args.push(integration);
  if (env.INTEGRATION_EXTRA_ARGS) args.push(...parseArgsStringToArgv(env.INTEGRATION_EXTRA_ARGS));
  return args;
}

/** `WATCH=true` or `--watch` among the extra arguments (engine-based integrations). */
function isWatchMode(
  env: Readonly<Record<string, string | undefined>>,
  argv: readonly string[],
): boolean {
  const flag = argv.findLast((a) => a === '--watch' || a === '--no-watch');
  return flag !== undefined ? flag === '--watch' : env.WATCH === 'true';
}
