import {
  configFromObject,
  DEFAULT_GLOBAL_OPTIONS,
  defineIntegration,
  type RunContext,
  silentLogger,
} from '@qontract/core';
import { afterAll, describe, expect, it } from 'vitest';
import { createEarlyExit } from './early-exit.ts';
import { AppInterfaceSettingsDocument } from './queries/app-interface-settings.generated.ts';
import { gqlClient, gqlTransportSource } from './run-client.ts';
import { sendJson, sendText, startStubServer } from './test-support/stub-server.ts';

const OLD = '01'.repeat(32);
const NEW = '02'.repeat(32);

/** Two bundles: `repoUrl` of the settings is what tells them apart. */
const repoUrlBySha: Record<string, string> = { [OLD]: 'https://old', [NEW]: 'https://new' };
const stub = await startStubServer((req, res) => {
  if (req.url === '/sha256') return sendText(res, 200, NEW);
  const m = /^\/graphqlsha\/(\w+)$/.exec(req.url);
  const repoUrl = m ? repoUrlBySha[m[1]!] : undefined;
  if (!repoUrl) return sendText(res, 404, 'Not Found');
  return sendJson(res, 200, {
    data: { settings: [{ vault: false, repoUrl, kubeBinary: 'oc', hashLength: 7 }] },
    extensions: { schemas: [] },
  });
});
afterAll(() => stub.close());

function contextFor(compareSha: string | undefined): RunContext {
  return {
    config: configFromObject({ graphql: { server: `${stub.origin}/graphql` } }),
    globals: {
      ...DEFAULT_GLOBAL_OPTIONS,
      configPath: '',
      dryRun: true,
      gqlUrlPrint: false,
      validateSchemas: false,
      earlyExitCompareSha: compareSha,
    },
    integration: 'example',
    log: silentLogger(),
    // No other backend than the config's; any other client: the step must open its own.
    client: (key: { id: string }) =>
      key.id === gqlTransportSource.id
        ? Promise.resolve(null)
        : Promise.reject(new Error('the early-exit step must use its own clients')),
  } as unknown as RunContext;
}

/** An integration whose early-exit state is the settings' repoUrl, per shard "a". */
function integration(stateOf: (repoUrl: string) => unknown, sharded = false) {
  return defineIntegration({
    name: 'example',
    version: '1.0.0',
    description: 'test',
    options: {},
    run: async () => {},
    desiredStateForEarlyExit: async (ctx) => {
      const gql = await ctx.client(gqlClient);
      const { settings } = await gql.query(AppInterfaceSettingsDocument);
      return stateOf(settings?.[0]?.repoUrl ?? '');
    },
    ...(sharded
      ? {
          shardedDryRun: {
            shardPathSelectors: ['state.*.shard'],
            optionsForShard: (o) => o,
            review: (shards: readonly string[]) => shards.length <= 2,
          },
        }
      : {}),
  });
}

describe('createEarlyExit', () => {
  it('exits early when the desired state is the same in both bundles', async () => {
    const decide = createEarlyExit(
      integration(() => ({ state: 'same' })),
      {},
    );
    expect(await decide(contextFor(OLD))).toEqual({ kind: 'exit' });
  });

  it('runs everything when the state differs and the integration is not sharded', async () => {
    const decide = createEarlyExit(
      integration((url) => ({ state: url })),
      {},
    );
    expect(await decide(contextFor(OLD))).toEqual({ kind: 'run' });
  });

  it('runs only the shards whose state changed', async () => {
    const decide = createEarlyExit(
      integration((url) => ({ state: { a: { shard: 'a', url }, b: { shard: 'b' } } }), true),
      {},
    );
    expect(await decide(contextFor(OLD))).toEqual({ kind: 'shards', shards: ['a'] });
  });

  it('runs everything without a comparison sha, or when the comparison fails', async () => {
    const decide = createEarlyExit(
      integration(() => ({ state: 'same' })),
      {},
    );
    expect(await decide(contextFor(undefined))).toEqual({ kind: 'run' });
    expect(await decide(contextFor('ff'.repeat(32)))).toEqual({ kind: 'run' });
  });
});
