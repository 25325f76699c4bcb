import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import type { Config } from '../config.ts';
import type { RunContext } from '../integration.ts';
import type { SecretRedactor } from '../redaction.ts';
import type { SecretPathRef, SecretReader } from '../secrets/types.ts';
import { LocalDirStateStore } from './local-state-store.ts';
import { StateInaccessibleError, type StateStore } from './types.ts';

/** Where S3 credentials come from. */
type AwsCredentialSource =
  | { readonly kind: 'profile'; readonly profile: string; readonly configFile: string }
  | { readonly kind: 'static'; readonly accessKeyId: string; readonly secretAccessKey: string }
  /** The SDK's default chain (environment, shared files, instance roles). */
  | { readonly kind: 'default' };

export type StateSettings =
  | {
      readonly provider: 's3';
      readonly bucket: string;
      readonly region: string;
      readonly endpoint?: string | undefined;
      readonly credentials: AwsCredentialSource;
      /** Which option was used, for the log (never a credential). */
      readonly source: string;
    }
  | { readonly provider: 'local'; readonly path: string; readonly source: string };

/** An app-interface AWS account's automation credentials (option 4). */
interface AccountCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  /** The account's `resourcesDefaultRegion`, used when no region is given. */
  readonly region?: string | undefined;
}

/** app-interface settings' `state` section (option 6). */
interface AppInterfaceStateSettings {
  readonly provider: string;
  readonly bucket?: string | undefined;
  readonly region?: string | undefined;
  /** A Vault secret with `aws_access_key_id` and `aws_secret_access_key`. */
  readonly credentials?: SecretPathRef | undefined;
}

export interface ResolveStateOptions {
  /** Looks up an app-interface AWS account by name; undefined when unknown. Needs GraphQL. */
  readonly accountCredentials?: (account: string) => Promise<AccountCredentials | undefined>;
  /** app-interface settings' `state`, when any. Needs GraphQL. */
  readonly appInterfaceSettings?: () => Promise<AppInterfaceStateSettings | undefined>;
  /** Static secret keys read along the way are registered here. */
  readonly redactor?: SecretRedactor | undefined;
}

const OPTIONS_HELP = [
  'APP_INTERFACE_STATE_BUCKET, APP_INTERFACE_STATE_BUCKET_REGION and APP_INTERFACE_STATE_AWS_PROFILE (profile in AWS_CONFIG_FILE, default ~/.aws/config)',
  'APP_INTERFACE_STATE_BUCKET, APP_INTERFACE_STATE_BUCKET_REGION and APP_INTERFACE_STATE_VAULT_SECRET (optionally APP_INTERFACE_STATE_VAULT_SECRET_VERSION)',
  'APP_INTERFACE_STATE_BUCKET, APP_INTERFACE_STATE_BUCKET_REGION, APP_INTERFACE_STATE_BUCKET_ACCESS_KEY_ID and APP_INTERFACE_STATE_BUCKET_SECRET_ACCESS_KEY',
  'APP_INTERFACE_STATE_BUCKET and APP_INTERFACE_STATE_BUCKET_ACCOUNT (an app-interface AWS account)',
  '[state] in config.toml: provider = "s3" with bucket and region (endpoint optional), or provider = "local" with path',
  'app-interface settings: state with provider s3',
];

/**
 * Finds where the state lives, trying the original's options in its order
 * (upstream `reconcile/utils/state.py` `init_state()`), with our `[state]`
 * config section between the environment and the app-interface settings;
 * fails with StateInaccessibleError listing them all.
 */
