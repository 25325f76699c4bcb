import type { ExampleEnvironment } from '@qontract/testing';
import { beforeAll, describe, expect, it } from 'vitest';
import { messages, runQontractReconcile, useExampleEnvironment } from './harness.ts';

const start = useExampleEnvironment();
let env: ExampleEnvironment;
beforeAll(async () => {
  // Resources live in namespaces: create them first, as production does.
  env = await start({ namespaces: true });
});

/** dry-run (no writes) → wet run → second wet run (no writes); returns the wet run's log lines. */
async function converge(integration: string): Promise<string[]> {
  const { server, configPath } = env;
  server.resetLog();
  const dry = await runQontractReconcile(['--config', configPath, '--dry-run', integration]);
  expect(dry.code).toBe(0);
  expect(server.mutatingRequests()).toEqual([]);
  const wet = await runQontractReconcile(['--config', configPath, integration]);
  expect(wet.code).toBe(0);
  server.resetLog();
  const again = await runQontractReconcile(['--config', configPath, integration]);
  expect(again.code).toBe(0);
  expect(server.mutatingRequests()).toEqual([]);
  return messages(wet);
}

describe('the siblings of openshift-resources', () => {
  it('openshift-vault-secrets builds Secrets from the secret store, with its own identity', async () => {
    const lines = await converge('openshift-vault-secrets');
    expect(lines).toContain(
      "['apply', 'privileged=False', 'appint-ex-01', 'example-app-stage', 'Secret', 'example-app-db']",
    );
    const secret = env.server.get(
      'appint-ex-01',
      'v1',
      'Secret',
      'example-app-stage',
      'example-app-db',
    ) as {
      type: string;
      data: Record<string, string>;
      metadata: { labels: Record<string, string>; annotations: Record<string, string> };
    };
    expect(Buffer.from(secret.data.password!, 'base64').toString()).toBe('stage-password-not-real');
    expect(secret.metadata.labels).toMatchObject({ app: 'example-app' });
    expect(secret.metadata.annotations['qontract.integration']).toBe('openshift-vault-secrets');
    expect(secret.metadata.annotations['example.com/rotated-by']).toBe('vault');
  });

  it('openshift-routes manages the Routes', async () => {
    const lines = await converge('openshift-routes');
    expect(
      lines.some((l) =>
        l.startsWith("['apply', 'privileged=False', 'appint-ex-01', 'example-app-stage', 'Route'"),
      ),
    ).toBe(true);
    const route = env.server.get(
      'appint-ex-01',
      'route.openshift.io/v1',
      'Route',
      'example-app-stage',
      'example-app',
    ) as {
      metadata: { annotations: Record<string, string> };
    };
    expect(route.metadata.annotations['qontract.integration']).toBe('openshift-routes');
  });

  it('openshift-prometheus-rules manages PrometheusRules with html_url on annotated rules', async () => {
    const lines = await converge('openshift-prometheus-rules');
    expect(
      lines.some((l) => l.includes("'PrometheusRule.monitoring.coreos.com', 'example-app-rules'")),
    ).toBe(true);
    const rule = env.server.get(
      'appint-ex-01',
      'monitoring.coreos.com/v1',
      'PrometheusRule',
      'example-app-stage',
      'example-app-rules',
    ) as {
      metadata: { annotations: Record<string, string> };
      spec: { groups: Array<{ rules: Array<{ annotations?: Record<string, string> }> }> };
    };
    expect(rule.metadata.annotations['qontract.integration_version']).toBe('1.0.0');
    expect(rule.spec.groups[0]!.rules[0]!.annotations?.html_url).toBe(
      'https://github.com/example/app-interface/blob/master/resources/observability/example-app-rules.yml',
    );
  });
});
