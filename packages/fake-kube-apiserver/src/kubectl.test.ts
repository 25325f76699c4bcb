import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { type FakeKubeApiServer, startFakeKubeApiServer } from './server.ts';

/**
 * Conformance of the fake against the real `kubectl` (Debian's
 * `kubernetes-client`). A machine without kubectl fails here on purpose.
 */

let server: FakeKubeApiServer;
let dir: string;
let env: NodeJS.ProcessEnv;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function kubectl(args: string[], input?: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = execFile('kubectl', args, { env, timeout: 30_000 }, (error, stdout, stderr) => {
      if (error && (error as NodeJS.ErrnoException).code === 'ENOENT') {
        reject(
          new Error(
            'kubectl is not installed: run `apt-get install -y kubernetes-client` (.ci/run does)',
          ),
        );
        return;
      }
      const code = error ? Number((error as { code?: unknown }).code ?? 1) : 0;
      resolve({ code, stdout, stderr });
    });
    if (input !== undefined) child.stdin?.end(input);
  });
}

function file(name: string, objects: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, stringify(objects));
  return path;
}

beforeAll(async () => {
  server = await startFakeKubeApiServer({ clusters: [{ name: 'conformance', openshift: true }] });
  dir = mkdtempSync(join(tmpdir(), 'fake-kube-kubectl-'));
  writeFileSync(join(dir, 'kubeconfig'), server.kubeconfig());
  env = {
    PATH: process.env.PATH,
    HOME: dir,
    KUBECONFIG: join(dir, 'kubeconfig'),
    KUBECACHEDIR: join(dir, 'cache'),
  };
  const version = await kubectl(['version', '--client']);
  expect(version.code, version.stderr).toBe(0);
});

afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

const configMap = (data: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'conf', namespace: 'default', labels: { app: 'conformance' } },
  data,
});

