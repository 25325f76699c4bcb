import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  type AnyIntegration,
  type Config,
  createLogger,
  createMetrics,
  DEFAULT_GLOBAL_OPTIONS,
  type EarlyExitDecision,
  ExitCode,
  errorMessage,
  flagOf,
  type GlobalOptions,
  installStopSignals,
  LOG_LEVELS,
  type LogFile,
  type LogFormat,
  type Logger,
  type LoopScope,
  loadConfig,
  type Metrics,
  type OptionSpec,
  type OptionValues,
  parseLogLevel,
  QontractError,
  SecretRedactor,
  type ShardConfig,
  shardConfigFromEnv,
} from '@qontract/core';
import yargs, { type Argv } from 'yargs';
import type { ExecuteSettings, RunServices } from './compose.ts';
import { registry as defaultRegistry, loadIntegration, type RegistryEntry } from './registry.ts';
import { startSentry } from './sentry.ts';

const VERSION = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    version: string;
  }
).version;

interface CliIo {
  readonly stdout: { write(s: string): unknown; isTTY?: boolean };
  readonly stderr: { write(s: string): unknown; isTTY?: boolean };
}

export interface CliDeps {
  readonly registry?: readonly RegistryEntry[];
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly io?: CliIo;
  readonly signal?: AbortSignal;
  /** The loop the run is one of (run-integration's); default: a scope of the run's own. */
  readonly loop?: LoopScope;
  readonly metrics?: Metrics;
  /** Builds the run's services (secrets, state, clients); default: from config. */
  readonly services?: (
    config: Config,
    redactor: SecretRedactor,
    globals: GlobalOptions,
  ) => RunServices;
  /** Pre-built clients by client id, added to the run's services (the MR check's in-process answers). */
  readonly clients?: ReadonlyMap<string, unknown>;
  /** A copy of every log line (run-integration's `LOG_FILE`). */
  readonly logFile?: LogFile;
  /**
   * Where log lines go; default `io.stderr`, as the original's CLI (`logging.basicConfig`).
   * run-integration passes `io.stdout`: the original's pod entry point logs to stdout.
   */
  readonly logDestination?: { write(s: string): unknown; isTTY?: boolean };
  /**
   * The secret redactor the run registers its secret values with; default a new
   * one. run-integration passes its own, shared by its loop's runs, its log and
   * its Sentry reporting.
   */
  readonly redactor?: SecretRedactor;
  /** Called with the logger once it exists (run-integration installs signal handlers with it). */
  readonly onLogger?: (log: Logger) => void;
}

interface Selected {
  readonly definition: AnyIntegration;
  readonly args: Record<string, unknown>;
}

/**
 * `qontract-reconcile [global options] <integration> [integration options]`.
 * Returns the exit code; never calls process.exit.
 */
export async function runCli(argv: readonly string[], deps: CliDeps = {}): Promise<number> {
  const prepared = await prepareRun(argv, deps);
  if (typeof prepared === 'number') return prepared;
  const { executeIntegration } = await import('./compose.ts');
  const result = await executeIntegration(prepared.settings);
  await new Promise<void>((r) => prepared.settings.log.flush(() => r()));
  return result.exitCode;
}

/**
 * What `runCli(argv)` would decide in its early-exit step (a dry-run with
 * `--early-exit-compare-sha`), taken in this process without running the
 * integration: the merge-request check asks it before it starts a process.
 * Null when the run would take no decision, or when the command line or the
 * config fails (the process reports that itself).
 */
export async function decideEarlyExitOf(
  argv: readonly string[],
  deps: CliDeps = {},
): Promise<EarlyExitDecision | null> {
  const prepared = await prepareRun(argv, deps);
  if (typeof prepared === 'number') return null;
  const { decideIntegrationEarlyExit } = await import('./compose.ts');
  try {
    return await decideIntegrationEarlyExit(prepared.settings);
  } finally {
    await new Promise<void>((r) => prepared.settings.log.flush(() => r()));
  }
}

