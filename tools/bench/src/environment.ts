import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
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
 * the GraphQL server answering it (`qontract-bundle serve` in a process of its
 * own, as qontract-server runs apart from the clusters' API servers),
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
  let server: ServedBundle | undefined;
  try {
    const tree = await writeAppInterfaceTree(join(dir, 'app-interface'), scale, endpoints);
    server = await serveBundle(tree.dir);
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

const BUNDLE_BIN = fileURLToPath(new URL('../../bundle/bin/qontract-bundle.js', import.meta.url));

interface ServedBundle {
  readonly url: string;
  close(): Promise<void>;
}

/**
 * `qontract-bundle serve DIR` in a child process. In the benchmark's own
 * process its answers (seconds of CPU for the largest query) would hold up
 * the simulated clusters, which a run reads meanwhile.
 */
async function serveBundle(dir: string): Promise<ServedBundle> {
  const child = spawn(
    process.execPath,
    [BUNDLE_BIN, 'serve', dir, '--port', '0', '--host', '127.0.0.1'],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NODE_OPTIONS: '' } },
  );
  let stdout = '';
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (s: string) => {
      stdout += s;
      const served = /serving bundle \S+ on (\S+)/.exec(stdout);
      if (served) resolve(served[1]!);
    });
    child.once('error', reject);
    void exited.then(() =>
      reject(new Error(`qontract-bundle serve exited ${child.exitCode}: ${stderr.slice(-2000)}`)),
    );
  });
  return {
    url,
    async close() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
