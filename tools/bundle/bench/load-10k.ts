// Benchmark: load a generated app-interface tree of 10,000 data files and
// answer a namespaces query. Run: node tools/bundle/bench/load-10k.ts [--keep]
// Target (later issue): load 10,000 data files in <= 3 s on the 2-core CI machine.
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import {
  collectBundleFromDirectory,
  createEmbeddedEngine,
  loadEmbeddedEngine,
  serializeBundle,
  validateBundle,
  writeBundleFile,
} from '@qontract/app-interface';

const CLUSTERS = 200;
const APPS = 100;
const NAMESPACES = 10_000 - CLUSTERS - APPS;
const RESOURCES = 100;

const SCHEMA_YML = `
confs:
- name: Query
  fields:
  - { name: clusters_v1, type: Cluster_v1, isList: true, datafileSchema: /openshift/cluster-1.yml }
  - { name: namespaces_v1, type: Namespace_v1, isList: true, datafileSchema: /openshift/namespace-1.yml }
  - { name: apps_v1, type: App_v1, isList: true, datafileSchema: /app-sre/app-1.yml }
- name: Resource_v1
  fields:
  - { name: path, type: string, isRequired: true }
  - { name: content, type: string, isRequired: true }
  - { name: sha256sum, type: string, isRequired: true }
  - { name: schema, type: string }
- name: VaultSecret_v1
  fields:
  - { name: path, type: string, isRequired: true }
  - { name: field, type: string, isRequired: true }
- name: Cluster_v1
  datafile: /openshift/cluster-1.yml
  fields:
  - { name: path, type: string, isRequired: true }
  - { name: name, type: string, isRequired: true, isSearchable: true, isUnique: true }
  - { name: labels, type: json }
  - { name: serverUrl, type: string, isRequired: true }
  - { name: internal, type: boolean }
  - { name: automationToken, type: VaultSecret_v1 }
  - { name: namespaces, type: Namespace_v1, isList: true, synthetic: { schema: /openshift/namespace-1.yml, subAttr: cluster } }
- name: App_v1
  datafile: /app-sre/app-1.yml
  fields:
  - { name: path, type: string, isRequired: true }
  - { name: name, type: string, isRequired: true, isSearchable: true }
- name: Namespace_v1
  datafile: /openshift/namespace-1.yml
  fields:
  - { name: path, type: string, isRequired: true }
  - { name: name, type: string, isRequired: true }
  - { name: description, type: string }
  - { name: labels, type: json }
  - { name: delete, type: boolean }
  - { name: cluster, type: Cluster_v1, isRequired: true }
  - { name: app, type: App_v1, isRequired: true }
  - { name: managedResourceTypes, type: string, isList: true }
  - { name: openshiftResources, type: NamespaceOpenshiftResource_v1, isList: true, isInterface: true }
- name: NamespaceOpenshiftResource_v1
  isInterface: true
  interfaceResolve: { strategy: fieldMap, field: provider, fieldMap: { resource: NamespaceOpenshiftResourceResource_v1 } }
  fields:
  - { name: provider, type: string, isRequired: true }
- name: NamespaceOpenshiftResourceResource_v1
  interface: NamespaceOpenshiftResource_v1
  fields:
  - { name: provider, type: string, isRequired: true }
  - { name: path, type: string, isRequired: true, isResource: true, resolveResource: true }
`;

const NAMESPACES_QUERY = `{
  namespaces_v1 {
    name description labels delete managedResourceTypes
    cluster { name serverUrl internal automationToken { path field } }
    app { name }
    openshiftResources { provider ... on NamespaceOpenshiftResourceResource_v1 { path { path sha256sum } } }
  }
}`;

function pad(n: number): string {
  return String(n).padStart(5, '0');
}

