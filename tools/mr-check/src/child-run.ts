import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { launchFlags } from '@qontract/core/launch';
import { parseArgsStringToArgv } from 'string-argv';
import { z } from 'zod';
import type { PrCheck } from './select.ts';

const require = createRequire(import.meta.url);

/** The `qontract-reconcile` launcher of this workspace. */
export const QONTRACT_RECONCILE_BIN = join(
  dirname(require.resolve('@qontract/cli/package.json')),
  'bin/qontract-reconcile.js',
);

/** The early-exit log line of the runner (upstream's exact text). */
const EARLY_EXIT_MESSAGE = 'No changes in desired state. Exit PR check early.';
const SHARDS_MESSAGE = /^run \S+ for shards \[(.*)\]$/;

/** One planned action as `--plan-out` writes it (engine and non-engine integrations alike). */
const PlannedActionSchema = z
  .object({
    action: z.string(),
    cluster: z.string().optional(),
    namespace: z.string().nullish(),
    kind: z.string().optional(),
    name: z.string().optional(),
    unifiedDiff: z.string().optional(),
    /** What the run's executor did with it; `disabled`: held back by the deletion gate. */
    outcome: z.string().optional(),
  })
  .loose();
export type PlannedAction = z.infer<typeof PlannedActionSchema>;

const PlanFileSchema = z.object({ actions: z.array(PlannedActionSchema) }).loose();

const LogRecordSchema = z.object({ level: z.number(), msg: z.string() }).loose();

/** What one child run of `qontract-reconcile --dry-run` came to. */
export interface ChildResult {
  readonly argv: readonly string[];
  readonly exitCode: number;
  readonly earlyExit: boolean;
  /** The shards a sharded dry-run ran, when it ran only some. */
  readonly shards: readonly string[] | null;
  /** Null when the run wrote no plan (early exit, or it failed before planning). */
  readonly actions: readonly PlannedAction[] | null;
  /** Error and critical log lines, then any non-JSON output of a crash. */
  readonly errors: readonly string[];
  readonly durationMs: number;
}

export interface ChildRunOptions {
  readonly configPath: string;
  readonly baseSha: string;
  readonly planFile: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly signal?: AbortSignal | undefined;
  /** The integration and its arguments, when not `pr_check.cmd` (the change tester's dry-runs). */
  readonly command?: readonly string[] | undefined;
  /** The shards the check's own early-exit decision found changed: the run does not compare again. */
  readonly affectedShards?: readonly string[] | undefined;
  /** Stops the run (SIGTERM, then SIGKILL after `graceMs`) when it takes longer; none when absent. */
  readonly timeoutMs?: number | undefined;
  /** How long a timed-out run gets to stop on SIGTERM (default 10 s). */
  readonly graceMs?: number | undefined;
  /** The script run under node (tests); default the workspace's `qontract-reconcile`. */
  readonly bin?: string | undefined;
}

/** The umbrella command line of an integration's `pr_check` (upstream's MR-check switches). */
export function integrationArgv(
  pr: PrCheck,
  options: Pick<
    ChildRunOptions,
    'configPath' | 'baseSha' | 'planFile' | 'command' | 'affectedShards'
  >,
): string[] {
  const affected = pr.early_exit && pr.check_only_affected_shards ? options.affectedShards : null;
  return [
    '--config',
    options.configPath,
    '--log-format',
    'json',
    '--dry-run',
    ...(pr.early_exit ? ['--early-exit-compare-sha', options.baseSha] : []),
    ...(pr.early_exit && pr.check_only_affected_shards ? ['--check-only-affected-shards'] : []),
    ...(affected?.length ? ['--early-exit-affected-shards', affected.join(',')] : []),
    ...(pr.no_validate_schemas ? ['--no-validate-schemas'] : []),
    '--plan-out',
    options.planFile,
    '--diff',
    ...(options.command ?? parseArgsStringToArgv(pr.cmd)),
  ];
}

/**
 * An action from its log line, the original's `['apply', 'privileged=False',
 * cluster, namespace, kind, name]` (engine) or `['create', cluster, namespace]`
 * style; null for any other message.
 */
export function actionOfLine(msg: string): PlannedAction | null {
  const item = String.raw`'(?:[^'\\]|\\.)*'|None|True|False|-?\d+`;
  if (!new RegExp(String.raw`^\['[a-z_]+'(?:, (?:${item}))*\]$`).test(msg)) return null;
  const items = [...msg.matchAll(new RegExp(item, 'g'))].map(([token]) =>
    token.startsWith("'") ? token.slice(1, -1).replace(/\\(.)/g, '$1') : null,
  );
  const [action, ...rest] = items as [string, ...Array<string | null>];
  const [cluster, namespace, kind, name] = rest[0]?.startsWith('privileged=')
    ? rest.slice(1)
    : [rest[0], rest[1], undefined, rest.slice(2).filter(Boolean).join(' ') || undefined];
  return {
    action,
    ...(cluster ? { cluster } : {}),
    ...(namespace ? { namespace } : {}),
    ...(kind ? { kind } : {}),
    ...(name ? { name } : {}),
  };
}