/** The run a command line asks for, or the exit code of a usage or config failure. */
async function prepareRun(
  argv: readonly string[],
  deps: CliDeps,
): Promise<{ settings: ExecuteSettings } | number> {
  const registry = deps.registry ?? defaultRegistry;
  const env = deps.env ?? process.env;
  const io = deps.io ?? { stdout: process.stdout, stderr: process.stderr };
  let selected: Selected | undefined;

  // Only the integration named on the command line is imported: its options are
  // needed to parse the rest; `--help` lists the others from the registry alone.
  const command = await commandName(argv);
  const entry = registry.find((e) => e.name === command);
  const definition = entry ? await loadIntegration(entry) : undefined;
  const parser = buildParser(registry, definition, env, (s) => {
    selected = s;
  });
  let failure: string | undefined;
  let output = '';
  parser.fail((msg, err) => {
    failure = msg || (err ? err.message : 'invalid arguments');
  });
  const parsed = await new Promise<Record<string, unknown>>((done) => {
    parser.parse([...argv], {}, (err, args, out) => {
      if (err && !failure) failure = err.message;
      output = out;
      done(args as Record<string, unknown>);
    });
  });

  if (output && !failure) {
    // --help or --version: yargs produced the text instead of running a command.
    io.stdout.write(output.endsWith('\n') ? output : `${output}\n`);
    return ExitCode.SUCCESS;
  }
  if (failure || !selected) {
    const first = (parsed._ as unknown[] | undefined)?.[0];
    const known = registry.some((d) => d.name === first);
    let message: string;
    if (first !== undefined && !known) message = `No such command '${String(first)}'.`;
    else if (failure) message = failure.replace(/^Unknown arguments?: /, 'No such option: ');
    else message = 'Missing command.';
    io.stderr.write('Usage: qontract-reconcile [OPTIONS] COMMAND [ARGS]...\n');
    io.stderr.write(`Try 'qontract-reconcile --help' for help.\n\nError: ${message}\n`);
    return ExitCode.USAGE;
  }
  return prepareSelected(selected, parsed, env, io, deps);
}

async function prepareSelected(
  selected: Selected,
  parsed: Record<string, unknown>,
  env: Readonly<Record<string, string | undefined>>,
  io: CliIo,
  deps: CliDeps,
): Promise<{ settings: ExecuteSettings } | number> {
  const redactor = deps.redactor ?? new SecretRedactor();
  let logLevel: GlobalOptions['logLevel'];
  try {
    logLevel = parseLogLevel((parsed.logLevel as string | undefined) ?? env.QONTRACT_LOG_LEVEL);
  } catch (e) {
    io.stderr.write(`Error: ${errorMessage(e)}\n`);
    return ExitCode.USAGE;
  }
  const globals = globalOptionsFrom(parsed, env, logLevel);
  if (
    globals.earlyExitAffectedShards &&
    !(globals.earlyExitCompareSha && globals.checkOnlyAffectedShards)
  ) {
    io.stderr.write(
      'Error: --early-exit-affected-shards needs --early-exit-compare-sha and --check-only-affected-shards\n',
    );
    return ExitCode.USAGE;
  }
  const log = createLogger({
    level: globals.logLevel,
    format: globals.logFormat,
    dryRun: globals.dryRun,
    integration: selected.definition.name,
    redactor,
    destination: deps.logDestination ?? io.stderr,
    logFile: deps.logFile,
  });
  deps.onLogger?.(log);
  if (!globals.configPath) {
    log.fatal('no config file for qontract-reconcile specified');
    return ExitCode.ERROR;
  }
  let config: Config;
  let shard: ShardConfig;
  try {
    config = await loadConfig(resolve(globals.configPath));
    shard = shardConfigFromEnv(env);
  } catch (e) {
    log.error(errorMessage(e));
    return e instanceof QontractError ? e.exitCode : ExitCode.ERROR;
  }
  // Imported here, not at the top: `--help` and usage errors never need the
  // GraphQL client and the embedded engine behind it.
  const { defaultServices } = await import('./compose.ts');
  const chosen = (deps.services ?? defaultServices)(config, redactor, globals, env);
  const services = deps.clients
    ? { ...chosen, clients: new Map([...(chosen.clients ?? []), ...deps.clients]) }
    : chosen;
  return {
    settings: {
      definition: selected.definition,
      options: integrationOptions(selected.definition, selected.args),
      globals,
      config,
      log,
      redactor,
      env: { vars: env },
      metrics: deps.metrics ?? createMetrics(),
      shard,
      signal: deps.signal ?? new AbortController().signal,
      ...(deps.loop ? { loop: deps.loop } : {}),
      services,
    },
  };
}

