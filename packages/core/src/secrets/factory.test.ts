import { type FakeVault, startFakeVault } from '@qontract/testing/fake-vault';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configFromObject } from '../config.ts';
import { ConfigError } from '../errors.ts';
import { SecretRedactor } from '../redaction.ts';
import { ConfigSecretReader } from './config-reader.ts';
import { createSecretReader, vaultAuthFromConfig } from './factory.ts';
import { DEFAULT_KUBE_SA_TOKEN_PATH } from './vault-client.ts';
import { VaultSecretReader } from './vault-reader.ts';

let vault: FakeVault;

beforeAll(async () => {
  vault = await startFakeVault({
    mounts: { 'app-sre': { version: 2 } },
    approle: { roleId: 'r-1', secretId: 's-1-secret' },
  });
  vault.put('app-sre/a', { f: 'from-vault' });
});

afterAll(() => vault.close());

const withVault = (vaultSection: Record<string, string>) =>
  configFromObject({
    graphql: { server: 'file://x' },
    vault: vaultSection,
    app: { s: { f: 'v' } },
  });

describe('createSecretReader', () => {
  it('reads from config.toml when Vault is off', async () => {
    const reader = createSecretReader({
      useVault: false,
      config: withVault({ server: 'http://unused' }),
      redactor: new SecretRedactor(),
    });
    expect(reader).toBeInstanceOf(ConfigSecretReader);
    await expect(reader.read({ path: 'app/s', field: 'f' })).resolves.toBe('v');
  });

  it('reads from Vault when on, logging in with [vault] AppRole settings', async () => {
    const reader = createSecretReader({
      useVault: true,
      config: withVault({ server: vault.url, role_id: 'r-1', secret_id: 's-1-secret' }),
      redactor: new SecretRedactor(),
    });
    expect(reader).toBeInstanceOf(VaultSecretReader);
    await expect(reader.read({ path: 'app-sre/a', field: 'f' })).resolves.toBe('from-vault');
  });

  it('uses VAULT_TOKEN when [vault] has no credentials', async () => {
    const reader = createSecretReader({
      useVault: true,
      config: withVault({ server: vault.url }),
      redactor: new SecretRedactor(),
      env: { VAULT_TOKEN: vault.rootToken },
    });
    await expect(reader.readAll({ path: 'app-sre/a' })).resolves.toEqual({ f: 'from-vault' });
  });

  it('fails clearly when Vault is on but config.toml has no [vault]', () => {
    expect(() =>
      createSecretReader({
        useVault: true,
        config: configFromObject({ graphql: { server: 'file://x' } }),
        redactor: new SecretRedactor(),
      }),
    ).toThrow(
      new ConfigError(
        'app-interface settings enable Vault (vault: true), but config.toml has no [vault] section',
      ),
    );
  });
});

describe('vaultAuthFromConfig', () => {
  it('prefers AppRole, then Kubernetes, then a token', () => {
    expect(
      vaultAuthFromConfig({ server: 's', role_id: 'r', secret_id: 's', kube_auth_role: 'k' }, {}),
    ).toEqual({ method: 'approle', roleId: 'r', secretId: 's' });
    expect(vaultAuthFromConfig({ server: 's', kube_auth_role: 'k', token: 't' }, {})).toEqual({
      method: 'kubernetes',
      role: 'k',
      mount: 'kubernetes',
      jwtPath: DEFAULT_KUBE_SA_TOKEN_PATH,
    });
    expect(
      vaultAuthFromConfig(
        { server: 's', kube_auth_role: 'k', kube_auth_mount: 'k8s-prod' },
        { KUBE_SA_TOKEN_PATH: '/tmp/jwt' },
      ),
    ).toEqual({ method: 'kubernetes', role: 'k', mount: 'k8s-prod', jwtPath: '/tmp/jwt' });
    expect(vaultAuthFromConfig({ server: 's', token: 'cfg' }, { VAULT_TOKEN: 'env' })).toEqual({
      method: 'token',
      token: 'cfg',
    });
  });

  it('names the options when there are no credentials', () => {
    expect(() => vaultAuthFromConfig({ server: 's' }, {})).toThrow(/VAULT_TOKEN/);
  });
});
