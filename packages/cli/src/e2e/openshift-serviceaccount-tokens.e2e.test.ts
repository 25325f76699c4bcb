import { appendFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ExampleEnvironment } from '@qontract/testing';
import { type FakeVault, startFakeVault } from '@qontract/testing/fake-vault';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runCli } from '../main.ts';
import {
  createNamespaces,
  editFile,
  messages,
  runQontractReconcile,
  useExampleEnvironment,
} from './harness.ts';

type Secret = {
  type?: string;
  metadata: { name: string; annotations?: Record<string, string> };
  data?: Record<string, string>;
};

const start = useExampleEnvironment();
let env: ExampleEnvironment;
let vault: FakeVault;
beforeAll(async () => {
  env = await start();
  vault = await startFakeVault({ mounts: { 'app-sre': { version: 2 } } });
  // --vault-output-path writes to config.toml's [vault], as upstream; reads stay on config.toml
  // because the example's app-interface settings say `vault: false`.
  await appendFile(
    env.configPath,
    `\n[vault]\nserver = "${vault.url}"\ntoken = "${vault.rootToken}"\n`,
  );
  await createNamespaces(env);
  env.server.seed('appint-ex-01', [
    serviceAccount('app-sre-observability', 'prometheus-reader'),
    serviceAccount('app-sre-pipelines', 'deployer'),
  ]);
});
afterAll(async () => vault.close());

const secrets = (cluster: string, namespace: string) =>
  env.server.list(cluster, 'v1', 'Secret', namespace) as unknown as Secret[];
const secret = (cluster: string, namespace: string, name: string) =>
  env.server.get(cluster, 'v1', 'Secret', namespace, name) as unknown as Secret | undefined;
const b64 = (s: string) => Buffer.from(s).toString('base64');

function serviceAccount(namespace: string, name: string) {
  return { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace } };
}

/** The token the cluster's token controller put into the ServiceAccount's token Secret. */
function issuedToken(namespace: string, serviceAccount: string): string | undefined {
  return secrets('appint-ex-01', namespace).find(
    (s) => s.metadata.annotations?.['kubernetes.io/service-account.name'] === serviceAccount,
  )?.data?.token;
}

