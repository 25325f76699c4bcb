import { spawn } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineIntegration, SecretRedactor } from '@qontract/core';
import { type FakeSentry, startFakeSentry } from '@qontract/testing/fake-sentry';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runIntegrationLoop } from './run-integration.ts';
import { scrubbed, sentryEventLevel } from './sentry.ts';

const SECRET = 'hunter2-vault-token-7f3a';

/** An integration that reads a secret, logs at ERROR and CRITICAL, then fails unexpectedly. */
const failing = defineIntegration({
  name: 'sentry-probe',
  version: '1.0.0',
  description: 'x',
  options: {},
  run: async (ctx) => {
    // As a secret reader does with each value it reads.
    ctx.redactor.add(SECRET);
    ctx.log.error('an ordinary error');
    ctx.log.fatal(`a critical one, with ${SECRET} in it`);
    throw new Error(`Vault refused the token ${SECRET}`);
  },
});

describe('Sentry reporting (SENTRY_DSN)', () => {
  let config = '';
  let sentry: FakeSentry;
  let log = '';
  // The launcher's log (stdout, as the original's run_integration.py).
  const io = {
    stdout: {
      write: (s: string) => {
        log += s;
        return true;
      },
    },
    stderr: { write: () => true },
  };
  const run = (env: Record<string, string>) =>
    runIntegrationLoop(
      { INTEGRATION_NAME: 'sentry-probe', CONFIG: config, RUN_ONCE: 'true', ...env },
      { registry: [failing], io },
    );

  beforeAll(async () => {
    const dir = await mkdtemp(join(tmpdir(), 'qr-sentry-'));
    config = join(dir, 'config.toml');
    await writeFile(config, '[graphql]\nserver = "file://x"\n');
  });
  beforeEach(async () => {
    log = '';
    sentry = await startFakeSentry();
  });
  afterEach(() => sentry.close());

  it('with SENTRY_EVENT_LEVEL=ERROR, reports the unexpected failure with its stack, secrets masked', async () => {
    expect(await run({ SENTRY_DSN: sentry.dsn, SENTRY_EVENT_LEVEL: 'error' })).toBe(1);
    const events = sentry.events();
    // (A message event carries a stack too, with no exception type.)
    const crash = events.find((e) =>
      JSON.stringify(e.exception ?? {}).includes('"type":"Error"'),
    ) as {
      level: string;
      tags: Record<string, string>;
      exception: { values: { type: string; value: string; stacktrace: { frames: unknown[] } }[] };
    };
    expect(crash).toBeDefined();
    expect(crash.level).toBe('error');
    expect(crash.tags.integration).toBe('sentry-probe');
    const [error] = crash.exception.values;
    expect(error?.type).toBe('Error');
    expect(error?.value).toBe('Vault refused the token ***');
    expect(error?.stacktrace.frames.length).toBeGreaterThan(0);
    expect(events.map((e) => e.message ?? (e.logentry as { message?: string })?.message)).toEqual(
      expect.arrayContaining(['an ordinary error', 'a critical one, with *** in it']),
    );
    // Nothing sent, and nothing logged, holds the secret.
    expect(sentry.bodies.length).toBeGreaterThan(0);
    for (const body of sentry.bodies) expect(body).not.toContain(SECRET);
    expect(log).not.toContain(SECRET);
  });

  it('by default (CRITICAL) reports only critical records, as the original', async () => {
    expect(await run({ SENTRY_DSN: sentry.dsn })).toBe(1);
    const events = sentry.events();
    expect(events).toHaveLength(1);
    expect(events[0]?.level).toBe('fatal');
    expect(JSON.stringify(events[0])).toContain('a critical one, with *** in it');
  });

  it('sends nothing without SENTRY_DSN', async () => {
    expect(await run({})).toBe(1);
    expect(sentry.items).toEqual([]);
  });

  it('refuses a SENTRY_EVENT_LEVEL it does not know, naming it', async () => {
    expect(await run({ SENTRY_DSN: sentry.dsn, SENTRY_EVENT_LEVEL: 'WARNING' })).toBe(1);
    expect(log).toContain("SENTRY_EVENT_LEVEL must be CRITICAL or ERROR, got 'WARNING'");
    expect(log).not.toContain('    at ');
    expect(sentryEventLevel(undefined)).toBe('CRITICAL');
  });

  it('qontract-reconcile (the command) reports too', async () => {
    const bin = new URL('../bin/qontract-reconcile.js', import.meta.url).pathname;
    const child = spawn(
      process.execPath,
      [bin, '--config', `${config}.missing`, '--dry-run', 'openshift-namespaces'],
      {
        env: { ...process.env, SENTRY_DSN: sentry.dsn, SENTRY_EVENT_LEVEL: 'ERROR' },
        stdio: 'ignore',
      },
    );
    expect(await new Promise((resolve) => child.on('exit', resolve))).toBe(1);
    expect(sentry.events().map((e) => e.tags)).toEqual([{ integration: 'openshift-namespaces' }]);
  });

  it('masks a secret in every form the redactor knows, wherever it sits in the event', () => {
    const redactor = new SecretRedactor();
    redactor.add('pa"ss:word');
    const event = {
      message: 'login with pa"ss:word',
      breadcrumbs: [
        { data: { url: `https://x/?t=${Buffer.from('pa"ss:word').toString('base64')}` } },
      ],
    };
    expect(scrubbed(event, redactor)).toEqual({
      message: 'login with ***',
      breadcrumbs: [{ data: { url: 'https://x/?t=***' } }],
    });
  });
});
