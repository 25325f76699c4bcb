import { type FakeKubeApiServer, startFakeKubeApiServer } from '@qontract/fake-kube-apiserver';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ClusterMap, type ClusterMapSettings, isClusterProblem } from './cluster-map.ts';

let server: FakeKubeApiServer;

beforeAll(async () => {
  server = await startFakeKubeApiServer({ clusters: [{ name: 'c1', token: 't1' }] });
});
afterAll(async () => server.close());
beforeEach(() => server.faults.clear());

const info = () => ({
  name: 'c1',
  serverUrl: server.cluster('c1').url,
  insecureSkipTLSVerify: true,
  automationToken: { path: 'creds/c1', field: 'token' },
});
const settings = (extra: Partial<ClusterMapSettings> = {}): ClusterMapSettings => ({
  integration: 'test',
  secrets: {
    read: async () => '',
    readAll: async () => ({ server: server.cluster('c1').url, token: server.cluster('c1').token }),
  },
  clientOptions: { backoffMs: 1 },
  ...extra,
});

describe('the reachability check (GET /version)', () => {
  // `/version` is neither a resource nor discovery: the fake server's verb `other`.
  it('is retried after a 503, as lists are', async () => {
    server.faults.set('c1', { verb: 'other', status: 503, times: 1 });
    const map = await ClusterMap.fromClusters([info()], settings());
    expect(map.problems()).toEqual([]);
    expect(isClusterProblem(map.get('c1'))).toBe(false);
  });

  it('is retried after a 429, waiting as Retry-After says', async () => {
    server.faults.set('c1', { verb: 'other', status: 429, retryAfter: 1, times: 1 });
    server.resetLog();
    const map = await ClusterMap.fromClusters([info()], settings());
    expect(map.problems()).toEqual([]);
    const versions = server.requests({ cluster: 'c1' }).filter((r) => r.path === '/version');
    expect(versions.map((r) => r.status)).toEqual([429, 200]);
  });

  it('still makes a cluster that keeps failing a problem of that cluster', async () => {
    server.faults.set('c1', { verb: 'other', status: 503 });
    const map = await ClusterMap.fromClusters(
      [info()],
      settings({ clientOptions: { backoffMs: 1, attempts: 2 } }),
    );
    expect(map.problems().map((p) => p.message)).toEqual([
      '[c1] is unreachable: [c1]: the server is currently unable to handle the request',
    ]);
  });
});

describe('the automation token secret', () => {
  const withSecret = (readAll: () => Promise<Record<string, string>>) =>
    settings({ secrets: { read: async () => '', readAll } });

  it('names an unreachable Vault as such, not as a missing secret', async () => {
    const map = await ClusterMap.fromClusters(
      [info()],
      withSecret(async () => {
        throw new Error('Vault at https://vault.example unreachable: ECONNREFUSED');
      }),
    );
    expect(map.problems().map((p) => p.message)).toEqual([
      '[c1] Vault at https://vault.example unreachable: ECONNREFUSED',
    ]);
  });

  it('names the secret and the missing key when the secret has no server', async () => {
    const map = await ClusterMap.fromClusters(
      [info()],
      withSecret(async () => ({ token: 'not-shown' })),
    );
    const messages = map.problems().map((p) => p.message);
    expect(messages).toEqual([
      `[c1] secret creds/c1 has no key 'server' (expected ${server.cluster('c1').url})`,
    ]);
    expect(messages.join('')).not.toContain('not-shown');
  });

  it('names both URLs when they differ', async () => {
    const map = await ClusterMap.fromClusters(
      [info()],
      withSecret(async () => ({ server: 'https://elsewhere:6443', token: 'not-shown' })),
    );
    expect(map.problems().map((p) => p.message)).toEqual([
      `[c1] server URL mismatch: secret creds/c1 says https://elsewhere:6443, the cluster's serverUrl is ${server.cluster('c1').url}`,
    ]);
  });
});
