import { randomInt } from 'node:crypto';
import { gqlClient } from '@qontract/app-interface';
import {
  commonOptions,
  defineIntegration,
  errorMessage,
  executeActions,
  type RunContext,
} from '@qontract/core';
import {
  appInterfaceBundle,
  type ClusterMap,
  clusterMapForNamespaces,
  type DesiredResource,
  isClusterProblem,
  OpenshiftResource,
  type ReconcileResult,
  reconcileResources,
  runWatchMode,
  type WatchedState,
} from '@qontract/openshift';
import pLimit from 'p-limit';
import { desiredTokenSecrets, type SecretObject } from './desired.ts';
import { type ScopedNamespace, tokenScope } from './scope.ts';
import { ServiceAccountTokensDocument } from './tokens.generated.ts';
import { vaultWriterFor, writeTokensToVault } from './vault-output.ts';

/** The original's module constants: the `qontract.integration` annotation and its version. */
const QONTRACT_INTEGRATION = 'openshift-serviceaccount-tokens';
const QONTRACT_INTEGRATION_VERSION = '0.1.0';
/**
 * Requested token Secrets are annotated with this other identity, so that
 * this integration never updates or deletes them later (the cluster removes
 * them with their ServiceAccount).
 */
const UNMANAGED_INTEGRATION = `${QONTRACT_INTEGRATION}-unmanaged`;
const MANAGED_TYPE = 'Secret';

export const openshiftServiceaccountTokens = defineIntegration({
  name: 'openshift-serviceaccount-tokens',
  version: QONTRACT_INTEGRATION_VERSION,
  description: 'Use OpenShift ServiceAccount tokens across namespaces/clusters.',
  options: {
    threadPoolSize: commonOptions.threadPoolSize(10),
    internal: commonOptions.internal(),
    vaultOutputPath: commonOptions.vaultOutputPath(),
    watch: commonOptions.watch(),
    watchResyncSeconds: commonOptions.watchResyncSeconds(),
  },
  run: async (ctx, opts) => {
    // Tokens written to Vault: after each full reconcile (every run; each new bundle in watch mode).
    const output = async (runCtx: RunContext, result: ReconcileResult) => {
      if (!opts.vaultOutputPath) return;
      await writeVaultOutput(runCtx, result, opts.vaultOutputPath);
    };
    if (opts.watch) {
      // Changes of the source tokens (a rotation) are picked up by the next full resync.
      await runWatchMode({
        ctx,
        prepare: (runCtx) => prepare(runCtx, opts),
        resyncSeconds: opts.watchResyncSeconds,
        bundle: await appInterfaceBundle(ctx),
        afterIteration: (result) => output(ctx, result),
      });
      return;
    }
    const state = await prepare(ctx, opts);
    if (!state) return;
    await output(ctx, await reconcileResources({ ctx, ...state }));
  },
});

interface TokenOptions {
  readonly threadPoolSize: number;
  readonly internal: boolean | undefined;
}

/**
 * What one reconcile of the bundle `ctx` reads manages: the requested token
 * Secrets and the copies of the tokens, from the Secrets of the source
 * namespaces read now. Undefined when no namespace asks for a token.
 */
