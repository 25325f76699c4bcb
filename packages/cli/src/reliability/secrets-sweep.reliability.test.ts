import { readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createMetrics, serveMetrics } from '@qontract/core';
import { describe, expect, it, onTestFinished } from 'vitest';
import { integrations } from '../all-integrations.ts';
import { startExampleGitHub } from '../e2e/github-fixture.ts';
import { useGitlabEnvironment } from '../e2e/gitlab-environment.ts';
import { runCli } from '../main.ts';
import { moveSecretsToVault } from './services.ts';

// The secrets sweep: every registered integration, dry-run and wet, at
// DEBUG, with every secret served by Vault; no secret value may show up in
// any log line, plan file, error message or metric, whether plain, base64-
// or URL-encoded.

const start = useGitlabEnvironment();

/** The forms a secret could leak in. */
function encodings(secret: string): string[] {
  return [
    secret,
    Buffer.from(secret).toString('base64'),
    Buffer.from(secret).toString('base64url'),
    encodeURIComponent(secret),
  ];
}

interface Output {
  readonly where: string;
  readonly text: string;
}

describe('secrets sweep', () => {
  it('no integration leaks a secret into logs, plans, errors or /metrics', {
    timeout: 300_000,
  }, async () => {
    const e = await start();
    const github = await startExampleGitHub();
    const { env: kube } = e;
    const { vault, secrets } = await moveSecretsToVault(kube.appInterfaceDir, kube.configPath);
    const metrics = createMetrics();
    const server = await serveMetrics(metrics.registry, 0, '127.0.0.1');
    onTestFinished(() => new Promise<void>((r) => server.close(() => r())));

    const processEnv = {
      CLUSTER_REACHABILITY_TIMEOUT_SECS: '30',
      QONTRACT_CLUSTER_RETRY_UNIT_MS: '20',
      GITHUB_API: github.url,
      QONTRACT_GITHUB_WRITE_INTERVAL_MS: '0',
      QONTRACT_GITHUB_RETRY_UNIT_MS: '20',
      PAGERDUTY_API_URL: e.pagerduty.url,
    };
    const outputs: Output[] = [];
    const codes: Record<string, number> = {};
    const run = async (name: string, dryRun: boolean) => {
      const planOut = join(kube.dir, `${name}-${dryRun ? 'dry' : 'wet'}.plan.json`);
      let text = '';
      const sink = { write: (s: string) => (text += s) };
      const argv = [
        '--config',
        kube.configPath,
        '--log-level',
        'DEBUG',
        '--log-format',
        'json',
        ...(dryRun ? ['--dry-run'] : []),
        '--plan-out',
        planOut,
        name,
      ];
      let code: number;
      try {
        code = await runCli(argv, {
          env: processEnv,
          io: { stdout: sink, stderr: sink },
          metrics,
        });
      } catch (err) {
        // A crash's message and stack are output too.
        text += `\n${err instanceof Error ? `${err.message}\n${err.stack}` : String(err)}`;
        code = -1;
      }
      codes[`${name}${dryRun ? ' --dry-run' : ''}`] = code;
      outputs.push({ where: `${name} (${dryRun ? 'dry-run' : 'wet'}) output`, text });
      const plan = await readFile(planOut, 'utf8').catch(() => undefined);
      if (plan !== undefined) outputs.push({ where: `${name} --plan-out`, text: plan });
    };

    // Namespaces first, as production does; then everything, dry and wet.
    await run('openshift-namespaces', false);
    for (const integration of integrations) {
      await run(integration.name, true);
      await run(integration.name, false);
    }
    const { port } = server.address() as AddressInfo;
    const scrape = await fetch(`http://127.0.0.1:${port}/metrics`);
    outputs.push({ where: '/metrics', text: await scrape.text() });

    // Service-account tokens the cluster minted during the runs are secrets too.
    const minted = ['appint-ex-01', 'appint-ex-02', 'appint-ex-k8s'].flatMap((cluster) =>
      kube.server
        .list(cluster, 'v1', 'Secret')
        .flatMap((s) => {
          const data = (s as { data?: Record<string, string> }).data ?? {};
          return [data.token, data.password].filter((v) => v !== undefined);
        })
        .map((b64) => Buffer.from(b64, 'base64').toString()),
    );

    const leaks: string[] = [];
    for (const secret of [...secrets, ...minted]) {
      for (const form of encodings(secret)) {
        for (const { where, text } of outputs) {
          if (text.includes(form)) leaks.push(`${where}: ${form}`);
        }
      }
    }
    // Every integration ran to an end: no crash (-1), no usage error (2). An
    // integration the example app-interface does not declare ends with 4.
    expect(
      Object.values(codes).filter((c) => c < 0 || c === 2),
      JSON.stringify(codes),
    ).toEqual([]);
    expect(Object.values(codes).filter((c) => c === 0).length).toBeGreaterThan(20);
    expect(secrets.length).toBeGreaterThan(5);
    // DEBUG records were written (the level the sweep is about) and Vault was read.
    expect(outputs.some((o) => o.text.includes('"level":20'))).toBe(true);
    expect(vault.requestLog.length).toBeGreaterThan(0);
    expect(leaks).toEqual([]);
  });
});
