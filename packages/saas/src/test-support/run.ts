import {
  configFromObject,
  createLogger,
  DEFAULT_GLOBAL_OPTIONS,
  defineIntegration,
  QontractError,
  type RunContext,
  runIntegration,
  SecretRedactor,
  type SecretRef,
} from '@qontract/core';

/**
 * Runs `body` inside a throw-away integration (a real RunContext: logger,
 * secrets, clients), for the unit tests of the run-scoped readers. Secrets are
 * read from `secrets` by path; the log lines are handed to `onLog`. A failure
 * of `body` is thrown back; the run itself must exit 0.
 */
export async function inTestRun(
  body: (ctx: RunContext) => Promise<void>,
  options: {
    readonly secrets: Readonly<Record<string, string>>;
    readonly vars?: Record<string, string>;
    readonly gql?: unknown;
    readonly onLog?: (line: string) => void;
  },
): Promise<void> {
  const redactor = new SecretRedactor();
  let failure: unknown;
  const result = await runIntegration({
    definition: defineIntegration({
      name: 'saas-test',
      version: '0.1.0',
      description: 't',
      options: {},
      run: async (ctx) => {
        try {
          await body(ctx);
        } catch (e) {
          failure = e;
        }
      },
    }),
    options: {},
    globals: { ...DEFAULT_GLOBAL_OPTIONS, configPath: '' },
    config: configFromObject({ graphql: { server: 'file://x' } }),
    log: createLogger({
      level: options.onLog ? 'INFO' : 'ERROR',
      dryRun: false,
      redactor,
      destination: { write: (line: string) => options.onLog?.(line) },
    }),
    redactor,
    env: { vars: options.vars ?? {} },
    secrets: () => ({
      read: async (ref: SecretRef) => {
        const value = options.secrets[ref.path];
        if (value === undefined) throw new QontractError(`secret not found: ${ref.path}`);
        redactor.add(value);
        return value;
      },
      readAll: async () => ({}),
    }),
    clients: new Map(options.gql ? [['gql', options.gql]] : []),
  });
  if (failure) throw failure;
  if (result.exitCode !== 0) throw new Error(`the test run exited ${result.exitCode}`);
}
