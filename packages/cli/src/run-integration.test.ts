import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { commonOptions, createMetrics, defineIntegration } from '@qontract/core';
import { freePort } from '@qontract/testing/free-port';
import { type Pushgateway, startPushgateway } from '@qontract/testing/pushgateway';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildEntryPointArgs, runIntegrationLoop } from './run-integration.ts';

describe('buildEntryPointArgs', () => {
  it('builds the umbrella argv from the environment, shell-splitting extra args', () => {
    expect(
      buildEntryPointArgs({
        INTEGRATION_NAME: 'openshift-resources',
        DRY_RUN: '--dry-run',
        CONFIG: '/etc/c.toml',
        INTEGRATION_EXTRA_ARGS: `--cluster-name c1 --namespace-name "my ns" --x='a b'`,
      }),
    ).toEqual([
      '--config',
      '/etc/c.toml',
      '--dry-run',
      'openshift-resources',
      '--cluster-name',
      'c1',
      '--namespace-name',
      'my ns',
      '--x=a b',
    ]);
  });

  it('defaults CONFIG to /config/config.toml and omits an unset DRY_RUN', () => {
    expect(buildEntryPointArgs({ INTEGRATION_NAME: 'x' })).toEqual([
      '--config',
      '/config/config.toml',
      'x',
    ]);
  });

  it('rejects a DRY_RUN that is not a flag, as the original does', () => {
    expect(() => buildEntryPointArgs({ INTEGRATION_NAME: 'x', DRY_RUN: 'true' })).toThrow(
      "DRY_RUN must be '--dry-run' or '--no-dry-run', got 'true'",
    );
  });

  it('uses MANAGER_DRY_RUN for integrations-manager', () => {
    expect(
      buildEntryPointArgs({
        INTEGRATION_NAME: 'integrations-manager',
        DRY_RUN: 'bogus',
        MANAGER_DRY_RUN: '--no-dry-run',
      }),
    ).toEqual(['--config', '/config/config.toml', '--no-dry-run', 'integrations-manager']);
  });

  it('requires INTEGRATION_NAME', () => {
    expect(() => buildEntryPointArgs({})).toThrow('INTEGRATION_NAME is required');
  });
});

