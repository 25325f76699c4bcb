import { writeFile } from 'node:fs/promises';
import { ExitCode, runTool, UsageError } from '@qontract/core';
import { runMrCheck } from './check.ts';
import { renderMarkdown } from './report.ts';

interface Output {
  write(text: string): unknown;
  readonly isTTY?: boolean;
}

export interface MainOptions {
  stdout?: Output;
  /** Progress and errors. */
  stderr?: Output;
  env?: Readonly<Record<string, string | undefined>>;
  signal?: AbortSignal;
}

const USAGE = `Usage:
  qontract-mr-check --base BASE --head HEAD [--config config.toml] [--jobs N]
                    [--timeout SECONDS] [--report-md FILE] [--report-json FILE]

BASE (the target branch) and HEAD (the merge request) are app-interface
directories or bundle.json files. Validates HEAD, lists what changed, and
dry-runs every integration the changes concern (its pr_check settings) against
HEAD, with early exit against BASE. Prints the markdown report unless
--report-md is given. Exit code 0 when HEAD is valid and no integration failed.
--config defaults to $QONTRACT_CONFIG; --jobs to the number of cores.
--timeout stops an integration that runs longer and reports it failed
(default: no limit).
`;

const OPTIONS = {
  base: { type: 'string' },
  head: { type: 'string' },
  config: { type: 'string' },
  jobs: { type: 'string', short: 'j' },
  timeout: { type: 'string' },
  'report-md': { type: 'string' },
  'report-json': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** A usage error of this tool: the message, then USAGE. */
const usageError = (message: string) => new UsageError(message, USAGE);

/** Runs `qontract-mr-check` and returns its exit code. */
export async function main(argv: readonly string[], options: MainOptions = {}): Promise<number> {
  const stdout = options.stdout ?? process.stdout;
  const stderr = options.stderr ?? process.stderr;
  const env = options.env ?? process.env;
  return runTool(
    argv,
    { options: OPTIONS, allowPositionals: false },
    USAGE,
    { stdout, stderr },
    async ({ values }) => {
      if (!values.base) throw usageError('missing --base');
      if (!values.head) throw usageError('missing --head');
      const configPath = values.config ?? env.QONTRACT_CONFIG;
      if (!configPath) throw usageError('missing --config (or $QONTRACT_CONFIG)');
      let jobs: number | undefined;
      if (values.jobs !== undefined) {
        jobs = Number(values.jobs);
        if (!Number.isInteger(jobs) || jobs < 1) {
          throw usageError(`--jobs must be a positive integer, got '${values.jobs}'`);
        }
      }
      let timeoutSeconds: number | undefined;
      if (values.timeout !== undefined) {
        timeoutSeconds = Number(values.timeout);
        if (!Number.isFinite(timeoutSeconds) || timeoutSeconds <= 0) {
          throw usageError(
            `--timeout must be a positive number of seconds, got '${values.timeout}'`,
          );
        }
      }
      const report = await runMrCheck({
        base: values.base,
        head: values.head,
        configPath,
        env,
        progress: stderr,
        ...(jobs ? { jobs } : {}),
        ...(timeoutSeconds ? { timeoutSeconds } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
      });
      const markdown = renderMarkdown(report);
      if (values['report-md']) await writeFile(values['report-md'], markdown);
      else stdout.write(markdown);
      if (values['report-json']) {
        await writeFile(values['report-json'], `${JSON.stringify(report, null, 2)}\n`);
      }
      stderr.write(
        report.passed
          ? 'qontract-mr-check: passed\n'
          : `qontract-mr-check: failed (${failures(report)})\n`,
      );
      return report.passed ? ExitCode.SUCCESS : ExitCode.ERROR;
    },
  );
}

function failures(report: Awaited<ReturnType<typeof runMrCheck>>): string {
  const parts: string[] = [];
  if (!report.bundle.valid)
    parts.push(`the head bundle has ${report.bundle.problems.length} problem(s)`);
  const failed = report.integrations.filter((i) => i.status === 'failed').map((i) => i.name);
  if (failed.length) parts.push(`failed: ${failed.join(', ')}`);
  return parts.join('; ');
}

/** @public Entry point of `bin/qontract-mr-check.js` (loaded through the Node-version launcher). */
export default async function run(): Promise<void> {
  process.exitCode = await main(process.argv.slice(2));
}