// kubectl takes a few hundred milliseconds a run; the watch test waits on output, not on time.
describe('kubectl conformance', { timeout: 60_000 }, () => {
  it('get: discovery, tables and single objects', async () => {
    const namespaces = await kubectl(['get', 'namespaces']);
    expect(namespaces.code, namespaces.stderr).toBe(0);
    expect(namespaces.stdout).toMatch(/^NAME\s+STATUS\s+AGE\n/);
    expect(namespaces.stdout).toMatch(/\nkube-system\s+Active\s+\d+[smhd]\n/);
    expect(namespaces.stdout).toContain('kube-system');
    const projects = await kubectl(['get', 'projects', '-o', 'name']);
    expect(projects.stdout).toContain('project.project.openshift.io/default');
    const missing = await kubectl(['get', 'configmap', 'nope']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('Error from server (NotFound): configmaps "nope" not found');
  });

  it('get events: the columns of `oc get events`', async () => {
    server.seed('conformance', [
      {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name: 'conf.17a', namespace: 'default' },
        involvedObject: { apiVersion: 'v1', kind: 'ConfigMap', name: 'conf', namespace: 'default' },
        type: 'Normal',
        reason: 'DriftReverted',
        message: 'ConfigMap/conf was changed (data): put back',
        lastTimestamp: new Date().toISOString(),
      },
    ]);
    const events = await kubectl(['get', 'events']);
    expect(events.code, events.stderr).toBe(0);
    expect(events.stdout).toMatch(
      /^LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE\n\d+s\s+Normal\s+DriftReverted\s+configmap\/conf\s+ConfigMap\/conf was changed \(data\): put back\n$/,
    );
  });

  it('create', async () => {
    const created = await kubectl(['create', 'namespace', 'kc']);
    expect(created.stdout.trim()).toBe('namespace/kc created');
    const cm = await kubectl(['-n', 'kc', 'create', 'configmap', 'plain', '--from-literal=a=1']);
    expect(cm.stdout.trim()).toBe('configmap/plain created');
    const again = await kubectl(['-n', 'kc', 'create', 'configmap', 'plain', '--from-literal=a=1']);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('configmaps "plain" already exists');
    const got = JSON.parse(
      (await kubectl(['-n', 'kc', 'get', 'cm', 'plain', '-o', 'json'])).stdout,
    );
    expect(got.data).toEqual({ a: '1' });
    expect(server.get('conformance', 'v1', 'ConfigMap', 'kc', 'plain')?.metadata).toMatchObject({
      managedFields: [expect.objectContaining({ manager: 'kubectl-create', operation: 'Update' })],
    });
  });

  it('apply --server-side, a conflict, then --force-conflicts', async () => {
    const first = await kubectl([
      'apply',
      '--server-side',
      '-f',
      file('cm1.yaml', configMap({ k: 'v1', drop: 'x' })),
    ]);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout.trim()).toBe('configmap/conf serverside-applied');
    const again = await kubectl([
      'apply',
      '--server-side',
      '-f',
      file('cm1b.yaml', configMap({ k: 'v1' })),
    ]);
    expect(again.code, again.stderr).toBe(0);
    const other = file('cm2.yaml', configMap({ k: 'v2' }));
    const conflict = await kubectl([
      'apply',
      '--server-side',
      '--field-manager=other',
      '-f',
      other,
    ]);
    expect(conflict.code).toBe(1);
    expect(conflict.stderr).toContain(
      'Apply failed with 1 conflict: conflict with "kubectl": .data.k',
    );
    const forced = await kubectl([
      'apply',
      '--server-side',
      '--field-manager=other',
      '--force-conflicts',
      '-f',
      other,
    ]);
    expect(forced.code, forced.stderr).toBe(0);
    const live = JSON.parse(
      (await kubectl(['get', 'cm', 'conf', '-o', 'json', '--show-managed-fields'])).stdout,
    );
    expect(live.data).toEqual({ k: 'v2' });
    expect(live.metadata.managedFields.map((m: { manager: string }) => m.manager)).toEqual([
      'kubectl',
      'other',
    ]);
  });

  it('client-side apply, then migration to server-side apply', async () => {
    const csa = file('csa.yaml', {
      ...configMap({ c: '1' }),
      metadata: { name: 'csa', namespace: 'default' },
    });
    const created = await kubectl(['apply', '-f', csa]);
    expect(created.stdout.trim()).toBe('configmap/csa created');
    const managers = async () =>
      JSON.parse(
        (await kubectl(['get', 'cm', 'csa', '-o', 'json', '--show-managed-fields'])).stdout,
      ).metadata.managedFields.map(
        (m: { manager: string; operation: string }) => `${m.manager}/${m.operation}`,
      );
    expect(await managers()).toEqual(['kubectl-client-side-apply/Update']);
    const changed = file('csa2.yaml', {
      ...configMap({ c: '2' }),
      metadata: { name: 'csa', namespace: 'default' },
    });
    const conflict = await kubectl(['apply', '--server-side', '-f', changed]);
    expect(conflict.stderr).toMatch(
      /conflict with "kubectl-client-side-apply" using v1 at \S+: \.data\.c/,
    );
    const migrated = await kubectl(['apply', '--server-side', '--force-conflicts', '-f', changed]);
    expect(migrated.code, migrated.stderr).toBe(0);
    expect(await managers()).toEqual(['kubectl/Apply', 'kubectl-last-applied/Apply']);
  });

  it('apply --server-side of a Deployment, then rollout status', async () => {
    const deployment = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'kc' },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: { containers: [{ name: 'web', image: 'nginx:1', ports: [{ containerPort: 80 }] }] },
        },
      },
    };
    const applied = await kubectl([
      'apply',
      '--server-side',
      '-f',
      file('deploy.yaml', deployment),
    ]);
    expect(applied.stdout.trim()).toBe('deployment.apps/web serverside-applied');
    const rollout = await kubectl([
      '-n',
      'kc',
      'rollout',
      'status',
      'deployment/web',
      '--timeout=20s',
    ]);
    expect(rollout.code, rollout.stderr).toBe(0);
    expect(rollout.stdout).toContain('successfully rolled out');
  });

  it('patch: strategic, merge and json', async () => {
    const strategic = await kubectl(['patch', 'cm', 'conf', '-p', '{"data":{"s":"1"}}']);
    expect(strategic.stdout.trim()).toBe('configmap/conf patched');
    const merge = await kubectl([
      'patch',
      'cm',
      'conf',
      '--type=merge',
      '-p',
      '{"data":{"m":"2"}}',
    ]);
    expect(merge.code, merge.stderr).toBe(0);
    const json = await kubectl([
      'patch',
      'cm',
      'conf',
      '--type=json',
      '-p',
      '[{"op":"remove","path":"/data/s"}]',
    ]);
    expect(json.code, json.stderr).toBe(0);
    const live = JSON.parse((await kubectl(['get', 'cm', 'conf', '-o', 'json'])).stdout);
    expect(live.data).toEqual({ k: 'v2', m: '2' });
    const containers = await kubectl([
      '-n',
      'kc',
      'patch',
      'deployment',
      'web',
      '-p',
      '{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"nginx:2"}]}}}}',
    ]);
    expect(containers.code, containers.stderr).toBe(0);
    const deployment = JSON.parse(
      (await kubectl(['-n', 'kc', 'get', 'deploy', 'web', '-o', 'json'])).stdout,
    );
    expect(deployment.spec.template.spec.containers).toEqual([
      { name: 'web', image: 'nginx:2', ports: [{ containerPort: 80, protocol: 'TCP' }] },
    ]);
    expect(deployment.metadata.generation).toBe(2);
  });

  it('Tekton: create from generateName, short names, the tekton category, delete', async () => {
    const run = {
      apiVersion: 'tekton.dev/v1',
      kind: 'PipelineRun',
      metadata: {
        generateName: 'saas-x-stage-',
        namespace: 'default',
        labels: { 'qontract.saas_file_name': 'saas-x' },
      },
      spec: { pipelineRef: { name: 'o-saas-deploy-saas-x' } },
    };
    const created = await kubectl(['create', '-f', file('pipelinerun.yaml', run)]);
    expect(created.code, created.stderr).toBe(0);
    const name = /^pipelinerun\.tekton\.dev\/(saas-x-stage-[a-z0-9]{5}) created$/.exec(
      created.stdout.trim(),
    )?.[1];
    expect(name, created.stdout).toBeDefined();
    const byLabel = await kubectl([
      'get',
      'pr',
      '-l',
      'qontract.saas_file_name=saas-x',
      '-o',
      'name',
    ]);
    expect(byLabel.stdout.trim()).toBe(`pipelinerun.tekton.dev/${name}`);
    const category = await kubectl(['get', 'tekton', '-o', 'name']);
    expect(category.code, category.stderr).toBe(0);
    expect(category.stdout.trim()).toBe(`pipelinerun.tekton.dev/${name}`);
    const deleted = await kubectl(['delete', 'pipelinerun', name ?? '']);
    expect(deleted.stdout.trim()).toBe(`pipelinerun.tekton.dev "${name}" deleted`);
    expect((await kubectl(['get', 'prs', '-o', 'name'])).stdout).toBe('');
  });

  it('delete', async () => {
    const deleted = await kubectl(['delete', 'cm', 'conf']);
    expect(deleted.stdout.trim()).toBe('configmap "conf" deleted');
    const gone = await kubectl(['get', 'cm', 'conf']);
    expect(gone.stderr).toContain('configmaps "conf" not found');
    const ns = await kubectl(['delete', 'namespace', 'kc']);
    expect(ns.code, ns.stderr).toBe(0);
    expect((await kubectl(['get', 'namespace', 'kc'])).code).toBe(1);
  });

  it('get --watch shows existing objects and then new ones', async () => {
    await kubectl(['create', 'configmap', 'before']);
    const child = spawn('kubectl', ['get', 'configmaps', '--watch', '--request-timeout=30s'], {
      env,
    });
    let out = '';
    const waiters: (() => void)[] = [];
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      for (const w of waiters) w();
    });
    // A whole line: kubectl may write a row in more than one chunk.
    const waitFor = (text: string) =>
      new Promise<void>((resolve, reject) => {
        const check = () => {
          if (
            out
              .split('\n')
              .slice(0, -1)
              .some((line) => line.startsWith(text))
          )
            resolve();
        };
        waiters.push(check);
        child.once('exit', () =>
          reject(new Error(`kubectl exited before "${text}" appeared: ${out}`)),
        );
        check();
      });
    try {
      await waitFor('before');
      await kubectl(['create', 'configmap', 'during']);
      await waitFor('during');
    } finally {
      child.kill();
    }
    expect(out.split('\n')[0]).toMatch(/^NAME\s+DATA\s+AGE$/);
    expect(out).toMatch(/\nduring\s+0\s+\d+[smhd]/);
  });

  it('get --watch --output-watch-events shows changes made by another client', async () => {
    await kubectl(['create', 'configmap', 'watched-events']);
    const child = spawn(
      'kubectl',
      [
        'get',
        'configmap',
        'watched-events',
        '--watch',
        '--output-watch-events',
        '--request-timeout=30s',
      ],
      { env },
    );
    let out = '';
    const waiters: (() => void)[] = [];
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      for (const w of waiters) w();
    });
    const waitFor = (pattern: RegExp) =>
      new Promise<void>((resolve, reject) => {
        const check = () => {
          if (pattern.test(out)) resolve();
        };
        waiters.push(check);
        child.once('exit', () => reject(new Error(`kubectl exited before ${pattern}: ${out}`)));
        check();
      });
    try {
      await waitFor(/ADDED\s+watched-events/);
      await kubectl(['label', 'configmap', 'watched-events', 'changed=yes']);
      await waitFor(/MODIFIED\s+watched-events/);
      await kubectl(['delete', 'configmap', 'watched-events']);
      await waitFor(/DELETED\s+watched-events/);
    } finally {
      child.kill();
    }
    expect(out.split('\n')[0]).toMatch(/^EVENT\s+NAME\s+DATA\s+AGE$/);
  });
});