// Each test runs the CLI several times in a row.
describe('openshift-serviceaccount-tokens end to end', { timeout: 30_000 }, () => {
  it('requests missing token Secrets, copies tokens once they exist, then has nothing to do', async () => {
    const { server, configPath } = env;
    server.resetLog();
    const dry = await runQontractReconcile([
      '--config',
      configPath,
      '--dry-run',
      'openshift-serviceaccount-tokens',
    ]);
    expect(dry.code).toBe(0);
    expect(messages(dry)).toEqual(
      expect.arrayContaining([
        '[appint-ex-01/app-sre-observability] Creating token for service account: prometheus-reader',
        '[appint-ex-01/app-sre-pipelines] Creating token for service account: deployer',
      ]),
    );
    expect(
      messages(dry).some((m) =>
        /^\['apply', 'privileged=False', 'appint-ex-01', 'app-sre-observability', 'Secret', 'prometheus-reader-token-\d{5}'\]$/.test(
          m,
        ),
      ),
    ).toBe(true);
    expect(server.mutatingRequests()).toEqual([]);

    // Run 1: token Secrets are requested next to the ServiceAccounts; no consumer has a token yet.
    const first = await runQontractReconcile([
      '--config',
      configPath,
      'openshift-serviceaccount-tokens',
    ]);
    expect(first.code).toBe(0);
    const requested = secrets('appint-ex-01', 'app-sre-observability');
    expect(requested).toHaveLength(1);
    expect(requested[0]).toMatchObject({
      type: 'kubernetes.io/service-account-token',
      metadata: {
        annotations: {
          'kubernetes.io/service-account.name': 'prometheus-reader',
          'qontract.integration': 'openshift-serviceaccount-tokens-unmanaged',
        },
      },
    });
    expect(secrets('appint-ex-01', 'example-app-stage')).toEqual([]);

    // The cluster's token controller fills them in; run 2 copies the tokens.
    await vi.waitFor(() => {
      expect(issuedToken('app-sre-observability', 'prometheus-reader')).toBeDefined();
      expect(issuedToken('app-sre-pipelines', 'deployer')).toBeDefined();
    });
    const readerToken = issuedToken('app-sre-observability', 'prometheus-reader')!;
    const deployerToken = issuedToken('app-sre-pipelines', 'deployer')!;
    const decoded = (b64token: string) => Buffer.from(b64token, 'base64').toString();
    server.resetLog();
    const second = await runQontractReconcile([
      '--config',
      configPath,
      'openshift-serviceaccount-tokens',
      '--vault-output-path',
      'app-sre/integrations-output',
    ]);
    expect(second.code).toBe(0);
    const copied = secret('appint-ex-01', 'example-app-stage', 'observability-prometheus-reader');
    expect(copied).toMatchObject({
      type: 'Opaque',
      data: { token: readerToken },
      metadata: {
        annotations: {
          'qontract.integration': 'openshift-serviceaccount-tokens',
          'qontract.integration_version': '0.1.0',
        },
      },
    });
    // Shared resources: every app namespace gets the deployer token, across clusters too.
    for (const [cluster, namespace] of [
      ['appint-ex-01', 'example-app-stage'],
      ['appint-ex-02', 'example-app-production'],
    ] as const) {
      expect(
        secret(cluster, namespace, 'appint-ex-01-app-sre-pipelines-deployer')?.data?.token,
      ).toBe(deployerToken);
    }
    // The requested token Secrets are not ours to update.
    expect(
      server.mutatingRequests({ namespace: 'app-sre-observability' }).map((r) => r.verb),
    ).toEqual([]);
    // Vault gets the decoded token per namespace and under shared-resources.
    expect(
      vault.get(
        'app-sre/integrations-output/openshift-serviceaccount-tokens/appint-ex-02/example-app-production/appint-ex-01-app-sre-pipelines-deployer',
      ),
    ).toEqual({ token: decoded(deployerToken) });
    expect(
      vault.get(
        'app-sre/integrations-output/openshift-serviceaccount-tokens/shared-resources/observability-prometheus-reader',
      ),
    ).toEqual({ token: decoded(readerToken) });

    server.resetLog();
    const again = await runQontractReconcile([
      '--config',
      configPath,
      'openshift-serviceaccount-tokens',
    ]);
    expect(again.code).toBe(0);
    expect(server.mutatingRequests()).toEqual([]);
  });

  it('deletes a token Secret of ours nobody wants, never one it does not own', async () => {
    const { server, configPath } = env;
    const ours = secret('appint-ex-01', 'example-app-stage', 'observability-prometheus-reader')!;
    server.seed('appint-ex-01', [
      {
        ...(ours as unknown as Record<string, unknown>),
        metadata: { ...ours.metadata, name: 'stale-token', namespace: 'example-app-stage' },
      },
      {
        apiVersion: 'v1',
        kind: 'Secret',
        type: 'Opaque',
        metadata: { name: 'hand-made', namespace: 'example-app-stage' },
        data: { token: b64('mine') },
      },
    ]);
    const run = await runQontractReconcile([
      '--config',
      configPath,
      'openshift-serviceaccount-tokens',
    ]);
    expect(run.code).toBe(0);
    expect(messages(run)).toContain(
      "['delete', 'privileged=False', 'appint-ex-01', 'example-app-stage', 'Secret', 'stale-token']",
    );
    const names = secrets('appint-ex-01', 'example-app-stage').map((s) => s.metadata.name);
    expect(names).toContain('hand-made');
    expect(names).not.toContain('stale-token');
  });

  it('--watch: puts back an edited token copy without a full run, and writes Vault after the full reconcile', async () => {
    const { server, configPath } = env;
    const copied = secret('appint-ex-01', 'example-app-stage', 'observability-prometheus-reader')!;
    const token = copied.data!.token!;
    const controller = new AbortController();
    let stderr = '';
    const running = runCli(
      [
        '--log-format',
        'json',
        '--config',
        configPath,
        'openshift-serviceaccount-tokens',
        '--vault-output-path',
        'app-sre/watch-output',
        '--watch',
      ],
      {
        env: {
          CLUSTER_REACHABILITY_TIMEOUT_SECS: '30',
          SLEEP_DURATION_SECS: '300',
          WATCH_BUNDLE_POLL_SECS: '0.2',
        },
        signal: controller.signal,
        io: { stdout: { write: () => true }, stderr: { write: (s: string) => (stderr += s) } },
      },
    );
    try {
      await vi.waitFor(() => expect(stderr).toContain('watching '), {
        timeout: 60_000,
        interval: 50,
      });
      expect(
        vault.get(
          'app-sre/watch-output/openshift-serviceaccount-tokens/shared-resources/observability-prometheus-reader',
        ),
      ).toEqual({ token: Buffer.from(token, 'base64').toString() });
      server.resetLog();
      // Another client changes our copy of the token: the watch event is enough to put it back.
      server.seed('appint-ex-01', [
        {
          ...(copied as unknown as Record<string, unknown>),
          metadata: { ...copied.metadata, namespace: 'example-app-stage' },
          data: { token: b64('tampered') },
        },
      ]);
      await vi.waitFor(
        () =>
          expect(
            secret('appint-ex-01', 'example-app-stage', 'observability-prometheus-reader')?.data
              ?.token,
          ).toBe(token),
        { timeout: 20_000, interval: 20 },
      );
      expect(server.requests({ verb: 'list' })).toEqual([]);
      expect(stderr).not.toContain(Buffer.from(token, 'base64').toString());
    } finally {
      controller.abort(new Error('test over'));
    }
    expect(await running).toBe(1);
  });

  it('reports a token name used twice, exits 1 and deletes nothing', async () => {
    const { server, configPath, appInterfaceDir } = env;
    const ours = secret('appint-ex-01', 'example-app-stage', 'observability-prometheus-reader')!;
    server.seed('appint-ex-01', [
      {
        ...(ours as unknown as Record<string, unknown>),
        metadata: { ...ours.metadata, name: 'stale-token', namespace: 'example-app-stage' },
      },
    ]);
    await editFile(
      join(appInterfaceDir, 'data/services/example-app/namespaces/example-app-stage.yml'),
      (text) =>
        text.replace(
          'openshiftServiceAccountTokens:\n',
          `openshiftServiceAccountTokens:
  - namespace:
      $ref: /openshift/appint-ex-01/namespaces/app-sre-pipelines.yml
    serviceAccountName: deployer
    name: observability-prometheus-reader
`,
        ),
    );
    server.resetLog();
    const run = await runQontractReconcile([
      '--config',
      configPath,
      'openshift-serviceaccount-tokens',
    ]);
    expect(run.code).toBe(1);
    const errors = messages(run, 50);
    expect(
      errors.some((m) =>
        m.includes('desired item already exists: Secret/observability-prometheus-reader'),
      ),
    ).toBe(true);
    expect(errors).toContain("'delete' action is disabled due to previous errors (1 held back).");
    expect(server.mutatingRequests({ verb: 'delete' })).toEqual([]);
    expect(secrets('appint-ex-01', 'example-app-stage').map((s) => s.metadata.name)).toContain(
      'stale-token',
    );
  });
});

