import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFakeKubeApiServer } from '@qontract/fake-kube-apiserver';
import { type FakeGitHub, startFakeGitHub } from '@qontract/testing/fake-github';
import { type FakeRegistry, startFakeRegistry } from '@qontract/testing/fake-registry';
import { parse as parseToml, stringify as stringifyToml } from 'smol-toml';
import { stringify } from 'yaml';
import {
  type InFlightSummary,
  inFlightSummary,
  type MeasureOptions,
  measureInChild,
} from './measure.ts';
import { clusterName, namespaceName } from './model.ts';
import { benchConfigToml, REPO_ROOT, writeAppInterfaceTree, writeTreeFiles } from './tree.ts';

const EXAMPLES = join(REPO_ROOT, 'examples/app-interface');
const GITHUB_TOKEN = 'ghp_bench_saas_token';

/** Saas files × targets per resource template, over clusters × namespaces per cluster. */
export interface SaasScale {
  readonly saasFiles: number;
  readonly targets: number;
  readonly clusters: number;
  readonly namespaces: number;
}

export const SAAS_LARGE_SCALE: SaasScale = {
  saasFiles: 500,
  targets: 4,
  clusters: 4,
  namespaces: 50,
};
export const SAAS_SMALL_SCALE: SaasScale = { saasFiles: 4, targets: 4, clusters: 2, namespaces: 2 };

/** A steady-state dry-run of `openshift-saas-deploy` over every saas file of the tree. */
export interface SaasScenario {
  readonly kind: 'saas';
  readonly scale: SaasScale;
  readonly latencyMs: number;
  readonly concurrency: number;
}

export const saasScaleLabel = (s: SaasScale) =>
  `${s.saasFiles} saas files × ${s.targets} targets on ${s.clusters} × ${s.namespaces} namespaces`;

export function saasScenarioName(s: SaasScenario): string {
  return `openshift-saas-deploy steady dry-run @${s.latencyMs}ms`;
}

const appName = (f: number) => `app-${String(f).padStart(4, '0')}`;
const repoOf = (f: number) => `bench/${appName(f)}`;
/** Where target `t` of saas file `f` deploys: spread over every namespace. */
function targetNamespace(scale: SaasScale, f: number, t: number): { c: number; n: number } {
  const k = (f * scale.targets + t) % (scale.clusters * scale.namespaces);
  return { c: k % scale.clusters, n: Math.floor(k / scale.clusters) };
}

/** The OpenShift template every benchmark repository holds: three objects per target. */
function template(f: number): string {
  const name = appName(f);
  return stringify({
    apiVersion: 'template.openshift.io/v1',
    kind: 'Template',
    metadata: { name },
    parameters: [
      { name: 'IMAGE', required: true },
      { name: 'IMAGE_TAG', required: true },
      { name: 'REPLICAS', value: '1' },
    ],
    objects: [
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name, labels: { app: name } },
        spec: {
          replicas: `$\{{REPLICAS}}`,
          selector: { matchLabels: { app: name } },
          template: {
            metadata: { labels: { app: name } },
            spec: {
              containers: [
                {
                  name: 'web',
                  image: `$\{IMAGE}:$\{IMAGE_TAG}`,
                  envFrom: [{ configMapRef: { name: `${name}-config` } }],
                },
              ],
            },
          },
        },
      },
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name },
        spec: { selector: { app: name }, ports: [{ port: 8080, targetPort: 8080 }] },
      },
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: `${name}-config` },
        data: { LOG_LEVEL: 'info', APP: name },
      },
    ],
  });
}

/**
 * The app-interface tree: the openshift-resources benchmark tree's clusters
 * and namespaces (no openshift resources), a pipelines provider, the default
 * GitHub org, and the saas files. Half of each saas file's targets follow
 * `main`, the other half pin the commit `main` points at: per repository two
 * refs resolve to one commit, so one file fetch serves all four targets.
 */