export async function resolveStateSettings(
  env: Readonly<Record<string, string | undefined>>,
  config: Pick<Config, 'state' | 'sourcePath'>,
  secretReader: SecretReader,
  options: ResolveStateOptions = {},
): Promise<StateSettings> {
  const bucket = env.APP_INTERFACE_STATE_BUCKET;
  const region = env.APP_INTERFACE_STATE_BUCKET_REGION;
  const profile = env.APP_INTERFACE_STATE_AWS_PROFILE;
  const configFile = env.AWS_CONFIG_FILE || join(homedir(), '.aws', 'config');
  const vaultSecret = env.APP_INTERFACE_STATE_VAULT_SECRET;
  const accessKeyId = env.APP_INTERFACE_STATE_BUCKET_ACCESS_KEY_ID;
  const secretAccessKey = env.APP_INTERFACE_STATE_BUCKET_SECRET_ACCESS_KEY;
  const account = env.APP_INTERFACE_STATE_BUCKET_ACCOUNT;

  if (bucket && region && profile && existsSync(configFile)) {
    return {
      provider: 's3',
      bucket,
      region,
      credentials: { kind: 'profile', profile, configFile },
      source: 'APP_INTERFACE_STATE_AWS_PROFILE',
    };
  }
  if (bucket && region && vaultSecret) {
    const versionText = env.APP_INTERFACE_STATE_VAULT_SECRET_VERSION;
    const version = versionText ? Number.parseInt(versionText, 10) : undefined;
    if (version !== undefined && Number.isNaN(version)) {
      throw new StateInaccessibleError(
        `APP_INTERFACE_STATE_VAULT_SECRET_VERSION must be a number, got '${versionText}'`,
      );
    }
    const credentials = await credentialsFromSecret(secretReader, { path: vaultSecret, version });
    return {
      provider: 's3',
      bucket,
      region,
      credentials,
      source: 'APP_INTERFACE_STATE_VAULT_SECRET',
    };
  }
  if (bucket && region && accessKeyId && secretAccessKey) {
    options.redactor?.add(secretAccessKey);
    return {
      provider: 's3',
      bucket,
      region,
      credentials: { kind: 'static', accessKeyId, secretAccessKey },
      source: 'APP_INTERFACE_STATE_BUCKET_ACCESS_KEY_ID',
    };
  }
  if (bucket && account) {
    const creds = options.accountCredentials
      ? await options.accountCredentials(account)
      : undefined;
    if (!creds) {
      throw new StateInaccessibleError(
        `APP_INTERFACE_STATE_BUCKET_ACCOUNT names the AWS account '${account}', which app-interface does not define`,
      );
    }
    const accountRegion = region || creds.region;
    if (!accountRegion) {
      throw new StateInaccessibleError(
        `no region for the state bucket: set APP_INTERFACE_STATE_BUCKET_REGION or the account's resourcesDefaultRegion`,
      );
    }
    options.redactor?.add(creds.secretAccessKey);
    return {
      provider: 's3',
      bucket,
      region: accountRegion,
      credentials: {
        kind: 'static',
        accessKeyId: creds.accessKeyId,
        secretAccessKey: creds.secretAccessKey,
      },
      source: 'APP_INTERFACE_STATE_BUCKET_ACCOUNT',
    };
  }
  const fromConfig = settingsFromConfig(config, options.redactor);
  if (fromConfig) return fromConfig;

  const appInterface = options.appInterfaceSettings
    ? await options.appInterfaceSettings()
    : undefined;
  if (appInterface) {
    if (appInterface.provider !== 's3') {
      throw new StateInaccessibleError(
        `app-interface settings use the state provider '${appInterface.provider}'; only s3 is supported`,
      );
    }
    if (!appInterface.bucket || !appInterface.region || !appInterface.credentials) {
      throw new StateInaccessibleError(
        'app-interface settings state (s3) needs bucket, region and credentials',
      );
    }
    return {
      provider: 's3',
      bucket: appInterface.bucket,
      region: appInterface.region,
      credentials: await credentialsFromSecret(secretReader, appInterface.credentials),
      source: 'app-interface settings',
    };
  }
  throw new StateInaccessibleError(
    `no state store is configured; set one of:\n${OPTIONS_HELP.map((o) => `  - ${o}`).join('\n')}`,
  );
}

