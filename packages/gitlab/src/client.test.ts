import {
  configFromObject,
  createLogger,
  createMetrics,
  DEFAULT_GLOBAL_OPTIONS,
  defineIntegration,
  runIntegration,
  SecretRedactor,
  type SecretRef,
} from '@qontract/core';
import { type FakeGitlab, startFakeGitlab } from '@qontract/testing/fake-gitlab';
import { afterEach, describe, expect, it } from 'vitest';
import type { GitlabApi, GitlabInstanceSettings } from './api.ts';
import { gitlabApi, gitlabClientKey } from './client.ts';

let fake: FakeGitlab | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

function settingsFor(run: Parameters<typeof defineIntegration>[0]['run'], extra = {}) {
  const redactor = new SecretRedactor();
  const reads: string[] = [];
  const logs: string[] = [];
  const settings = {
    definition: defineIntegration({
      name: 'gitlab-test',
      version: '0.1.0',
      description: 't',
      options: {},
      run,
    }),
    options: {},
    globals: { ...DEFAULT_GLOBAL_OPTIONS, configPath: '' },
    config: configFromObject({ graphql: { server: 'file://x' } }),
    log: createLogger({
      level: 'DEBUG',
      dryRun: false,
      redactor,
      destination: { write: (s: string) => logs.push(s) },
    }),
    redactor,
    env: { vars: {} },
    secrets: () => ({
      read: async (ref: SecretRef) => {
        reads.push(`${ref.path}#${ref.field}`);
        return fake?.token ?? '';
      },
      readAll: async () => ({}),
    }),
    ...extra,
  };
  return { settings, reads, logs };
}

describe('gitlabApi', () => {
  it("creates one client per run and instance, with the instance's token from the secret reader", async () => {
    const f = await startFakeGitlab({ token: 'glpat-from-vault', tls: true });
    fake = f;
    f.addGroup('team');
    const instance: GitlabInstanceSettings = {
      name: 'gitlab',
      url: f.url,
      token: { path: 'app-sre/creds/gitlab', field: 'token' },
      sslVerify: false,
    };
    const other: GitlabInstanceSettings = { ...instance, name: 'other' };
    const seen: GitlabApi[] = [];
    const metrics = createMetrics();
    const { settings, reads } = settingsFor(
      async (ctx) => {
        seen.push(
          await gitlabApi(ctx, instance),
          await gitlabApi(ctx, instance),
          await gitlabApi(ctx, other),
        );
        await seen[0]?.getGroup('team');
      },
      { metrics },
    );
    const result = await runIntegration(settings);
    expect(result.exitCode).toBe(0);
    expect(seen[0]).toBe(seen[1]);
    expect(seen[2]).not.toBe(seen[0]);
    expect(reads).toEqual(['app-sre/creds/gitlab#token', 'app-sre/creds/gitlab#token']);
    expect(f.requestLog).toHaveLength(1);
    // Each request is counted under the original's metric name.
    expect(await metrics.registry.metrics()).toContain(
      'qontract_reconcile_gitlab_request_total{integration="gitlab-test"} 1',
    );
  });

  it('takes a pre-built client by the instance key (tests, the demo)', async () => {
    const instance: GitlabInstanceSettings = {
      name: 'gitlab',
      url: 'https://gitlab.invalid',
      token: { path: 'p', field: 'f' },
    };
    const prebuilt = { url: 'https://gitlab.invalid' } as GitlabApi;
    let got: GitlabApi | undefined;
    const { settings, reads } = settingsFor(
      async (ctx) => {
        got = await gitlabApi(ctx, instance);
      },
      { clients: new Map([[gitlabClientKey(instance).id, prebuilt]]) },
    );
    expect((await runIntegration(settings)).exitCode).toBe(0);
    expect(got).toBe(prebuilt);
    expect(reads).toEqual([]);
  });
});
