import { execFile, spawn } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { type ExampleEnvironment, startExampleEnvironment } from '@qontract/testing';
import { startFakeSentry } from '@qontract/testing/fake-sentry';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildBundle } from './build-bundle.ts';

const run = promisify(execFile);
const MANIFEST = fileURLToPath(new URL('../package.json', import.meta.url));

/**
 * What the Containerfile does, without a container: bundle, `npm pack`, install
 * the tarball with --omit=dev into an empty directory, run the installed bins.
 * The package has no dependencies (everything is bundled), so the install
 * needs no registry and takes about a second.
 */
describe('the packed package, installed with --omit=dev', () => {
  let work = '';
  let installed = '';
  let packedFiles: string[] = [];
  // The bins' shebang is `/usr/bin/env node`: the Node running the tests (24) comes first.
  const PATH = `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}`;
  const bin = (name: string) => join(installed, 'node_modules', '.bin', name);

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'qr-pack-'));
    const stage = join(work, 'stage');
    await mkdir(stage);
    await buildBundle(join(stage, 'bundle'));
    await copyFile(MANIFEST, join(stage, 'package.json'));
    const packed = await run(
      'npm',
      ['pack', '--json', '--ignore-scripts', '--pack-destination', work],
      { cwd: stage, env: { ...process.env, PATH } },
    );
    const [info] = JSON.parse(packed.stdout) as { filename: string; files: { path: string }[] }[];
    packedFiles = info!.files.map((f) => f.path);
    installed = join(work, 'installed');
    await mkdir(installed);
    await writeFile(join(installed, 'package.json'), '{ "private": true }\n');
    await run(
      'npm',
      [
        'install',
        '--omit=dev',
        '--no-audit',
        '--no-fund',
        '--prefer-offline',
        '--ignore-scripts',
        join(work, info!.filename),
      ],
      { cwd: installed, env: { ...process.env, PATH } },
    );
  }, 90_000);

  afterAll(async () => {
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('ships only the manifest and the bundle, and installs nothing else', async () => {
    expect(
      packedFiles.filter((f) => f !== 'package.json' && !/^bundle\/[^/]+\.mjs$/.test(f)),
    ).toEqual([]);
    expect(packedFiles).toEqual(
      expect.arrayContaining(['bundle/qontract-reconcile.mjs', 'bundle/run-integration.mjs']),
    );
    const modules = (await readdir(join(installed, 'node_modules'))).filter(
      (d) => !d.startsWith('.'),
    );
    expect(modules).toEqual(['@qontract']);
    expect(await readdir(join(installed, 'node_modules', '@qontract'))).toEqual([
      'qontract-reconcile',
    ]);
  });

  it('qontract-reconcile --help lists the integrations', async () => {
    const help = await run(bin('qontract-reconcile'), ['--help'], {
      cwd: installed,
      env: { PATH, HOME: work },
    });
    expect(help.stdout).toContain('qontract-reconcile openshift-namespaces');
    expect(help.stdout).toContain('qontract-reconcile openshift-resources');
  });

  it('--version is the version of the CLI (the bundle reads it from this manifest)', async () => {
    const cli = JSON.parse(
      await readFile(fileURLToPath(new URL('../../cli/package.json', import.meta.url)), 'utf8'),
    ) as { version: string };
    const version = await run(bin('qontract-reconcile'), ['--version'], {
      cwd: installed,
      env: { PATH, HOME: work },
    });
    expect(version.stdout.trim()).toBe(cli.version);
  });

  describe('run-integration', () => {
    let env: ExampleEnvironment | undefined;
    afterAll(async () => env?.close());
    /** A pod's environment for one run of openshift-namespaces. */
    const podEnv = (extra: Record<string, string>) => ({
      PATH,
      HOME: work,
      INTEGRATION_NAME: 'openshift-namespaces',
      RUN_ONCE: '1',
      LOG_FORMAT: 'json',
      ...extra,
    });

    it('runs openshift-namespaces once (RUN_ONCE) against the simulated clusters', async () => {
      env = await startExampleEnvironment();
      const child = spawn(bin('run-integration'), [], {
        cwd: installed,
        env: podEnv({ CONFIG: env.configPath, DRY_RUN: '--no-dry-run' }),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
      expect(code, output).toBe(0);
      const names = (cluster: string) =>
        env!.server
          .list(cluster, 'v1', 'Namespace')
          .map((o) => (o as { metadata: { name: string } }).metadata.name);
      expect(names('appint-ex-01')).toEqual(
        expect.arrayContaining(['app-sre-observability', 'app-sre-pipelines', 'example-app-stage']),
      );
      expect(names('appint-ex-02')).toContain('example-app-production');
      expect(names('appint-ex-k8s')).toContain('example-app-edge');
    });

    it('loads resource files on a worker thread from its own chunk (openshift-resources, dry-run)', async () => {
      // The namespaces exist: the run above created them.
      const { stdout, stderr } = await run(
        bin('qontract-reconcile'),
        [
          '--config',
          env!.configPath,
          '--log-format',
          'json',
          '--log-level',
          'DEBUG',
          '--dry-run',
          'openshift-resources',
        ],
        { cwd: installed, env: { PATH, HOME: work, QONTRACT_PARSE_THREADS: '1' } },
      );
      const logs = `${stdout}${stderr}`;
      expect(logs).toMatch(/resource files: [1-9]\d* loaded on worker threads, \d+ here/);
      expect(logs).toContain("['apply', 'privileged=False', 'appint-ex-01', 'example-app-stage'");
    });

    it('reports a failed run to Sentry (SENTRY_DSN) from its lazily loaded chunk', async () => {
      const sentry = await startFakeSentry();
      try {
        const child = spawn(bin('run-integration'), [], {
          cwd: installed,
          env: podEnv({
            CONFIG: join(work, 'no-such-config.toml'),
            SENTRY_DSN: sentry.dsn,
            SENTRY_EVENT_LEVEL: 'ERROR',
          }),
          stdio: ['ignore', 'ignore', 'ignore'],
        });
        expect(await new Promise((resolve) => child.on('exit', resolve))).toBe(1);
        const [event] = sentry.events() as { level: string; tags: Record<string, string> }[];
        expect(event?.level).toBe('error');
        expect(event?.tags.integration).toBe('openshift-namespaces');
        expect(JSON.stringify(event)).toContain('config file not found');
      } finally {
        await sentry.close();
      }
    });
  });
});