/** Deterministic files: the same tree (and bundle sha) on every run. */
function treeFiles(): Record<string, string> {
  const files: Record<string, string> = { 'graphql-schemas/schema.yml': SCHEMA_YML };
  for (let r = 0; r < RESOURCES; r++) {
    files[`resources/configmaps/cm-${pad(r)}.yml`] =
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-${pad(r)}\ndata:\n  key: value-${r}\n`;
  }
  for (let c = 0; c < CLUSTERS; c++) {
    files[`data/openshift/cluster-${pad(c)}/cluster.yml`] = `---
$schema: /openshift/cluster-1.yml
name: cluster-${pad(c)}
labels:
  region: region-${c % 7}
  tier: ${c % 3 === 0 ? 'prod' : 'stage'}
serverUrl: https://api.cluster-${pad(c)}.example.com:6443
internal: ${c % 2 === 0 ? 'yes' : 'no'}
automationToken:
  path: app-sre/creds/kube-configs/cluster-${pad(c)}
  field: token
`;
  }
  for (let a = 0; a < APPS; a++) {
    files[`data/services/app-${pad(a)}/app.yml`] =
      `$schema: /app-sre/app-1.yml\nname: app-${pad(a)}\ndescription: application ${a}\n`;
  }
  for (let n = 0; n < NAMESPACES; n++) {
    const cluster = n % CLUSTERS;
    const app = n % APPS;
    files[`data/openshift/cluster-${pad(cluster)}/namespaces/ns-${pad(n)}.yml`] = `---
$schema: /openshift/namespace-1.yml
name: ns-${pad(n)}
description: namespace ${n} of app-${pad(app)}
labels:
  app: app-${pad(app)}
  environment: ${n % 2 === 0 ? 'production' : 'stage'}
delete: ${n % 50 === 0 ? 'true' : 'false'}
cluster:
  $ref: /openshift/cluster-${pad(cluster)}/cluster.yml
app:
  $ref: /services/app-${pad(app)}/app.yml
managedResourceTypes:
- ConfigMap
- Secret
openshiftResources:
- provider: resource
  path: /configmaps/cm-${pad(n % RESOURCES)}.yml
`;
  }
  return files;
}

async function timed<T>(fn: () => Promise<T> | T): Promise<[T, number]> {
  const start = performance.now();
  const value = await fn();
  return [value, performance.now() - start];
}

/** Wall and CPU time: on a shared machine the CPU time is the steadier figure. */
async function timedCpu<T>(fn: () => Promise<T> | T): Promise<[T, string]> {
  const cpu = process.cpuUsage();
  const [value, wall] = await timed(fn);
  const used = process.cpuUsage(cpu);
  return [value, `${ms(wall)} (cpu ${ms((used.user + used.system) / 1000)})`];
}

const ms = (n: number) => `${n.toFixed(0)} ms`;

async function runBenchmark(): Promise<void> {
  const keep = process.argv.includes('--keep');
  const root = await mkdtemp(join(tmpdir(), 'qontract-bench-10k-'));
  try {
    const files = treeFiles();
    const [, writeMs] = await timed(async () => {
      for (const [path, content] of Object.entries(files)) {
        await mkdir(dirname(join(root, path)), { recursive: true });
        await writeFile(join(root, path), content);
      }
    });
    const dataFiles = Object.keys(files).filter((p) => p.startsWith('data/')).length;
    console.log(
      `generated ${dataFiles} data files + ${RESOURCES} resources in ${root} (${ms(writeMs)})`,
    );

    // What a CLI run pays: a fresh process, cold JIT, one load.
    const coldScript = `const t0 = performance.now();
const { loadEmbeddedEngine } = await import('@qontract/app-interface');
const t1 = performance.now();
const c1 = process.cpuUsage();
await loadEmbeddedEngine(${JSON.stringify(root)}, { git: false });
const c2 = process.cpuUsage(c1);
console.log(Math.round(t1 - t0) + ' ' + Math.round(performance.now() - t1) + ' ' + Math.round((c2.user + c2.system) / 1000));`;
    const cold = execFileSync(process.execPath, ['--input-type=module', '-e', coldScript], {
      cwd: fileURLToPath(new URL('.', import.meta.url)),
      encoding: 'utf8',
    })
      .trim()
      .split(' ');
    console.log(
      `fresh process: import ${cold[0]} ms, first loadEmbeddedEngine(dir) ${cold[1]} ms (cpu ${cold[2]} ms)`,
    );

    // Phases of one load, to see where the time goes.
    const [collected, readMs] = await timed(() => collectBundleFromDirectory(root, { git: false }));
    const [problems, validateMs] = await timed(() => validateBundle(collected.bundle));
    const [serialized, shaMs] = await timed(() => serializeBundle(collected.bundle));
    const [, indexMs] = await timed(() =>
      createEmbeddedEngine(collected.bundle, serialized.sha256),
    );
    if (collected.problems.length + problems.length > 0)
      throw new Error('generated tree is invalid');
    console.log(
      `phases: read+parse ${ms(readMs)}, validate ${ms(validateMs)}, serialise+sha ${ms(shaMs)}, index+schema ${ms(indexMs)}`,
    );

    const loads: string[] = [];
    let engine = await loadEmbeddedEngine(root, { git: false });
    for (let i = 0; i < 3; i++) {
      const [e, t] = await timedCpu(() => loadEmbeddedEngine(root, { git: false }));
      engine = e;
      loads.push(t);
    }
    console.log(`loadEmbeddedEngine(dir), 3 warm runs: ${loads.join(', ')}`);

    const queries: string[] = [];
    let count = 0;
    for (let i = 0; i < 3; i++) {
      const [r, t] = await timedCpu(() => engine.execute(NAMESPACES_QUERY));
      if (r.errors) throw new Error(JSON.stringify(r.errors.slice(0, 3)));
      count = (r.data!.namespaces_v1 as unknown[]).length;
      queries.push(t);
    }
    console.log(`namespaces query (${count} namespaces), 3 runs: ${queries.join(', ')}`);

    const bundlePath = join(root, 'bundle.json');
    await writeBundleFile(bundlePath, collected.bundle);
    const [, bundleMs] = await timedCpu(() => loadEmbeddedEngine(bundlePath));
    console.log(`loadEmbeddedEngine(bundle.json): ${bundleMs}; sha ${engine.sha256}`);
  } finally {
    if (!keep) await rm(root, { recursive: true, force: true });
  }
}

await runBenchmark();
