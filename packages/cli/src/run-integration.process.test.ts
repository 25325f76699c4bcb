import { spawn } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startExampleEnvironment } from '@qontract/testing';
import { startHttpFake } from '@qontract/testing/http-fake';
import { makePrivateCa } from '@qontract/testing/private-ca';
import { describe, expect, it } from 'vitest';
import { runCli } from './main.ts';

const BIN = fileURLToPath(new URL('../bin/run-integration.js', import.meta.url));

describe('run-integration as a process', () => {
  it('stops on SIGTERM after the run in progress, exiting with its code', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'qr-sigterm-'));
    const config = join(dir, 'config.toml');
    // No app-interface behind this: each run fails fast (exit 1), the loop sleeps 600 s in between.
    await writeFile(config, `[graphql]\nserver = "file://${join(dir, 'missing')}"\n`);
    const child = spawn(process.execPath, [BIN], {
      env: {
        ...process.env,
        INTEGRATION_NAME: 'openshift-namespaces',
        CONFIG: config,
        DRY_RUN: '--dry-run',
        PROMETHEUS_PORT: '0',
        SLEEP_DURATION_SECS: '600',
        LOG_FORMAT: 'json',
      },
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    let log = '';
    const finished = new Promise<number | null>((resolve) =>
      child.on('exit', (code) => resolve(code)),
    );
    await new Promise<void>((resolve) => {
      child.stdout.on('data', (chunk: Buffer) => {
        log += chunk.toString();
        // The first run has finished: the loop is now sleeping.
        if (log.includes('openshift-namespaces finished')) resolve();
      });
    });
    child.kill('SIGTERM');
    const code = await finished;
    expect(code).toBe(1);
    expect(log).toContain('received SIGTERM');
    expect(log).toContain('stopping after a stop signal; last exit code 1');
  });

  it('aborts the requests in flight on SIGTERM: a run waiting on a hung cluster ends within seconds', async () => {
    const env = await startExampleEnvironment();
    const quiet = { stdout: { write: () => true }, stderr: { write: () => true } };
    const clusterEnv = { CLUSTER_REACHABILITY_TIMEOUT_SECS: '30' };
    let child: ReturnType<typeof spawn> | undefined;
    try {
      const namespaces = ['--config', env.configPath, 'openshift-namespaces'];
      expect(await runCli(namespaces, { env: clusterEnv, io: quiet })).toBe(0);
      env.server.faults.set('appint-ex-02', { verb: 'list', hang: true });
      env.server.resetLog();
      child = spawn(process.execPath, [BIN], {
        env: {
          ...process.env,
          ...clusterEnv,
          INTEGRATION_NAME: 'openshift-resources',
          CONFIG: env.configPath,
          RUN_ONCE: 'true',
          LOG_FORMAT: 'json',
        },
        stdio: ['ignore', 'pipe', 'ignore'],
      });
      let log = '';
      child.stdout?.on('data', (chunk: Buffer) => {
        log += chunk.toString();
      });
      const running = child;
      const finished = new Promise<number | null>((resolve) =>
        running.on('exit', (code) => resolve(code)),
      );
      // The run is waiting on the hung cluster's list.
      await expect
        .poll(() => env.server.requests({ cluster: 'appint-ex-02', verb: 'list' }).length, {
          timeout: 30_000,
          interval: 50,
        })
        .toBeGreaterThan(0);
      const signalled = performance.now();
      child.kill('SIGTERM');
      const code = await finished;
      // The hung request alone would wait 60 s (CLUSTER_REQUEST_TIMEOUT_SECS); generous for a loaded machine.
      expect(performance.now() - signalled).toBeLessThan(15_000);
      expect(code).toBe(1);
      expect(log).toContain('received SIGTERM');
      expect(log).toContain('interrupted by a stop signal');
      expect(log).not.toContain('unexpected error');
      // The clusters read in time may have had their changes applied (the engine does not wait
      // for the hung one to apply them); nothing was written to the hung cluster, nothing deleted.
      const written = env.server.mutatingRequests();
      expect(written.filter((r) => r.cluster === 'appint-ex-02')).toEqual([]);
      expect(written.filter((r) => r.verb === 'delete')).toEqual([]);
    } finally {
      child?.kill('SIGKILL');
      await env.close();
    }
  }, 90_000);

  it('trusts a private CA from the CA bundle (SSL_CERT_FILE, else /etc/pki): a GraphQL server it signed is reached', async () => {
    const ca = await makePrivateCa();
    const graphql = await startHttpFake({
      tls: ca.server,
      handle: () => ({
        status: 200,
        body: { errors: [{ message: 'answered by the internal server' }] },
      }),
    });
    try {
      const dir = await mkdtemp(join(tmpdir(), 'qr-private-ca-'));
      const bundle = join(dir, 'tls-ca-bundle.pem');
      await writeFile(bundle, ca.caCert);
      const config = join(dir, 'config.toml');
      await writeFile(config, `[graphql]\nserver = "${graphql.url}/graphql"\n`);
      const runOnce = async (extra: Record<string, string>) => {
        const { SSL_CERT_FILE: _s, NODE_EXTRA_CA_CERTS: _n, ...inherited } = process.env;
        const child = spawn(process.execPath, [BIN], {
          env: {
            ...inherited,
            ...extra,
            INTEGRATION_NAME: 'openshift-namespaces',
            CONFIG: config,
            DRY_RUN: '--dry-run',
            RUN_ONCE: 'true',
            LOG_FORMAT: 'json',
          },
          stdio: ['ignore', 'pipe', 'ignore'],
        });
        let log = '';
        child.stdout.on('data', (chunk: Buffer) => (log += chunk.toString()));
        await new Promise((resolve) => child.on('exit', resolve));
        return log;
      };
      // (The client retries what fails; the deadline cuts the retries short.)
      const untrusted = await runOnce({ QONTRACT_GQL_DEADLINE_SECS: '2' });
      expect(untrusted).toContain('(UNABLE_TO_VERIFY_LEAF_SIGNATURE)');
      expect(graphql.requestLog).toEqual([]);
      const trusted = await runOnce({ SSL_CERT_FILE: bundle });
      expect(trusted).toContain('answered by the internal server');
      expect(trusted).not.toContain('UNABLE_TO_VERIFY');
      expect(graphql.requestLog.length).toBeGreaterThan(0);
    } finally {
      await graphql.close();
    }
  }, 60_000);
});
