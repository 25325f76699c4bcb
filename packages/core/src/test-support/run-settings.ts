import { configFromObject } from '../config.ts';
import { DEFAULT_GLOBAL_OPTIONS, type GlobalOptions } from '../globals.ts';
import type { AnyIntegration } from '../integration.ts';
import { createLogger } from '../logging.ts';
import { SecretRedactor } from '../redaction.ts';
import type { RunSettings } from '../runner.ts';
import { ConfigSecretReader } from '../secrets/config-reader.ts';

/** RunSettings for tests, with the log captured as parsed JSON records. */
export function testRunSettings(
  definition: AnyIntegration,
  overrides: Partial<Omit<RunSettings, 'globals'>> & { globals?: Partial<GlobalOptions> } = {},
): { settings: RunSettings; logs: Array<Record<string, unknown>> } {
  const logs: Array<Record<string, unknown>> = [];
  const redactor = new SecretRedactor();
  const globals: GlobalOptions = {
    ...DEFAULT_GLOBAL_OPTIONS,
    configPath: '',
    ...overrides.globals,
  };
  const config = configFromObject({
    graphql: { server: 'file://x' },
    creds: { c1: { token: 'tok-123456' } },
  });
  const settings: RunSettings = {
    definition,
    options: {},
    config,
    log: createLogger({
      level: 'DEBUG',
      dryRun: globals.dryRun,
      redactor,
      destination: { write: (s: string) => logs.push(JSON.parse(s) as Record<string, unknown>) },
    }),
    redactor,
    env: { vars: {} },
    secrets: () => new ConfigSecretReader(config, redactor),
    ...overrides,
    globals,
  };
  return { settings, logs };
}
