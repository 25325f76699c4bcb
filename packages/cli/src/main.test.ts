import { execFile } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { type GqlTransport, gqlClient, gqlTransportSource } from '@qontract/app-interface';
import {
  type AnyIntegration,
  ConfigSecretReader,
  commonOptions,
  defineIntegration,
  type OptionValues,
  type RunContext,
} from '@qontract/core';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { type CliDeps, decideEarlyExitOf, runCli } from './main.ts';

interface Captured {
  stdout: string;
  stderr: string;
}

const seen: Array<{ opts: OptionValues; ctx: RunContext }> = [];

const probe = defineIntegration({
  name: 'probe-integration',
  version: '0.1.0',
  description: 'Records what it was given.',
  options: {
    threadPoolSize: commonOptions.threadPoolSize(10),
    internal: commonOptions.internal(),
    clusterName: commonOptions.clusterName(),
    namespaceName: commonOptions.namespaceName(),
    takeOver: commonOptions.takeOver(),
    mode: {
      type: 'string',
      describe: 'a mode',
      choices: ['a', 'b'],
      default: 'a',
      env: 'PROBE_MODE',
      alias: 'm',
    },
  },
  run: async (ctx, opts) => {
    seen.push({ opts, ctx });
    if (opts.namespaceName === 'fail') ctx.errors.register('ns/fail', 'it failed');
    if (opts.namespaceName === 'secret')
      ctx.log.info(`the token is ${await ctx.secrets.read({ path: 'creds/c1', field: 'token' })}`);
  },
});
const other = defineIntegration({
  name: 'another-one',
  version: '1.0.0',
  description: 'Another.',
  options: {},
  run: async () => {},
});
// Its early-exit state per cluster: the bundle a client reads is named by its sha.
const shardedRuns: string[][] = [];
const shardedStates = vi.fn(async (ctx: RunContext) => {
  const { sha } = await ctx.client(gqlClient);
  const hash = (cluster: string) => (sha === 'head' && cluster === 'c2' ? 'changed' : 'same');
  return { state: Object.fromEntries(['c1', 'c2'].map((c) => [c, { shard: c, hash: hash(c) }])) };
});
const sharded = defineIntegration({
  name: 'sharded-probe',
  version: '1.0.0',
  description: 'A sharded dry-run.',
  options: { clusterName: commonOptions.clusterName() },
  run: async (_ctx, opts) => {
    shardedRuns.push(opts.clusterName as string[]);
  },
  desiredStateForEarlyExit: shardedStates,
  shardedDryRun: {
    shardPathSelectors: ['state.*.shard'],
    optionsForShard: (o, shard) => ({ ...o, clusterName: [shard] }),
    review: () => true,
  },
});
const registry: AnyIntegration[] = [probe, other, sharded];

/** Answers from two bundles named by their sha, without any query (the probe only reads the sha). */
const bundles = new Map<string, unknown>([
  [
    gqlTransportSource.id,
    async (sha: string | undefined): Promise<GqlTransport> => ({
      endpoint: 'memory:',
      sha: sha ?? 'head',
      gitCommit: null,
      execute: () => Promise.reject(new Error('no query expected')),
      close: async () => {},
    }),
  ],
]);

let configPath = '';
beforeAll(async () => {
  const dir = await mkdtemp(join(tmpdir(), 'qr-cli-'));
  configPath = join(dir, 'config.toml');
  await writeFile(
    configPath,
    '[graphql]\nserver = "file://nowhere"\n\n[creds.c1]\ntoken = "very-secret-token"\n',
  );
});

async function cli(
  argv: string[],
  env: Record<string, string> = {},
): Promise<Captured & { code: number }> {
  const out: Captured = { stdout: '', stderr: '' };
  const code = await runCli(argv, {
    registry,
    env,
    // No app-interface here: secrets come from config.toml directly.
    services: (config, redactor) => ({ secrets: () => new ConfigSecretReader(config, redactor) }),
    io: {
      stdout: { write: (s: string) => (out.stdout += s) },
      stderr: { write: (s: string) => (out.stderr += s) },
    },
  });
  return { code, ...out };
}

