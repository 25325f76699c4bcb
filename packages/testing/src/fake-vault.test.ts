import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeVault, startFakeVault } from './fake-vault.ts';

let vault: FakeVault;

beforeAll(async () => {
  vault = await startFakeVault({
    mounts: { kv2: { version: 2 }, kv1: { version: 1 } },
    approle: { roleId: 'role', secretId: 'secret' },
    rootToken: 'root-token',
  });
});

afterAll(() => vault.close());

async function call(method: string, path: string, body?: unknown, token = 'root-token') {
  const res = await fetch(`${vault.url}${path}`, {
    method,
    headers: { 'x-vault-token': token },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  // biome-ignore lint/suspicious/noExplicitAny: tests walk Vault's loosely shaped JSON answers
  const json = text ? (JSON.parse(text) as Record<string, any>) : undefined;
  return { status: res.status, body: json };
}

describe('fake Vault HTTP API', () => {
  it('answers like Vault for KV v2 writes, versioned reads and metadata', async () => {
    const write = await call('POST', '/v1/kv2/data/app/x', { data: { a: '1' } });
    expect(write.status).toBe(200);
    expect(write.body?.data.version).toBe(1);
    await call('POST', '/v1/kv2/data/app/x', { data: { a: '2' } });
    const latest = await call('GET', '/v1/kv2/data/app/x');
    expect(latest.body?.data).toMatchObject({ data: { a: '2' }, metadata: { version: 2 } });
    const first = await call('GET', '/v1/kv2/data/app/x?version=1');
    expect(first.body?.data.data).toEqual({ a: '1' });
    expect((await call('GET', '/v1/kv2/data/app/x?version=5')).status).toBe(404);
    expect((await call('GET', '/v1/kv2/metadata/app/x')).body?.data.current_version).toBe(2);
    // Node's HTTP parser has no LIST method; clients use Vault's `?list=true` form.
    expect((await call('GET', '/v1/kv2/metadata/app?list=true')).body?.data.keys).toEqual(['x']);
    expect((await call('GET', '/v1/kv2/config')).body?.data).toHaveProperty('max_versions');
  });

  it('answers like Vault for KV v1 and the mount tune endpoint', async () => {
    expect((await call('POST', '/v1/kv1/a/b', { k: 'v' })).status).toBe(204);
    expect((await call('GET', '/v1/kv1/a/b')).body?.data).toEqual({ k: 'v' });
    expect((await call('GET', '/v1/kv1/config')).status).toBe(404);
    expect((await call('GET', '/v1/sys/mounts/kv1/tune')).body?.data.options).toEqual({
      version: '1',
    });
  });

  it('returns errors bodies: 403 for bad tokens, 404 for missing paths, 400 for bad logins', async () => {
    expect(await call('GET', '/v1/kv1/a/b', undefined, 'bad')).toEqual({
      status: 403,
      body: { errors: ['permission denied'] },
    });
    expect(await call('GET', '/v1/kv1/none')).toEqual({ status: 404, body: { errors: [] } });
    const login = await call('POST', '/v1/auth/approle/login', {
      role_id: 'role',
      secret_id: 'no',
    });
    expect(login).toEqual({ status: 400, body: { errors: ['invalid role or secret ID'] } });
  });

  it('issues tokens on AppRole login that work until expired', async () => {
    const login = await call('POST', '/v1/auth/approle/login', {
      role_id: 'role',
      secret_id: 'secret',
    });
    const token = login.body?.auth.client_token as string;
    expect(login.body?.auth.lease_duration).toBeGreaterThan(0);
    expect((await call('GET', '/v1/auth/token/lookup-self', undefined, token)).status).toBe(200);
    vault.expireIssuedTokens();
    expect((await call('GET', '/v1/auth/token/lookup-self', undefined, token)).status).toBe(403);
  });

  it('logs requests without tokens or bodies and injects transient failures', async () => {
    vault.resetLog();
    vault.failNext(1, 500);
    expect((await call('GET', '/v1/kv1/a/b')).status).toBe(500);
    expect((await call('GET', '/v1/kv1/a/b')).status).toBe(200);
    expect(vault.requestLog).toEqual([
      { method: 'GET', path: '/v1/kv1/a/b', status: 500 },
      { method: 'GET', path: '/v1/kv1/a/b', status: 200 },
    ]);
  });
});
