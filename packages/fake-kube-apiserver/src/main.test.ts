import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { KubeconfigObject } from './kubeconfig.ts';
import type { ClusterHandle } from './server.ts';
import { call } from './test-support/client.ts';

const BIN = fileURLToPath(new URL('../bin/fake-kube-apiserver.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'fake-kube-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function start(args: string[]): { child: ChildProcess; output: Promise<string> } {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const output = new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      if (out.includes('kubeconfig written')) resolve(out);
    });
    child.once('exit', (code) => reject(new Error(`exited with ${code}: ${out}`)));
  });
  return { child, output };
}

function handleFrom(config: KubeconfigObject, name: string): ClusterHandle {
  const cluster = config.clusters.find((c) => c.name === name);
  const user = config.users.find((u) => u.name === `${name}-admin`);
  return {
    name,
    url: cluster?.cluster.server ?? '',
    token: user?.user.token ?? '',
    caCertificate: Buffer.from(
      cluster?.cluster['certificate-authority-data'] ?? '',
      'base64',
    ).toString('utf8'),
  } as ClusterHandle;
}

describe('fake-kube-apiserver command', () => {
  it('serves the clusters, writes a kubeconfig, seeds objects and stops on SIGTERM', async () => {
    const kubeconfig = join(dir, 'kubeconfig');
    const seed = join(dir, 'seed.yaml');
    writeFileSync(
      seed,
      [
        'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: everywhere, namespace: demo}\ndata: {a: "1"}',
        'cluster: ocp\nobjects:\n- apiVersion: route.openshift.io/v1\n  kind: Route\n  metadata: {name: r, namespace: demo}\n  spec: {to: {kind: Service, name: s}}',
      ].join('\n---\n'),
    );
    const { child, output } = start([
      '--clusters',
      'ocp:openshift,k8s',
      '--kubeconfig',
      kubeconfig,
      '--seed',
      seed,
    ]);
    try {
      const out = await output;
      expect(out).toMatch(
        /^ocp\thttps:\/\/127\.0\.0\.1:\d+\ttoken=\S+\topenshift\nk8s\thttps:\/\/127\.0\.0\.1:\d+\ttoken=\S+\n/,
      );
      const config = parse(readFileSync(kubeconfig, 'utf8')) as KubeconfigObject;
      expect(config.contexts.map((c) => c.name)).toEqual(['ocp', 'k8s']);
      const ocp = handleFrom(config, 'ocp');
      const k8s = handleFrom(config, 'k8s');
      expect((await call(ocp, 'GET', '/api/v1/namespaces/demo/configmaps/everywhere')).status).toBe(
        200,
      );
      expect((await call(k8s, 'GET', '/api/v1/namespaces/demo/configmaps/everywhere')).status).toBe(
        200,
      );
      expect(
        (await call(ocp, 'GET', '/apis/route.openshift.io/v1/namespaces/demo/routes/r')).status,
      ).toBe(200);
      expect((await call(k8s, 'GET', '/apis/route.openshift.io/v1')).status).toBe(404);
    } finally {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    }
  });

  it('takes fixed tokens, ports and faults, and is driven at run time through its control endpoint', async () => {
    const kubeconfig = join(dir, 'kubeconfig-control');
    const port = await freePort();
    const { child, output } = start([
      '--clusters',
      'a,b:openshift',
      '--token',
      'a=token-of-a',
      '--token',
      'shared-token==',
      '--port',
      `a=${port}`,
      '--fault',
      'cluster=a,verb=list,resource=configmaps,status=503,times=1',
      '--fault-seed',
      '7',
      '--control-token',
      'control-secret',
      '--kubeconfig',
      kubeconfig,
    ]);
    try {
      const out = await output;
      expect(out).toContain(`a\thttps://127.0.0.1:${port}\ttoken=token-of-a\n`);
      expect(out).toMatch(/^b\thttps:\/\/127\.0\.0\.1:\d+\ttoken=shared-token==\topenshift$/m);
      const control =
        /^control\t(http:\/\/127\.0\.0\.1:\d+\/_control)\ttoken=control-secret$/m.exec(out)?.[1];
      expect(control).toBeDefined();
      const config = parse(readFileSync(kubeconfig, 'utf8')) as KubeconfigObject;
      const a = handleFrom(config, 'a');
      const b = handleFrom(config, 'b');
      expect(a.token).toBe('token-of-a');
      const ctl = (method: string, path: string, body?: string, token = 'control-secret') =>
        fetch(`${control}${path}`, {
          method,
          headers: { Authorization: `Bearer ${token}` },
          ...(body !== undefined ? { body } : {}),
        });

      // The fault given on the command line: the first list of ConfigMaps fails, then it lapses.
      const configmaps = '/api/v1/namespaces/default/configmaps';
      expect((await call(a, 'GET', configmaps)).status).toBe(503);
      expect((await call(a, 'GET', configmaps)).status).toBe(200);

      // The control endpoint wants its token.
      expect((await ctl('GET', '/faults', undefined, 'wrong')).status).toBe(401);
      expect((await fetch(`${control}/faults`)).status).toBe(401);

      // A fault added at run time, in the library's model, reaches the next kube request.
      const added = await ctl(
        'POST',
        '/faults',
        JSON.stringify({
          cluster: 'b',
          verb: 'get',
          resource: 'namespaces',
          status: 429,
          retryAfter: 3,
        }),
      );
      expect(added.status).toBe(201);
      const throttled = await call(b, 'GET', '/api/v1/namespaces/default');
      expect(throttled.status).toBe(429);
      expect(throttled.headers['retry-after']).toBe('3');
      expect(throttled.body).toMatchObject({ reason: 'TooManyRequests', code: 429 });
      expect((await ctl('POST', '/faults', 'cluster=a,verb=create,latencyMs=5\n')).status).toBe(
        201,
      );
      expect(await (await ctl('GET', '/faults?cluster=b')).json()).toEqual([
        { cluster: 'b', verb: 'get', resource: 'namespaces', status: 429, retryAfter: 3 },
      ]);

      // The request log shows what the clients saw.
      expect(await (await ctl('GET', '/requests?cluster=b&verb=get')).json()).toEqual([
        expect.objectContaining({
          cluster: 'b',
          verb: 'get',
          path: '/api/v1/namespaces/default',
          status: 429,
        }),
      ]);
      const text = await (await ctl('GET', '/requests?cluster=a&format=text')).text();
      expect(text).toBe(`a\t503\tlist\tGET\t${configmaps}\na\t200\tlist\tGET\t${configmaps}\n`);

      // A bad fault is refused with the reason.
      const bad = await ctl('POST', '/faults', JSON.stringify({ cluster: 'b', status: 'often' }));
      expect(bad.status).toBe(400);
      expect(((await bad.json()) as { error: string }).error).toContain(
        'status must be an HTTP status code',
      );

      // Cleared, the cluster answers again.
      expect((await ctl('DELETE', '/faults?cluster=b')).status).toBe(200);
      expect((await call(b, 'GET', '/api/v1/namespaces/default')).status).toBe(200);

      // Down and up, seeding, and an emptied log.
      expect((await ctl('POST', '/clusters/a/down')).status).toBe(200);
      await expect(call(a, 'GET', configmaps)).rejects.toThrow(/ECONNREFUSED/);
      expect(await (await ctl('GET', '/clusters')).json()).toEqual([
        expect.objectContaining({ name: 'a', token: 'token-of-a', up: false }),
        expect.objectContaining({ name: 'b', token: 'shared-token==', openshift: true, up: true }),
      ]);
      expect((await ctl('POST', '/clusters/a/up')).status).toBe(200);
      const seeded = await ctl(
        'POST',
        '/clusters/a/seed',
        'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: by-hand, namespace: repro}\n',
      );
      expect(seeded.status).toBe(200);
      expect((await call(a, 'GET', '/api/v1/namespaces/repro/configmaps/by-hand')).status).toBe(
        200,
      );
      expect((await ctl('DELETE', '/requests')).status).toBe(200);
      expect(await (await ctl('GET', '/requests')).json()).toEqual([]);
    } finally {
      const exited =
        child.exitCode !== null
          ? Promise.resolve(child.exitCode)
          : new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    }
  });

  it('refuses a fault it cannot read', async () => {
    const child = spawn(
      process.execPath,
      [BIN, '--clusters', 'a', '--fault', 'cluster=a,verb=list,stat=503'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let err = '';
    child.stderr?.on('data', (c: Buffer) => {
      err += c.toString('utf8');
    });
    const [code] = await once(child, 'exit');
    expect(code).toBe(2);
    expect(err).toContain('--fault: fault cluster=a,verb=list,stat=503: unknown field "stat"');
  });

  it('explains bad usage', async () => {
    const child = spawn(process.execPath, [BIN, '--port-base', 'x'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    child.stderr?.on('data', (c: Buffer) => {
      err += c.toString('utf8');
    });
    const code = await new Promise((resolve) => child.once('exit', resolve));
    expect(code).toBe(2);
    expect(err).toContain('--clusters is required');
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}
