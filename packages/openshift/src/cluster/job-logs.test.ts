import { PassThrough } from 'node:stream';
import { type FakeKubeApiServer, startFakeKubeApiServer } from '@qontract/fake-kube-apiserver';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { ApiResourceCatalog } from './api-resources.ts';
import { followJobLogs, JobNotRunningError } from './job-logs.ts';
import { KubeClient } from './kube-client.ts';

let server: FakeKubeApiServer;
let client: KubeClient;
let catalog: ApiResourceCatalog;

beforeAll(async () => {
  server = await startFakeKubeApiServer({ clusters: [{ name: 'c1' }] });
  const c = server.cluster('c1');
  const caData = server.kubeconfigObject().clusters[0]!.cluster['certificate-authority-data'];
  client = new KubeClient({ name: 'c1', server: c.url, token: c.token, caData }, { backoffMs: 1 });
  catalog = await client.discover();
});
afterAll(async () => {
  await client.close();
  await server.close();
});

function jobPod(name: string, job: string, phase: string, extra: Record<string, unknown> = {}) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: 'jobs',
      labels: { 'job-name': job, 'batch.kubernetes.io/job-name': job },
      ...extra,
    },
    spec: {
      initContainers: [{ name: 'init', image: 'x' }],
      containers: [
        { name: 'main', image: 'x' },
        { name: 'side', image: 'y' },
      ],
    },
    status: { phase },
  };
}

function collector() {
  const out = new PassThrough();
  let text = '';
  out.on('data', (d) => {
    text += String(d);
  });
  return { out, text: () => text };
}

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(check()).toBe(true);
}

const follows = (pod: string) =>
  server
    .requests({ name: pod })
    .filter((r) => r.subresource === 'log' && r.path.includes('follow=true'));

it('follows every container of the job pod until each ends, whole lines interleaved', async () => {
  server.seed('c1', [jobPod('migrate-abcde', 'migrate', 'Running')]);
  server.appendPodLog('c1', 'jobs', 'migrate-abcde', 'init', 'init: ok');
  server.endContainer('c1', 'jobs', 'migrate-abcde', 'init');
  server.appendPodLog('c1', 'jobs', 'migrate-abcde', 'main', 'main: one');
  const { out, text } = collector();
  const lines: string[] = [];
  const done = followJobLogs(client, catalog, 'jobs', 'migrate', out, {
    log: (l) => lines.push(l),
  });
  await until(() => follows('migrate-abcde').length === 3);
  server.appendPodLog('c1', 'jobs', 'migrate-abcde', 'side', 'side: one');
  server.appendPodLog('c1', 'jobs', 'migrate-abcde', 'main', 'main: two');
  server.endContainer('c1', 'jobs', 'migrate-abcde', 'main');
  server.appendPodLog('c1', 'jobs', 'migrate-abcde', 'side', 'side: two');
  server.endContainer('c1', 'jobs', 'migrate-abcde', 'side');
  await done;
  expect(lines).toEqual(['waiting for job to run: migrate']);
  const written = text().split('\n');
  expect(written.pop()).toBe('');
  expect([...written].sort()).toEqual([
    'init: ok',
    'main: one',
    'main: two',
    'side: one',
    'side: two',
  ]);
  expect(written.indexOf('main: one')).toBeLessThan(written.indexOf('main: two'));
  expect(written.indexOf('side: one')).toBeLessThan(written.indexOf('side: two'));
});

it('logs the pod kubectl picks: a running one before a finished one', async () => {
  server.seed('c1', [
    jobPod('retry-old', 'retry', 'Failed', { creationTimestamp: '2026-01-01T00:00:00Z' }),
    jobPod('retry-new', 'retry', 'Running', { creationTimestamp: '2026-01-01T00:01:00Z' }),
  ]);
  for (const c of ['init', 'main', 'side']) {
    server.appendPodLog('c1', 'jobs', 'retry-old', c, `old ${c}`);
    server.appendPodLog('c1', 'jobs', 'retry-new', c, `new ${c}`);
    server.endContainer('c1', 'jobs', 'retry-new', c);
  }
  const { out, text } = collector();
  await followJobLogs(client, catalog, 'jobs', 'retry', out);
  expect(text().split('\n').sort()).toEqual(['', 'new init', 'new main', 'new side']);
});

it('gives up after the tries when no pod of the job runs', async () => {
  server.seed('c1', [jobPod('stuck-aaaaa', 'stuck', 'Pending')]);
  const lines: string[] = [];
  const attempt = followJobLogs(client, catalog, 'jobs', 'stuck', new PassThrough(), {
    attempts: 3,
    delayMs: () => 1,
    log: (l) => lines.push(l),
  });
  await expect(attempt).rejects.toThrow(JobNotRunningError);
  await expect(attempt).rejects.toThrow('[c1/jobs] job stuck: no pod running after 3 tries');
  expect(lines).toEqual(Array(3).fill('waiting for job to run: stuck'));
});

it('a refused log request or a connection lost mid-follow is an error, not a crash or a hang', async () => {
  server.seed('c1', [jobPod('lost-aaaaa', 'lost', 'Running')]);
  // One stream refused: the others (containers still running) are ended too.
  server.faults.set('c1', {
    verb: 'get',
    resource: 'pods',
    name: 'lost-aaaaa',
    status: 403,
    times: 1,
  });
  const refused = followJobLogs(client, catalog, 'jobs', 'lost', new PassThrough());
  await expect(refused).rejects.toThrow('forbidden');

  const { out, text } = collector();
  const before = follows('lost-aaaaa').length;
  const lost = followJobLogs(client, catalog, 'jobs', 'lost', out);
  server.appendPodLog('c1', 'jobs', 'lost-aaaaa', 'main', 'partial');
  await until(() => follows('lost-aaaaa').length === before + 3 && text() === 'partial\n');
  await server.faults.down('c1');
  await expect(lost).rejects.toThrow();
  await server.faults.up('c1');
});
