import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { ApiException, CoreV1Api, KubeConfig, Log } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeKubeApiServer, startFakeKubeApiServer } from './server.ts';

/**
 * `pods/log` against the real clients: client-node (`readNamespacedPodLog`,
 * its streaming `Log`) and Debian's `kubectl logs` (which fails here on a
 * machine without kubectl, as kubectl.test.ts does).
 */

let server: FakeKubeApiServer;
let kc: KubeConfig;
let dir: string;

const pod = (name: string, containers: string[], phase: string, labels = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'logs', labels },
  spec: { containers: containers.map((c) => ({ name: c, image: 'quay.io/x/y:1' })) },
  status: { phase },
});

beforeAll(async () => {
  server = await startFakeKubeApiServer({ clusters: [{ name: 'c' }] });
  kc = new KubeConfig();
  kc.loadFromString(server.kubeconfig());
  dir = mkdtempSync(join(tmpdir(), 'fake-kube-logs-'));
  writeFileSync(join(dir, 'kubeconfig'), server.kubeconfig());
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

function kubectl(args: string[]): {
  done: Promise<{ code: number; stdout: string; stderr: string }>;
  stdout: () => string;
} {
  const env = {
    PATH: process.env.PATH,
    HOME: dir,
    KUBECONFIG: join(dir, 'kubeconfig'),
    KUBECACHEDIR: join(dir, 'cache'),
  };
  const child = spawn('kubectl', args, { env });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => {
    stdout += String(d);
  });
  child.stderr.on('data', (d) => {
    stderr += String(d);
  });
  const done = new Promise<{ code: number; stdout: string; stderr: string }>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
  return { done, stdout: () => stdout };
}

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((r) => setTimeout(r, 20));
  expect(check()).toBe(true);
}

/** client-node's streaming `Log` with `follow=true`, collected. */
async function follow(podName: string, container: string) {
  const out = new PassThrough();
  let text = '';
  out.on('data', (d) => {
    text += String(d);
  });
  const ended = new Promise((resolve) => out.on('end', resolve));
  await new Log(kc).log('logs', podName, container, out, { follow: true });
  return { text: () => text, ended };
}

const followRequests = (podName: string) =>
  server
    .requests({ name: podName })
    .filter((r) => r.subresource === 'log' && r.path.includes('follow=true'));

