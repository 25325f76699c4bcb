// The merge-request check on a large tree, against the one dry-run it must
// do: `node tools/mr-check/bench/scale.ts [CLUSTERS NAMESPACES RESOURCES [JOBS]]`
// (default 20 50 50, the check's default --jobs). Generates a base tree (every namespace file with
// RESOURCES ConfigMaps), a head that changes one namespace file (one resource
// becomes a template: the same object, another desired state), and times
// (1) the affected dry-run alone — `openshift-resources` with early exit and
// affected shards, as the check runs it, against a server holding both
// bundles — and (2) the whole `qontract-mr-check`. Clusters are simulated and
// hold the namespaces but none of their objects (the same creations in both).
import './production.ts';
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { createEmbeddedEngine, startBundleServer } from '@qontract/app-interface';
import { startFakeKubeApiServer } from '@qontract/fake-kube-apiserver';
import pLimit from 'p-limit';
import { stringify as stringifyToml } from 'smol-toml';
import { parse, stringify } from 'yaml';
import { buildBundlePair, checkBundle, validateBuilt } from '../src/bundles.ts';
import { QONTRACT_RECONCILE_BIN } from '../src/child-run.ts';

const { values: flags, positionals } = parseArgs({
  options: { runs: { type: 'string', default: '1' } },
  allowPositionals: true,
});
const runs = Math.max(1, Number(flags.runs));
const [clusters = 20, namespaces = 50, resources = 50, jobs] = positionals.map(Number);
const EXAMPLES = resolve(import.meta.dirname, '../../../examples/app-interface');
const INTEGRATIONS = ['namespaces', 'resources', 'vault-secrets', 'routes', 'prometheus-rules'];
const pad = (n: number) => String(n + 1).padStart(2, '0');
const run = promisify(execFile);
const MR_CHECK_BIN = resolve(import.meta.dirname, '../bin/qontract-mr-check.js');