async function writeSaasTree(
  dir: string,
  scale: SaasScale,
  endpoints: readonly { name: string; url: string; token: string }[],
  registry: string,
  shaOf: (f: number) => string,
): Promise<number> {
  const base = await writeAppInterfaceTree(
    dir,
    { clusters: scale.clusters, namespaces: scale.namespaces, resources: 0 },
    endpoints,
  );
  for (const part of [
    'data/app-sre/tekton-provider-defaults',
    'data/dependencies/github',
    'data/app-sre/integrations/openshift-saas-deploy.yml',
  ]) {
    await cp(join(EXAMPLES, part), join(dir, part), { recursive: true });
  }
  const files: Array<[string, string]> = [];
  const data = (path: string, doc: Record<string, unknown>) =>
    files.push([join(dir, 'data', path), `---\n${stringify(doc, { lineWidth: 0 })}`]);
  const nsPath = (c: number, n: number) =>
    `/openshift/${clusterName(c)}/namespaces/${namespaceName(n)}.yml`;
  data('app-sre/pipelines-providers/bench.yml', {
    $schema: '/app-sre/pipelines-provider-1.yml',
    labels: {},
    name: 'tekton-bench',
    description: 'Tekton of the benchmark tree.',
    provider: 'tekton',
    namespace: { $ref: nsPath(0, 0) },
    defaults: { $ref: '/app-sre/tekton-provider-defaults/defaults.yml' },
  });
  for (let f = 0; f < scale.saasFiles; f++) {
    const name = appName(f);
    data(`services/bench/cicd/saas-${name}.yml`, {
      $schema: '/app-sre/saas-file-2.yml',
      labels: {},
      name: `saas-${name}`,
      displayName: name,
      description: 'A generated saas file of the benchmark tree.',
      app: { $ref: '/services/bench/app.yml' },
      pipelinesProvider: { $ref: '/app-sre/pipelines-providers/bench.yml' },
      managedResourceTypes: ['Deployment', 'Service', 'ConfigMap'],
      imagePatterns: [`${registry}/bench/`],
      parameters: { IMAGE: `${registry}/bench/${name}` },
      resourceTemplates: [
        {
          name,
          url: `https://github.com/${repoOf(f)}`,
          path: '/openshift/template.yaml',
          targets: Array.from({ length: scale.targets }, (_, t) => {
            const { c, n } = targetNamespace(scale, f, t);
            return {
              namespace: { $ref: nsPath(c, n) },
              ref: t < scale.targets / 2 ? 'main' : shaOf(f),
              parameters: { REPLICAS: 1 + (t % 2) },
            };
          }),
        },
      ],
    });
  }
  await writeTreeFiles(files);
  return base.files + files.length;
}

/** What the saas scenario measured. */
export interface SaasResult {
  readonly kind: 'saas';
  readonly scale: SaasScale;
  readonly latencyMs: number;
  readonly concurrency: number;
  readonly files: number;
  readonly wallMs: number;
  readonly cpuMs: number;
  readonly peakRssBytes: number;
  readonly exitCode: number;
  /** GitHub requests of the measured run: ref resolutions, file reads, everything else. */
  readonly github: { readonly commits: number; readonly contents: number; readonly other: number };
  /** Manifest requests the registry answered (token requests aside). */
  readonly manifests: number;
  /** Manifest requests answered 401 before a token was held (the first ones per registry). */
  readonly challenged: number;
  readonly clusterRequests: number;
  readonly writes: number;
  /** How concurrent the run's requests were at each peer (the pool allows `concurrency`). */
  readonly inFlight: {
    readonly github: InFlightSummary;
    readonly registry: InFlightSummary;
    readonly clusters: InFlightSummary;
  };
  /**
   * The fewest requests the run can make: one ref resolution per distinct
   * (repository, ref), one file read per distinct (repository, path,
   * commit), one manifest per distinct image, one list per namespace and
   * managed kind; and its time at the run's concurrency and latency.
   */
  readonly lowerBound: {
    readonly commits: number;
    readonly contents: number;
    readonly manifests: number;
    readonly lists: number;
    readonly ms: number;
  };
  readonly ratio: number | null;
}

