import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type FakeKubeApiServer, startFakeKubeApiServer } from '@qontract/fake-kube-apiserver';
import { type FakeGitHub, startFakeGitHub } from '@qontract/testing/fake-github';
import { type FakeRegistry, startFakeRegistry } from '@qontract/testing/fake-registry';
import { parse as parseToml, stringify as stringifyToml } from 'smol-toml';
import { stringify } from 'yaml';
import type { ChildTask } from './child-tasks.ts';
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

/** What the saas files' targets are: the targets (`saas file/target`) whose REPLICAS differ. */
interface SaasFilesInput {
  readonly scale: SaasScale;
  readonly registry: string;
  readonly shaOf: (f: number) => string;
  readonly changed?: ReadonlySet<string>;
}

/**
 * The saas files: half of each saas file's targets follow `main`, the other
 * half pin the commit `main` points at (per repository two refs resolve to one
 * commit, so one file fetch serves all four targets); a `changed` target has
 * another REPLICAS (a config change of that target alone).
 */
function saasFiles(dir: string, input: SaasFilesInput): Array<[string, string]> {
  const { scale, registry, shaOf } = input;
  const files: Array<[string, string]> = [];
  for (let f = 0; f < scale.saasFiles; f++) {
    const name = appName(f);
    const doc = {
      $schema: '/app-sre/saas-file-2.yml',
      labels: {},
      name: `saas-${name}`,
      displayName: name,
      description: 'A generated saas file of the benchmark tree.',
      app: { $ref: '/services/bench/app.yml' },
      pipelinesProvider: { $ref: PROVIDER_PATH },
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
            const replicas = 1 + (t % 2) + (input.changed?.has(`${f}/${t}`) ? 10 : 0);
            return {
              namespace: { $ref: nsPath(c, n) },
              ref: t < scale.targets / 2 ? 'main' : shaOf(f),
              parameters: { REPLICAS: replicas },
            };
          }),
        },
      ],
    };
    files.push([
      join(dir, 'data', `services/bench/cicd/saas-${name}.yml`),
      `---\n${stringify(doc, { lineWidth: 0 })}`,
    ]);
  }
  return files;
}

const PROVIDER_PATH = '/app-sre/pipelines-providers/bench.yml';
const nsPath = (c: number, n: number) =>
  `/openshift/${clusterName(c)}/namespaces/${namespaceName(n)}.yml`;

/**
 * The app-interface tree: the openshift-resources benchmark tree's clusters
 * and namespaces (no openshift resources), a Tekton pipelines provider in the
 * first namespace of the first cluster, the default GitHub org, and the saas
 * files.
 */
async function writeSaasTree(
  dir: string,
  endpoints: readonly { name: string; url: string; token: string }[],
  input: SaasFilesInput,
): Promise<number> {
  const { scale } = input;
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
  const files = saasFiles(dir, input);
  files.push([
    join(dir, 'data', PROVIDER_PATH),
    `---\n${stringify(
      {
        $schema: '/app-sre/pipelines-provider-1.yml',
        labels: {},
        name: 'tekton-bench',
        description: 'Tekton of the benchmark tree.',
        provider: 'tekton',
        namespace: { $ref: nsPath(0, 0) },
        defaults: { $ref: '/app-sre/tekton-provider-defaults/defaults.yml' },
      },
      { lineWidth: 0 },
    )}`,
  ]);
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
 * The saas tree and the fakes it points at (clusters, GitHub, registry):
 * what every scenario over the saas files starts from.
 */
export interface SaasBench {
  readonly server: FakeKubeApiServer;
  readonly github: FakeGitHub;
  readonly registry: FakeRegistry;
  readonly clusters: readonly string[];
  readonly configPath: string;
  /** Files of the tree. */
  readonly files: number;
  /** A run of `integration` in a fresh child, against the fakes. */
  task(integration: string, dryRun: boolean, threadPoolSize: number): ChildTask;
  /** The same latency at the clusters, GitHub and the registry. */
  setLatency(ms: number): void;
  /** Writes the saas files again, the `changed` targets (`saas file/target`) with another config. */
  rewriteSaasFiles(changed: ReadonlySet<string>): Promise<void>;
  /** A new commit on `main` of saas file `f`'s repository (the same template): its sha. */
  moveMain(f: number): string;
  close(): Promise<void>;
}

/**
 * Starts the fakes and writes the tree for `scale`; `config` adds sections
 * to the run's config.toml (e.g. `[state]`).
 */
export async function startSaasBench(
  scale: SaasScale,
  config: Record<string, unknown> = {},
): Promise<SaasBench> {
  const dir = await mkdtemp(join(tmpdir(), 'qr-bench-saas-'));
  const names = Array.from({ length: scale.clusters }, (_, c) => clusterName(c));
  const server = await startFakeKubeApiServer({
    clusters: names.map((name) => ({ name, token: `${name}-bench-token`, openshift: true })),
    maxLogEntries: 2_000_000,
  });
  const github = await startFakeGitHub({ token: GITHUB_TOKEN, rateLimit: { limit: 10_000_000 } });
  const registry = await startFakeRegistry();
  const close = async () => {
    await Promise.all([server.close(), github.close(), registry.close()]);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const shas: string[] = [];
    for (let f = 0; f < scale.saasFiles; f++) {
      github.addRepo('bench', appName(f));
      const sha = github.pushCommit(repoOf(f), 'main', { 'openshift/template.yaml': template(f) });
      shas.push(sha);
      registry.pushImage(`bench/${appName(f)}`, sha.slice(0, 7));
    }
    for (const name of names) {
      server.seed(
        name,
        Array.from({ length: scale.namespaces }, (_, n) => ({
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
    const input = { scale, registry: registry.host, shaOf: (f: number) => shas[f]! };
    const files = await writeSaasTree(treeDir, endpoints, input);
    const toml = parseToml(benchConfigToml(`file://${treeDir}`, endpoints)) as Record<
      string,
      unknown
    >;
    toml.github = { 'app-sre-example': { token: GITHUB_TOKEN } };
    const configPath = join(dir, 'config.toml');
    await writeFile(configPath, stringifyToml({ ...toml, ...config }));
    return {
      server,
      github,
      registry,
      clusters: names,
      configPath,
      files,
      task: (integration, dryRun, threadPoolSize) => ({
        kind: 'integration',
        integration,
        configPath,
        dryRun,
        threadPoolSize,
        env: { GITHUB_API: github.url, QONTRACT_SAAS_DEPLOY_ROLLOUT_POLL_MS: '20' },
      }),
      setLatency(ms) {
        for (const name of names) server.faults.set(name, { latencyMs: ms });
        github.latencyMs = ms;
        registry.latencyMs = ms;
      },
      rewriteSaasFiles: (changed) => writeTreeFiles(saasFiles(treeDir, { ...input, changed })),
      moveMain: (f) =>
        github.pushCommit(repoOf(f), 'main', { 'openshift/template.yaml': template(f) }),
      close,
    };
  } catch (e) {
    await close();
    throw e;
  }
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
  const bench = await startSaasBench(s.scale);
  const { server, github, registry } = bench;
  try {
    const task = (dryRun: boolean) => bench.task('openshift-saas-deploy', dryRun, s.concurrency);
    const seeded = await measureInChild(task(false));
    if (seeded.exitCode !== 0) throw new Error(`seeding run exited ${seeded.exitCode}`);

    bench.setLatency(s.latencyMs);
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
      files: bench.files,
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
    await bench.close();
  }
}
