import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { type FakeKubeApiServer, startFakeKubeApiServer } from '@qontract/fake-kube-apiserver';
import { parse } from 'smol-toml';

export const REPO_ROOT = resolve(import.meta.dirname, '../../..');
export const EXAMPLE_CONFIG = resolve(REPO_ROOT, 'examples/config.toml');
const BIN = resolve(REPO_ROOT, 'packages/cli/bin/qontract-reconcile.js');

/**
 * Starts the simulated clusters `examples/config.toml` names, on the ports of
 * their `server` URLs, with their tokens. Names ending in `-k8s` are plain
 * Kubernetes, the others OpenShift.
 */
export async function startExampleClusters(
  configPath = EXAMPLE_CONFIG,
): Promise<FakeKubeApiServer> {
  const config = parse(await readFile(configPath, 'utf8')) as {
    clusters?: Record<string, { server: string; token: string }>;
  };
  const clusters = Object.entries(config.clusters ?? {}).map(([name, c]) => ({
    name,
    token: c.token,
    openshift: !name.endsWith('-k8s'),
    port: Number(new URL(c.server).port),
  }));
  try {
    return await startFakeKubeApiServer({ clusters });
  } catch (e) {
    throw new Error(
      `cannot start the simulated clusters on ports ${clusters.map((c) => c.port).join(', ')}: ${(e as Error).message}`,
    );
  }
}

/** Runs `qontract-reconcile ARGS` as a user would, with readable logs; resolves with its exit code. */
export function runQontractReconcile(
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
): Promise<number> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      stdio: 'inherit',
      env: { ...process.env, LOG_FORMAT: 'text', ...env },
    });
    child.on('error', fail);
    child.on('exit', (code) => done(code ?? 1));
  });
}