describe('openshift-serviceaccount-tokens with an unreachable cluster', { timeout: 30_000 }, () => {
  it('copies what it can, reports the cluster, exits 1 and deletes nothing', async () => {
    const down = await start({ down: ['appint-ex-02'] });
    expect(
      (await runQontractReconcile(['--config', down.configPath, 'openshift-namespaces'])).code,
    ).toBe(1);
    down.server.seed('appint-ex-01', [
      serviceAccount('app-sre-observability', 'prometheus-reader'),
      serviceAccount('app-sre-pipelines', 'deployer'),
      {
        apiVersion: 'v1',
        kind: 'Secret',
        type: 'Opaque',
        metadata: {
          name: 'stale-token',
          namespace: 'example-app-stage',
          annotations: {
            'qontract.integration': 'openshift-serviceaccount-tokens',
            'qontract.integration_version': '0.1.0',
            'qontract.sha256sum': 'abc',
          },
        },
        data: { token: b64('old') },
      },
    ]);
    const run = await runQontractReconcile([
      '--config',
      down.configPath,
      'openshift-serviceaccount-tokens',
    ]);
    expect(run.code).toBe(1);
    expect(messages(run, 50).some((m) => m.startsWith('[appint-ex-02] is unreachable'))).toBe(true);
    expect(messages(run, 50)).toContain(
      "'delete' action is disabled due to previous errors (1 held back).",
    );
    // appint-ex-01 still gets its token Secrets requested.
    expect(
      messages(run).some((m) =>
        m.startsWith(
          "['apply', 'privileged=False', 'appint-ex-01', 'app-sre-observability', 'Secret', 'prometheus-reader-token-",
        ),
      ),
    ).toBe(true);
    expect(down.server.mutatingRequests({ verb: 'delete' })).toEqual([]);
  });
});
