import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadEmbeddedEngine, startBundleServer } from '@qontract/app-interface';
import { type FakeS3, startFakeS3 } from '@qontract/testing/fake-s3';
import { type FakeVault, startFakeVault } from '@qontract/testing/fake-vault';
import { type HttpFake, startHttpFake } from '@qontract/testing/http-fake';
import { parse, stringify } from 'smol-toml';
import { onTestFinished } from 'vitest';
import { editFile } from '../e2e/harness.ts';

/**
 * The environment's app-interface copy served over HTTP the way
 * qontract-server serves it (`qontract-bundle serve`), behind a proxy whose
 * `faults` break it; config.toml's `[graphql] server` points at the proxy.
 * Both close when the test ends.
 */
export async function serveGraphqlBehindProxy(
  appInterfaceDir: string,
  configPath: string,
): Promise<HttpFake> {
  const engine = await loadEmbeddedEngine(appInterfaceDir);
  const upstream = await startBundleServer(engine);
  const proxy = await startHttpFake({
    async handle(req) {
      const response = await fetch(`${upstream.url}${req.url.pathname}${req.url.search}`, {
        method: req.method,
        headers: { 'content-type': 'application/json' },
        ...(req.method === 'POST' ? { body: JSON.stringify(req.body) } : {}),
      });
      return {
        status: response.status,
        body: await response.text(),
        headers: { 'Content-Type': response.headers.get('content-type') ?? 'text/plain' },
      };
    },
  });
  onTestFinished(async () => {
    await proxy.close();
    await upstream.close();
  });
  await setConfig(configPath, (config) => {
    config.graphql = { ...(config.graphql as object), server: `${proxy.url}/graphql` };
  });
  return proxy;
}

async function setConfig(
  configPath: string,
  change: (config: Record<string, unknown>) => void,
): Promise<void> {
  const config = parse(await readFile(configPath, 'utf8')) as Record<string, unknown>;
  change(config);
  await writeFile(configPath, stringify(config));
}

type Table = Record<string, unknown>;
const isTable = (v: unknown): v is Table =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Every table of scalars under `table` with its path (`clusters/appint-ex-01`). */
function leafTables(table: Table, prefix: string[] = []): Array<[string, Record<string, string>]> {
  const out: Array<[string, Record<string, string>]> = [];
  const scalars: Record<string, string> = {};
  for (const [key, value] of Object.entries(table)) {
    if (isTable(value)) out.push(...leafTables(value, [...prefix, key]));
    else if (typeof value === 'string') scalars[key] = value;
  }
  if (prefix.length > 1 && Object.keys(scalars).length > 0) out.push([prefix.join('/'), scalars]);
  return out;
}

const NOT_SECRETS = new Set(['graphql', 'state', 'vault']);

export interface VaultBacked {
  readonly vault: FakeVault;
  /** Every secret value now served by Vault. */
  readonly secrets: readonly string[];
}

/**
 * Switches the environment's app-interface copy to Vault (`vault: true` in
 * the settings) and puts every secret config.toml held into a fake Vault at
 * the same path (KV v2), so that every `{path, field}` reference reads from
 * Vault. config.toml's `[vault]` points at the fake. Closed when the test ends.
 */
export async function moveSecretsToVault(
  appInterfaceDir: string,
  configPath: string,
): Promise<VaultBacked> {
  const config = parse(await readFile(configPath, 'utf8')) as Table;
  const leaves = leafTables(
    Object.fromEntries(Object.entries(config).filter(([k]) => !NOT_SECRETS.has(k))),
  );
  const mounts = Object.fromEntries(
    leaves.map(([path]) => [path.split('/')[0] ?? '', { version: 2 as const }]),
  );
  const vault = await startFakeVault({ mounts });
  // A fault may have closed it already.
  onTestFinished(() => vault.close().catch(() => undefined));
  const secrets: string[] = [];
  for (const [path, data] of leaves) {
    vault.put(path, data);
    for (const [key, value] of Object.entries(data)) {
      if (key !== 'server' && key !== 'host' && key !== 'username') secrets.push(value);
    }
  }
  secrets.push(vault.rootToken);
  await setConfig(configPath, (c) => {
    for (const key of Object.keys(c)) if (!NOT_SECRETS.has(key)) delete c[key];
    c.vault = { server: vault.url, token: vault.rootToken };
  });
  await editFile(join(appInterfaceDir, 'data/app-interface/app-interface-settings.yml'), (t) =>
    t.replace('vault: false', 'vault: true'),
  );
  return { vault, secrets };
}

export interface S3State {
  readonly s3: FakeS3;
  /** The run's environment: the state bucket on the fake, credentials given directly. */
  readonly env: Record<string, string>;
}

/** A fake S3 holding the state bucket; the run finds it through APP_INTERFACE_STATE_*. */
export async function s3State(): Promise<S3State> {
  const s3 = await startFakeS3({ buckets: ['qontract-state'] });
  onTestFinished(() => s3.close().catch(() => undefined));
  return {
    s3,
    env: {
      APP_INTERFACE_STATE_BUCKET: 'qontract-state',
      APP_INTERFACE_STATE_BUCKET_REGION: s3.region,
      APP_INTERFACE_STATE_BUCKET_ACCESS_KEY_ID: s3.credentials.accessKeyId,
      APP_INTERFACE_STATE_BUCKET_SECRET_ACCESS_KEY: s3.credentials.secretAccessKey,
      AWS_ENDPOINT_URL_S3: s3.endpoint,
    },
  };
}
