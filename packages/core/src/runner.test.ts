import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { executeActions } from './actions.ts';
import {
  ExitRequest,
  ForbiddenSchemaError,
  IntegrationNotFoundError,
  QontractError,
} from './errors.ts';
import { defineClient, defineIntegration, type RunContext } from './integration.ts';
import { commonOptions } from './options.ts';
import { decideEarlyExit, runIntegration } from './runner.ts';
import { testRunSettings } from './test-support/run-settings.ts';

function integration(
  run: (ctx: RunContext, opts: Record<string, unknown>) => Promise<void>,
  extra = {},
) {
  return defineIntegration({
    name: 'test-integration',
    version: '1.0.0',
    description: 'a test',
    options: { clusterName: commonOptions.clusterName() },
    run,
    ...extra,
  });
}

describe('runIntegration', () => {
  it('exits 0 and logs a summary line when the run succeeds', async () => {
    const def = integration(async (ctx) => {
      ctx.report.count('apply', 2);
      ctx.report.count('delete');
    });
    const { settings, logs } = testRunSettings(def);
    const result = await runIntegration(settings);
    expect(result.exitCode).toBe(0);
    const summary = logs.at(-1)!;
    expect(summary.msg).toMatch(
      /^test-integration finished: success, 0 error\(s\), 2 apply, 1 delete in /,
    );
    expect(summary.summary).toMatchObject({
      exit_code: 0,
      errors: 0,
      actions: { apply: 2, delete: 1 },
    });
  });

  it('writes --plan-out once the integration has run: what the executor did, held-back deletes as such; records nothing without it', async () => {
    const handler = {
      name: (a: { verb: string }) => a.verb,
      describe: (a: { verb: string }) => a.verb,
      destructive: (a: { verb: string }) => a.verb === 'delete',
      execute: async () => {},
      failure: () => ({ scope: 'x', message: 'x' }),
      planEntry: (a: { verb: string }) => ({ action: a.verb }),
    };
    let planned: unknown;
    const def = integration(async (ctx) => {
      ctx.errors.register('elsewhere', 'a failed read');
      await executeActions(ctx, [{ verb: 'delete' }, { verb: 'apply' }], handler);
      planned = ctx.report.planned;
    });
    const file = join(await mkdtemp(join(tmpdir(), 'qr-plan-')), 'plan.json');
    const { settings } = testRunSettings(def, { globals: { dryRun: true, planOut: file } });
    expect((await runIntegration(settings)).exitCode).toBe(1);
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({
      integration: 'test-integration',
      dryRun: true,
      heldBack: 1,
      actions: [
        { action: 'delete', outcome: 'disabled' },
        { action: 'apply', outcome: 'dry-run' },
      ],
    });
    // Without --plan-out nothing is kept (a watch run lasting days would keep every action).
    await runIntegration(testRunSettings(def, { globals: { dryRun: true } }).settings);
    expect(planned).toEqual([]);
  });

  it('keeps working after a registered error and exits 1', async () => {
    const done: string[] = [];
    const def = integration(async (ctx) => {
      ctx.errors.register('cluster-a', new Error('unreachable'), { clusterWide: true });
      done.push('after the error');
    });
    const { settings, logs } = testRunSettings(def);
    const result = await runIntegration(settings);
    expect(result.exitCode).toBe(1);
    expect(done).toEqual(['after the error']);
    expect(result.errors.hasClusterError('cluster-a')).toBe(true);
    expect(logs.some((l) => l.msg === 'unreachable' && l.scope === 'cluster-a')).toBe(true);
  });

  it.each([
    [new IntegrationNotFoundError('x'), 4],
    [new ForbiddenSchemaError(['/openshift/namespace-1.yml']), 5],
    [new ExitRequest(3), 3],
  ])('maps %s to exit code %i', async (error, code) => {
    const { settings } = testRunSettings(integration(async () => Promise.reject(error)));
    expect((await runIntegration(settings)).exitCode).toBe(code);
  });

  describe('the summary counts what failed the run', () => {
    const summaryOf = (logs: Array<Record<string, unknown>>) => {
      const line = logs.at(-1)!;
      return { msg: String(line.msg), ...(line.summary as { exit_code: number; errors: number }) };
    };

    it.each([
      ['an expected error (app-interface did not load)', new QontractError('cannot load'), 1],
      ['an unexpected exception', new TypeError('boom'), 1],
      ['an integration that is not defined', new IntegrationNotFoundError('x'), 4],
      ['an exit request with a failure code', new ExitRequest(3), 3],
    ])('%s is one error', async (_what, error, code) => {
      const { settings, logs } = testRunSettings(integration(async () => Promise.reject(error)));
      const result = await runIntegration(settings);
      expect(result).toMatchObject({ exitCode: code, errorCount: 1 });
      const summary = summaryOf(logs);
      expect(summary).toMatchObject({ exit_code: code, errors: 1 });
      expect(summary.msg).toContain(`failed (exit code ${code}), 1 error(s),`);
    });

    it('adds an exception after registered errors, and a failing after-run step', async () => {
      const { settings, logs } = testRunSettings(
        integration(async (ctx) => {
          ctx.errors.register('cluster-a', 'unreachable');
          throw new QontractError('gave up');
        }),
        {
          finally: async () => {
            throw new Error('cannot write the schemas');
          },
        },
      );
      const result = await runIntegration(settings);
      expect(result).toMatchObject({ exitCode: 1, errorCount: 3 });
      expect(summaryOf(logs)).toMatchObject({ exit_code: 1, errors: 3 });
    });

    it('an exit request with code 0 is no error', async () => {
      const { settings, logs } = testRunSettings(
        integration(async () => Promise.reject(new ExitRequest(0))),
      );
      expect(await runIntegration(settings)).toMatchObject({ exitCode: 0, errorCount: 0 });
      expect(summaryOf(logs)).toMatchObject({ exit_code: 0, errors: 0 });
    });
  });

  it('logs the message of an expected error without a stack trace', async () => {
    const { settings, logs } = testRunSettings(
      integration(async () => Promise.reject(new ForbiddenSchemaError(['/a-1.yml']))),
    );
    await runIntegration(settings);
    const line = logs.find((l) => String(l.msg).startsWith('Forbidden schemas'))!;
    expect(line.msg).toBe(
      "Forbidden schemas: ['/a-1.yml']\n\nThe `schemas` parameter in the integration file in App-Interface\nshould be updated to include these schemas.",
    );
    expect(line.err).toBeUndefined();
  });

  it('exits 1 on an unexpected exception, with the stack in the log', async () => {
    const { settings, logs } = testRunSettings(
      integration(async () => {
        throw new TypeError('boom');
      }),
    );
    const result = await runIntegration(settings);
    expect(result).toMatchObject({ exitCode: 1, crashed: true });
    const line = logs.find((l) => l.msg === 'unexpected error: boom')!;
    expect((line.err as { stack: string }).stack).toContain('TypeError: boom');
  });

  it('exits 1 when a stop signal interrupts the run: not a crash, even when the abort made it throw', async () => {
    for (const after of ['returns', 'throws'] as const) {
      const controller = new AbortController();
      const def = integration(async (ctx) => {
        controller.abort(new Error('stopped by SIGTERM'));
        if (after === 'throws') throw ctx.signal.reason;
      });
      const { settings, logs } = testRunSettings(def, { signal: controller.signal });
      const result = await runIntegration(settings);
      expect(result).toMatchObject({ exitCode: 1, crashed: false });
      expect(logs.map((l) => l.msg)).toContain(
        'test-integration was interrupted by a stop signal (stopped by SIGTERM); what it had not done is left for the next run',
      );
      expect(logs.some((l) => String(l.msg).startsWith('unexpected error'))).toBe(false);
    }
  });

  it('creates each client once per run, lazily, and closes it at the end', async () => {
    const create = vi.fn(() => ({ id: Math.random() }));
    const close = vi.fn();
    const key = defineClient('thing', create, close);
    const seen: unknown[] = [];
    const def = integration(async (ctx) => {
      seen.push(await ctx.client(key), await ctx.client(key));
    });
    const { settings } = testRunSettings(def);
    await runIntegration(settings);
    expect(create).toHaveBeenCalledTimes(1);
    expect(seen[0]).toBe(seen[1]);
    expect(close).toHaveBeenCalledWith(seen[0]);
  });

  it('uses an injected client instead of its factory', async () => {
    const key = defineClient('thing', () => 'real');
    let got: unknown;
    const { settings } = testRunSettings(
      integration(async (ctx) => {
        got = await ctx.client(key);
      }),
      {
        clients: new Map([['thing', 'fake']]),
      },
    );
    await runIntegration(settings);
    expect(got).toBe('fake');
  });

  it('reads secrets through the reader chosen for the run and registers them for redaction', async () => {
    let token = '';
    const def = integration(async (ctx) => {
      token = await ctx.secrets.read({ path: 'creds/c1', field: 'token' });
      ctx.log.info(`got ${token}`);
    });
    const { settings, logs } = testRunSettings(def);
    await runIntegration(settings);
    expect(token).toBe('tok-123456');
    expect(JSON.stringify(logs)).not.toContain('tok-123456');
  });

  it('runs the after-run step even when the run fails', async () => {
    const after = vi.fn(async () => {});
    const { settings } = testRunSettings(
      integration(async () => {
        throw new Error('x');
      }),
      { finally: after },
    );
    await runIntegration(settings);
    expect(after).toHaveBeenCalledTimes(1);
  });

  it('exits 0 without running when the integration toggle is disabled', async () => {
    const run = vi.fn(async () => {});
    const { settings, logs } = testRunSettings(integration(run), {
      toggleEnabled: async () => false,
    });
    expect((await runIntegration(settings)).exitCode).toBe(0);
    expect(run).not.toHaveBeenCalled();
    expect(
      logs.some((l) => l.msg === 'Integration toggle is disabled, skipping integration.'),
    ).toBe(true);
  });

  describe('early exit (dry-run only)', () => {
    it('exits 0 without running when the desired state did not change', async () => {
      const run = vi.fn(async () => {});
      const { settings, logs } = testRunSettings(integration(run), {
        globals: { dryRun: true },
        earlyExit: async () => ({ kind: 'exit' }),
      });
      expect((await runIntegration(settings)).exitCode).toBe(0);
      expect(run).not.toHaveBeenCalled();
      expect(logs.some((l) => l.msg === 'No changes in desired state. Exit PR check early.')).toBe(
        true,
      );
    });

    it('is not consulted in a wet run', async () => {
      const earlyExit = vi.fn(async () => ({ kind: 'exit' as const }));
      const run = vi.fn(async () => {});
      const { settings } = testRunSettings(integration(run), { earlyExit });
      await runIntegration(settings);
      expect(earlyExit).not.toHaveBeenCalled();
      expect(run).toHaveBeenCalledTimes(1);
    });

    it('runs once per affected shard and exits with the number of failed shards', async () => {
      const ran: string[][] = [];
      const def = integration(
        async (ctx, opts) => {
          const clusters = opts.clusterName as string[];
          ran.push(clusters);
          if (clusters[0] === 'bad') ctx.errors.register('bad', 'broken');
          if (clusters[0] === 'worse') throw new Error('crash');
        },
        {
          shardedDryRun: {
            shardPathSelectors: ['state.*.shard'],
            optionsForShard: (o: Record<string, unknown>, shard: string) => ({
              ...o,
              clusterName: [shard],
            }),
            review: () => true,
          },
        },
      );
      const { settings, logs } = testRunSettings(def, {
        globals: { dryRun: true },
        options: { clusterName: [] },
        earlyExit: async () => ({ kind: 'shards', shards: ['good', 'bad', 'worse'] }),
      });
      const result = await runIntegration(settings);
      expect(result.exitCode).toBe(2);
      expect(ran.map((r) => r[0]).sort()).toEqual(['bad', 'good', 'worse']);
      expect(
        logs.some((l) => l.msg === "run test-integration for shards ['good', 'bad', 'worse']"),
      ).toBe(true);
      expect(logs.some((l) => l.msg === 'Failed to run integration shard worse: crash')).toBe(true);
      // the summary counts the shard's registered error and the other shard's crash
      expect(result.errorCount).toBe(2);
      expect(logs.at(-1)!.summary).toMatchObject({ exit_code: 2, errors: 2 });
    });
  });

  describe('warm-ups', () => {
    it('start before the run waits on anything, and not for a dry-run that exits early', async () => {
      let warmUps = 0;
      const seen: number[] = [];
      const def = integration(
        async () => {
          seen.push(warmUps);
        },
        {
          warmUp: () => {
            warmUps += 1;
          },
        },
      );
      const early = testRunSettings(def, {
        globals: { dryRun: true },
        earlyExit: async () => ({ kind: 'exit' }),
      });
      await runIntegration(early.settings);
      expect(warmUps).toBe(0);
      await runIntegration(testRunSettings(def).settings);
      expect(seen).toEqual([1]);
    });

    it('a failing warm-up does not fail the run', async () => {
      const run = vi.fn(async () => {});
      const def = integration(run, {
        warmUp: () => {
          throw new Error('cannot warm up');
        },
      });
      const { settings, logs } = testRunSettings(def);
      expect((await runIntegration(settings)).exitCode).toBe(0);
      expect(run).toHaveBeenCalledTimes(1);
      expect(logs.some((l) => l.msg === 'warm-up failed: cannot warm up')).toBe(true);
    });
  });

  describe('decideEarlyExit (the decision alone)', () => {
    it('returns the decision without running the integration, and closes the clients it opened', async () => {
      const run = vi.fn(async () => {});
      const closed: string[] = [];
      const key = defineClient(
        'probe',
        () => 'client',
        (c) => {
          closed.push(c);
        },
      );
      const { settings } = testRunSettings(integration(run), {
        globals: { dryRun: true },
        earlyExit: async (ctx) => {
          await ctx.client(key);
          return { kind: 'shards', shards: ['a'] };
        },
      });
      expect(await decideEarlyExit(settings)).toEqual({ kind: 'shards', shards: ['a'] });
      expect(run).not.toHaveBeenCalled();
      expect(closed).toEqual(['client']);
    });

    it('is null where the runner takes no decision: a wet run, no early-exit step, the toggle off', async () => {
      const earlyExit = vi.fn(async () => ({ kind: 'exit' as const }));
      const def = integration(async () => {});
      expect(await decideEarlyExit(testRunSettings(def, { earlyExit }).settings)).toBeNull();
      expect(
        await decideEarlyExit(testRunSettings(def, { globals: { dryRun: true } }).settings),
      ).toBeNull();
      const off = testRunSettings(def, {
        globals: { dryRun: true },
        earlyExit,
        toggleEnabled: async () => false,
      });
      expect(await decideEarlyExit(off.settings)).toBeNull();
      expect(earlyExit).not.toHaveBeenCalled();
    });
  });
});