describe('runIntegrationLoop', () => {
  let config = '';
  beforeAll(async () => {
    const dir = await mkdtemp(join(tmpdir(), 'qr-loop-'));
    config = join(dir, 'config.toml');
    await writeFile(config, '[graphql]\nserver = "file://x"\n');
  });

  it('runs once with RUN_ONCE and returns the integration exit code, recording metrics', async () => {
    let runs = 0;
    const failing = defineIntegration({
      name: 'loop-probe',
      version: '1.0.0',
      description: 'x',
      options: {},
      run: async (ctx) => {
        runs++;
        ctx.errors.register('x', 'nope');
      },
    });
    const metrics = createMetrics();
    const code = await runIntegrationLoop(
      {
        INTEGRATION_NAME: 'loop-probe',
        CONFIG: config,
        RUN_ONCE: 'false',
        DRY_RUN: '--dry-run',
        SHARDS: '2',
        SHARD_ID: '1',
      },
      {
        registry: [failing],
        metrics,
        io: { stdout: { write: () => true }, stderr: { write: () => true } },
      },
    );
    expect(code).toBe(1);
    expect(runs).toBe(1);
    expect(await metrics.registry.metrics()).toContain(
      'qontract_reconcile_last_run_status{integration="loop-probe",shards="2",shard_id="1"} 1',
    );
  });

  it.each([
    ['', ''],
    ['true', '[ERROR] '],
  ])(
    'copies every log line to LOG_FILE (PREFIX_LOG_LEVEL=%j), as the original',
    async (prefix, errorPrefix) => {
      const logging = defineIntegration({
        name: 'loop-logs',
        version: '1.0.0',
        description: 'x',
        options: {},
        run: async (ctx) => {
          ctx.log.info({ cluster: 'c1' }, 'reconciling');
          ctx.errors.register('c1', 'quota exceeded');
        },
      });
      const file = join(await mkdtemp(join(tmpdir(), 'qr-logfile-')), 'integration.log');
      await writeFile(file, 'an earlier line\n');
      const logs: string[] = [];
      const code = await runIntegrationLoop(
        {
          INTEGRATION_NAME: 'loop-logs',
          CONFIG: config,
          RUN_ONCE: 'true',
          LOG_FILE: file,
          PREFIX_LOG_LEVEL: prefix,
        },
        {
          registry: [logging],
          io: { stdout: { write: (s: string) => logs.push(s) }, stderr: { write: () => true } },
        },
      );
      expect(code).toBe(1);
      const lines = (await readFile(file, 'utf8')).split('\n');
      // Appended, like Python's FileHandler; the integration's lines and the launcher's alike.
      expect(lines[0]).toBe('an earlier line');
      const infoPrefix = prefix ? '[INFO] ' : '';
      expect(lines).toContain(`${infoPrefix}reconciling cluster=c1`);
      expect(lines.some((l) => l === `${errorPrefix}quota exceeded scope=c1`)).toBe(true);
      expect(lines.filter((l) => l.startsWith('[ERROR]')).length > 0).toBe(prefix === 'true');
      // One file line per stream line (the stream is JSON here, with the level's name).
      const records = logs.map((l) => JSON.parse(l));
      expect(records.length).toBe(lines.length - 2);
      expect(records.find((r) => r.msg === 'reconciling')).toMatchObject({ levelname: 'INFO' });
    },
  );

  it('refuses a LOG_FILE it cannot open, naming it, without a stack trace', async () => {
    // The launcher logs to stdout, as the original's run_integration.py.
    const logs: string[] = [];
    const code = await runIntegrationLoop(
      {
        INTEGRATION_NAME: 'x',
        CONFIG: config,
        RUN_ONCE: 'true',
        LOG_FILE: '/nonexistent/dir/i.log',
      },
      { io: { stdout: { write: (s: string) => logs.push(s) }, stderr: { write: () => true } } },
    );
    expect(code).toBe(1);
    expect(logs).toHaveLength(1);
    const rec = JSON.parse(logs[0]!);
    expect(rec).toMatchObject({ levelname: 'CRITICAL' });
    expect(rec.msg).toMatch(/^cannot open LOG_FILE \/nonexistent\/dir\/i\.log: ENOENT/);
    expect(logs[0]).not.toContain('    at ');
  });

  it('loops and serves metrics until stopped', async () => {
    let runs = 0;
    const controller = new AbortController();
    const ok = defineIntegration({
      name: 'loop-ok',
      version: '1.0.0',
      description: 'x',
      options: {},
      run: async () => {
        if (++runs === 3) controller.abort();
      },
    });
    const code = await runIntegrationLoop(
      {
        INTEGRATION_NAME: 'loop-ok',
        CONFIG: config,
        SLEEP_DURATION_SECS: '0',
        PROMETHEUS_PORT: '0',
      },
      {
        registry: [ok],
        signal: controller.signal,
        io: { stdout: { write: () => true }, stderr: { write: () => true } },
      },
    );
    // The stop signal arrived during the third run: it was interrupted (exit 1), and the loop stopped.
    expect(code).toBe(1);
    expect(runs).toBe(3);
  });

  it.each([
    ['WATCH=true', { WATCH: 'true' }],
    ['--watch in INTEGRATION_EXTRA_ARGS', { INTEGRATION_EXTRA_ARGS: '--watch' }],
  ])(
    'in watch mode (%s) starts the next run at once: a run itself lasts SLEEP_DURATION_SECS',
    async (_, vars) => {
      let runs = 0;
      const watched: boolean[] = [];
      const controller = new AbortController();
      const probe = defineIntegration({
        name: 'loop-watch',
        version: '1.0.0',
        description: 'x',
        options: { watch: commonOptions.watch() },
        run: async (_ctx, opts) => {
          watched.push(opts.watch);
          if (++runs === 3) controller.abort();
        },
      });
      const code = await runIntegrationLoop(
        {
          INTEGRATION_NAME: 'loop-watch',
          CONFIG: config,
          // Without watch mode the loop would sleep this long between the runs.
          SLEEP_DURATION_SECS: '3600',
          PROMETHEUS_PORT: '0',
          ...vars,
        },
        {
          registry: [probe],
          signal: controller.signal,
          io: { stdout: { write: () => true }, stderr: { write: () => true } },
        },
      );
      expect(code).toBe(1);
      expect(watched).toEqual([true, true, true]);
    },
  );

  it('serves /healthz on PROMETHEUS_PORT: 200 while the loop runs, 503 once it stops', async () => {
    const port = await freePort();
    const controller = new AbortController();
    const seen: number[] = [];
    const probe = async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).status;
    const ok = defineIntegration({
      name: 'loop-health',
      version: '1.0.0',
      description: 'x',
      options: {},
      run: async () => {
        seen.push(await probe());
        if (seen.length === 2) {
          controller.abort();
          seen.push(await probe());
        }
      },
    });
    await runIntegrationLoop(
      {
        INTEGRATION_NAME: 'loop-health',
        CONFIG: config,
        SLEEP_DURATION_SECS: '0',
        PROMETHEUS_PORT: String(port),
      },
      {
        registry: [ok],
        signal: controller.signal,
        io: { stdout: { write: () => true }, stderr: { write: () => true } },
      },
    );
    expect(seen).toEqual([200, 200, 503]);
    // The server is closed with the loop.
    await expect(probe()).rejects.toThrow();
  });
});

