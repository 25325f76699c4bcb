import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Metrics } from '@qontract/core';
import type { ExampleEnvironment, FakeGitHub } from '@qontract/testing';
import { type ExampleSaasSeed, seedExampleSaasRepos } from '@qontract/testing/example-saas';
import { startFakeGitHub } from '@qontract/testing/fake-github';
import { type FakeGitlab, startFakeGitlab } from '@qontract/testing/fake-gitlab';
import { type FakePrometheus, startFakePrometheus } from '@qontract/testing/fake-prometheus';
import { type FakeRegistry, startFakeRegistry } from '@qontract/testing/fake-registry';
import { afterEach } from 'vitest';
import { EXAMPLE_TOKEN } from './github-fixture.ts';
import { EXAMPLE_GITLAB_URL, GITLAB_TOKEN } from './gitlab-environment.ts';
import {
  type CliRun,
  rewriteAppInterface,
  runQontractReconcile,
  useExampleEnvironment,
} from './harness.ts';

/** The example saas files' registry (`imagePatterns`, `IMAGE`). */
const EXAMPLE_REGISTRY = '127.0.0.1:16463';

interface SaasRunOptions {
  readonly dryRun?: boolean;
  readonly env?: Record<string, string>;
  readonly metrics?: Metrics;
}

export interface SaasEnvironment {
  readonly env: ExampleEnvironment;
  readonly github: FakeGitHub;
  readonly gitlab: FakeGitlab;
  readonly registry: FakeRegistry;
  readonly seed: ExampleSaasSeed;
  /** `qontract-reconcile [--dry-run] openshift-saas-deploy ARGS` against the fakes. */
  run(args?: readonly string[], options?: SaasRunOptions): Promise<CliRun>;
  /** `qontract-reconcile [--dry-run] INTEGRATION ARGS` against the fakes (the triggers, ...). */
  runIntegration(
    integration: string,
    args?: readonly string[],
    options?: SaasRunOptions,
  ): Promise<CliRun>;
  /** Mutating requests at every fake (clusters, GitHub, GitLab, registry). */
  writes(): number;
}

/**
 * The example environment (namespaces created, unless `namespaces` is false)
 * with a fake GitHub, GitLab and registry seeded with what the example saas
 * files deploy; the app-interface copy points at them. Closed when the test
 * ends.
 */
export function useSaasEnvironment(): (options?: {
  namespaces?: boolean;
}) => Promise<SaasEnvironment> {
  const start = useExampleEnvironment();
  const fakes: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    await Promise.all(fakes.splice(0).map((f) => f.close()));
  });
  return async ({ namespaces = true } = {}) => {
    const [env, github, gitlab, registry] = await Promise.all([
      start({ namespaces }),
      startFakeGitHub({ token: EXAMPLE_TOKEN }),
      startFakeGitlab({ token: GITLAB_TOKEN, tls: true }),
      startFakeRegistry(),
    ]);
    fakes.push(github, gitlab, registry);
    await rewriteAppInterface(env.appInterfaceDir, {
      [EXAMPLE_GITLAB_URL]: gitlab.url,
      [EXAMPLE_REGISTRY]: registry.host,
    });
    const seed = await seedExampleSaasRepos({ github, gitlab, registry });
    const runIntegration = (
      integration: string,
      args: readonly string[] = [],
      { dryRun = false, env: vars = {}, metrics }: SaasRunOptions = {},
    ) =>
      runQontractReconcile(
        ['--config', env.configPath, ...(dryRun ? ['--dry-run'] : []), integration, ...args],
        {
          GITHUB_API: github.url,
          QONTRACT_GITHUB_RETRY_UNIT_MS: '20',
          QONTRACT_GITLAB_RETRY_UNIT_MS: '20',
          QONTRACT_SAAS_DEPLOY_ROLLOUT_POLL_MS: '50',
          ...vars,
        },
        undefined,
        metrics,
      );
    return {
      env,
      github,
      gitlab,
      registry,
      seed,
      run: (args, options) => runIntegration('openshift-saas-deploy', args, options),
      runIntegration,
      writes: () =>
        env.server.mutatingRequests().length +
        github.mutatingRequests().length +
        gitlab.mutatingRequests().length +
        registry.mutatingRequests().length,
    };
  };
}

/**
 * The files of the environment's local state store under `state/<integration>`
 * (every integration's when none is given): key → content as written.
 */
export async function stateFiles(
  e: SaasEnvironment,
  integration?: string,
): Promise<Record<string, string>> {
  const dir = join(e.env.dir, '.state', 'state', ...(integration ? [integration] : []));
  const out: Record<string, string> = {};
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    const file = join(entry.parentPath, entry.name);
    out[file.slice(dir.length + 1)] = await readFile(file, 'utf8');
  }
  return out;
}

/** The example Tekton provider's namespace (`tekton-appint-ex-01`). */
export const PIPELINES = { cluster: 'appint-ex-01', namespace: 'app-sre-pipelines' } as const;

/** A PipelineRun as the triggers create it. */
export interface PipelineRun {
  readonly metadata: {
    readonly name: string;
    readonly resourceVersion?: string;
    readonly labels: Record<string, string>;
    readonly annotations: Record<string, string>;
  };
  readonly spec: { readonly params: ReadonlyArray<{ name: string; value: string }> };
}

/** The PipelineRuns of the example provider namespace, in the order they were created. */
export function pipelineRuns(e: SaasEnvironment): PipelineRun[] {
  return (
    e.env.server.list(
      PIPELINES.cluster,
      'tekton.dev/v1',
      'PipelineRun',
      PIPELINES.namespace,
    ) as unknown as PipelineRun[]
  ).sort((a, b) => Number(a.metadata.resourceVersion) - Number(b.metadata.resourceVersion));
}

/** The example SLO document's availability query, as rendered with its window (28d). */
export const SLO_QUERY =
  'sum(rate(http_requests_total{job="example-app",code!~"5.."}[28d])) / sum(rate(http_requests_total{job="example-app"}[28d]))';

/**
 * The Prometheus servers of the example SLO document, with the example's
 * credentials: `cluster` for production (appint-ex-02's prometheusUrl and
 * automation token), `external` for stage (`prometheusAccess`, Basic). The
 * copy points at them; the caller closes them.
 */
export async function startSloPrometheus(
  e: SaasEnvironment,
): Promise<{ cluster: FakePrometheus; external: FakePrometheus }> {
  const cluster = await startFakePrometheus({ bearerToken: 'appint-ex-02-example-token' });
  const external = await startFakePrometheus({
    basic: { username: 'example-slo-reader', password: 'slo-password-not-real' },
  });
  await rewriteAppInterface(e.env.appInterfaceDir, {
    'https://prometheus.appint-ex-02.example.com': cluster.url,
    'https://prometheus-slo.example.com': external.url,
  });
  return { cluster, external };
}
