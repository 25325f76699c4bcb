import { spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import {
  type ChartValues,
  ONE_SHARD,
  processTemplate,
  renderTemplate,
} from '@qontract/integration-integrations-manager';
import { type ExampleEnvironment, startExampleEnvironment } from '@qontract/testing';
import { type FakeSentry, startFakeSentry } from '@qontract/testing/fake-sentry';
import { freePort } from '@qontract/testing/free-port';
import { type HttpFake, startHttpFake } from '@qontract/testing/http-fake';
import { makePrivateCa } from '@qontract/testing/private-ca';
import { type Pushgateway, startPushgateway } from '@qontract/testing/pushgateway';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  baseImageName,
  buildImage,
  ensureBaseImage,
  podmanRunArgs,
  sh,
  TEST_IMAGE,
} from './image.ts';
import { containerOf, podmanOptions, type RenderedContainer } from './pod.ts';

/**
 * The image's contract, checked on the image itself (`npm run test:image`):
 * built from the Containerfile on a local Debian base, then each pod kind
 * integrations-manager renders is started with podman as a kubelet would start
 * it (its env, Secrets, ConfigMaps and volumes; a read-only root), against the
 * project's fakes on the host's 127.0.0.1.
 */

const timings: [string, number][] = [];
async function timed<T>(label: (result: T) => string, step: () => Promise<T>): Promise<T> {
  const start = performance.now();
  const result = await step();
  timings.push([label(result), (performance.now() - start) / 1000]);
  return result;
}

let digest = '';
let work = '';
let checksStart = 0;
const started: string[] = [];

beforeAll(async () => {
  const base = await baseImageName();
  await timed(
    (made) => (made ? `base ${base} made (debootstrap, Node, npm)` : `base ${base} (cached)`),
    () => ensureBaseImage(base),
  );
  await timed(
    () => 'image built (buildah, Containerfile)',
    () => buildImage(base),
  );
  digest = (await sh('podman', ['image', 'inspect', '--format', '{{.Digest}}', TEST_IMAGE])).trim();
  work = await mkdtemp(join(tmpdir(), 'qr-image-check-'));
  await chmod(work, 0o755);
  checksStart = performance.now();
}, 30 * 60_000);

afterAll(async () => {
  // A check that failed midway leaves its container running.
  for (const name of started) {
    await sh('podman', ['rm', '--force', '--time', '0', name]).catch(() => undefined);
  }
  if (checksStart) timings.push(['checks', (performance.now() - checksStart) / 1000]);
  const size = await sh('podman', ['image', 'inspect', '--format', '{{.Size}}', TEST_IMAGE]).catch(
    () => '0',
  );
  const lines = [
    `${TEST_IMAGE} ${digest}: ${(Number(size) / 1e6).toFixed(0)} MB`,
    ...timings.map(([label, seconds]) => `${label}: ${seconds.toFixed(1)} s`),
    `on ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}`,
  ];
  console.log(lines.join('\n'));
  if (work) await rm(work, { recursive: true, force: true });
});

/** The `int` container of the object of `kind` integrations-manager renders for `values`. */
function renderedPod(
  values: ChartValues,
  kind: 'Deployment' | 'CronJob',
  parameters: Record<string, string>,
): { container: RenderedContainer; terminationGracePeriodSeconds: number } {
  const [image, tag] = TEST_IMAGE.split(/:(?=[^:/]+$)/);
  const objects = processTemplate(renderTemplate(values), {
    IMAGE: image!,
    IMAGE_TAG: tag!,
    IMAGE_DIGEST: digest,
    ...parameters,
  });
  return containerOf(objects.find((o) => o.kind === kind)!, 'int');
}

/**
 * A host directory per volume, with the files given (an emptyDir is writable
 * by any uid, as Kubernetes makes it).
 */
async function volumes(
  pod: string,
  files: Record<string, Record<string, string>>,
): Promise<Record<string, string>> {
  const dirs: Record<string, string> = {};
  for (const [volume, content] of Object.entries(files)) {
    const dir = join(work, pod, volume);
    await mkdir(dir, { recursive: true });
    await chmod(dir, 0o777);
    for (const [file, text] of Object.entries(content)) {
      await mkdir(dirname(join(dir, file)), { recursive: true, mode: 0o755 });
      await writeFile(join(dir, file), text, { mode: 0o644 });
    }
    dirs[volume] = dir;
  }
  return dirs;
}

interface Container {
  readonly name: string;
  /** stdout and stderr so far. */
  output(): string;
  /** The exit code of `podman run`: the container's. */
  readonly exit: Promise<number | null>;
}