const flagsByEnv = new WeakMap<ChildRunOptions['env'], readonly string[]>();

/**
 * The flags the child's launcher would add, so that node does not start twice;
 * on a bad setting none, and the child's launcher says what is wrong. Worked
 * out once per environment (it reads the cgroup's memory limit), not per child.
 */
function childFlags(env: ChildRunOptions['env']): readonly string[] {
  let flags = flagsByEnv.get(env);
  if (!flags) {
    try {
      flags = launchFlags(env, []);
    } catch {
      flags = [];
    }
    flagsByEnv.set(env, flags);
  }
  return flags;
}

/**
 * Runs one integration in its own process, so that a crash, a hang up to
 * the signal, or a memory blow-up of one cannot take the others down.
 */
export async function runChild(pr: PrCheck, options: ChildRunOptions): Promise<ChildResult> {
  const argv = integrationArgv(pr, options);
  const started = performance.now();
  const flags = childFlags(options.env);
  const child = spawn(
    process.execPath,
    [...flags, options.bin ?? QONTRACT_RECONCILE_BIN, ...argv],
    {
      env: options.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(options.signal ? { signal: options.signal } : {}),
    },
  );
  // A hanging integration must not hold the check: SIGTERM lets it stop
  // cleanly (our CLI aborts what it waits on), SIGKILL ends a blocked one.
  let timedOut = false;
  const timers: NodeJS.Timeout[] = [];
  if (options.timeoutMs !== undefined) {
    timers.push(
      setTimeout(() => {
        timedOut = true;
        child.kill('SIGTERM');
        timers.push(setTimeout(() => child.kill('SIGKILL'), options.graceMs ?? 10_000));
      }, options.timeoutMs),
    );
  }
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => (output += s));
  child.stderr.setEncoding('utf8').on('data', (s: string) => (output += s));
  const exitCode = await new Promise<number>((resolve) => {
    child.on('error', () => resolve(1));
    child.on('close', (code, signal) => resolve(code ?? (signal ? 128 : 1)));
  });
  for (const timer of timers) clearTimeout(timer);

  let earlyExit = false;
  let shards: string[] | null = null;
  const errors: string[] = [];
  const plain: string[] = [];
  const logged: PlannedAction[] = [];
  for (const line of output.split('\n')) {
    if (!line.trim()) continue;
    let record: z.infer<typeof LogRecordSchema> | null = null;
    if (line.startsWith('{')) {
      try {
        const parsed = LogRecordSchema.safeParse(JSON.parse(line));
        if (parsed.success) record = parsed.data;
      } catch {
        // Not a log record: kept as plain output below.
      }
    }
    if (!record) {
      plain.push(line);
      continue;
    }
    if (record.msg === EARLY_EXIT_MESSAGE) earlyExit = true;
    const sharded = SHARDS_MESSAGE.exec(record.msg);
    if (sharded) shards = [...(sharded[1] ?? '').matchAll(/'([^']*)'/g)].map((m) => m[1] ?? '');
    if (record.level >= 50) errors.push(record.msg);
    const action = actionOfLine(record.msg);
    if (action) logged.push(action);
    else if (record.msg.startsWith('--- ') && logged.length > 0 && !logged.at(-1)!.unifiedDiff) {
      // --diff logs an action's diff right after its line.
      logged[logged.length - 1] = { ...logged.at(-1)!, unifiedDiff: record.msg };
    }
  }
  // A crash before logging started (usage error, a broken config) only prints text.
  if (exitCode !== 0 && errors.length === 0) errors.push(...plain.slice(-20));
  if (timedOut) {
    errors.unshift(
      `timed out after ${(options.timeoutMs ?? 0) / 1000} s: the run was stopped (qontract-mr-check --timeout)`,
    );
  }

  let actions: PlannedAction[] | null = null;
  try {
    const parsed = PlanFileSchema.safeParse(JSON.parse(await readFile(options.planFile, 'utf8')));
    if (parsed.success) actions = parsed.data.actions;
    else errors.push(`the plan file of the run is malformed: ${parsed.error.issues[0]?.message}`);
  } catch {
    // No plan: the run exited early or failed before it planned.
  }
  // Shards of one process share the plan file, so with several the file holds
  // one shard's plan: the logged action lines hold them all.
  if ((shards && shards.length > 1) || (actions === null && logged.length > 0)) actions = logged;
  return {
    argv,
    exitCode: timedOut && exitCode === 0 ? 1 : exitCode,
    earlyExit,
    shards,
    actions,
    errors,
    durationMs: performance.now() - started,
  };
}
