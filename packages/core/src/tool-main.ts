import { type ParseArgsConfig, parseArgs } from 'node:util';
import { ExitCode, QontractError } from './errors.ts';

/** A tool's command line is wrong: the message, then the tool's usage text; exit 2. */
export class UsageError extends QontractError {
  constructor(message: string, usage: string) {
    super(`${message}\n\n${usage}`, { exitCode: ExitCode.USAGE });
  }
}

interface ToolIo {
  readonly stdout?: { write(text: string): unknown };
  readonly stderr?: { write(text: string): unknown };
}

/**
 * What the tools beside the umbrella CLI (`qontract-bundle`,
 * `qontract-mr-check`, `qontract-shadow-compare`) share around their own
 * work: node's `parseArgs` of their `argv` (a bad option is a `UsageError`),
 * `--help` (the usage text, exit 0), and the exit code of the body: an
 * expected failure (`QontractError`) is its message and its own exit code,
 * anything else its stack and exit 1.
 */
export async function runTool<T extends Omit<ParseArgsConfig, 'args'>>(
  argv: readonly string[],
  config: T,
  usage: string,
  io: ToolIo,
  body: (parsed: ReturnType<typeof parseArgs<T>>) => Promise<number>,
): Promise<number> {
  const stdout = io.stdout ?? process.stdout;
  const stderr = io.stderr ?? process.stderr;
  try {
    let parsed: ReturnType<typeof parseArgs<T>>;
    try {
      parsed = parseArgs({ ...config, args: [...argv] }) as ReturnType<typeof parseArgs<T>>;
    } catch (e) {
      throw new UsageError((e as Error).message, usage);
    }
    if ((parsed.values as { help?: unknown }).help) {
      stdout.write(usage);
      return ExitCode.SUCCESS;
    }
    return await body(parsed);
  } catch (e) {
    if (e instanceof QontractError) {
      stderr.write(`${e.message}\n`);
      return e.exitCode;
    }
    stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    return ExitCode.ERROR;
  }
}
