import { SecretRedactor, VaultSecretReader } from '@qontract/core';
import { type FakeVault, startFakeVault } from '@qontract/testing/fake-vault';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { vaultOutputPaths, writeTokensToVault } from './vault-output.ts';

let vault: FakeVault;
beforeAll(async () => {
  vault = await startFakeVault({ mounts: { 'app-sre': { version: 2 }, legacy: { version: 1 } } });
});
afterAll(async () => vault.close());

const writer = () =>
  new VaultSecretReader({
    server: vault.url,
    auth: { method: 'token', token: vault.rootToken },
    redactor: new SecretRedactor(),
    retryDelayMs: 1,
  });

const output = {
  cluster: 'c1',
  namespace: 'app',
  name: 'c1-obs-reader',
  data: { token: 'c2VjcmV0' },
};

describe('vault output', () => {
  it('publishes per namespace and under shared-resources, as upstream', () => {
    expect(
      vaultOutputPaths('app-sre/integrations-output', 'openshift-serviceaccount-tokens', output),
    ).toEqual([
      'app-sre/integrations-output/openshift-serviceaccount-tokens/c1/app/c1-obs-reader',
      'app-sre/integrations-output/openshift-serviceaccount-tokens/shared-resources/c1-obs-reader',
    ]);
  });

  it('writes the decoded token, and nothing again when it is unchanged (KV v2)', async () => {
    await writeTokensToVault(writer(), 'app-sre/out', 'openshift-serviceaccount-tokens', [output]);
    expect(vault.get('app-sre/out/openshift-serviceaccount-tokens/c1/app/c1-obs-reader')).toEqual({
      token: 'secret',
    });
    expect(
      vault.get('app-sre/out/openshift-serviceaccount-tokens/shared-resources/c1-obs-reader'),
    ).toEqual({
      token: 'secret',
    });
    vault.resetLog();
    await writeTokensToVault(writer(), 'app-sre/out', 'openshift-serviceaccount-tokens', [output]);
    expect(vault.requestLog.filter((r) => r.method === 'POST' || r.method === 'PUT')).toEqual([]);
  });

  it('writes KV v1 mounts too', async () => {
    await writeTokensToVault(writer(), 'legacy/out', 'openshift-serviceaccount-tokens', [output]);
    expect(vault.get('legacy/out/openshift-serviceaccount-tokens/c1/app/c1-obs-reader')).toEqual({
      token: 'secret',
    });
  });
});
