import { cp, mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import pLimit from 'p-limit';
import { stringify as stringifyToml } from 'smol-toml';
import { stringify } from 'yaml';
import {
  clusterName,
  desiredBody,
  MANAGED_KINDS,
  namespaceName,
  resourceName,
  type Scale,
} from './model.ts';

export const REPO_ROOT = resolve(import.meta.dirname, '../../..');
const EXAMPLES = join(REPO_ROOT, 'examples/app-interface');

/** Where the simulated clusters of a tree listen, and with which token. */
export interface ClusterEndpoint {
  readonly name: string;
  readonly url: string;
  readonly token: string;
}

export interface GeneratedTree {
  readonly dir: string;
  /** Files written under `data/` and `resources/`. */
  readonly files: number;
}

/** Users granted `view` and `edit` in every namespace: 2 × users RoleBindings per namespace. */
export function rolebindingUsers(scale: Scale): number {
  return Math.max(1, Math.floor(scale.resources / 2));
}

function resourcePath(cluster: string, namespace: string, index: number): string {
  return `/bench/${cluster}/${namespace}/${resourceName(index)}.yml`;
}

/**
 * Writes an app-interface tree for `scale` into `dir`: the example schemas,
 * one cluster file per cluster (pointing at `endpoints`), one namespace file
 * per namespace (managing ConfigMaps, Secrets, Deployments and RoleBindings),
 * one resource file per openshift resource, and per-cluster roles granting
 * view and edit to a pool of users. The same scale always gives the same
 * files (byte for byte, given the same endpoints).
 */
export async function writeAppInterfaceTree(
  dir: string,
  scale: Scale,
  endpoints: readonly ClusterEndpoint[],
): Promise<GeneratedTree> {
  await cp(join(EXAMPLES, 'graphql-schemas'), join(dir, 'graphql-schemas'), { recursive: true });
  await cp(join(EXAMPLES, 'schemas'), join(dir, 'schemas'), { recursive: true });
  // The app's escalation policy and what it refers to come from the examples too.
  for (const part of [
    'data/app-interface',
    'data/products',
    'data/app-sre/escalation-policies',
    'data/dependencies/pagerduty',
    'data/dependencies/slack',
  ]) {
    await cp(join(EXAMPLES, part), join(dir, part), { recursive: true });
  }
  const files: Array<[string, string]> = [];
  const data = (path: string, doc: Record<string, unknown>) =>
    files.push([join(dir, 'data', path), `---\n${stringify(doc, { lineWidth: 0 })}`]);

  data('services/bench/app.yml', {
    $schema: '/app-sre/app-1.yml',
    labels: { service: 'bench' },
    name: 'bench',
    description: 'Generated application of the benchmark tree.',
    onboardingStatus: 'OnBoarded',
    escalationPolicy: { $ref: '/app-sre/escalation-policies/example-app.yml' },
    serviceOwners: [{ name: 'Bench Owner', email: 'bench@example.com' }],
    appCode: 'BENCH-001',
    sopsUrl: 'https://github.com/example/bench/tree/main/docs/sops',
    architectureDocument: 'https://github.com/example/bench/blob/main/docs/architecture.md',
    grafanaUrls: [{ title: 'Bench', url: 'https://grafana.example.com/d/bench' }],
  });
  const users = rolebindingUsers(scale);
  for (let c = 0; c < scale.clusters; c++) {
    const cluster = clusterName(c);
    const endpoint = endpoints[c];
    if (!endpoint) throw new Error(`no endpoint for cluster ${cluster}`);
    data(`openshift/${cluster}/cluster.yml`, {
      $schema: '/openshift/cluster-1.yml',
      labels: { bench: 'true' },
      name: cluster,
      description: `Benchmark cluster ${cluster} (simulated).`,
      serverUrl: endpoint.url,
      consoleUrl: `https://console.${cluster}.example.com`,
      prometheusUrl: `https://prometheus.${cluster}.example.com`,
      elbFQDN: `elb.apps.${cluster}.example.com`,
      internal: false,
      insecureSkipTLSVerify: true,
      auth: [{ service: 'github-org', org: 'bench' }],
      automationToken: { path: `clusters/${cluster}`, field: 'token' },
    });
    const access: Array<Record<string, unknown>> = [];
    for (let n = 0; n < scale.namespaces; n++) {
      const namespace = namespaceName(n);
      const nsPath = `/openshift/${cluster}/namespaces/${namespace}.yml`;
      data(nsPath, {
        $schema: '/openshift/namespace-1.yml',
        labels: { bench: 'true' },
        name: namespace,
        description: `Benchmark namespace ${namespace} on ${cluster}.`,
        cluster: { $ref: `/openshift/${cluster}/cluster.yml` },
        app: { $ref: '/services/bench/app.yml' },
        environment: { $ref: '/products/example/environments/production.yml' },
        managedRoles: true,
        managedResourceTypes: [...MANAGED_KINDS],
        openshiftResources: Array.from({ length: scale.resources }, (_, i) => ({
          provider: 'resource',
          path: resourcePath(cluster, namespace, i),
        })),
      });
      for (let i = 0; i < scale.resources; i++) {
        files.push([
          join(dir, 'resources', resourcePath(cluster, namespace, i)),
          // Block-style YAML, as most app-interface resource files are.
          `---\n${stringify(desiredBody(cluster, namespace, i), { lineWidth: 0 })}`,
        ]);
      }
      access.push({ namespace: { $ref: nsPath }, role: 'view' });
      access.push({ namespace: { $ref: nsPath }, role: 'edit' });
    }
    data(`access/roles/bench-${cluster}.yml`, {
      $schema: '/access/role-1.yml',
      labels: {},
      name: `bench-${cluster}`,
      description: `Developers of the benchmark namespaces on ${cluster}.`,
      permissions: [],
      access,
    });
  }
  for (let u = 0; u < users; u++) {
    const id = String(u + 1).padStart(3, '0');
    data(`access/users/bench-user-${id}.yml`, {
      $schema: '/access/user-1.yml',
      labels: {},
      name: `Bench User ${id}`,
      org_username: `bench-user-${id}`,
      github_username: `bench-user-${id}-gh`,
      roles: Array.from({ length: scale.clusters }, (_, c) => ({
        $ref: `/access/roles/bench-${clusterName(c)}.yml`,
      })),
    });
  }
  await writeTreeFiles(files);
  return { dir, files: files.length };
}

/** Writes generated files (path, text), their directories first, 64 at a time. */
export async function writeTreeFiles(files: readonly (readonly [string, string])[]): Promise<void> {
  const dirs = new Set(files.map(([path]) => dirname(path)));
  for (const d of dirs) await mkdir(d, { recursive: true });
  const limit = pLimit(64);
  await Promise.all(files.map(([path, text]) => limit(() => writeFile(path, text))));
}

/** The config.toml of a run: the GraphQL server and the cluster tokens (config-file secrets). */
export function benchConfigToml(
  graphqlServer: string,
  endpoints: readonly ClusterEndpoint[],
): string {
  return stringifyToml({
    graphql: { server: graphqlServer },
    clusters: Object.fromEntries(endpoints.map((e) => [e.name, { server: e.url, token: e.token }])),
  });
}
