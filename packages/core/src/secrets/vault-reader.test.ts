import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type FakeVault, startFakeVault } from '@qontract/testing/fake-vault';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SecretRedactor } from '../redaction.ts';
import {
  SecretAccessForbiddenError,
  SecretFieldNotFoundError,
  SecretNotFoundError,
  SecretVersionNotFoundError,
  VaultAuthenticationError,
  VaultConnectionError,
} from './types.ts';
import type { VaultAuth } from './vault-client.ts';
import { VaultSecretReader } from './vault-reader.ts';

const APPROLE = { roleId: 'role-1234', secretId: 'secret-id-5678' };
const KUBE = { role: 'qontract-reconcile', jwt: 'eyJhbGciOi.kube-jwt.signature' };

let vault: FakeVault;
let tmp: string;

beforeAll(async () => {
  vault = await startFakeVault({
    mounts: { 'app-sre': { version: 2 }, 'secret-v1': { version: 1 } },
    approle: APPROLE,
    kubernetes: KUBE,
  });
  tmp = await mkdtemp(join(tmpdir(), 'vault-reader-'));
  vault.put('app-sre/creds/db', { user: 'admin', password: 'first-password' });
  vault.put('app-sre/creds/db', { user: 'admin', password: 'second-password' });
  vault.put('app-sre/encoded', { cert: Buffer.from('-----BEGIN CERT-----').toString('base64') });
  vault.put('secret-v1/legacy', { token: 'legacy-token-value', port: 5432 });
});

afterAll(async () => {
  await vault.close();
  await rm(tmp, { recursive: true, force: true });
});

beforeEach(() => vault.resetLog());

function reader(auth?: VaultAuth, redactor = new SecretRedactor()): VaultSecretReader {
  return new VaultSecretReader({
    server: vault.url,
    auth: auth ?? { method: 'token', token: vault.rootToken },
    redactor,
    retryDelayMs: 1,
  });
}

function requests(pathPart: string): number {
  return vault.requestLog.filter((r) => r.path.includes(pathPart)).length;
}

describe('VaultSecretReader reads', () => {
  it('reads the latest KV v2 version when no version is given', async () => {
    await expect(reader().read({ path: 'app-sre/creds/db', field: 'password' })).resolves.toBe(
      'second-password',
    );
  });

  it('reads an explicit KV v2 version', async () => {
    const r = reader();
    await expect(r.read({ path: 'app-sre/creds/db', field: 'password', version: 1 })).resolves.toBe(
      'first-password',
    );
    expect(vault.requestLog.map((q) => q.path)).toContain('/v1/app-sre/data/creds/db?version=1');
  });

  it('reads KV v1 secrets and ignores the version there', async () => {
    const r = reader();
    await expect(r.read({ path: 'secret-v1/legacy', field: 'token', version: 7 })).resolves.toBe(
      'legacy-token-value',
    );
    expect(await r.kvVersion('secret-v1')).toBe(1);
    expect(await r.kvVersion('app-sre')).toBe(2);
  });

  it('returns whole secrets with readAll, non-string values as JSON text', async () => {
    await expect(reader().readAll({ path: 'secret-v1/legacy' })).resolves.toEqual({
      token: 'legacy-token-value',
      port: '5432',
    });
  });

  it('decodes base64 for single reads only', async () => {
    const r = reader();
    await expect(
      r.read({ path: 'app-sre/encoded', field: 'cert', format: 'base64' }),
    ).resolves.toBe('-----BEGIN CERT-----');
    await expect(r.read({ path: 'app-sre/encoded', field: 'cert', format: 'plain' })).resolves.toBe(
      Buffer.from('-----BEGIN CERT-----').toString('base64'),
    );
    const all = await r.readAll({ path: 'app-sre/encoded' });
    expect(all.cert).toBe(Buffer.from('-----BEGIN CERT-----').toString('base64'));
  });

  it('refuses a value that is not base64 when format is base64', async () => {
    await expect(
      reader().read({ path: 'app-sre/creds/db', field: 'password', format: 'base64' }),
    ).rejects.toThrow(/app-sre\/creds\/db\/password is not valid base64/);
  });

  it('detects the KV version once per mount and caches reads per run', async () => {
    const r = reader();
    await r.read({ path: 'app-sre/creds/db', field: 'user' });
    await r.read({ path: 'app-sre/creds/db', field: 'password' });
    await r.readAll({ path: 'app-sre/creds/db' });
    await r.read({ path: 'app-sre/creds/db', field: 'password', version: 1 });
    expect(requests('/v1/app-sre/config')).toBe(1);
    expect(requests('/v1/app-sre/data/creds/db')).toBe(2);
  });
});

