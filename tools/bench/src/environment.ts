import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BundleServer, loadEmbeddedEngine, startBundleServer } from '@qontract/app-interface';
import { type FakeKubeApiServer, startFakeKubeApiServer } from '@qontract/fake-kube-apiserver';
import { clusterName, type Scale } from './model.ts';
import {
  benchConfigToml,
  type ClusterEndpoint,
  type GeneratedTree,
  writeAppInterfaceTree,
} from './tree.ts';

/**
 * Everything the runs of one scale share: the generated app-interface tree,
 * the GraphQL server answering it (the parent's, like a qontract-server),
 * the config.toml, and fixed ports for the simulated clusters, which every
 * scenario starts afresh with its own state and latency.
 */
export interface ScaleEnvironment {
  readonly scale: Scale;
  readonly tree: GeneratedTree;
  readonly endpoints: readonly ClusterEndpoint[];
  readonly graphqlUrl: string;
  readonly configPath: string;
  startClusters(latencyMs: number): Promise<FakeKubeApiServer>;
  close(): Promise<void>;
}

export async function createScaleEnvironment(scale: Scale): Promise<ScaleEnvironment> {
  const dir = await mkdtemp(join(tmpdir(), 'qr-bench-'));
  const ports = await freePorts(scale.clusters);
  const endpoints: ClusterEndpoint[] = ports.map((port, c) => ({
    name: clusterName(c),
    url: `https://127.0.0.1:${port}`,
    token: `${clusterName(c)}-bench-token`,
  }));
  let server: BundleServer | undefined;
  try {
    const tree = await writeAppInterfaceTree(join(dir, 'app-interface'), scale, endpoints);
    server = await startBundleServer(await loadEmbeddedEngine(tree.dir));
    const configPath = join(dir, 'config.toml');
    await writeFile(configPath, benchConfigToml(server.url, endpoints));
    const bundleServer = server;
    return {
      scale,
      tree,
      endpoints,
      graphqlUrl: server.url,
      configPath,
      startClusters: (latencyMs) =>
        startFakeKubeApiServer({
          clusters: endpoints.map((e, c) => ({
            name: e.name,
            token: e.token,
            openshift: true,
            port: ports[c]!,
          })),
          latencyMs,
          maxLogEntries: 2_000_000,
        }),
      async close() {
        await bundleServer.close();
        await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (e) {
    await server?.close();
    await rm(dir, { recursive: true, force: true });
    throw e;
  }
}

/** Ports the OS says are free now; the scenarios' simulated clusters listen on them. */
async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<ReturnType<typeof createServer>>((resolve, reject) => {
          const s = createServer();
          s.once('error', reject);
          s.listen(0, '127.0.0.1', () => resolve(s));
        }),
    ),
  );
  const ports = servers.map((s) => (s.address() as { port: number }).port);
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  return ports;
}