/** Starts a container of TEST_IMAGE (or `image`) with podmanRunArgs. */
function start(pod: string, options: readonly string[], image: string, command: string[] = []) {
  // Unique per run: another worktree may run the checks at the same time.
  const name = `qr-check-${pod}-${process.pid}`;
  started.push(name);
  const child = spawn('podman', podmanRunArgs(name, options, image, command), {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exit = new Promise<number | null>((resolve) => child.on('close', resolve));
  return { name, output: () => output, exit } satisfies Container;
}

/** Resolves once the container has printed `text`; fails with its output if it exits first. */
async function waitFor(container: Container, text: string, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exited: number | null | undefined;
  void container.exit.then((code) => (exited = code));
  while (!container.output().includes(text)) {
    if (exited !== undefined || Date.now() > deadline) {
      throw new Error(
        `${container.name} ${exited !== undefined ? `exited (${exited})` : 'timed out'} before printing '${text}':\n${container.output()}`,
      );
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Sends SIGTERM to the container's PID 1; its exit code and the seconds it took to stop. */
async function stop(container: Container): Promise<{ code: number | null; seconds: number }> {
  const signalled = performance.now();
  await sh('podman', ['kill', '--signal', 'TERM', container.name]);
  const code = await container.exit;
  return { code, seconds: (performance.now() - signalled) / 1000 };
}

describe('the image', () => {
  it('runs as uid 1001, under tini as PID 1, and cannot write its root filesystem', async () => {
    expect(
      (await sh('podman', ['image', 'inspect', '--format', '{{.Config.User}}', TEST_IMAGE])).trim(),
    ).toBe('1001');
    const probe = start('user', [], TEST_IMAGE, [
      'sh',
      '-c',
      'id -u; cat /proc/1/comm; touch /probe 2>&1; touch /opt/qontract-reconcile/probe 2>&1; true',
    ]);
    expect(await probe.exit).toBe(0);
    const lines = probe.output().trim().split('\n');
    expect(lines.slice(0, 2)).toEqual(['1001', 'tini']);
    expect(lines.slice(2)).toEqual([
      expect.stringContaining('Read-only file system'),
      expect.stringContaining('Read-only file system'),
    ]);
  });

  it('qontract-reconcile --help lists the integrations', async () => {
    const help = start('help', [], TEST_IMAGE, ['qontract-reconcile', '--help']);
    expect(await help.exit).toBe(0);
    expect(help.output()).toContain('qontract-reconcile openshift-namespaces');
    expect(help.output()).toContain('qontract-reconcile openshift-resources');
  });
});

describe('a Deployment rendered by integrations-manager, run from the image', () => {
  let env: ExampleEnvironment;
  let pod: Container;
  let logs = '';
  let port = 0;
  let grace = 0;
  beforeAll(async () => {
    env = await startExampleEnvironment();
  });
  afterAll(async () => env?.close());

  it('runs openshift-namespaces against the simulated clusters (DRY_RUN=--no-dry-run)', async () => {
    const rendered = renderedPod(
      { integrations: [{ name: 'openshift-namespaces', shardSpecs: [ONE_SHARD] }], cronjobs: [] },
      'Deployment',
      { DRY_RUN: '--no-dry-run' },
    );
    grace = rendered.terminationGracePeriodSeconds;
    const dirs = await volumes('deployment', {
      tmp: {},
      'qontract-reconcile-toml': { 'config.toml': await readFile(env.configPath, 'utf8') },
      logs: {},
      'qontract-reconcile-sa-token': { token: 'not-used' },
    });
    logs = dirs.logs!;
    port = await freePort();
    const options = [
      ...podmanOptions(rendered.container, {
        secrets: {},
        configMaps: { 'app-interface': { GITHUB_API: 'http://127.0.0.1:9', SENTRY_DSN: '' } },
        volumes: dirs,
      }),
      // The host's network is shared: a free port stands for the pod's 9090.
      '--env',
      `PROMETHEUS_PORT=${port}`,
      // The example app-interface (`file://` in the config), at the path the config names.
      '--volume',
      `${env.appInterfaceDir}:${env.appInterfaceDir}:ro`,
    ];
    pod = start('deployment', options, rendered.container.image);
    await waitFor(pod, 'openshift-namespaces finished: success');
    const names = (cluster: string) =>
      env.server
        .list(cluster, 'v1', 'Namespace')
        .map((o) => (o as { metadata: { name: string } }).metadata.name);
    expect(names('appint-ex-01')).toEqual(
      expect.arrayContaining(['app-sre-observability', 'app-sre-pipelines', 'example-app-stage']),
    );
    expect(names('appint-ex-k8s')).toContain('example-app-edge');
  });

  it('serves /healthz and /metrics with the process metrics and the run status', async () => {
    const healthz = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(healthz.status).toBe(200);
    const metrics = (await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()).split('\n');
    for (const name of [
      'process_cpu_seconds_total',
      'process_resident_memory_bytes',
      'process_open_fds',
      'nodejs_heap_size_used_bytes',
    ]) {
      expect(metrics.some((l) => l.startsWith(`${name} `))).toBe(true);
    }
    expect(metrics).toContain(
      'qontract_reconcile_last_run_status{integration="openshift-namespaces",shards="1",shard_id="0"} 0',
    );
  });

  it('writes its log lines to LOG_FILE, in the logs volume the fluentd sidecar reads', async () => {
    const file = await readFile(join(logs, 'integration.log'), 'utf8');
    expect(file).toContain('openshift-namespaces finished: success');
  });

  it('stops on SIGTERM within the grace period, with the last run exit code', async () => {
    const { code, seconds } = await stop(pod);
    timings.push(['SIGTERM to exit (Deployment)', seconds]);
    expect(code).toBe(0);
    expect(seconds).toBeLessThan(grace);
    expect(pod.output()).toContain('received SIGTERM');
  });
});

describe('a Deployment with internalCertificates and Sentry, run from the image', () => {
  let graphql: HttpFake;
  let sentry: FakeSentry;
  let pod: Container;
  beforeAll(async () => {
    const ca = await makePrivateCa();
    graphql = await startHttpFake({
      tls: ca.server,
      handle: () => ({
        status: 200,
        body: { errors: [{ message: 'answered by the internal server' }] },
      }),
    });
    sentry = await startFakeSentry();
    const values: ChartValues = {
      integrations: [
        {
          name: 'openshift-namespaces',
          shardSpecs: [ONE_SHARD],
          internalCertificates: true,
          extraEnv: [
            { name: 'SENTRY_EVENT_LEVEL', value: 'ERROR', secretName: null, secretKey: null },
          ],
        },
      ],
      cronjobs: [],
    };
    const rendered = renderedPod(values, 'Deployment', {});
    const dirs = await volumes('internal-ca', {
      tmp: {},
      'qontract-reconcile-toml': {
        'config.toml': `[graphql]\nserver = "${graphql.url}/graphql"\n`,
      },
      // What the internal-certificates init container copies from its image's /etc/pki.
      'internal-certificates': { 'ca-trust/extracted/pem/tls-ca-bundle.pem': ca.caCert },
      logs: {},
      'qontract-reconcile-sa-token': { token: 'not-used' },
    });
    const options = [
      ...podmanOptions(rendered.container, {
        secrets: {},
        configMaps: {
          'app-interface': { GITHUB_API: 'http://127.0.0.1:9', SENTRY_DSN: sentry.dsn },
        },
        volumes: dirs,
      }),
      '--env',
      `PROMETHEUS_PORT=${await freePort()}`,
    ];
    pod = start('internal-ca', options, rendered.container.image);
    await waitFor(pod, 'openshift-namespaces finished: failed');
  });
  afterAll(async () => {
    await graphql?.close();
    await sentry?.close();
  });

  it('trusts the private CA of the internal-certificates volume: its GraphQL server is reached', () => {
    expect(graphql.requestLog.length).toBeGreaterThan(0);
    expect(pod.output()).toContain('answered by the internal server');
    expect(pod.output()).not.toContain('UNABLE_TO_VERIFY');
  });

  it("reports the run's failure to SENTRY_DSN", async () => {
    await expect.poll(() => sentry.events().length, { timeout: 15_000 }).toBeGreaterThan(0);
    const [event] = sentry.events() as { level: string; tags: Record<string, string> }[];
    expect(event?.level).toBe('error');
    expect(event?.tags.integration).toBe('openshift-namespaces');
    expect(JSON.stringify(sentry.events())).toContain('answered by the internal server');
  });

  it('stops on SIGTERM with the failed run exit code', async () => {
    const { code } = await stop(pod);
    expect(code).toBe(1);
  });
});

describe('a CronJob rendered by integrations-manager, run from the image', () => {
  let env: ExampleEnvironment;
  let gateway: Pushgateway;
  beforeAll(async () => {
    env = await startExampleEnvironment();
    gateway = await startPushgateway();
  });
  afterAll(async () => {
    await gateway?.close();
    await env?.close();
  });

  it('runs once under an arbitrary uid of group 0 (OpenShift) and pushes to the Pushgateway', async () => {
    const values: ChartValues = {
      integrations: [],
      cronjobs: [
        {
          name: 'openshift-namespaces',
          shardSpecs: [ONE_SHARD],
          cron: '*/10 * * * *',
          enablePushgateway: true,
        },
      ],
    };
    const rendered = renderedPod(values, 'CronJob', { DRY_RUN: '--dry-run' });
    const dirs = await volumes('cronjob', {
      'qontract-reconcile-toml': { 'config.toml': await readFile(env.configPath, 'utf8') },
      'qontract-reconcile-sa-token': { token: 'not-used' },
    });
    const options = [
      ...podmanOptions(rendered.container, {
        secrets: {
          'push-gateway-auth-url': {
            server: gateway.url,
            username: gateway.username,
            password: gateway.password,
          },
        },
        configMaps: { 'app-interface': { GITHUB_API: 'http://127.0.0.1:9' } },
        volumes: dirs,
      }),
      '--user',
      '1000680000:0',
      '--volume',
      `${env.appInterfaceDir}:${env.appInterfaceDir}:ro`,
    ];
    const job = start('cronjob', options, rendered.container.image);
    expect(await job.exit, job.output()).toBe(0);
    expect(job.output()).toContain('openshift-namespaces finished: success');
    expect(job.output()).not.toContain(gateway.password);
    expect(await gateway.scrape()).toContain(
      'qontract_reconcile_last_run_status{instance="",integration="openshift-namespaces",job="qontract-reconcile",shard_id="0",shards="1"} 0',
    );
  });
});