function globalOptionsFrom(
  a: Record<string, unknown>,
  env: Readonly<Record<string, string | undefined>>,
  logLevel: GlobalOptions['logLevel'],
): GlobalOptions {
  const dryRun = Boolean(a.dryRun);
  return {
    ...DEFAULT_GLOBAL_OPTIONS,
    configPath: (a.config as string | undefined) ?? env.QONTRACT_CONFIG ?? '',
    dryRun,
    logLevel,
    logFormat: (a.logFormat as LogFormat | undefined) ?? parseLogFormat(env.LOG_FORMAT),
    validateSchemas: a.validateSchemas !== false,
    dumpSchemas: a.dumpSchemas as string | undefined,
    gqlShaUrl: a.gqlShaUrl !== false,
    gqlUrlPrint: a.gqlUrlPrint !== false && !dryRun,
    earlyExitCompareSha:
      (a.earlyExitCompareSha as string | undefined) || env.EARLY_EXIT_COMPARE_SHA || undefined,
    checkOnlyAffectedShards:
      Boolean(a.checkOnlyAffectedShards) || env.CHECK_ONLY_AFFECTED_SHARDS === 'true',
    earlyExitAffectedShards: listOption(a.earlyExitAffectedShards),
    planOut: a.planOut as string | undefined,
    diff: Boolean(a.diff) || env.SHOW_DIFF === 'true',
  };
}

/** A comma-separated option's items (undefined when not given). */
function listOption(v: unknown): string[] | undefined {
  if (typeof v !== 'string') return undefined;
  const items = v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return items.length > 0 ? items : undefined;
}

function parseLogFormat(v: string | undefined): LogFormat | undefined {
  return v === 'json' || v === 'text' ? v : undefined;
}

/** The command the arguments name (the first positional after the global options), if any. */
async function commandName(argv: readonly string[]): Promise<string | undefined> {
  try {
    const args = await globalOptions(yargs())
      .help(false)
      .version(false)
      .parserConfiguration({
        'greedy-arrays': false,
        'strip-dashed': true,
        'halt-at-non-option': true,
      })
      .fail(false)
      .exitProcess(false)
      .parseAsync([...argv]);
    const first = args._[0];
    return first === undefined ? undefined : String(first);
  } catch {
    // A bad global option: the full parse below reports it.
    return undefined;
  }
}

function buildParser(
  registry: readonly RegistryEntry[],
  loaded: AnyIntegration | undefined,
  env: Readonly<Record<string, string | undefined>>,
  select: (s: Selected) => void,
): Argv {
  let parser = globalOptions(yargs())
    .demandCommand(1, 'Missing command.')
    .strict()
    .help('help')
    .alias('help', 'h')
    .version('version', 'show the version', VERSION)
    .wrap(Math.min(120, process.stdout.columns || 100))
    .exitProcess(false);

  for (const entry of registry) {
    const def = loaded?.name === entry.name ? loaded : undefined;
    parser = parser.command(
      def ? `${entry.name}${argumentsUsage(def)}` : entry.name,
      entry.description,
      // Only the selected command's builder ever runs; the others are listed, never parsed.
      (y) => (def ? addIntegrationOptions(y, def, env) : y),
      (args) => {
        if (def) select({ definition: def, args: args as Record<string, unknown> });
      },
    );
  }
  return parser;
}

