import type { LogFormat, LogLevelName } from './logging.ts';

/** The umbrella command's global options (the original's click group options, plus ours). */
export interface GlobalOptions {
  readonly configPath: string;
  readonly dryRun: boolean;
  readonly logLevel?: LogLevelName | undefined;
  readonly logFormat?: LogFormat | undefined;
  readonly validateSchemas: boolean;
  readonly dumpSchemas?: string | undefined;
  readonly gqlShaUrl: boolean;
  /** Forced off in dry-run, as upstream. */
  readonly gqlUrlPrint: boolean;
  readonly earlyExitCompareSha?: string | undefined;
  readonly checkOnlyAffectedShards: boolean;
  /**
   * Ours: with `--early-exit-compare-sha` and `--check-only-affected-shards`,
   * the comparison's outcome decided by the caller (the merge-request check,
   * which compares once for many integrations): these shards are run, nothing
   * is compared again.
   */
  readonly earlyExitAffectedShards?: readonly string[] | undefined;
  /** Ours: write the plan of a run as JSON to this file. */
  readonly planOut?: string | undefined;
  /** Ours: log a unified diff (server-owned fields left out, Secret values masked) after each action line. */
  readonly diff: boolean;
}

export const DEFAULT_GLOBAL_OPTIONS: Omit<GlobalOptions, 'configPath'> = {
  dryRun: false,
  validateSchemas: true,
  gqlShaUrl: true,
  gqlUrlPrint: true,
  checkOnlyAffectedShards: false,
  diff: false,
};
