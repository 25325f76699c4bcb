import { createHash } from 'node:crypto';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { ClientKey, RunContext } from '@qontract/core';

/** Where the desired state comes from, as watch mode needs it: has it changed, and a run reading the new one. */
export interface BundleSource {
  /** An identity of the current bundle; undefined when it cannot be read now. */
  version(): Promise<string | undefined>;
  /** A view of `ctx` whose app-interface client reads the current bundle; close it when done. */
  open(ctx: RunContext): Promise<{ readonly ctx: RunContext; close(): Promise<void> }>;
}

/**
 * The app-interface bundle of the run's config: qontract-server's `/sha256`
 * for a remote server (the bundle the next run would pin), a signature of the
 * files (path, size, mtime) for the embedded engine's directory or bundle file.
 * app-interface is imported on first use: runs without `--watch` never load it here.
 */
export async function appInterfaceBundle(ctx: RunContext): Promise<BundleSource> {
  const ai = await import('@qontract/app-interface');
  const backend = ai.parseBackendSpec(ctx.config.graphql.server, ctx.config.sourcePath);
  const version =
    backend.kind === 'embedded'
      ? () => filesSignature(backend.source)
      : () => remoteSha(backend.url, ctx.config.graphql.token, ctx.signal);
  return {
    version: () => version().catch(() => undefined),
    open: async (runCtx) => {
      const gql = await ai.createRunGqlClient(runCtx);
      const view: RunContext = {
        ...runCtx,
        client: <T>(key: ClientKey<T>): Promise<T> =>
          key.id === ai.gqlClient.id ? Promise.resolve(gql as T) : runCtx.client(key),
      };
      return { ctx: view, close: () => gql.close() };
    },
  };
}

async function remoteSha(
  server: string,
  token: string | undefined,
  signal: AbortSignal,
): Promise<string | undefined> {
  const url = new URL('/sha256', new URL(server).origin);
  const response = await fetch(url, {
    headers: token ? { Authorization: token } : {},
    signal: AbortSignal.any([signal, AbortSignal.timeout(10_000)]),
  });
  if (response.status !== 200) return undefined;
  const sha = (await response.text()).trim();
  return /^[0-9a-f]{64}$/i.test(sha) ? sha : undefined;
}

/** sha256 over every file's relative path, size and modification time. */
async function filesSignature(root: string): Promise<string> {
  const hash = createHash('sha256');
  const top = await stat(root);
  if (!top.isDirectory()) {
    hash.update(`${top.size}:${top.mtimeMs}`);
    return hash.digest('hex');
  }
  const walk = async (dir: string, prefix: string): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      const path = join(dir, e.name);
      if (e.isDirectory()) await walk(path, `${prefix}${e.name}/`);
      else if (e.isFile()) {
        const s = await stat(path);
        hash.update(`${prefix}${e.name}\0${s.size}\0${s.mtimeMs}\n`);
      }
    }
  };
  await walk(root, '');
  return hash.digest('hex');
}