async function prepare(ctx: RunContext, opts: TokenOptions): Promise<WatchedState | undefined> {
  const gql = await ctx.client(gqlClient);
  const { namespaces } = await gql.query(ServiceAccountTokensDocument);
  const scope = tokenScope(namespaces ?? [], QONTRACT_INTEGRATION);
  for (const key of scope.duplicates) {
    ctx.errors.register(
      key,
      `Found multiple definitions for the namespace ${key}; the first one is used`,
    );
  }
  if (scope.namespaces.length === 0) {
    ctx.log.info('no namespace asks for ServiceAccount tokens; nothing to do');
    return undefined;
  }
  const clusters = await clusterMapForNamespaces(ctx, scope.namespaces, {
    internal: opts.internal,
    concurrency: opts.threadPoolSize,
  });
  const sources = await readSourceSecrets(ctx, clusters, scope.namespaces, opts.threadPoolSize);
  const tokens = desiredTokenSecrets({
    namespaces: scope.namespaces,
    clustersWithClient: new Set(clusters.clusters()),
    secretsOf: (cluster, namespace) => sources.get(`${cluster}/${namespace}`),
    randomSuffix: () => String(randomInt(99999)).padStart(5, '0'),
  });
  for (const s of tokens.secrets) {
    // Tokens are credentials: keep them out of every log line and error message.
    ctx.redactor.add(s.body.data.token);
    ctx.redactor.add(Buffer.from(s.body.data.token, 'base64').toString());
  }
  for (const p of tokens.problems) ctx.errors.register(p.scope, p.message);
  for (const r of tokens.tokenRequests) {
    ctx.log.info(
      `[${r.cluster}/${r.namespace}] Creating token for service account: ${r.serviceAccountName}`,
    );
  }
  const desired: DesiredResource[] = [
    ...tokens.tokenRequests.map((r) => ({
      cluster: r.cluster,
      namespace: r.namespace,
      source: `token request for ServiceAccount ${r.serviceAccountName}`,
      resource: new OpenshiftResource(r.body, UNMANAGED_INTEGRATION, QONTRACT_INTEGRATION_VERSION, {
        errorDetails: r.serviceAccountName,
      }),
    })),
    ...tokens.secrets.map((s) => ({
      cluster: s.cluster,
      namespace: s.namespace,
      source: `token of ${s.source}`,
      resource: new OpenshiftResource(s.body, QONTRACT_INTEGRATION, QONTRACT_INTEGRATION_VERSION, {
        errorDetails: s.body.metadata.name,
      }),
    })),
  ];
  return {
    integration: QONTRACT_INTEGRATION,
    integrationVersion: QONTRACT_INTEGRATION_VERSION,
    clusters,
    specs: scope.namespaces.map((ns) => ({
      cluster: ns.cluster.name,
      namespace: ns.name,
      kind: MANAGED_TYPE,
      privileged: false,
    })),
    desired,
    takeOver: false,
    concurrency: opts.threadPoolSize,
  };
}

/** The tokens of the reconciled inventory into Vault; a failure is the run's error. */
async function writeVaultOutput(
  ctx: RunContext,
  result: ReconcileResult,
  vaultOutputPath: string,
): Promise<void> {
  // From the inventory, as upstream: a name desired twice was refused there (an error).
  const outputs = [...result.inventory.items()].flatMap((item) =>
    [...item.desired.entries()]
      .filter(([, resource]) => resource.integration === QONTRACT_INTEGRATION)
      .map(([name, resource]) => ({
        cluster: item.cluster,
        namespace: item.namespace,
        name,
        data: (resource.body as { data: Record<string, string> }).data,
      })),
  );
  // A side effect of the run: the executor decides dry-run and registers a failure.
  await executeActions(ctx, [outputs], {
    name: () => 'write_vault_output',
    sideEffect: true,
    describe: (tokens) => `writing ${tokens.length} token(s) to ${vaultOutputPath}`,
    destructive: () => false,
    execute: (tokens) => {
      const writer = vaultWriterFor({
        config: ctx.config,
        redactor: ctx.redactor,
        env: ctx.env.vars,
      });
      return writeTokensToVault(writer, vaultOutputPath, QONTRACT_INTEGRATION, tokens);
    },
    failure: (_tokens, e) => ({
      scope: 'vault',
      message: `writing tokens to ${vaultOutputPath} failed: ${errorMessage(e)}`,
    }),
  });
}

/**
 * The Secrets of every source namespace (one list each), where the tokens
 * are looked up. A failing list is that cluster's error; its tokens are
 * skipped.
 */
async function readSourceSecrets(
  ctx: RunContext,
  clusters: ClusterMap,
  namespaces: readonly ScopedNamespace[],
  concurrency: number,
): Promise<Map<string, SecretObject[]>> {
  const wanted = new Map<string, { cluster: string; namespace: string }>();
  for (const ns of namespaces) {
    for (const spec of ns.tokens) {
      const cluster = spec.namespace.cluster.name;
      wanted.set(`${cluster}/${spec.namespace.name}`, { cluster, namespace: spec.namespace.name });
    }
  }
  const out = new Map<string, SecretObject[]>();
  const limit = pLimit(Math.max(1, concurrency));
  await Promise.all(
    [...wanted].map(([key, { cluster, namespace }]) =>
      limit(async () => {
        const handle = clusters.get(cluster);
        if (isClusterProblem(handle)) return;
        try {
          out.set(key, await handle.client.list(handle.catalog.get('Secret'), namespace));
        } catch (e) {
          ctx.errors.register(cluster, `[${key}] ${errorMessage(e)}`, { clusterWide: true });
        }
      }),
    ),
  );
  return out;
}