describe('qontract-reconcile CLI', () => {
  it('lists every registered integration with its description in --help, without a config', async () => {
    const r = await cli(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('probe-integration');
    expect(r.stdout).toContain('Records what it was given.');
    expect(r.stdout).toContain('another-one');
    expect(r.stdout).toContain('--dry-run');
    expect(r.stdout).toContain('--early-exit-compare-sha');
  });

  it('shows an integration’s own options in its --help', async () => {
    const r = await cli(['probe-integration', '--help']);
    expect(r.code).toBe(0);
    for (const flag of [
      '--thread-pool-size',
      '--internal',
      '--external',
      '--cluster-name',
      '--namespace-name',
      '--take-over',
      '--mode',
    ]) {
      expect(r.stdout).toContain(flag);
    }
  });

  it('rejects an unknown subcommand with the usage exit code 2', async () => {
    const r = await cli(['--config', configPath, 'no-such-integration']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("Error: No such command 'no-such-integration'.");
  });

  it('rejects an unknown option with exit code 2', async () => {
    const r = await cli(['--config', configPath, 'probe-integration', '--bogus']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/Error: No such option: bogus/);
  });

  it('rejects a non-integer thread pool size', async () => {
    const r = await cli([
      '--config',
      configPath,
      'probe-integration',
      '--thread-pool-size',
      'many',
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("'many' is not a valid integer");
  });

  it('fails with exit 1 when no config is given', async () => {
    const r = await cli(['probe-integration']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('no config file for qontract-reconcile specified');
  });

  it('fails with exit 1 and lists the problems of a bad config', async () => {
    const bad = join(configPath, '..', 'bad.toml');
    await writeFile(bad, '[graphql]\nserver = 1\n[vault]\nrole_id = 2\n');
    const r = await cli(['--config', bad, '--log-format', 'text', 'probe-integration']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('graphql.server: expected string, found integer');
    expect(r.stderr).toContain('vault.server: expected string, found nothing');
  });

  it('parses global and integration options, defaults included', async () => {
    seen.length = 0;
    const r = await cli([
      '--config',
      configPath,
      '--dry-run',
      'probe-integration',
      '--cluster-name',
      'c1',
      '--cluster-name',
      'c2',
      '--external',
      '--thread-pool-size',
      '3',
      '--no-take-over',
    ]);
    expect(r.code).toBe(0);
    const { opts, ctx } = seen[0]!;
    expect(opts).toEqual({
      threadPoolSize: 3,
      internal: false,
      clusterName: ['c1', 'c2'],
      namespaceName: undefined,
      takeOver: false,
      mode: 'a',
    });
    expect(ctx.dryRun).toBe(true);
    expect(ctx.globals).toMatchObject({
      dryRun: true,
      validateSchemas: true,
      gqlShaUrl: true,
      gqlUrlPrint: false,
    });
  });

  it('takes an option by its short flag', async () => {
    seen.length = 0;
    const r = await cli(['--config', configPath, 'probe-integration', '-m', 'b']);
    expect(r.code).toBe(0);
    expect(seen[0]!.opts.mode).toBe('b');
  });

  it('defaults to a wet run, takes the config from QONTRACT_CONFIG and env-backed options from the environment', async () => {
    seen.length = 0;
    const r = await cli(['probe-integration', '--internal'], {
      QONTRACT_CONFIG: configPath,
      EARLY_EXIT_COMPARE_SHA: 'abc123',
      CHECK_ONLY_AFFECTED_SHARDS: 'true',
      PROBE_MODE: 'b',
    });
    expect(r.code).toBe(0);
    const { opts, ctx } = seen[0]!;
    expect(ctx.dryRun).toBe(false);
    expect(opts.internal).toBe(true);
    expect(opts.mode).toBe('b');
    expect(opts.threadPoolSize).toBe(10);
    expect(opts.takeOver).toBe(true);
    expect(ctx.globals).toMatchObject({
      earlyExitCompareSha: 'abc123',
      checkOnlyAffectedShards: true,
      gqlUrlPrint: true,
    });
  });

  it('exits 1 when the integration registered an error', async () => {
    const r = await cli(['--config', configPath, 'probe-integration', '--namespace-name', 'fail']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('it failed');
  });

  it('never prints a secret the run read', async () => {
    const r = await cli([
      '--config',
      configPath,
      'probe-integration',
      '--namespace-name',
      'secret',
    ]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('the token is ***');
    expect(r.stderr).not.toContain('very-secret-token');
  });

  it('skips the integration (exit 0) when its Unleash toggle is disabled', async () => {
    const { createServer } = await import('node:http');
    const unleash = createServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(
        JSON.stringify({
          features: [{ name: 'probe-integration', enabled: false, strategies: [] }],
        }),
      );
    });
    await new Promise<void>((r) => unleash.listen(0, '127.0.0.1', () => r()));
    try {
      seen.length = 0;
      const port = (unleash.address() as { port: number }).port;
      const r = await cli(['--config', configPath, 'probe-integration'], {
        UNLEASH_API_URL: `http://127.0.0.1:${port}/api`,
        UNLEASH_CLIENT_ACCESS_TOKEN: 't',
      });
      expect(r.code).toBe(0);
      expect(seen).toEqual([]);
      expect(r.stderr).toContain('Integration toggle is disabled, skipping integration.');
    } finally {
      unleash.close();
    }
  });

  it('applies SHARDS/SHARD_ID to the run context', async () => {
    seen.length = 0;
    await cli(['--config', configPath, 'probe-integration'], { SHARDS: '3', SHARD_ID: '1' });
    const { ctx } = seen[0]!;
    expect(ctx.isInShard('saas-qontract-reconcile')).toBe(true);
    expect(ctx.shard).toEqual({ shards: 3, shardId: 1 });
  });

  it('rejects an invalid shard configuration with exit 1', async () => {
    const r = await cli(['--config', configPath, 'probe-integration'], {
      SHARDS: '2',
      SHARD_ID: '5',
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('SHARD_ID 5 is out of range for SHARDS=2');
  });
});

describe('the early-exit decision alone (decideEarlyExitOf)', () => {
  const deps: CliDeps = {
    registry,
    env: {},
    services: (config, redactor) => ({ secrets: () => new ConfigSecretReader(config, redactor) }),
    clients: bundles,
    io: { stdout: { write: () => true }, stderr: { write: () => true } },
  };
  const argv = (compareSha: string) => [
    ...['--config', configPath, '--dry-run', '--no-validate-schemas'],
    ...['--early-exit-compare-sha', compareSha, '--check-only-affected-shards', 'sharded-probe'],
  ];

  it('compares the two bundles of the given clients, and runs nothing', async () => {
    shardedRuns.length = 0;
    expect(await decideEarlyExitOf(argv('base'), deps)).toEqual({ kind: 'shards', shards: ['c2'] });
    // The same bundle on both sides: nothing changed.
    expect(await decideEarlyExitOf(argv('head'), deps)).toEqual({ kind: 'exit' });
    expect(shardedRuns).toEqual([]);
  });

  it('is null when the command line does not parse or asks for no decision', async () => {
    expect(
      await decideEarlyExitOf(['--config', configPath, 'sharded-probe', '--bogus'], deps),
    ).toBeNull();
    expect(await decideEarlyExitOf(['--config', configPath, 'sharded-probe'], deps)).toBeNull();
  });

  it('--early-exit-affected-shards runs the shards it names, without comparing again', async () => {
    shardedRuns.length = 0;
    shardedStates.mockClear();
    const r = await cli([...argv('base'), '--early-exit-affected-shards', 'c1,c2']);
    expect(r.code).toBe(0);
    expect(shardedStates).not.toHaveBeenCalled();
    expect(shardedRuns.sort()).toEqual([['c1'], ['c2']]);
    expect(r.stderr).toContain("run sharded-probe for shards ['c1', 'c2']");
  });

  it('refuses --early-exit-affected-shards without the comparison it stands for (usage, exit 2)', async () => {
    shardedRuns.length = 0;
    const r = await cli([
      ...['--config', configPath, '--dry-run', '--early-exit-affected-shards', 'c1'],
      'sharded-probe',
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      '--early-exit-affected-shards needs --early-exit-compare-sha and --check-only-affected-shards',
    );
    expect(shardedRuns).toEqual([]);
  });
});

describe('the qontract-reconcile binary', () => {
  it('starts under whatever node is on PATH and prints its help', async () => {
    const bin = fileURLToPath(new URL('../bin/qontract-reconcile.js', import.meta.url));
    const { stdout } = await promisify(execFile)(process.execPath, [bin, '--help']);
    expect(stdout).toContain('Usage: qontract-reconcile [OPTIONS] COMMAND [ARGS]...');
  });
});
