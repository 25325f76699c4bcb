import { request } from 'node:https';
import { gunzipSync } from 'node:zlib';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GZIP_THRESHOLD_BYTES } from './http-io.ts';
import { type FakeKubeApiServer, startFakeKubeApiServer } from './server.ts';

let compressing: FakeKubeApiServer;
let plain: FakeKubeApiServer;

// About 2 KiB per ConfigMap: 100 of them make a list well over the threshold.
const configMaps = Array.from({ length: 100 }, (_, i) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: `cm-${i}`, namespace: 'big' },
  data: { payload: `${i}-`.padEnd(2048, 'x') },
}));

beforeAll(async () => {
  [compressing, plain] = await Promise.all([
    startFakeKubeApiServer({ clusters: [{ name: 'c' }], compression: true }),
    startFakeKubeApiServer({ clusters: [{ name: 'c' }] }),
  ]);
  compressing.seed('c', configMaps);
  plain.seed('c', configMaps);
});
afterAll(async () => {
  await Promise.all([compressing.close(), plain.close()]);
});

/** One GET with node's own client, which does not decompress: the bytes on the wire. */
function rawGet(
  server: FakeKubeApiServer,
  path: string,
  acceptEncoding?: string,
): Promise<{ headers: Record<string, unknown>; body: Buffer }> {
  const c = server.cluster('c');
  const url = new URL(c.url + path);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        ca: c.caCertificate,
        headers: {
          Authorization: `Bearer ${c.token}`,
          ...(acceptEncoding ? { 'Accept-Encoding': acceptEncoding } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('response compression (kube-apiserver: gzip from 128 KiB when accepted)', () => {
  const list = '/api/v1/namespaces/big/configmaps';

  it('gzips a large list when the client accepts gzip, and says so', async () => {
    const { headers, body } = await rawGet(compressing, list, 'gzip, deflate');
    expect(headers['content-encoding']).toBe('gzip');
    expect(headers.vary).toBe('Accept-Encoding');
    expect(Number(headers['content-length'])).toBe(body.length);
    const decoded = gunzipSync(body);
    expect(decoded.length).toBeGreaterThanOrEqual(GZIP_THRESHOLD_BYTES);
    const items = (
      JSON.parse(decoded.toString('utf8')) as {
        items: { metadata: { name: string }; data: unknown }[];
      }
    ).items;
    expect(items).toHaveLength(100);
    expect(items.find((cm) => cm.metadata.name === 'cm-7')?.data).toEqual(configMaps[7]?.data);
  });

  it('sends identity bytes when gzip is not accepted, when the answer is small, or when compression is off', async () => {
    for (const [server, path, accept] of [
      [compressing, list, undefined],
      [compressing, list, 'br;q=1, identity'],
      [compressing, '/api/v1/namespaces/big/configmaps/cm-1', 'gzip'],
      [plain, list, 'gzip'],
    ] as const) {
      const { headers, body } = await rawGet(server, path, accept);
      expect(headers['content-encoding'], `${path} ${accept}`).toBeUndefined();
      expect(() => JSON.parse(body.toString('utf8'))).not.toThrow();
    }
  });

  it("reads as the same list through @kubernetes/client-node's own client (fetch decompresses)", async () => {
    const kc = new KubeConfig();
    kc.loadFromString(compressing.kubeconfig());
    const core = kc.makeApiClient(CoreV1Api);
    const page = await core.listNamespacedConfigMap({ namespace: 'big' });
    expect(page.items.map((cm) => cm.metadata?.name)).toEqual(
      [...configMaps.map((cm) => cm.metadata.name)].sort(),
    );
  });
});