function countGithub(github: FakeGitHub, from: number) {
  const log = github.requestLog.slice(from);
  const commits = log.filter((r) => /^\/repos\/[^/]+\/[^/]+\/commits\//.test(r.path)).length;
  const contents = log.filter((r) =>
    /^\/repos\/[^/]+\/[^/]+\/(contents|git\/blobs)\//.test(r.path),
  ).length;
  return { commits, contents, other: log.length - commits - contents };
}

/** Manifest requests answered, and those refused for want of a token (the 401 that tells where to get one). */
function manifestRequests(registry: FakeRegistry, from: number) {
  const manifests = registry.requestLog.slice(from).filter((r) => r.path.includes('/manifests/'));
  const challenged = manifests.filter((r) => r.status === 401).length;
  return { answered: manifests.length - challenged, challenged };
}

/**
 * Seeds the clusters with one wet run (every target deployed), then
 * measures a dry-run in a fresh child process: nothing changed, so the run
 * is reads only: git, registry, the clusters' lists.
 */
export async function runSaasScenario(
  s: SaasScenario,
  measure: MeasureOptions = {},
): Promise<SaasResult> {
  const dir = await mkdtemp(join(tmpdir(), 'qr-bench-saas-'));
  const names = Array.from({ length: s.scale.clusters }, (_, c) => clusterName(c));
  const server = await startFakeKubeApiServer({
    clusters: names.map((name) => ({ name, token: `${name}-bench-token`, openshift: true })),
    maxLogEntries: 2_000_000,
  });
  const github = await startFakeGitHub({ token: GITHUB_TOKEN, rateLimit: { limit: 10_000_000 } });
  const registry = await startFakeRegistry();
  try {
    const shas: string[] = [];
    for (let f = 0; f < s.scale.saasFiles; f++) {
      github.addRepo('bench', appName(f));
      const sha = github.pushCommit(repoOf(f), 'main', { 'openshift/template.yaml': template(f) });
      shas.push(sha);
      registry.pushImage(`bench/${appName(f)}`, sha.slice(0, 7));
    }
    for (const name of names) {
      server.seed(
        name,
        Array.from({ length: s.scale.namespaces }, (_, n) => ({
          apiVersion: 'v1',
          kind: 'Namespace',
          metadata: { name: namespaceName(n) },
        })),
      );
    }
    const endpoints = names.map((name) => ({
      name,
      url: server.cluster(name).url,
      token: `${name}-bench-token`,
    }));
    const treeDir = join(dir, 'app-interface');
    const files = await writeSaasTree(treeDir, s.scale, endpoints, registry.host, (f) => shas[f]!);
    const config = parseToml(benchConfigToml(`file://${treeDir}`, endpoints)) as Record<
      string,
      unknown
    >;
    config.github = { 'app-sre-example': { token: GITHUB_TOKEN } };
    const configPath = join(dir, 'config.toml');
    await writeFile(configPath, stringifyToml(config));
    const task = (dryRun: boolean) =>
      ({
        kind: 'integration',
        integration: 'openshift-saas-deploy',
        configPath,
        dryRun,
        threadPoolSize: s.concurrency,
        env: { GITHUB_API: github.url, QONTRACT_SAAS_DEPLOY_ROLLOUT_POLL_MS: '20' },
      }) as const;
    const seeded = await measureInChild(task(false));
    if (seeded.exitCode !== 0) throw new Error(`seeding run exited ${seeded.exitCode}`);

    for (const name of names) server.faults.set(name, { latencyMs: s.latencyMs });
    github.latencyMs = s.latencyMs;
    registry.latencyMs = s.latencyMs;
    const marks = {
      github: github.requestLog.length,
      registry: registry.requestLog.length,
      cluster: server.requests().length,
      writes: server.mutatingRequests().length,
    };
    for (const peer of [github, registry, server]) peer.inFlight.reset();
    const m = await measureInChild(task(true), measure);
    const githubCounts = countGithub(github, marks.github);
    const manifests = manifestRequests(registry, marks.registry);
    const bound = {
      commits: s.scale.saasFiles * Math.min(2, s.scale.targets),
      contents: s.scale.saasFiles,
      manifests: s.scale.saasFiles,
      lists:
        Math.min(s.scale.clusters * s.scale.namespaces, s.scale.saasFiles * s.scale.targets) * 3,
    };
    const boundRequests = bound.commits + bound.contents + bound.manifests + bound.lists;
    const boundMs = (boundRequests / Math.max(1, s.concurrency)) * s.latencyMs;
    return {
      kind: 'saas',
      scale: s.scale,
      latencyMs: s.latencyMs,
      concurrency: s.concurrency,
      files,
      wallMs: m.wallMs,
      cpuMs: m.cpuMs,
      peakRssBytes: m.peakRssBytes,
      exitCode: m.exitCode,
      github: githubCounts,
      manifests: manifests.answered,
      challenged: manifests.challenged,
      clusterRequests: server.requests().length - marks.cluster,
      writes:
        server.mutatingRequests().length -
        marks.writes +
        github.mutatingRequests().length +
        registry.mutatingRequests().length,
      inFlight: {
        github: inFlightSummary(github.inFlight),
        registry: inFlightSummary(registry.inFlight),
        clusters: inFlightSummary(server.inFlight),
      },
      lowerBound: { ...bound, ms: boundMs },
      ratio: boundMs > 0 ? m.wallMs / boundMs : null,
    };
  } finally {
    await Promise.all([server.close(), github.close(), registry.close()]);
    await rm(dir, { recursive: true, force: true });
  }
}