/** ` <a> <b>`: the positional arguments of an integration, for its yargs command. */
function argumentsUsage(def: AnyIntegration): string {
  return Object.entries(def.options as Record<string, OptionSpec>)
    .filter(([, spec]) => spec.type === 'argument')
    .map(([key, spec]) => ` <${argumentName(key, spec)}>`)
    .join('');
}

/**
 * A positional argument's name, as click shows it (`GITLAB_PROJECT_ID`); yargs
 * then keeps that key as is (with 'strip-dashed', a dashed positional would
 * be reported missing).
 */
function argumentName(key: string, spec: OptionSpec): string {
  return flagOf(key, spec).toUpperCase().replaceAll('-', '_');
}

/** The umbrella command's own options (before the integration's name). */
function globalOptions(y: Argv): Argv {
  return y
    .scriptName('qontract-reconcile')
    .usage('Usage: $0 [OPTIONS] COMMAND [ARGS]...')
    .parserConfiguration({ 'greedy-arrays': false, 'strip-dashed': true })
    .option('config', {
      type: 'string',
      describe: 'path to the TOML configuration file [env QONTRACT_CONFIG]',
    })
    .option('dry-run', {
      type: 'boolean',
      default: false,
      describe: 'print the plan, change nothing (--no-dry-run: apply it)',
    })
    .option('log-level', {
      type: 'string',
      choices: [...LOG_LEVELS],
      coerce: (v: string | undefined) => (v === undefined ? v : v.toUpperCase()),
      describe: 'log level',
    })
    .option('log-format', {
      type: 'string',
      choices: ['text', 'json'],
      describe: 'log line format [env LOG_FORMAT] (default: text on a terminal, json otherwise)',
    })
    .option('early-exit-compare-sha', {
      type: 'string',
      describe:
        'bundle sha to compare the desired state with; exit early when equal (dry-run only) [env EARLY_EXIT_COMPARE_SHA]',
    })
    .option('check-only-affected-shards', {
      type: 'boolean',
      default: false,
      describe:
        'in a dry-run with --early-exit-compare-sha, run only the shards that changed [env CHECK_ONLY_AFFECTED_SHARDS=true]',
    })
    .option('early-exit-affected-shards', {
      type: 'string',
      describe:
        'with --check-only-affected-shards: the shards a comparison already found changed (comma-separated), run without comparing again (qontract-mr-check passes its own decision)',
    })
    .option('validate-schemas', {
      type: 'boolean',
      default: true,
      describe: 'fail (exit 5) when a query touches schemas the integration does not declare',
    })
    .option('dump-schemas', {
      type: 'string',
      describe: 'write the queried schemas to this file as a JSON array',
    })
    .option('gql-sha-url', {
      type: 'boolean',
      default: true,
      describe: 'pin the run to one bundle (/graphqlsha/<sha>)',
    })
    .option('gql-url-print', {
      type: 'boolean',
      default: true,
      describe: 'log the GraphQL endpoint in use (always off in dry-run)',
    })
    .option('plan-out', {
      type: 'string',
      describe: 'write the plan of the run as JSON to this file',
    })
    .option('diff', {
      type: 'boolean',
      default: false,
      describe:
        'log a unified diff of each changed object after its action line (Secret values masked) [env SHOW_DIFF=true]',
    });
}