describe('VaultSecretReader KV version detection', () => {
  it('falls back to the mount preflight when the config endpoint is forbidden', async () => {
    const locked = await startFakeVault({ mounts: { locked: { version: 2 } } });
    try {
      locked.forbid('locked/config');
      locked.put('locked/app', { k: 'v2-value' });
      const r = new VaultSecretReader({
        server: locked.url,
        auth: { method: 'token', token: locked.rootToken },
        redactor: new SecretRedactor(),
      });
      expect(await r.kvVersion('locked')).toBe(2);
      await expect(r.read({ path: 'locked/app', field: 'k' })).resolves.toBe('v2-value');
      expect(locked.requestLog.map((q) => q.path)).toContain('/v1/sys/internal/ui/mounts/locked');
    } finally {
      await locked.close();
    }
  });
});

describe('VaultSecretReader errors', () => {
  it('names path, field and version when a field is missing', async () => {
    const err = await reader()
      .read({ path: 'app-sre/creds/db', field: 'nope', version: 2 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SecretFieldNotFoundError);
    expect(err).toBeInstanceOf(SecretNotFoundError);
    expect((err as Error).message).toBe(
      'secret field not found: app-sre/creds/db/nope (version: 2)',
    );
  });

  it('names the path when the secret does not exist', async () => {
    await expect(reader().read({ path: 'app-sre/missing', field: 'x' })).rejects.toThrow(
      new SecretNotFoundError('secret not found: app-sre/missing'),
    );
    await expect(reader().readAll({ path: 'secret-v1/missing' })).rejects.toThrow(
      'secret not found: secret-v1/missing',
    );
  });

  it('raises version-not-found for a missing or deleted explicit version', async () => {
    const r = reader();
    const err = await r.readAll({ path: 'app-sre/creds/db', version: 9 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SecretVersionNotFoundError);
    expect((err as Error).message).toBe(
      "version '9' not found for secret with path 'app-sre/creds/db'",
    );
    vault.put('app-sre/short-lived', { a: 'one' });
    vault.deleteVersion('app-sre/short-lived', 1);
    await expect(r.readAll({ path: 'app-sre/short-lived', version: 1 })).rejects.toBeInstanceOf(
      SecretVersionNotFoundError,
    );
  });

  it('maps 403 to SecretAccessForbiddenError and does not retry it', async () => {
    vault.forbid('app-sre/forbidden');
    vault.put('app-sre/forbidden/x', { a: 'b' });
    await expect(reader().read({ path: 'app-sre/forbidden/x', field: 'a' })).rejects.toThrow(
      new SecretAccessForbiddenError("permission denied accessing secret 'app-sre/forbidden/x'"),
    );
    expect(requests('/v1/app-sre/data/forbidden/x')).toBe(1);
  });

  it('treats a bad static token as forbidden, without logging in', async () => {
    const r = reader({ method: 'token', token: 'hvs.not-a-real-token' });
    await expect(r.read({ path: 'secret-v1/legacy', field: 'token' })).rejects.toBeInstanceOf(
      SecretAccessForbiddenError,
    );
    expect(vault.requestLog.some((q) => q.path.includes('/login'))).toBe(false);
  });

  it('retries transient failures three times with backoff', async () => {
    vault.failNext(2, 503);
    await expect(reader().read({ path: 'secret-v1/legacy', field: 'token' })).resolves.toBe(
      'legacy-token-value',
    );
    vault.resetLog();
    vault.failNext(3, 502);
    const err = await reader()
      .read({ path: 'secret-v1/legacy', field: 'token' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VaultConnectionError);
    expect((err as Error).message).toBe(
      `cannot read secret secret-v1/legacy: Vault at ${vault.url} failed: HTTP 502: injected failure ` +
        '(GET /v1/secret-v1/config, 3 attempts)',
    );
    expect(vault.requestLog).toHaveLength(3);
  });

  it('does not retry a 404', async () => {
    await expect(reader().readAll({ path: 'secret-v1/absent' })).rejects.toBeInstanceOf(
      SecretNotFoundError,
    );
    expect(requests('/v1/secret-v1/absent')).toBe(1);
  });

  it('reports an unreachable Vault as unreachable, naming it and the secret, not as not found', async () => {
    const url = await closedPort();
    const r = new VaultSecretReader({
      server: `${url}/`,
      auth: { method: 'token', token: 'hvs.whatever-token' },
      redactor: new SecretRedactor(),
      retryDelayMs: 1,
    });
    const err = await r.readAll({ path: 'app-sre/x' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VaultConnectionError);
    expect(err).not.toBeInstanceOf(SecretNotFoundError);
    expect((err as Error).message).toBe(
      `cannot read secret app-sre/x: Vault at ${url} unreachable: ECONNREFUSED (GET /v1/app-sre/config, 3 attempts)`,
    );
    expect((err as Error).message).not.toContain('whatever-token');
  });

  it('names Vault and the login when the login cannot reach it', async () => {
    const url = await closedPort();
    const r = new VaultSecretReader({
      server: url,
      auth: { method: 'approle', ...APPROLE },
      redactor: new SecretRedactor(),
      retryDelayMs: 1,
      attempts: 2,
    });
    const err = await r.read({ path: 'app-sre/creds/db', field: 'user' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VaultConnectionError);
    expect((err as Error).message).toBe(
      `cannot read secret app-sre/creds/db: Vault at ${url} unreachable: ECONNREFUSED (POST /v1/auth/approle/login, 2 attempts)`,
    );
    expect((err as Error).message).not.toContain(APPROLE.secretId);
  });

  it('says how long it waited when Vault does not answer', async () => {
    const hanging = createServer(() => {});
    await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}`;
    try {
      const r = new VaultSecretReader({
        server: url,
        auth: { method: 'token', token: 'hvs.whatever-token' },
        redactor: new SecretRedactor(),
        retryDelayMs: 1,
        attempts: 1,
        timeoutMs: 50,
      });
      await expect(r.list('app-sre/creds')).rejects.toThrow(
        `cannot list app-sre/creds: Vault at ${url} unreachable: no answer within 0.05s (GET /v1/app-sre/config, 1 attempt)`,
      );
    } finally {
      hanging.closeAllConnections();
      await new Promise<void>((resolve) => hanging.close(() => resolve()));
    }
  });
});

/** The URL of a port nothing listens on. */
async function closedPort(): Promise<string> {
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const { port } = closed.address() as AddressInfo;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

describe('VaultSecretReader auth', () => {
  it('logs in with AppRole and logs in again when the token expired', async () => {
    const r = reader({ method: 'approle', ...APPROLE });
    const before = vault.issuedTokens.length;
    await expect(r.read({ path: 'secret-v1/legacy', field: 'token' })).resolves.toBe(
      'legacy-token-value',
    );
    expect(vault.issuedTokens.length).toBe(before + 1);
    vault.expireIssuedTokens();
    await expect(r.read({ path: 'app-sre/creds/db', field: 'user' })).resolves.toBe('admin');
    expect(vault.issuedTokens.length).toBe(before + 2);
  });

  it('fails with a clear error for bad AppRole credentials', async () => {
    const r = reader({ method: 'approle', roleId: APPROLE.roleId, secretId: 'wrong-secret-id' });
    const err = await r.readAll({ path: 'secret-v1/legacy' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VaultAuthenticationError);
    expect((err as Error).message).toContain('approle login');
    expect((err as Error).message).toContain('invalid role or secret ID');
    expect((err as Error).message).not.toContain('wrong-secret-id');
  });

  it('logs in with Kubernetes auth and re-reads the JWT file on every login', async () => {
    const jwtPath = join(tmp, 'token');
    await writeFile(jwtPath, `${KUBE.jwt}\n`);
    const r = reader({ method: 'kubernetes', role: KUBE.role, jwtPath });
    await expect(r.read({ path: 'secret-v1/legacy', field: 'token' })).resolves.toBe(
      'legacy-token-value',
    );
    expect(vault.requestLog.map((q) => q.path)).toContain('/v1/auth/kubernetes/login');
    vault.expireIssuedTokens();
    await writeFile(jwtPath, 'a-rotated-but-wrong-jwt');
    await expect(r.read({ path: 'app-sre/creds/db', field: 'user' })).rejects.toBeInstanceOf(
      VaultAuthenticationError,
    );
  });

  it('names the JWT file when it cannot be read', async () => {
    const r = reader({ method: 'kubernetes', role: KUBE.role, jwtPath: join(tmp, 'absent') });
    await expect(r.client.authenticate()).rejects.toThrow(
      `cannot read the Kubernetes service account token at ${join(tmp, 'absent')}: ENOENT`,
    );
  });
});

describe('VaultSecretReader writes', () => {
  it('writes KV v2, skipping unchanged data unless forced, and refreshes the cache', async () => {
    const r = reader();
    await r.write('app-sre/written', { key: 'value-1' });
    expect(vault.get('app-sre/written')).toEqual({ key: 'value-1' });
    await expect(r.read({ path: 'app-sre/written', field: 'key' })).resolves.toBe('value-1');
    const posts = () => vault.requestLog.filter((q) => q.method === 'POST').length;
    const before = posts();
    await r.write('app-sre/written', { key: 'value-1' });
    expect(posts()).toBe(before);
    await r.write('app-sre/written', { key: 'value-1' }, { force: true });
    expect(posts()).toBe(before + 1);
    await r.write('app-sre/written', { key: 'value-2' });
    await expect(r.read({ path: 'app-sre/written', field: 'key' })).resolves.toBe('value-2');
    await expect(r.read({ path: 'app-sre/written', field: 'key', version: 1 })).resolves.toBe(
      'value-1',
    );
  });

  it('writes KV v1 and decodes base64 on request', async () => {
    const r = reader();
    await r.write(
      'secret-v1/written',
      { a: Buffer.from('decoded!').toString('base64') },
      {
        decodeBase64: true,
      },
    );
    expect(vault.get('secret-v1/written')).toEqual({ a: 'decoded!' });
  });

  it('maps a forbidden write to SecretAccessForbiddenError', async () => {
    vault.forbid('secret-v1/locked');
    await expect(reader().write('secret-v1/locked/x', { a: 'b' })).rejects.toThrow(
      "permission denied accessing secret 'secret-v1/locked/x'",
    );
  });
});

describe('VaultSecretReader listing and deleting', () => {
  it('lists KV v2 and v1 folders, and everything below them', async () => {
    vault.put('app-sre/tree/a', { x: '1' });
    vault.put('app-sre/tree/sub/b', { x: '2' });
    vault.put('secret-v1/tree/c', { x: '3' });
    const r = reader();
    expect(await r.list('app-sre/tree')).toEqual(['a', 'sub/']);
    expect(await r.listAll('app-sre/tree')).toEqual(['app-sre/tree/a', 'app-sre/tree/sub/b']);
    expect(await r.list('secret-v1/tree/')).toEqual(['c']);
    expect(await r.list('app-sre/nothing-here')).toEqual([]);
  });

  it('deletes KV v1 secrets only', async () => {
    const r = reader();
    vault.put('secret-v1/doomed', { x: 'y' });
    await r.delete('secret-v1/doomed');
    expect(vault.get('secret-v1/doomed')).toBeUndefined();
    await expect(r.delete('app-sre/tree/a')).rejects.toThrow('only supported on KV v1 mounts');
  });
});
