import { type FakeKubeApiServer, startFakeKubeApiServer } from '@qontract/fake-kube-apiserver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeClient } from './kube-client.ts';

let server: FakeKubeApiServer;
let client: KubeClient;

beforeAll(async () => {
  server = await startFakeKubeApiServer({
    clusters: [{ name: 'c1', token: 'tok-c1', openshift: true }],
  });
  const c = server.cluster('c1');
  const caData = server.kubeconfigObject().clusters[0]!.cluster['certificate-authority-data'];
  client = new KubeClient({ name: 'c1', server: c.url, token: c.token, caData });
});
afterAll(async () => server.close());

describe('discovery', () => {
  it('uses aggregated discovery: two requests for the whole catalog', async () => {
    server.resetLog();
    const catalog = await client.discover();
    expect(
      server
        .requests({ cluster: 'c1' })
        .map((r) => r.path.split('?')[0])
        .sort(),
    ).toEqual(['/api', '/apis']);
    expect(catalog.get('Deployment')).toMatchObject({
      group: 'apps',
      version: 'v1',
      name: 'deployments',
      namespaced: true,
    });
    expect(catalog.get('Namespace').namespaced).toBe(false);
    expect(catalog.get('Route')).toMatchObject({ group: 'route.openshift.io', name: 'routes' });
  });
});

describe('legacy discovery (servers without aggregated discovery)', () => {
  it('reads /api/v1, /apis and each group version', async () => {
    const { createServer } = await import('node:http');
    const docs: Record<string, unknown> = {
      '/api': { kind: 'APIVersions', versions: ['v1'] },
      '/apis': {
        kind: 'APIGroupList',
        groups: [
          { name: 'apps', preferredVersion: { version: 'v1' }, versions: [{ version: 'v1' }] },
        ],
      },
      '/api/v1': {
        resources: [
          { name: 'configmaps', kind: 'ConfigMap', namespaced: true },
          { name: 'pods/log', kind: 'Pod', namespaced: true },
        ],
      },
      '/apis/apps/v1': {
        resources: [{ name: 'deployments', kind: 'Deployment', namespaced: true }],
      },
    };
    const seen: string[] = [];
    const stub = createServer((req, res) => {
      const path = (req.url ?? '').split('?')[0]!;
      seen.push(path);
      res
        .writeHead(docs[path] ? 200 : 404, { 'Content-Type': 'application/json' })
        .end(JSON.stringify(docs[path] ?? {}));
    });
    await new Promise<void>((r) => stub.listen(0, '127.0.0.1', () => r()));
    try {
      const { port } = stub.address() as { port: number };
      const legacy = new KubeClient({
        name: 'old',
        server: `http://127.0.0.1:${port}`,
        token: 't',
        insecureSkipTLSVerify: true,
      });
      const catalog = await legacy.discover();
      expect(catalog.get('ConfigMap')).toMatchObject({
        group: '',
        version: 'v1',
        name: 'configmaps',
      });
      expect(catalog.get('Deployment')).toMatchObject({ group: 'apps', name: 'deployments' });
      expect(catalog.size).toBe(2);
      expect(seen.sort()).toEqual(['/api', '/api/v1', '/apis', '/apis/apps/v1']);
    } finally {
      stub.close();
    }
  });
});
