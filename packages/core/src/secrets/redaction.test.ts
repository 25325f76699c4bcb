import { type FakeVault, startFakeVault } from '@qontract/testing/fake-vault';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../logging.ts';
import { SecretRedactor } from '../redaction.ts';
import { VaultSecretReader } from './vault-reader.ts';

const APPROLE = { roleId: 'role-for-redaction', secretId: 'approle-secret-id-0042' };
const PASSWORD = 'p4ssw0rd-that-must-never-be-logged';
const ENCODED = Buffer.from('decoded-secret-text').toString('base64');

let vault: FakeVault;

beforeAll(async () => {
  vault = await startFakeVault({ mounts: { 'app-sre': { version: 2 } }, approle: APPROLE });
  vault.put('app-sre/db', { password: PASSWORD, encoded: ENCODED });
});

afterAll(() => vault.close());

function capturedLogger(redactor: SecretRedactor, format: 'json' | 'text') {
  const lines: string[] = [];
  const log = createLogger({
    level: 'DEBUG',
    format,
    dryRun: false,
    redactor,
    destination: { write: (s: string) => lines.push(s) },
  });
  return { log, output: () => lines.join('') };
}

describe('secrets never reach the log', () => {
  for (const format of ['json', 'text'] as const) {
    it(`masks values read from Vault, the Vault token and the AppRole secret (${format})`, async () => {
      const redactor = new SecretRedactor();
      const { log, output } = capturedLogger(redactor, format);
      const reader = new VaultSecretReader({
        server: vault.url,
        auth: { method: 'approle', ...APPROLE },
        redactor,
        retryDelayMs: 1,
      });
      const password = await reader.read({ path: 'app-sre/db', field: 'password' });
      const decoded = await reader.read({ path: 'app-sre/db', field: 'encoded', format: 'base64' });
      const token = vault.issuedTokens.at(-1) ?? '';
      expect(token).not.toBe('');

      log.info(`connecting with ${password}`);
      log.info({ detail: { nested: password }, decoded }, `token in use: ${token}`);
      log.error({ err: new Error(`login failed for ${APPROLE.secretId} with ${decoded}`) }, 'boom');
      log.warn(`json-escaped: ${JSON.stringify({ p: password })}`);

      const text = output();
      for (const secret of [password, decoded, token, APPROLE.secretId, ENCODED]) {
        expect(text).not.toContain(secret);
      }
      expect(text).toContain('***');
    });
  }

  it('keeps secret values out of error messages', async () => {
    const redactor = new SecretRedactor();
    const reader = new VaultSecretReader({
      server: vault.url,
      auth: { method: 'approle', roleId: APPROLE.roleId, secretId: 'wrong-secret-id-9999' },
      redactor,
      retryDelayMs: 1,
    });
    const err = (await reader.readAll({ path: 'app-sre/db' }).catch((e: unknown) => e)) as Error;
    expect(err.message).not.toContain('wrong-secret-id-9999');
    const field = (await new VaultSecretReader({
      server: vault.url,
      auth: { method: 'token', token: vault.rootToken },
      redactor,
    })
      .read({ path: 'app-sre/db', field: 'absent' })
      .catch((e: unknown) => e)) as Error;
    expect(field.message).toBe('secret field not found: app-sre/db/absent (version: latest)');
    expect(field.message).not.toContain(PASSWORD);
  });
});
