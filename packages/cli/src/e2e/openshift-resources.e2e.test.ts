import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ExampleEnvironment } from '@qontract/testing';
import { startFakeGitHub } from '@qontract/testing/fake-github';
import { startFakeS3 } from '@qontract/testing/fake-s3';
import { startFakeVault } from '@qontract/testing/fake-vault';
import { parse, stringify } from 'smol-toml';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  createNamespaces,
  editFile,
  messages,
  planLines,
  runQontractReconcile,
  useExampleEnvironment,
} from './harness.ts';

const start = useExampleEnvironment();

type Obj = {
  metadata: { name: string; annotations?: Record<string, string> };
  data?: Record<string, string>;
};
const cm = (e: ExampleEnvironment, cluster: string, ns: string, name: string) =>
  e.server.get(cluster, 'v1', 'ConfigMap', ns, name) as Obj | undefined;

const STAGE = 'data/services/example-app/namespaces/example-app-stage.yml';

describe('openshift-resources end to end', () => {
  it('dry-run writes nothing, a wet run converges, the next one does nothing, drift is reverted', async () => {
    const env = await start({ namespaces: true });
    const { server, configPath } = env;
    server.resetLog();
    const dry = await runQontractReconcile([
      '--config',
      configPath,
      '--dry-run',
      'openshift-resources',
    ]);
    expect(dry.code).toBe(0);
    expect(messages(dry)).toEqual(
      expect.arrayContaining([
        "['apply', 'privileged=False', 'appint-ex-01', 'example-app-stage', 'ConfigMap', 'example-app-settings']",
        "['apply', 'privileged=False', 'appint-ex-01', 'example-app-stage', 'ConfigMap', 'example-app-banner']",
        "['apply', 'privileged=False', 'appint-ex-01', 'example-app-stage', 'Service', 'example-app']",
      ]),
    );
    expect(server.mutatingRequests()).toEqual([]);

    const wet = await runQontractReconcile(['--config', configPath, 'openshift-resources']);
    expect(wet.code).toBe(0);
    const settings = cm(env, 'appint-ex-01', 'example-app-stage', 'example-app-settings')!;
    expect(settings.data).toEqual({
      REPLICAS: '2',
      GREETING: 'hello from stage',
      FEATURES: 'search,export',
      MULTI_FEATURE: 'true',
    });
    expect(settings.metadata.annotations?.['qontract.integration']).toBe('openshift_resources');
    expect(settings.metadata.annotations?.['qontract.integration_version']).toBe('1.9.3');
    // extracurlyjinja2: {{{ }}} is rendered, the Go template's {{ }} passes through.
    expect(cm(env, 'appint-ex-01', 'example-app-stage', 'example-app-banner')?.data).toEqual({
      'banner.txt': 'Welcome to the example app (stage)',
      'banner.tmpl': '{{ .Title }} - {{ .Subtitle }}',
    });

    server.resetLog();
    expect((await runQontractReconcile(['--config', configPath, 'openshift-resources'])).code).toBe(
      0,
    );
    expect(server.mutatingRequests()).toEqual([]);

    // A manual change on the cluster is reverted by the next run.
    const live = server.get(
      'appint-ex-01',
      'v1',
      'ConfigMap',
      'example-app-stage',
      'example-app-settings',
    )!;
    server.seed(
      'appint-ex-01',
      [{ ...live, data: { ...(live.data as object), GREETING: 'edited by hand' } }],
      { manager: 'kubectl-edit' },
    );
    server.resetLog();
    expect((await runQontractReconcile(['--config', configPath, 'openshift-resources'])).code).toBe(
      0,
    );
    expect(
      cm(env, 'appint-ex-01', 'example-app-stage', 'example-app-settings')?.data?.GREETING,
    ).toBe('hello from stage');
    expect(server.mutatingRequests().map((r) => r.name)).toEqual(['example-app-settings']);
  });

  it('warns about a managed kind nothing of its own fills, as the original; the examples have none', async () => {
    const env = await start({ namespaces: true });
    env.server.resetLog();
    const dryRun = () =>
      runQontractReconcile(['--config', env.configPath, '--dry-run', 'openshift-resources']);
    const unused = (run: Awaited<ReturnType<typeof dryRun>>) =>
      messages(run, 40).filter((m) => m.includes('unused resource type'));
    const clean = await dryRun();
    expect(clean.code).toBe(0);
    expect(unused(clean)).toEqual([]);
    // Route is filled in stage only by the route provider (openshift-routes' own kind).
    await editFile(join(env.appInterfaceDir, STAGE), (t) =>
      t.replace('managedResourceTypes:\n', 'managedResourceTypes:\n  - Route\n'),
    );
    const listed = await dryRun();
    expect(listed.code).toBe(0);
    expect(unused(listed)).toEqual([
      '[appint-ex-01/example-app-stage] unused resource type: Route. please remove it in a following PR.',
    ]);
    expect(env.server.mutatingRequests()).toEqual([]);
  });

  it('resource files loaded on worker threads give the same plans, objects and errors', async () => {
    const env = await start({ namespaces: true });
    const { server, configPath, appInterfaceDir } = env;
    // Without the desired cache: the earlier runs of this process built these files already.
    const run = (threads: string, ...args: string[]) =>
      runQontractReconcile(
        ['--config', configPath, '--log-level', 'DEBUG', ...args, 'openshift-resources'],
        { QONTRACT_PARSE_THREADS: threads, QONTRACT_DESIRED_CACHE: 'off' },
      );
    const onWorkers = (r: Awaited<ReturnType<typeof run>>) =>
      messages(r, 10).find((m) => m.startsWith('resource files: '));
    server.resetLog();

    const here = await run('0', '--dry-run');
    const workers = await run('1', '--dry-run');
    expect(here.code).toBe(0);
    expect(workers.code).toBe(0);
    expect(planLines(workers)).toEqual(planLines(here));
    expect(planLines(workers).length).toBeGreaterThan(0);
    expect(onWorkers(here)).toBeUndefined();
    expect(onWorkers(workers)).toMatch(
      /^resource files: [1-9]\d* loaded on worker threads, \d+ here$/,
    );
    expect(server.mutatingRequests()).toEqual([]);

    // Applied from the workers' bodies: a run on one thread finds nothing to do.
    expect((await run('1')).code).toBe(0);
    server.resetLog();
    expect((await run('0')).code).toBe(0);
    expect(server.mutatingRequests()).toEqual([]);

    // A broken file is left to the run's thread: the same error either way.
    await editFile(join(appInterfaceDir, 'resources/example-app/configmap.yml'), (t) =>
      t.replace('data:', 'data: [unclosed'),
    );
    const brokenHere = await run('0', '--dry-run');
    const brokenWorkers = await run('1', '--dry-run');
    expect(brokenWorkers.code).toBe(1);
    expect(messages(brokenWorkers, 50)).toEqual(messages(brokenHere, 50));
    expect(messages(brokenWorkers, 50).join('\n')).toMatch(
      /Could not parse data\. Skipping resource: \/example-app\/configmap\.yml: invalid YAML/,
    );

    const invalid = await run('two', '--dry-run');
    expect(invalid.code).toBe(1);
    expect(messages(invalid, 50)).toContain(
      'QONTRACT_PARSE_THREADS must be a whole number of threads (0: none), got "two"',
    );
    expect(invalid.stderr).not.toMatch(/\n\s+at /);
  });

  it('deletes a removed resource only when it is ours; a render error fails the run and deletes nothing', async () => {
    const env = await start({ namespaces: true });
    const { server, configPath, appInterfaceDir } = env;
    expect((await runQontractReconcile(['--config', configPath, 'openshift-resources'])).code).toBe(
      0,
    );
    server.seed('appint-ex-01', [
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'hand-made', namespace: 'example-app-stage' },
        data: { a: '1' },
      },
    ]);

    // The plain configmap leaves the namespace, and a template breaks.
    await editFile(join(appInterfaceDir, STAGE), (t) =>
      t.replace('  - provider: resource\n    path: /example-app/configmap.yml\n', ''),
    );
    await editFile(join(appInterfaceDir, 'resources/example-app/settings-configmap.yml.j2'), (t) =>
      t.replace('{{ greeting }}', '{{ no_such_variable }}'),
    );
    server.resetLog();
    const broken = await runQontractReconcile(['--config', configPath, 'openshift-resources']);
    expect(broken.code).toBe(1);
    expect(messages(broken, 50).join('\n')).toMatch(
      /\[appint-ex-01\/example-app-stage\] error processing jinja2 template \(\/example-app\/settings-configmap\.yml\.j2, line \d+\): .*no_such_variable/,
    );
    expect(messages(broken, 50)).toContainEqual(
      expect.stringMatching(
        /^'delete' action is disabled due to previous errors \(\d+ held back\)\.$/,
      ),
    );
    expect(server.mutatingRequests({ verb: 'delete' })).toEqual([]);
    expect(cm(env, 'appint-ex-01', 'example-app-stage', 'example-app-config')).toBeDefined();

    // Fixed: the removed resource is deleted, the hand-made one stays.
    await editFile(join(appInterfaceDir, 'resources/example-app/settings-configmap.yml.j2'), (t) =>
      t.replace('{{ no_such_variable }}', '{{ greeting }}'),
    );
    const fixed = await runQontractReconcile(['--config', configPath, 'openshift-resources']);
    expect(fixed.code).toBe(0);
    expect(messages(fixed)).toContain(
      "['delete', 'privileged=False', 'appint-ex-01', 'example-app-stage', 'ConfigMap', 'example-app-config']",
    );
    expect(cm(env, 'appint-ex-01', 'example-app-stage', 'example-app-config')).toBeUndefined();
    expect(cm(env, 'appint-ex-01', 'example-app-stage', 'hand-made')).toBeDefined();
  });

  it('a namespace the run does not read (its cluster skipped or failing) reports no build errors', async () => {
    const env = await start({ namespaces: true });
    const { server, configPath, appInterfaceDir } = env;
    const PRODUCTION = 'data/services/example-app/namespaces/example-app-production.yml';
    const CLUSTER_02 = 'data/openshift/appint-ex-02/cluster.yml';
    const dryRun = () =>
      runQontractReconcile([
        '--config',
        configPath,
        '--log-level',
        'DEBUG',
        '--dry-run',
        'openshift-resources',
      ]);
    /** How many desired objects the run built or found in its cache. */
    const objects = (r: Awaited<ReturnType<typeof dryRun>>) => {
      const line = messages(r, 20).find((m) => m.startsWith('desired objects:')) ?? '';
      const m = /(\d+) from earlier runs, (\d+) built/.exec(line);
      return m ? Number(m[1]) + Number(m[2]) : Number.NaN;
    };
    // Production (on appint-ex-02) loses a variable its template needs.
    await editFile(join(appInterfaceDir, PRODUCTION), (t) =>
      t.replace('      greeting: hello from production\n', ''),
    );
    const broken = await dryRun();
    expect(broken.code).toBe(1);
    expect(messages(broken, 50).join('\n')).toMatch(
      /\[appint-ex-02\/example-app-production\] error processing jinja2 template/,
    );

    // The integration is disabled on appint-ex-02: its namespaces are not read, so what their
    // objects would be does not matter to the run; they are not even built.
    await editFile(join(appInterfaceDir, CLUSTER_02), (t) =>
      t.replace(
        '    - openshift-network-policies\n',
        '    - openshift-network-policies\n    - openshift-resources\n',
      ),
    );
    server.resetLog();
    const skipped = await dryRun();
    expect(skipped.code).toBe(0);
    // Nothing of it reaches the run: no error, no object (nor 'not initialized' lines).
    expect(messages(skipped).join('\n')).not.toMatch(/example-app-production|appint-ex-02/);
    expect(planLines(skipped)).toContain(
      "['apply', 'privileged=False', 'appint-ex-01', 'example-app-stage', 'ConfigMap', 'example-app-settings']",
    );
    expect(planLines(skipped).filter((l) => l.includes('appint-ex-02'))).toEqual([]);
    expect(objects(skipped)).toBeLessThan(objects(broken));

    // Its token gone: appint-ex-02 is an error of the run, the namespace's template is not.
    await editFile(join(appInterfaceDir, CLUSTER_02), (t) =>
      t.replace('    - openshift-resources\n', ''),
    );
    const config = parse(await readFile(configPath, 'utf8')) as {
      clusters: Record<string, unknown>;
    };
    delete config.clusters['appint-ex-02'];
    await writeFile(configPath, stringify(config));
    const failing = await dryRun();
    expect(failing.code).toBe(1);
    const said = messages(failing, 50).join('\n');
    expect(said).toMatch(/\[appint-ex-02\] /);
    expect(said).not.toMatch(/example-app-production/);
    // Built while the clusters were connected to (which one fails is not known before), dropped.
    expect(objects(failing)).toBe(objects(broken));
    expect(server.mutatingRequests()).toEqual([]);
  });

  it('renders templates with secrets from Vault and never logs them', async () => {
    const env = await start();
    const vault = await startFakeVault({
      mounts: { 'app-sre': { version: 2 }, 'app-interface': { version: 2 } },
    });
    onTestFinished(() => vault.close());
    vault.put('app-sre/example/db', { password: 's3cr3t-from-vault' });
    // The example's own templated Secret (resources/example-app/api-secret.yml.j2).
    vault.put('app-interface/example-app/stage/api', { token: 'api-s3cr3t-from-vault' });
    const { configPath, appInterfaceDir } = env;
    // app-interface switches to Vault; config.toml says where it is.
    await editFile(join(appInterfaceDir, 'data/app-interface/app-interface-settings.yml'), (t) =>
      t.replace('vault: false', 'vault: true'),
    );
    const config = parse(await readFile(configPath, 'utf8')) as Record<string, unknown>;
    config.vault = { server: vault.url, token: vault.rootToken };
    // Cluster tokens now come from Vault too.
    for (const [name, c] of Object.entries(
      config.clusters as Record<string, { server: string; token: string }>,
    )) {
      vault.put(`app-sre/clusters/${name}`, { server: c.server, token: c.token });
    }
    await writeFile(configPath, stringify(config));
    for (const cluster of ['appint-ex-01', 'appint-ex-02', 'appint-ex-k8s']) {
      await editFile(join(appInterfaceDir, `data/openshift/${cluster}/cluster.yml`), (t) =>
        t.replace(
          /automationToken:\n\s+path: [^\n]+/,
          `automationToken:\n  path: app-sre/clusters/${cluster}`,
        ),
      );
    }
    await writeFile(
      join(appInterfaceDir, 'resources/example-app/db-secret.yml.j2'),
      "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ntype: Opaque\nstringData:\n  password: \"{{ vault('app-sre/example/db', 'password') }}\"\n",
    );
    await editFile(join(appInterfaceDir, STAGE), (t) =>
      t.replace(
        'openshiftResources:\n',
        'openshiftResources:\n  - provider: resource-template\n    path: /example-app/db-secret.yml.j2\n',
      ),
    );
    await createNamespaces(env);
    const run = await runQontractReconcile(['--config', configPath, 'openshift-resources']);
    expect(run.code).toBe(0);
    const secret = env.server.get('appint-ex-01', 'v1', 'Secret', 'example-app-stage', 'db') as {
      data?: Record<string, string>;
      stringData?: Record<string, string>;
    };
    const stored =
      secret.data?.password ?? Buffer.from(secret.stringData?.password ?? '').toString('base64');
    expect(Buffer.from(stored, 'base64').toString()).toBe('s3cr3t-from-vault');
    expect(run.stderr).not.toContain('s3cr3t-from-vault');
    expect(run.stderr).not.toContain(Buffer.from('s3cr3t-from-vault').toString('base64'));
    const api = env.server.get(
      'appint-ex-01',
      'v1',
      'Secret',
      'example-app-stage',
      'example-app-api',
    ) as {
      data?: Record<string, string>;
    };
    expect(Buffer.from(api.data?.API_TOKEN ?? '', 'base64').toString()).toBe(
      'api-s3cr3t-from-vault',
    );
  });

  it('reads files from GitHub with the default organisation token (github() helper)', async () => {
    const env = await start();
    // The token of the default org comes from config.toml ([github.app-sre-example] token).
    const github = await startFakeGitHub({ token: 'ghp_example_token_not_real' });
    onTestFinished(() => github.close());
    const big = 'x'.repeat(1024 * 1024 + 10);
    github.addFile({
      repo: 'app-sre-example/configs',
      ref: 'main',
      path: 'banner.txt',
      content: 'from GitHub',
    });
    github.addFile({ repo: 'app-sre-example/configs', ref: 'main', path: 'big.txt', content: big });
    const { configPath, appInterfaceDir } = env;
    await writeFile(
      join(appInterfaceDir, 'resources/example-app/from-github.yml.j2'),
      [
        'apiVersion: v1',
        'kind: ConfigMap',
        'metadata:',
        '  name: from-github',
        'data:',
        "  banner: \"{{ github('app-sre-example/configs', 'banner.txt', 'main') }}\"",
        "  size: \"{{ github('app-sre-example/configs', 'big.txt', 'main') | length }}\"",
        '',
      ].join('\n'),
    );
    await editFile(join(appInterfaceDir, STAGE), (t) =>
      t.replace(
        'openshiftResources:\n',
        'openshiftResources:\n  - provider: resource-template\n    path: /example-app/from-github.yml.j2\n',
      ),
    );
    await createNamespaces(env);
    const run = await runQontractReconcile(['--config', configPath, 'openshift-resources'], {
      GITHUB_API: github.url,
    });
    expect(run.code).toBe(0);
    expect(cm(env, 'appint-ex-01', 'example-app-stage', 'from-github')?.data).toEqual({
      banner: 'from GitHub',
      size: String(big.length),
    });
    // The large file came through the blob API.
    expect(github.requestLog.some((r) => r.path.includes('/git/blobs/'))).toBe(true);
    expect(run.stderr).not.toContain('ghp_example_token_not_real');
  });

  it("a wet run applies a cluster's objects while another cluster's template still waits on GitHub", async () => {
    const env = await start();
    // Every GitHub answer comes 3 s late: the template below keeps appint-ex-01's build busy.
    const github = await startFakeGitHub({ token: 'ghp_example_token_not_real', latencyMs: 3000 });
    onTestFinished(() => github.close());
    github.addFile({
      repo: 'app-sre-example/configs',
      ref: 'main',
      path: 'banner.txt',
      content: 'from GitHub',
    });
    const { configPath, appInterfaceDir, server } = env;
    await writeFile(
      join(appInterfaceDir, 'resources/example-app/slow-github.yml.j2'),
      [
        'apiVersion: v1',
        'kind: ConfigMap',
        'metadata:',
        '  name: slow-github',
        'data:',
        "  banner: \"{{ github('app-sre-example/configs', 'banner.txt', 'main') }}\"",
        '',
      ].join('\n'),
    );
    await editFile(join(appInterfaceDir, STAGE), (t) =>
      t.replace(
        'openshiftResources:\n',
        'openshiftResources:\n  - provider: resource-template\n    path: /example-app/slow-github.yml.j2\n',
      ),
    );
    await createNamespaces(env);
    server.resetLog();
    // Watches the run: when GitHub first answered (its log records answers), and when
    // appint-ex-02 got its first apply.
    const seen: { github?: number; applied?: number } = {};
    let running = true;
    const watching = (async () => {
      while (running) {
        const now = Date.now();
        if (seen.github === undefined && github.requestLog.length > 0) seen.github = now;
        if (
          seen.applied === undefined &&
          server.mutatingRequests().some((q) => q.cluster === 'appint-ex-02')
        ) {
          seen.applied = now;
        }
        await new Promise((r) => setTimeout(r, 10));
      }
    })();
    const run = await runQontractReconcile(['--config', configPath, 'openshift-resources'], {
      GITHUB_API: github.url,
    });
    running = false;
    await watching;
    expect(run.code).toBe(0);
    expect(cm(env, 'appint-ex-01', 'example-app-stage', 'slow-github')?.data).toEqual({
      banner: 'from GitHub',
    });
    // appint-ex-02's objects went out while GitHub had not answered yet (its answer takes 3 s).
    // Before, every cluster waited for the last object of the run: the answer, then the applies.
    expect(seen.github).toBeDefined();
    expect(seen.applied).toBeDefined();
    expect(seen.github! - seen.applied!).toBeGreaterThan(1000);
  });

  it('reads objects and lists keys from S3 with an AWS account of app-interface (s3(), s3_ls())', async () => {
    const env = await start();
    const s3 = await startFakeS3({ buckets: ['example-configs'] });
    onTestFinished(() => s3.close());
    const { S3Client, PutObjectCommand } = await import('@aws-sdk/client-s3');
    const client = new S3Client({
      region: s3.region,
      endpoint: s3.endpoint,
      forcePathStyle: true,
      credentials: s3.credentials,
    });
    await client.send(
      new PutObjectCommand({
        Bucket: 'example-configs',
        Key: 'stage/motd.txt',
        Body: 'hello from S3',
      }),
    );
    await client.send(
      new PutObjectCommand({ Bucket: 'example-configs', Key: 'stage/other.txt', Body: 'x' }),
    );
    client.destroy();
    const { configPath, appInterfaceDir } = env;
    await mkdir(join(appInterfaceDir, 'data/aws'), { recursive: true });
    await writeFile(
      join(appInterfaceDir, 'data/aws/example-account.yml'),
      [
        '---',
        '$schema: /aws/account-1.yml',
        'labels: {}',
        'name: example-account',
        'description: the account of the example buckets',
        'consoleUrl: https://111111111111.signin.aws.amazon.com/console',
        'uid: "111111111111"',
        'resourcesDefaultRegion: us-east-1',
        'providerVersion: 5.0.0',
        'accountOwners: [{ name: Alice Example, email: alice@example.com }]',
        'premiumSupport: false',
        'automationToken:',
        '  path: aws/example-account',
        '  field: all',
        '',
      ].join('\n'),
    );
    const config = parse(await readFile(configPath, 'utf8')) as Record<string, unknown>;
    config.aws = {
      'example-account': {
        aws_access_key_id: s3.credentials.accessKeyId,
        aws_secret_access_key: s3.credentials.secretAccessKey,
      },
    };
    await writeFile(configPath, stringify(config));
    await writeFile(
      join(appInterfaceDir, 'resources/example-app/from-s3.yml.j2'),
      [
        'apiVersion: v1',
        'kind: ConfigMap',
        'metadata:',
        '  name: from-s3',
        'data:',
        "  motd: \"{{ s3('example-account', 'example-configs', 'stage/motd.txt') }}\"",
        "  keys: \"{{ s3_ls('example-account', 'example-configs', 'stage/') | join(',') }}\"",
        '',
      ].join('\n'),
    );
    await editFile(join(appInterfaceDir, STAGE), (t) =>
      t.replace(
        'openshiftResources:\n',
        'openshiftResources:\n  - provider: resource-template\n    path: /example-app/from-s3.yml.j2\n',
      ),
    );
    await createNamespaces(env);
    const run = await runQontractReconcile(['--config', configPath, 'openshift-resources'], {
      AWS_ENDPOINT_URL_S3: s3.endpoint,
    });
    if (run.code !== 0) console.log(run.stderr.slice(0, 3000));
    expect(run.code).toBe(0);
    expect(cm(env, 'appint-ex-01', 'example-app-stage', 'from-s3')?.data).toEqual({
      motd: 'hello from S3',
      keys: 'stage/motd.txt,stage/other.txt',
    });
  });
});
