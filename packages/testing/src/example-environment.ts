import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type FakeKubeApiServer, startFakeKubeApiServer } from '@qontract/fake-kube-apiserver';
import { parse, stringify } from 'smol-toml';

/** The repository's example app-interface and config (the README demo's data). */
const EXAMPLES_DIR = resolve(import.meta.dirname, '../../../examples');

export interface ExampleEnvironment {
  readonly server: FakeKubeApiServer;
  /** The config.toml to pass with `--config`. */
  readonly configPath: string;
  /** The copy of `examples/app-interface` the config points at (tests may edit it). */
  readonly appInterfaceDir: string;
  readonly dir: string;
  close(): Promise<void>;
}

export interface ExampleEnvironmentOptions {
  /** Latency added to every API request. */
  readonly latencyMs?: number;
  /** Clusters not started (their URL then refuses connections: an unreachable cluster). */
  readonly down?: readonly string[];
  /** Clusters served without the OpenShift API groups; default: names ending in `-k8s`. */
  readonly kubernetesOnly?: (name: string) => boolean;
}

/**
 * Simulated clusters for every `[clusters.<name>]` table of
 * `examples/config.toml`, on random ports, and a copy of the example
 * app-interface whose cluster `serverUrl`s (and the config's `server` keys)
 * point at them. Everything lives in a temporary directory removed by close().
 */
export async function startExampleEnvironment(
  options: ExampleEnvironmentOptions = {},
): Promise<ExampleEnvironment> {
  const dir = await mkdtemp(join(tmpdir(), 'qr-example-'));
  const config = parse(await readFile(join(EXAMPLES_DIR, 'config.toml'), 'utf8')) as Record<
    string,
    unknown
  >;
  const clusterTables = (config.clusters ?? {}) as Record<
    string,
    { server: string; token: string }
  >;
  const names = Object.keys(clusterTables);
  const isK8s = options.kubernetesOnly ?? ((n: string) => n.endsWith('-k8s'));
  const server = await startFakeKubeApiServer({
    clusters: names.map((name) => ({
      name,
      token: clusterTables[name]!.token,
      openshift: !isK8s(name),
    })),
    latencyMs: options.latencyMs ?? 0,
  });
  const urlMap = new Map<string, string>();
  for (const name of names) {
    const url = server.cluster(name).url;
    urlMap.set(clusterTables[name]!.server, url);
    clusterTables[name]!.server = url;
  }
  for (const name of options.down ?? []) await server.faults.down(name);

  const appInterfaceDir = join(dir, 'app-interface');
  await cp(join(EXAMPLES_DIR, 'app-interface'), appInterfaceDir, { recursive: true });
  for (const file of await listFiles(join(appInterfaceDir, 'data'))) {
    const text = await readFile(file, 'utf8');
    let out = text;
    for (const [from, to] of urlMap) out = out.replaceAll(from, to);
    if (out !== text) await writeFile(file, out);
  }
  const configPath = join(dir, 'config.toml');
  config.graphql = { ...(config.graphql as object), server: `file://${appInterfaceDir}` };
  await writeFile(configPath, stringify(config));
  return {
    server,
    configPath,
    appInterfaceDir,
    dir,
    async close() {
      await server.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function listFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) out.push(join(entry.parentPath, entry.name));
  }
  return out;
}

/**
 * Replaces text in every data file of an app-interface copy: points the
 * example's service URLs (GitLab, the registry) at the fakes of a test.
 */
export async function rewriteAppInterface(
  appInterfaceDir: string,
  replacements: Readonly<Record<string, string>>,
): Promise<void> {
  for (const file of await listFiles(join(appInterfaceDir, 'data'))) {
    const text = await readFile(file, 'utf8');
    let out = text;
    for (const [from, to] of Object.entries(replacements)) out = out.replaceAll(from, to);
    if (out !== text) await writeFile(file, out);
  }
}