describe('runIntegrationLoop with PUSHGATEWAY_ENABLED (a CronJob)', () => {
  // Debian's prometheus-pushgateway, with basic auth as app-sre's gateway has.
  let gateway: Pushgateway;
  let url = '';
  let PASSWORD = '';
  let dir = '';
  let config = '';

  beforeAll(async () => {
    gateway = await startPushgateway();
    ({ url, password: PASSWORD } = gateway);
    dir = await mkdtemp(join(tmpdir(), 'qr-push-config-'));
    config = join(dir, 'config.toml');
    await writeFile(config, '[graphql]\nserver = "file://x"\n');
  });

  afterAll(async () => {
    await gateway?.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** Runs `name` once (it registers an error when `fail`) with `vars`; its exit code, log (stdout) and runs. */
  async function runOnce(name: string, vars: Record<string, string>, fail = false) {
    let runs = 0;
    const log: string[] = [];
    const integration = defineIntegration({
      name,
      version: '1.0.0',
      description: 'x',
      options: {},
      run: async (ctx) => {
        runs++;
        if (fail) ctx.errors.register('x', 'nope');
      },
    });
    const write = (chunk: string | Uint8Array) => log.push(String(chunk)) > 0;
    const code = await runIntegrationLoop(
      {
        INTEGRATION_NAME: name,
        CONFIG: config,
        RUN_ONCE: 'true',
        PUSHGATEWAY_ENABLED: 'true',
        ...vars,
      },
      { registry: [integration], io: { stdout: { write }, stderr: { write: () => true } } },
    );
    return { code, runs, log: log.join('') };
  }

  const scrape = () => gateway.scrape();

  it("pushes the run's duration and status, grouped as the original groups them", async () => {
    const run = await runOnce(
      'push-probe',
      {
        SHARDS: '2',
        SHARD_ID: '1',
        PUSHGATEWAY_URL: url,
        PUSHGATEWAY_USERNAME: gateway.username,
        PUSHGATEWAY_PASSWORD: PASSWORD,
      },
      true,
    );
    expect(run.code).toBe(1);
    const lines = await scrape();
    const group = 'integration="push-probe",job="qontract-reconcile",shard_id="1",shards="2"';
    expect(lines).toContain(`qontract_reconcile_last_run_status{instance="",${group}} 1`);
    const seconds = lines.find((l) =>
      l.startsWith(`qontract_reconcile_last_run_seconds{instance="",${group}} `),
    );
    expect(Number(seconds?.split(' ')[1])).toBeGreaterThan(0);
    expect(run.log).not.toContain(PASSWORD);
  });

  it('groups by a SHARD_KEY holding a slash (base64 in the path, as the Pushgateway wants)', async () => {
    const run = await runOnce('push-sharded', {
      SHARD_KEY: 'cluster-1/ns',
      PUSHGATEWAY_URL: `${url}/`,
      PUSHGATEWAY_USERNAME: gateway.username,
      PUSHGATEWAY_PASSWORD: PASSWORD,
    });
    expect(run.code).toBe(0);
    expect(await scrape()).toContain(
      'qontract_reconcile_last_run_status{instance="",integration="push-sharded",job="qontract-reconcile",shard_id="cluster-1/ns",shards="1"} 0',
    );
  });

  it('fails the run, naming the endpoint but not the password, when the gateway refuses', async () => {
    const run = await runOnce('push-refused', {
      PUSHGATEWAY_URL: url,
      PUSHGATEWAY_USERNAME: gateway.username,
      PUSHGATEWAY_PASSWORD: 'not-the-password',
    });
    expect(run.code).toBe(1);
    expect(run.log).toContain(
      `pushing to the Pushgateway failed: PUT ${url}/metrics/job/qontract-reconcile/integration/push-refused/shards/1/shard_id/0: HTTP 401`,
    );
    expect(run.log).not.toContain('not-the-password');
    expect((await scrape()).join('\n')).not.toContain('push-refused');
  });

  it('runs the integration, then fails naming the missing variables, as the original does', async () => {
    const run = await runOnce('push-unset', { PUSHGATEWAY_URL: url });
    expect(run.runs).toBe(1);
    expect(run.code).toBe(1);
    expect(run.log).toContain(
      'cannot push to the Pushgateway: PUSHGATEWAY_USERNAME, PUSHGATEWAY_PASSWORD not set',
    );
  });
});
