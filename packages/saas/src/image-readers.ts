import type { RunContext } from '@qontract/core';
import {
  createImageLookup,
  type ImageAuth,
  type ImageLookup,
  imageAuthFromSecret,
  RegistryClient,
} from './registry.ts';
import type { RequestLimit } from './sources.ts';

/** The registry reads of one run: one client and lookup cache, each saas file's credentials. */
export interface RunImageReaders {
  readonly lookup: ImageLookup;
  /** The saas file's `authentication.image` credentials, read once per run when first needed. */
  imageAuth(saasFile: {
    readonly name: string;
    readonly authentication?: {
      readonly image?: { readonly path: string; readonly version?: number | null } | null;
    } | null;
  }): Promise<ImageAuth>;
}

/**
 * The registry client of a run (openshift-saas-deploy and the images trigger):
 * retries logged as warnings, each manifest request counted under the
 * original's metric and labels (`shard` is SHARDS).
 */
export function imageReadersForRun(
  ctx: RunContext,
  /** Pools the manifest requests and the credential reads wait in (none: unbounded). */
  limits: { readonly registry?: RequestLimit; readonly vault?: RequestLimit } = {},
): RunImageReaders {
  const vault: RequestLimit = limits.vault ?? ((request) => request());
  const registry = new RegistryClient({
    signal: ctx.signal,
    onRetry: (message) => ctx.log.warn(message),
    onManifestRequest: (host) =>
      ctx.metrics.registryGetManifest.inc({
        integration: ctx.integration,
        shard: String(ctx.shard.shards),
        shard_id: String(ctx.shard.shardId),
        registry: host,
      }),
  });
  const auths = new Map<string, Promise<ImageAuth>>();
  return {
    lookup: createImageLookup(registry, limits.registry),
    imageAuth(saasFile) {
      let auth = auths.get(saasFile.name);
      if (!auth) {
        const secret = saasFile.authentication?.image ?? null;
        auth = secret
          ? vault(() =>
              ctx.secrets.readAll({ path: secret.path, version: secret.version ?? null }),
            ).then((fields) => imageAuthFromSecret(fields, secret.path, (m) => ctx.log.warn(m)))
          : Promise.resolve({});
        auths.set(saasFile.name, auth);
      }
      return auth;
    },
  };
}