function addIntegrationOptions(
  y: Argv,
  def: AnyIntegration,
  env: Readonly<Record<string, string | undefined>>,
): Argv {
  let out = y;
  for (const [key, spec] of Object.entries(def.options) as [string, OptionSpec][]) {
    const flag = flagOf(key, spec);
    if (spec.type === 'argument') {
      out = out.positional(argumentName(key, spec), { type: 'string', describe: spec.describe });
      continue;
    }
    const envValue = spec.env ? env[spec.env] : undefined;
    const describe = spec.env ? `${spec.describe} [env ${spec.env}]` : spec.describe;
    switch (spec.type) {
      case 'boolean':
        out = out.option(flag, {
          type: 'boolean',
          default: envValue !== undefined ? envValue === 'true' : spec.default,
          describe,
        });
        break;
      case 'tristate':
        out = out
          .option(flag, { type: 'boolean', describe })
          .option(spec.negation, { type: 'boolean', describe: `the opposite of --${flag}` })
          .conflicts(flag, spec.negation);
        break;
      case 'number':
        // No yargs `type`: it would turn a bad value into NaN before we can name it.
        out = out.option(flag, {
          requiresArg: true,
          describe: `${describe} [${spec.integer ? 'integer' : 'number'}]`,
          ...(envValue !== undefined
            ? { default: Number(envValue) }
            : spec.default !== undefined
              ? { default: spec.default }
              : {}),
          coerce: (v: unknown) => {
            if (v === undefined) return v;
            const n = Number(v);
            if (Number.isNaN(n) || (spec.integer && !Number.isInteger(n))) {
              throw new Error(
                `Invalid value for '--${flag}': '${String(v)}' is not a valid ${spec.integer ? 'integer' : 'number'}.`,
              );
            }
            return n;
          },
        });
        break;
      case 'string':
        out = out.option(flag, {
          type: 'string',
          describe,
          ...(spec.choices ? { choices: [...spec.choices] } : {}),
          ...(envValue !== undefined
            ? { default: envValue }
            : spec.default !== undefined
              ? { default: spec.default }
              : {}),
        });
        break;
      case 'list':
        out = out.option(flag, {
          type: 'string',
          array: true,
          describe,
          default: envValue ? [envValue] : [],
        });
        break;
    }
    if (spec.alias) out = out.alias(flag, spec.alias);
  }
  return out;
}

/** The integration's typed options from yargs' parsed arguments. */
function integrationOptions(def: AnyIntegration, args: Record<string, unknown>): OptionValues {
  const out: OptionValues = {};
  for (const [key, spec] of Object.entries(def.options) as [string, OptionSpec][]) {
    const flag = flagOf(key, spec);
    const camel = flag.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());
    const value = args[camel];
    if (spec.type === 'tristate') {
      const negCamel = spec.negation.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());
      out[key] = args[negCamel] === true ? false : value === true ? true : undefined;
    } else if (spec.type === 'list') {
      out[key] = Array.isArray(value) ? value.map(String) : [];
    } else if (spec.type === 'argument') {
      // yargs may read a numeric argument (a project id) as a number.
      out[key] = String(args[argumentName(key, spec)]);
    } else {
      out[key] = value as OptionValues[string];
    }
  }
  return out;
}

/** Entry point of the `qontract-reconcile` binary. */
export async function main(): Promise<void> {
  const controller = new AbortController();
  const redactor = new SecretRedactor();
  let sentry: Awaited<ReturnType<typeof startSentry>>;
  try {
    sentry = await startSentry(process.env, redactor);
  } catch (e) {
    process.stderr.write(`Error: ${errorMessage(e)}\n`);
    process.exitCode = ExitCode.ERROR;
    return;
  }
  let uninstall = () => {};
  const code = await runCli(process.argv.slice(2), {
    signal: controller.signal,
    redactor,
    onLogger: (log) => {
      uninstall = installStopSignals(controller, log);
    },
  });
  uninstall();
  await sentry?.close();
  // Ends what outlives a run on this signal (watch mode's caches and their connections).
  controller.abort(new Error('qontract-reconcile is done'));
  process.exitCode = code;
}
