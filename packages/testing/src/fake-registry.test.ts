import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FakeRegistry, startFakeRegistry } from './fake-registry.ts';

const SCHEMA2 = 'application/vnd.docker.distribution.manifest.v2+json';
const LIST = 'application/vnd.docker.distribution.manifest.list.v2+json';
const OCI_INDEX = 'application/vnd.oci.image.index.v1+json';
const ALL = [SCHEMA2, LIST, 'application/vnd.oci.image.manifest.v1+json', OCI_INDEX].join(',');

const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

describe('fake registry (token auth, as Quay)', () => {
  let registry: FakeRegistry;
  beforeEach(async () => {
    registry = await startFakeRegistry({ users: { 'org+robot': 'robot-token' } });
  });
  afterEach(() => registry.close());

  async function token(scope: string | string[], authorization?: string): Promise<string> {
    const scopes = (Array.isArray(scope) ? scope : [scope]).map((s) => `&scope=${s}`).join('');
    const url = `${registry.url}/v2/auth?service=${registry.host}${scopes}`;
    const res = await fetch(
      url,
      authorization ? { headers: { Authorization: authorization } } : {},
    );
    expect(res.status).toBe(200);
    return ((await res.json()) as { token: string }).token;
  }

  it('challenges with the realm, service and scope, then serves with a token', async () => {
    const digest = registry.pushImage('org/app', 'v1');
    const url = `${registry.url}/v2/org/app/manifests/v1`;
    const denied = await fetch(url);
    expect(denied.status).toBe(401);
    expect(denied.headers.get('www-authenticate')).toBe(
      `Bearer realm="${registry.url}/v2/auth",service="${registry.host}",scope="repository:org/app:pull"`,
    );
    expect(await denied.json()).toMatchObject({ errors: [{ code: 'UNAUTHORIZED' }] });

    const t = await token('repository:org/app:pull');
    const got = await fetch(url, { headers: { Authorization: `Bearer ${t}`, Accept: ALL } });
    expect(got.status).toBe(200);
    expect(got.headers.get('docker-content-digest')).toBe(digest);
    expect(got.headers.get('content-type')).toBe(SCHEMA2);
    const body = Buffer.from(await got.arrayBuffer());
    expect(`sha256:${createHash('sha256').update(body).digest('hex')}`).toBe(digest);

    const head = await fetch(url, { method: 'HEAD', headers: { Authorization: `Bearer ${t}` } });
    expect(head.status).toBe(200);
    expect(head.headers.get('docker-content-digest')).toBe(digest);
    expect(head.headers.get('content-length')).toBe(String(body.length));

    const byDigest = await fetch(`${registry.url}/v2/org/app/manifests/${digest}`, {
      headers: { Authorization: `Bearer ${t}` },
    });
    expect(byDigest.headers.get('docker-content-digest')).toBe(digest);
  });

  it('answers 404 with MANIFEST_UNKNOWN and NAME_UNKNOWN, and follows retag / deleteTag', async () => {
    const digest = registry.pushImage('org/app', 'v1');
    const t = await token(['repository:org/app:pull', 'repository:org/none:pull']);
    const get = (path: string) =>
      fetch(`${registry.url}/v2/${path}`, { headers: { Authorization: `Bearer ${t}` } });
    const unknown = await get('org/app/manifests/v2');
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ errors: [{ code: 'MANIFEST_UNKNOWN' }] });
    const noRepo = await get('org/none/manifests/v1');
    expect(await noRepo.json()).toMatchObject({ errors: [{ code: 'NAME_UNKNOWN' }] });

    expect(registry.retag('org/app', 'v1', 'v2')).toBe(digest);
    expect((await get('org/app/manifests/v2')).headers.get('docker-content-digest')).toBe(digest);
    registry.deleteTag('org/app', 'v1');
    expect((await get('org/app/manifests/v1')).status).toBe(404);
    expect((await get(`org/app/manifests/${digest}`)).status).toBe(200);
  });

  it('gives private repositories only to tokens of known users, refusing bad passwords', async () => {
    registry.pushImage('org/secret', 'v1', { private: true });
    const anonymous = await token('repository:org/secret:pull');
    const url = `${registry.url}/v2/org/secret/manifests/v1`;
    const denied = await fetch(url, { headers: { Authorization: `Bearer ${anonymous}` } });
    expect(denied.status).toBe(401);
    expect(denied.headers.get('www-authenticate')).toContain('error="insufficient_scope"');

    const bad = await fetch(`${registry.url}/v2/auth?scope=repository:org/secret:pull`, {
      headers: { Authorization: basic('org+robot', 'wrong') },
    });
    expect(bad.status).toBe(401);

    const robot = await token('repository:org/secret:pull', basic('org+robot', 'robot-token'));
    expect((await fetch(url, { headers: { Authorization: `Bearer ${robot}` } })).status).toBe(200);
    // A token is good for the repositories of its scope only.
    registry.pushImage('org/other', 'v1', { private: true });
    const other = await fetch(`${registry.url}/v2/org/other/manifests/v1`, {
      headers: { Authorization: `Bearer ${robot}` },
    });
    expect(other.status).toBe(401);
  });

  it('negotiates manifest lists and OCI indexes by Accept', async () => {
    const list = registry.pushImage('org/multi', 'v1', { manifest: 'docker-list' });
    const index = registry.pushImage('org/multi', 'oci', { manifest: 'oci-index' });
    const t = await token('repository:org/multi:pull');
    const get = (tag: string, accept?: string) =>
      fetch(`${registry.url}/v2/org/multi/manifests/${tag}`, {
        headers: { Authorization: `Bearer ${t}`, ...(accept ? { Accept: accept } : {}) },
      });

    const asList = await get('v1', ALL);
    expect(asList.headers.get('content-type')).toBe(LIST);
    expect(asList.headers.get('docker-content-digest')).toBe(list);
    const manifests = ((await asList.json()) as { manifests: Array<{ digest: string }> }).manifests;
    expect(manifests).toHaveLength(2);

    // A client that cannot take lists gets the linux/amd64 image.
    const single = await get('v1', SCHEMA2);
    expect(single.headers.get('content-type')).toBe(SCHEMA2);
    expect(single.headers.get('docker-content-digest')).toBe(manifests[0]?.digest);

    expect((await get('oci', ALL)).headers.get('docker-content-digest')).toBe(index);
    const refused = await get('oci', SCHEMA2);
    expect(refused.status).toBe(404);
    expect(await refused.json()).toMatchObject({ errors: [{ code: 'MANIFEST_UNKNOWN' }] });
  });

  it('answers GET /v2/ with a challenge, then 200 with a token', async () => {
    expect((await fetch(`${registry.url}/v2/`)).status).toBe(401);
    const t = await token('');
    expect(
      (await fetch(`${registry.url}/v2/`, { headers: { Authorization: `Bearer ${t}` } })).status,
    ).toBe(200);
  });
});

describe('fake registry (Basic auth)', () => {
  it('asks for Basic credentials for private repositories only', async () => {
    const registry = await startFakeRegistry({ auth: 'basic', users: { alice: 'pw' } });
    try {
      registry.pushImage('pub/app', 'v1');
      registry.pushImage('priv/app', 'v1', { private: true });
      expect((await fetch(`${registry.url}/v2/pub/app/manifests/v1`)).status).toBe(200);
      const denied = await fetch(`${registry.url}/v2/priv/app/manifests/v1`);
      expect(denied.status).toBe(401);
      expect(denied.headers.get('www-authenticate')).toBe('Basic realm="fake-registry"');
      const ok = await fetch(`${registry.url}/v2/priv/app/manifests/v1`, {
        headers: { Authorization: basic('alice', 'pw') },
      });
      expect(ok.status).toBe(200);
    } finally {
      await registry.close();
    }
  });
});