describe('pods/log', { timeout: 60_000 }, () => {
  it('serves a container log as text, with tailLines and timestamps; 404 and 400 as the real server', async () => {
    server.seed('c', [
      pod('one', ['main'], 'Running'),
      pod('two', ['app', 'sidecar'], 'Running'),
      pod('new', ['main'], 'Pending'),
    ]);
    server.appendPodLog('c', 'logs', 'one', 'main', 'first\nsecond\nthird\n');
    const core = kc.makeApiClient(CoreV1Api);
    const discovered = (await core.getAPIResources()).resources.find((r) => r.name === 'pods/log');
    expect(discovered).toMatchObject({ kind: 'Pod', namespaced: true, verbs: ['get'] });
    expect(await core.readNamespacedPodLog({ name: 'one', namespace: 'logs' })).toBe(
      'first\nsecond\nthird\n',
    );
    expect(await core.readNamespacedPodLog({ name: 'one', namespace: 'logs', tailLines: 1 })).toBe(
      'third\n',
    );
    const stamped = await core.readNamespacedPodLog({
      name: 'one',
      namespace: 'logs',
      timestamps: true,
      limitBytes: 2000,
    });
    expect(stamped).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z first\n/);

    const failure = async (request: Promise<unknown>) => {
      const e = await request.then(
        () => undefined,
        (x: unknown) => x,
      );
      expect(e).toBeInstanceOf(ApiException);
      const body = (e as ApiException<string>).body;
      return { code: (e as ApiException<string>).code, body: JSON.parse(body) };
    };
    const missing = await failure(core.readNamespacedPodLog({ name: 'nope', namespace: 'logs' }));
    expect(missing).toMatchObject({ code: 404, body: { message: 'pods "nope" not found' } });
    const ambiguous = await failure(core.readNamespacedPodLog({ name: 'two', namespace: 'logs' }));
    expect(ambiguous).toMatchObject({
      code: 400,
      body: {
        reason: 'BadRequest',
        message: 'a container name must be specified for pod two, choose one of: [app sidecar]',
      },
    });
    const unknown = await failure(
      core.readNamespacedPodLog({ name: 'two', namespace: 'logs', container: 'x' }),
    );
    expect(unknown.body.message).toBe('container x is not valid for pod two');
    const waiting = await failure(core.readNamespacedPodLog({ name: 'new', namespace: 'logs' }));
    expect(waiting).toMatchObject({
      code: 400,
      body: { message: 'container "main" in pod "new" is waiting to start: ContainerCreating' },
    });
  });

  it('follow=true streams appended lines until the container ends (client-node Log)', async () => {
    server.seed('c', [pod('follow', ['main', 'side'], 'Running')]);
    server.appendPodLog('c', 'logs', 'follow', 'main', 'before');
    const first = await follow('follow', 'main');
    await until(() => first.text() === 'before\n');
    server.appendPodLog('c', 'logs', 'follow', 'main', ['after one', 'after two']);
    await until(() => first.text() === 'before\nafter one\nafter two\n');
    server.endContainer('c', 'logs', 'follow', 'main');
    await first.ended;
    // One container of two ended: the pod still runs; then both, it succeeded.
    expect(server.get('c', 'v1', 'Pod', 'logs', 'follow')?.status).toMatchObject({
      phase: 'Running',
      containerStatuses: [
        { name: 'main', state: { terminated: { exitCode: 0 } } },
        { name: 'side' },
      ],
    });
    // A container that wrote nothing yet: the answer's headers come at once all the same.
    const silent = await follow('follow', 'side');
    server.endContainer('c', 'logs', 'follow', 'side', 2);
    await silent.ended;
    expect(silent.text()).toBe('');
    expect(server.get('c', 'v1', 'Pod', 'logs', 'follow')?.status).toMatchObject({
      phase: 'Failed',
    });
    // A finished container's log is answered whole, and the follow request ends at once.
    const again = await follow('follow', 'main');
    await again.ended;
    expect(again.text()).toBe('before\nafter one\nafter two\n');
  });

  it('kubectl logs -f job/NAME --all-containers follows both containers of the job pod', async () => {
    const jobLabels = { 'batch.kubernetes.io/job-name': 'migrate', 'job-name': 'migrate' };
    server.seed('c', [
      {
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: { name: 'migrate', namespace: 'logs' },
        spec: {
          selector: { matchLabels: { 'job-name': 'migrate' } },
          template: {
            metadata: { labels: jobLabels },
            spec: {
              containers: [
                { name: 'db', image: 'x' },
                { name: 'report', image: 'y' },
              ],
            },
          },
        },
      },
      pod('migrate-x7k2p', ['db', 'report'], 'Running', jobLabels),
    ]);
    server.appendPodLog('c', 'logs', 'migrate-x7k2p', 'db', 'db: started');
    server.appendPodLog('c', 'logs', 'migrate-x7k2p', 'report', 'report: started');
    const run = kubectl(['logs', '-n', 'logs', '-f', '--all-containers=true', 'job/migrate']);
    await until(() => followRequests('migrate-x7k2p').length === 2);
    server.appendPodLog('c', 'logs', 'migrate-x7k2p', 'db', 'db: done');
    server.endContainer('c', 'logs', 'migrate-x7k2p', 'db');
    server.appendPodLog('c', 'logs', 'migrate-x7k2p', 'report', 'report: done');
    server.endContainer('c', 'logs', 'migrate-x7k2p', 'report');
    const result = await run.done;
    expect(result.code, result.stderr).toBe(0);
    // Followed in parallel: each container's lines in order, interleaved as they came.
    const lines = result.stdout.trimEnd().split('\n');
    expect([...lines].sort()).toEqual([
      'db: done',
      'db: started',
      'report: done',
      'report: started',
    ]);
    expect(lines.indexOf('db: started')).toBeLessThan(lines.indexOf('db: done'));
    expect(lines.indexOf('report: started')).toBeLessThan(lines.indexOf('report: done'));

    const plain = await kubectl(['logs', '-n', 'logs', 'migrate-x7k2p']).done;
    // kubectl picks the first container itself, so the server's 400 is not met here.
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stderr).toContain('Defaulted container "db" out of: db, report');
    expect(plain.stdout).toBe('db: started\ndb: done\n');
    const unknown = await kubectl(['logs', '-n', 'logs', 'pod/gone']).done;
    expect(unknown.stderr).toContain('pods "gone" not found');
  });
});
