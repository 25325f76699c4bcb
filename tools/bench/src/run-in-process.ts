import { appInterfaceSettings, dumpQueriedSchemas, gqlClient } from '@qontract/app-interface';
import {
  type AnyIntegration,
  createLogger,
  createMetrics,
  createSecretReader,
  DEFAULT_GLOBAL_OPTIONS,
  loadConfig,
  type OptionSpecs,
  type OptionValues,
  runIntegration,
  SecretRedactor,
  SINGLE_SHARD,
  stateStoreForRun,
} from '@qontract/core';
import { github } from '@qontract/integration-github';
import { openshiftNamespaces } from '@qontract/integration-openshift-namespaces';
import { openshiftResources } from '@qontract/integration-openshift-resources';
import { openshiftRolebindings } from '@qontract/integration-openshift-rolebindings';
import { openshiftSaasDeploy } from '@qontract/integration-openshift-saas-deploy';
import {
  openshiftSaasDeployTriggerConfigs,
  openshiftSaasDeployTriggerMovingCommits,
} from '@qontract/integration-openshift-saas-deploy-triggers';

/** The integrations the scenarios run, by CLI name. */
const REGISTRY: ReadonlyMap<string, AnyIntegration> = new Map(
  [
    openshiftNamespaces,
    openshiftRolebindings,
    openshiftResources,
    github,
    openshiftSaasDeploy,
    openshiftSaasDeployTriggerConfigs,
    openshiftSaasDeployTriggerMovingCommits,
  ].map((d) => [d.name, d as AnyIntegration]),
);

export interface InProcessRun {
  readonly integration: string;
  readonly configPath: string;
  readonly dryRun: boolean;
  readonly threadPoolSize: number;
  /** Run as shard 1 of this many (`SHARDS`, `SHARD_ID=0`); unset: one shard. */
  readonly shards?: number;
  /** Environment variables the run sees (`ctx.env.vars`), e.g. a fake service's URL. */
  readonly env?: Readonly<Record<string, string>>;
}

/**
 * One run as `qontract-reconcile --config C [--dry-run] INTEGRATION
 * --thread-pool-size N` does it: the same core runner, config, secrets
 * (config.toml, as app-interface settings say `vault: false`), GraphQL client
 * and JSON logging. A local adapter rather than `@qontract/cli`'s runCli so
 * that the benchmark loads only the integrations it runs (the CLI imports
 * every registered one).
 */
export async function runInProcess(run: InProcessRun): Promise<{
  exitCode: number;
  logLines: number;
  errorLines: number;
  /** The first error line logged (JSON), if any: says why a setup run failed. */
  firstError: string | undefined;
  /** The run's actions by name (planned ones in a dry-run), as its summary line counts them. */
  actions: Readonly<Record<string, number>>;
}> {
  const definition = REGISTRY.get(run.integration);
  if (!definition) throw new Error(`the benchmark does not know integration ${run.integration}`);
  let logLines = 0;
  let errorLines = 0;
  let firstError: string | undefined;
  const redactor = new SecretRedactor();
  const globals = {
    ...DEFAULT_GLOBAL_OPTIONS,
    configPath: run.configPath,
    dryRun: run.dryRun,
    validateSchemas: false,
    gqlUrlPrint: !run.dryRun,
  };
  const log = createLogger({
    level: 'INFO',
    format: 'json',
    dryRun: run.dryRun,
    integration: definition.name,
    redactor,
    destination: {
      write: (line: string) => {
        logLines++;
        if (line.includes('"level":50')) {
          errorLines++;
          firstError ??= line.slice(0, 2000);
        }
        return true;
      },
    },
  });
  const config = await loadConfig(run.configPath);
  const result = await runIntegration({
    definition,
    options: { ...defaultOptions(definition), threadPoolSize: run.threadPoolSize },
    globals,
    config,
    log,
    redactor,
    env: { vars: { ...run.env } },
    metrics: createMetrics(),
    shard: run.shards && run.shards > 1 ? { shards: run.shards, shardId: 0 } : SINGLE_SHARD,
    signal: new AbortController().signal,
    secrets: async (ctx) => {
      const settings = await appInterfaceSettings(await ctx.client(gqlClient));
      return createSecretReader({ useVault: settings.vault, config, redactor });
    },
    // As the CLI: the APP_INTERFACE_STATE_* variables, then config.toml's [state].
    state: stateStoreForRun(),
    finally: (ctx) => dumpQueriedSchemas(ctx),
  });
  await new Promise<void>((r) => log.flush(() => r()));
  return { exitCode: result.exitCode, logLines, errorLines, firstError, actions: result.actions };
}

/** The values the CLI gives options nobody set. */
function defaultOptions(definition: AnyIntegration): OptionValues {
  const out: Record<string, unknown> = {};
  for (const [key, spec] of Object.entries(definition.options as OptionSpecs)) {
    if (spec.type === 'list') out[key] = [];
    else if (spec.type === 'tristate' || spec.type === 'argument') out[key] = undefined;
    else out[key] = spec.default;
  }
  return out as OptionValues;
}
