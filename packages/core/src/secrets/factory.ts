import type { Config } from '../config.ts';
import { ConfigError } from '../errors.ts';
import type { SecretRedactor } from '../redaction.ts';
import { ConfigSecretReader } from './config-reader.ts';
import type { SecretReader } from './types.ts';
import { DEFAULT_KUBE_SA_TOKEN_PATH, type VaultAuth } from './vault-client.ts';
import { VaultSecretReader } from './vault-reader.ts';

export interface CreateSecretReaderOptions {
  /** app-interface settings' `vault` flag: Vault when true, config.toml otherwise. */
  readonly useVault: boolean;
  readonly config: Pick<Config, 'vault' | 'raw'>;
  readonly redactor: SecretRedactor;
  /** The process environment as the CLI read it (`VAULT_TOKEN`, `KUBE_SA_TOKEN_PATH`). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly fetch?: typeof fetch;
  /** Backoff unit between Vault retries in ms (tests set it low). */
  readonly retryDelayMs?: number;
}

/** The original's `create_secret_reader(use_vault)`. */
export function createSecretReader(options: CreateSecretReaderOptions): SecretReader {
  if (!options.useVault) return new ConfigSecretReader(options.config, options.redactor);
  const vault = options.config.vault;
  if (!vault) {
    throw new ConfigError(
      'app-interface settings enable Vault (vault: true), but config.toml has no [vault] section',
    );
  }
  return new VaultSecretReader({
    server: vault.server,
    auth: vaultAuthFromConfig(vault, options.env ?? {}),
    redactor: options.redactor,
    fetch: options.fetch,
    retryDelayMs: options.retryDelayMs,
  });
}

/**
 * Picks the login method from `[vault]`: AppRole when `role_id` and
 * `secret_id` are set, Kubernetes when `kube_auth_role` is, else a token
 * (`[vault] token`, then `VAULT_TOKEN`).
 */
export function vaultAuthFromConfig(
  vault: NonNullable<Config['vault']>,
  env: Readonly<Record<string, string | undefined>>,
): VaultAuth {
  if (vault.role_id && vault.secret_id) {
    return { method: 'approle', roleId: vault.role_id, secretId: vault.secret_id };
  }
  if (vault.kube_auth_role) {
    return {
      method: 'kubernetes',
      role: vault.kube_auth_role,
      mount: vault.kube_auth_mount || 'kubernetes',
      jwtPath: env.KUBE_SA_TOKEN_PATH || DEFAULT_KUBE_SA_TOKEN_PATH,
    };
  }
  const token = vault.token || env.VAULT_TOKEN;
  if (token) return { method: 'token', token };
  throw new ConfigError('[vault] has no credentials', [
    'vault: set role_id and secret_id (AppRole), kube_auth_role (Kubernetes auth), token, or the VAULT_TOKEN environment variable',
  ]);
}
