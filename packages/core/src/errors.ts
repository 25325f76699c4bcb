/**
 * Exit codes of the original (`reconcile.status.ExitCodes`), plus the usage
 * error code click uses for an unknown subcommand or a bad option.
 */
export const ExitCode = {
  SUCCESS: 0,
  ERROR: 1,
  USAGE: 2,
  INTEGRATION_NOT_FOUND: 4,
  FORBIDDEN_SCHEMA: 5,
} as const;

/**
 * An expected failure: its message is shown to the user without a stack trace
 * and the process ends with `exitCode`.
 */
export class QontractError extends Error {
  readonly exitCode: number;
  constructor(message: string, options?: { exitCode?: number; cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.exitCode = options?.exitCode ?? ExitCode.ERROR;
  }
}

/** `config.toml` could not be read or does not have the expected shape. */
export class ConfigError extends QontractError {
  readonly problems: readonly string[];
  constructor(message: string, problems: readonly string[] = []) {
    super(problems.length ? `${message}\n${problems.map((p) => `  - ${p}`).join('\n')}` : message);
    this.problems = problems;
  }
}

/** The integration is not defined in app-interface (`integrations_v1`). Exit 4. */
export class IntegrationNotFoundError extends QontractError {
  constructor(name: string) {
    super(
      `Integration not found: ${name}\n\nIntegration should be defined in App-Interface with the\n/app-sre/integration-1.yml schema.`,
      { exitCode: ExitCode.INTEGRATION_NOT_FOUND },
    );
  }
}

/** A query touched schemas the integration does not declare. Exit 5. */
export class ForbiddenSchemaError extends QontractError {
  readonly schemas: readonly string[];
  constructor(schemas: readonly string[]) {
    super(
      `Forbidden schemas: [${schemas.map((s) => `'${s}'`).join(', ')}]\n\nThe \`schemas\` parameter in the integration file in App-Interface\nshould be updated to include these schemas.`,
      { exitCode: ExitCode.FORBIDDEN_SCHEMA },
    );
    this.schemas = schemas;
  }
}

/** Thrown by an integration to end the run with a given exit code (the original's `sys.exit(n)`). */
export class ExitRequest extends Error {
  readonly exitCode: number;
  constructor(exitCode: number, message = `exit ${exitCode}`) {
    super(message);
    this.name = 'ExitRequest';
    this.exitCode = exitCode;
  }
}

/** One error registered during a run; the run goes on and ends with exit 1. */
export interface RegisteredError {
  /** What failed: a cluster, a namespace, a data file, a resource. */
  readonly scope: string;
  readonly message: string;
  /** True when the error concerns a whole cluster (the engine then skips that cluster). */
  readonly clusterWide?: boolean;
  /**
   * The removal scope the error concerns (an organisation, a group): it holds
   * back only the destructive actions of that scope. Without one the error is
   * run-wide and holds back every destructive action.
   */
  readonly removalScope?: string;
}

/**
 * Error collection for one run. Registering an error never throws; any
 * registered error makes the run end with exit code 1 and switches deletions
 * off for the rest of the run: all of them, or only those of its removal scope
 * when it was registered with one (see `holdsRemovals`).
 */
export class ErrorRegistry {
  readonly #errors: RegisteredError[] = [];
  readonly #onRegister: ((e: RegisteredError) => void) | undefined;

  constructor(onRegister?: (e: RegisteredError) => void) {
    this.#onRegister = onRegister;
  }

  register(
    scope: string,
    error: unknown,
    options?: { clusterWide?: boolean; removalScope?: string | undefined },
  ): void {
    const entry: RegisteredError = {
      scope,
      message: errorMessage(error),
      ...(options?.clusterWide ? { clusterWide: true } : {}),
      ...(options?.removalScope === undefined ? {} : { removalScope: options.removalScope }),
    };
    this.#errors.push(entry);
    this.#onRegister?.(entry);
  }

  get hasErrors(): boolean {
    return this.#errors.length > 0;
  }

  get errors(): readonly RegisteredError[] {
    return this.#errors;
  }

  /**
   * Whether a destructive action of removal scope `scope` must be held back:
   * a run-wide error holds back every one, a scoped error those of its scope;
   * an action without a scope is held back by any error.
   */
  holdsRemovals(scope: string | undefined): boolean {
    if (scope === undefined) return this.hasErrors;
    return this.#errors.some((e) => e.removalScope === undefined || e.removalScope === scope);
  }

  /** Whether a cluster-wide error was registered for `cluster`. */
  hasClusterError(cluster: string): boolean {
    return this.#errors.some((e) => e.clusterWide && e.scope === cluster);
  }
}

export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'string') return error;
  try {
    return JSON.stringify(error);
  } catch {
    return String(error);
  }
}