const dir = await mkdtemp(join(tmpdir(), 'mr-check-bench-'));
const names = Array.from({ length: clusters }, (_, c) => `c${pad(c)}`);
const server = await startFakeKubeApiServer({
  clusters: names.map((name) => ({ name, token: `${name}-token`, openshift: true })),
});
try {
  const base = join(dir, 'base');
  const files: Array<[string, string]> = [];
  const yaml = (path: string, doc: unknown) =>
    files.push([join(base, path), `---\n${stringify(doc, { lineWidth: 0 })}`]);
  for (const integration of INTEGRATIONS) {
    const file = `data/app-sre/integrations/openshift-${integration}.yml`;
    const doc = parse(await readFile(join(EXAMPLES, file), 'utf8')) as Record<string, unknown>;
    delete doc.managed;
    yaml(file, doc);
  }
  // The example app and every data file it refers to, so the app stays valid
  // whatever its schema comes to require.
  const copied = new Set<string>();
  const copyWithRefs = async (from: string, to: string): Promise<void> => {
    if (copied.has(to)) return;
    copied.add(to);
    const text = await readFile(join(EXAMPLES, 'data', from), 'utf8');
    files.push([join(base, 'data', to), text]);
    for (const [, ref] of text.matchAll(/\$ref:\s*['"]?(\/[^\s'"#}]+)/g)) {
      if (ref && !ref.startsWith('/app-interface/') && !ref.startsWith('/products/')) {
        await copyWithRefs(ref, ref);
      }
    }
  };
  await copyWithRefs('/services/example-app/app.yml', '/services/bench/app.yml');
  for (const cluster of names) {
    yaml(`data/openshift/${cluster}/cluster.yml`, {
      $schema: '/openshift/cluster-1.yml',
      labels: {},
      name: cluster,
      description: cluster,
      serverUrl: server.cluster(cluster).url,
      consoleUrl: `https://console.${cluster}.example.com`,
      prometheusUrl: `https://prometheus.${cluster}.example.com`,
      elbFQDN: `elb.apps.${cluster}.example.com`,
      internal: false,
      insecureSkipTLSVerify: true,
      auth: [{ service: 'github-org', org: 'bench' }],
      automationToken: { path: `clusters/${cluster}`, field: 'token' },
    });
    for (let n = 0; n < namespaces; n++) {
      const ns = `ns${pad(n)}`;
      yaml(`data/openshift/${cluster}/namespaces/${ns}.yml`, {
        $schema: '/openshift/namespace-1.yml',
        labels: {},
        name: ns,
        description: `namespace ${ns} of ${cluster}`,
        cluster: { $ref: `/openshift/${cluster}/cluster.yml` },
        app: { $ref: '/services/bench/app.yml' },
        environment: { $ref: '/products/example/environments/production.yml' },
        managedResourceTypes: ['ConfigMap'],
        openshiftResources: Array.from({ length: resources }, (_, i) => ({
          provider: 'resource',
          path: `/bench/${cluster}/${ns}/cm-${i}.yml`,
        })),
      });
      for (let i = 0; i < resources; i++) {
        files.push([
          join(base, `resources/bench/${cluster}/${ns}/cm-${i}.yml`),
          `---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-${i}\ndata:\n  KEY: value-${i}\n`,
        ]);
      }
    }
  }
  for (const d of new Set(files.map(([p]) => dirname(p)))) await mkdir(d, { recursive: true });
  const limit = pLimit(64);
  await Promise.all(files.map(([p, text]) => limit(() => writeFile(p, text))));
  for (const part of ['graphql-schemas', 'schemas', 'data/app-interface', 'data/products']) {
    await cp(join(EXAMPLES, part), join(base, part), { recursive: true });
  }
  const head = join(dir, 'head');
  await cp(base, head, { recursive: true });
  const changed = join(head, 'data/openshift/c01/namespaces/ns01.yml');
  await writeFile(
    changed,
    (await readFile(changed, 'utf8')).replace(
      '  - provider: resource\n    path: /bench/c01/ns01/cm-0.yml\n',
      '  - provider: resource-template\n    path: /bench/c01/ns01/cm-0.yml\n    variables: {}\n',
    ),
  );
  const config = join(dir, 'config.toml');
  await writeFile(
    config,
    stringifyToml({
      graphql: { server: 'file://base' },
      clusters: Object.fromEntries(
        names.map((n) => [n, { server: server.cluster(n).url, token: `${n}-token` }]),
      ),
    }),
  );
  // The target branch is deployed: the namespaces exist (their objects do
  // not: both runs plan the same creations).
  for (const cluster of names) {
    server.seed(
      cluster,
      Array.from({ length: namespaces }, (_, n) => ({
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: `ns${pad(n)}` },
      })),
    );
  }
  process.stdout.write(
    `tree: ${clusters} clusters × ${namespaces} namespaces × ${resources} resources (${files.length} files)\n`,
  );

  // (1) The affected dry-run alone, with both bundles already served.
  const [b, h] = await Promise.all([checkBundle(base, false), checkBundle(head, false)]);
  const bundles = await startBundleServer([
    createEmbeddedEngine(b.bundle!, b.sha256!),
    createEmbeddedEngine(h.bundle!, h.sha256!),
  ]);
  const single = join(dir, 'single.toml');
  await writeFile(
    single,
    (await readFile(config, 'utf8')).replace('file://base', `${bundles.url}/graphql`),
  );
  const aloneArgv = [
    ...[QONTRACT_RECONCILE_BIN, '--config', single, '--log-format', 'json', '--dry-run'],
    ...['--early-exit-compare-sha', b.sha256!, '--check-only-affected-shards'],
    ...['--plan-out', join(dir, 'plan.json'), '--diff', 'openshift-resources'],
  ];
  // (2) The whole check: the command as a user runs it, in its own process
  // (the simulated clusters stay in this one, as real clusters are elsewhere).
  const checkArgv = [
    ...[MR_CHECK_BIN, '--base', base, '--head', head, '--config', config],
    ...['--report-json', join(dir, 'r.json'), ...(jobs ? ['--jobs', String(jobs)] : [])],
  ];
  const seconds = async (argv: string[]) => {
    const started = performance.now();
    await run(process.execPath, argv, { maxBuffer: 1 << 30, env: { ...process.env, CI: 'true' } });
    return (performance.now() - started) / 1000;
  };

  // What the check spends on the trees: the pair build, then the validation of HEAD.
  const started = performance.now();
  const pair = await buildBundlePair(base, head);
  const built = (performance.now() - started) / 1000;
  await validateBuilt(pair.head);
  const loading = (performance.now() - started) / 1000;
  process.stdout.write(
    `building both trees: ${built.toFixed(1)}s; with the validation of HEAD: ${loading.toFixed(1)}s (part of the check)\n`,
  );

  // The two take turns, so that a change in the machine's load meets both.
  const ratios: number[] = [];
  for (let i = 0; i < runs; i++) {
    const alone = await seconds(aloneArgv);
    server.resetLog();
    let check: number;
    try {
      check = await seconds(checkArgv);
    } catch (e) {
      const failed = e as { stdout?: string; stderr?: string };
      process.stdout.write(
        `qontract-mr-check failed:\n${failed.stdout ?? ''}${failed.stderr ?? ''}`,
      );
      process.exitCode = 1;
      break;
    }
    const report = JSON.parse(await readFile(join(dir, 'r.json'), 'utf8')) as {
      integrations: Array<{ name: string; status: string; durationSeconds?: number }>;
    };
    for (const r of report.integrations.filter((x) => x.status !== 'skipped')) {
      process.stdout.write(`  ${r.name}: ${r.status} ${r.durationSeconds?.toFixed(1)}s\n`);
    }
    ratios.push(check / alone);
    process.stdout.write(
      `affected dry-run alone: ${alone.toFixed(1)}s; qontract-mr-check: ${check.toFixed(1)}s; ` +
        `ratio ${(check / alone).toFixed(2)} (target ≤ 2); ` +
        `writes during the check: ${server.mutatingRequests().length}\n`,
    );
  }
  if (ratios.length > 1) {
    const sorted = [...ratios].sort((x, y) => x - y);
    process.stdout.write(
      `ratios over ${ratios.length} runs: ${sorted.map((r) => r.toFixed(2)).join(', ')}; ` +
        `median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(2)}\n`,
    );
  }
  await bundles.close();
} finally {
  await server.close();
  await rm(dir, { recursive: true, force: true });
}
