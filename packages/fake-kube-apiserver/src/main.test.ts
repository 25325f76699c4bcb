import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