function settingsFromConfig(
  config: Pick<Config, 'state' | 'sourcePath'>,
  redactor: SecretRedactor | undefined,
): StateSettings | undefined {
  const section = config.state;
  if (!section) return undefined;
  const provider = section.provider ?? (section.bucket ? 's3' : section.path ? 'local' : undefined);
  if (provider === 'local') {
    if (!section.path) throw new StateInaccessibleError('[state] provider = "local" needs path');
    const base = config.sourcePath ? dirname(config.sourcePath) : '.';
    const path = isAbsolute(section.path) ? section.path : resolve(base, section.path);
    return { provider: 'local', path, source: '[state] in config.toml' };
  }
  if (provider === 's3') {
    if (!section.bucket || !section.region) {
      throw new StateInaccessibleError('[state] provider = "s3" needs bucket and region');
    }
    const keyId = stringField(section, 'access_key_id');
    const secret = stringField(section, 'secret_access_key');
    if (secret) redactor?.add(secret);
    return {
      provider: 's3',
      bucket: section.bucket,
      region: section.region,
      endpoint: section.endpoint,
      credentials:
        keyId && secret
          ? { kind: 'static', accessKeyId: keyId, secretAccessKey: secret }
          : { kind: 'default' },
      source: '[state] in config.toml',
    };
  }
  return undefined;
}

function stringField(section: object, key: string): string | undefined {
  const value = (section as Record<string, unknown>)[key];
  return typeof value === 'string' && value ? value : undefined;
}

async function credentialsFromSecret(
  reader: SecretReader,
  ref: SecretPathRef,
): Promise<AwsCredentialSource> {
  const data = await reader.readAll(ref);
  const accessKeyId = data.aws_access_key_id;
  const secretAccessKey = data.aws_secret_access_key;
  if (!accessKeyId || !secretAccessKey) {
    throw new StateInaccessibleError(
      `state credentials secret ${ref.path} needs the fields aws_access_key_id and aws_secret_access_key`,
    );
  }
  return { kind: 'static', accessKeyId, secretAccessKey };
}

/** Opens the store the settings describe (checks the S3 bucket, creates the local directory). */
export async function openStateStore(
  integration: string,
  settings: StateSettings,
): Promise<StateStore> {
  if (settings.provider === 'local') {
    return LocalDirStateStore.open({ integration, directory: settings.path });
  }
  const creds = settings.credentials;
  // The AWS SDK is loaded only when a run really uses S3 state (it is slow to import).
  const { createS3Client, S3StateStore } = await import('./s3-state-store.ts');
  const client = createS3Client({
    bucket: settings.bucket,
    region: settings.region,
    endpoint: settings.endpoint,
    credentials:
      creds.kind === 'static'
        ? { accessKeyId: creds.accessKeyId, secretAccessKey: creds.secretAccessKey }
        : creds.kind === 'profile'
          ? (await import('@aws-sdk/credential-provider-ini')).fromIni({
              profile: creds.profile,
              configFilepath: creds.configFile,
            })
          : undefined,
  });
  try {
    return await S3StateStore.open({ integration, bucket: settings.bucket, client });
  } catch (e) {
    client.destroy();
    throw e;
  }
}

/**
 * `RunSettings.state` for the CLI: resolves the settings from the run's
 * environment, config and secret reader, then opens the store for
 * `integration` (the run's integration name unless given; some upstream
 * integrations keep their state under a different name).
 */
export function stateStoreForRun(
  options: ResolveStateOptions & { integration?: string } = {},
): (ctx: RunContext, integration?: string) => Promise<StateStore> {
  return async (ctx, integration) => {
    const settings = await resolveStateSettings(ctx.env.vars, ctx.config, ctx.secrets, {
      redactor: ctx.redactor,
      ...options,
    });
    ctx.log.debug(`state store: ${settings.provider} (from ${settings.source})`);
    // A store asked for by name (another integration's) is that one; else the run's own.
    const own = options.integration ?? ctx.integration;
    return openStateStore(
      integration === undefined || integration === ctx.integration ? own : integration,
      settings,
    );
  };
}
