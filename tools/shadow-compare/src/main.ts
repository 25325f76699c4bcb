import { writeFile } from 'node:fs/promises';
import { ExitCode, runTool, UsageError } from '@qontract/core';
import { renderReport } from './compare.ts';
import { shadowCompare } from './run.ts';

interface Output {
  write(text: string): unknown;
}

export interface MainOptions {
  stdout?: Output;
  stderr?: Output;
  env?: Readonly<Record<string, string | undefined>>;
  signal?: AbortSignal;
}

const USAGE = `Usage:
  qontract-shadow-compare --original 'COMMAND' [--config config.toml]
                          [--original-config PATH] [--ours 'COMMAND']
                          [--report-json FILE] INTEGRATION...

Dry-runs each INTEGRATION (a quoted string may add its arguments:
'openshift-resources --cluster-name c1') with the original qontract-reconcile
(COMMAND up to its options: 'qontract-reconcile', or 'podman run --rm
-v $PWD:/work:z quay.io/app-sre/qontract-reconcile:TAG qontract-reconcile')
and with this one, on the same config.toml (and so the same app-interface and
clusters), and compares their action lines (['apply', ...], ['delete', ...])
integration by integration, and their exit codes. Prints every difference.
--original-config is the config's path as the original's process sees it
(inside its container); default --config. --ours replaces this workspace's
qontract-reconcile (another build or image). Exit code 0 when every plan is
identical, 1 when any differs.
`;

const OPTIONS = {
  original: { type: 'string' },
  ours: { type: 'string' },
  config: { type: 'string' },
  'original-config': { type: 'string' },
  'report-json': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** A usage error of this tool: the message, then USAGE. */
const usageError = (message: string) => new UsageError(message, USAGE);

/** Runs `qontract-shadow-compare` and returns its exit code. */
export async function main(argv: readonly string[], options: MainOptions = {}): Promise<number> {
  const stdout = options.stdout ?? process.stdout;
  const stderr = options.stderr ?? process.stderr;
  const env = options.env ?? process.env;
  return runTool(
    argv,
    { options: OPTIONS, allowPositionals: true },
    USAGE,
    { stdout, stderr },
    async ({ values, positionals }) => {
      if (!values.original) throw usageError("missing --original 'COMMAND'");
      const configPath = values.config ?? env.QONTRACT_CONFIG;
      if (!configPath) throw usageError('missing --config (or $QONTRACT_CONFIG)');
      if (positionals.length === 0) throw usageError('name at least one INTEGRATION');
      const comparisons = await shadowCompare({
        original: values.original,
        ours: values.ours,
        configPath,
        originalConfigPath: values['original-config'],
        integrations: positionals,
        env,
        signal: options.signal,
      });
      stdout.write(renderReport(comparisons));
      if (values['report-json']) {
        await writeFile(values['report-json'], `${JSON.stringify(comparisons, null, 2)}\n`);
      }
      return comparisons.every((c) => c.identical) ? ExitCode.SUCCESS : ExitCode.ERROR;
    },
  );
}

/** @public Entry point of `bin/qontract-shadow-compare.js` (loaded through the Node-version launcher). */
export default async function run(): Promise<void> {
  process.exitCode = await main(process.argv.slice(2));
}
