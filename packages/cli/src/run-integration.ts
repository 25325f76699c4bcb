import { closeSync, openSync, writeSync } from 'node:fs';
import {
  createLogger,
  createMetrics,
  errorMessage,
  installStopSignals,
  type LogFile,
  type Logger,
  type Metrics,
  parseLogLevel,
  pushgatewayFromEnv,
  runLoop,
  SecretRedactor,
  serveMetrics,
} from '@qontract/core';
import { parseArgsStringToArgv } from 'string-argv';
import { type CliDeps, runCli } from './main.ts';
import { type SentryReporting, startSentry } from './sentry.ts';

type Env = Readonly<Record<string, string | undefined>>;
type LoopDeps = Omit<CliDeps, 'env' | 'signal' | 'metrics' | 'logFile'> & {
  signal?: AbortSignal;
  metrics?: Metrics;
};

/**
 * The container entry point (`run-integration`), driven by the original's
 * environment variables: INTEGRATION_NAME, INTEGRATION_EXTRA_ARGS, CONFIG,
 * DRY_RUN, RUN_ONCE, SLEEP_DURATION_SECS, SLEEP_ON_ERROR, LOG_LEVEL,
 * PROMETHEUS_PORT (`/metrics`, `/healthz`), SHARDS, SHARD_ID, SHARD_KEY, SENTRY_DSN and
 * SENTRY_EVENT_LEVEL (see sentry.ts); WATCH=true runs an engine-based integration as an
 * operator (`--watch`). LOG_FILE gets a copy of every log line (`[LEVEL] message` with
 * PREFIX_LOG_LEVEL=true): the pod's fluentd sidecar tails it. PUSHGATEWAY_ENABLED (with
 * PUSHGATEWAY_URL, _USERNAME, _PASSWORD) pushes each run's duration and status.
 */
export async function runIntegrationLoop(
  env: Env = process.env,
  deps: LoopDeps = {},
): Promise<number> {
  const io = deps.io ?? { stdout: process.stdout, stderr: process.stderr };
  // One redactor for the loop's own log, each run's and Sentry's events: a
  // secret a run has read stays masked in what the loop reports about it.
  const redactor = deps.redactor ?? new SecretRedactor();
  let logFile: (LogFile & { close(): void }) | undefined;
  let fileError: string | undefined;
  try {
    logFile = env.LOG_FILE ? openLogFile(env.LOG_FILE, env.PREFIX_LOG_LEVEL === 'true') : undefined;
  } catch (e) {
    fileError = `cannot open LOG_FILE ${env.LOG_FILE}: ${errorMessage(e)}`;
  }
  const log = createLogger({
    level: parseLogLevel(env.LOG_LEVEL) ?? 'INFO',
    format: env.LOG_FORMAT === 'text' || env.LOG_FORMAT === 'json' ? env.LOG_FORMAT : undefined,
    dryRun: env.DRY_RUN === '--dry-run',
    integration: env.INTEGRATION_NAME,
    redactor,
    // The original's run_integration.py logs to stdout (and LOG_FILE); usage errors stay on stderr.
    destination: io.stdout,
    logFile,
  });
  if (fileError) {
    log.fatal(fileError);
    return 1;
  }
  try {
    return await runLoopWithLog(env, deps, log, logFile, redactor);
  } finally {
    logFile?.close();
  }
}

async function runLoopWithLog(
  env: Env,
  deps: LoopDeps,
  log: Logger,
  logFile: LogFile | undefined,
  redactor: SecretRedactor,
): Promise<number> {
  let argv: string[];
  let sentry: SentryReporting | undefined;
  try {
    argv = buildEntryPointArgs(env);
    sentry = await startSentry(env, redactor);
  } catch (e) {
    log.fatal(errorMessage(e));
    return 1;
  }
  const pushgateway = pushgatewayFromEnv(env);
  if (pushgateway && 'password' in pushgateway) redactor.add(pushgateway.password);
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
      env,
      execute: async (loop) => {
        try {
          const exitCode = await runCli(argv, {
            ...deps,
            env,
            loop,
            signal: controller.signal,
            metrics,
            logDestination: deps.io?.stdout ?? process.stdout,
            ...(logFile ? { logFile } : {}),
            redactor,
          });
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
    await sentry?.close();
  }
}

/**
 * The original appends to LOG_FILE (Python's FileHandler). Synchronous writes keep the lines in
 * order with the stream's and on disk when the process dies; the file is local (an emptyDir).
 */
function openLogFile(path: string, prefixLevel: boolean): LogFile & { close(): void } {
  const fd = openSync(path, 'a');
  return {
    prefixLevel,
    write: (line: string) => writeSync(fd, line),
    close: () => closeSync(fd),
  };
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
