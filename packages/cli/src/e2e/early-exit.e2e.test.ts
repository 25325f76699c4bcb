import { cp, readFile, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { type EmbeddedEngine, loadEmbeddedEngine } from '@qontract/app-interface';
import type { ExampleEnvironment } from '@qontract/testing';
import { parse, stringify } from 'smol-toml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { editFile, messages, runQontractReconcile, useExampleEnvironment } from './harness.ts';

/**
 * A qontract-server holding several bundles, as the real one does during an
 * MR check: `/sha256` names the current one, `/graphqlsha/<sha>` answers any.
 */
async function serveBundles(
  current: EmbeddedEngine,
  others: EmbeddedEngine[],
): Promise<{ url: string; close(): Promise<void> }> {
  const bySha = new Map([current, ...others].map((e) => [e.sha256, e]));
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/sha256') return void res.writeHead(200).end(current.sha256);
    const m = /^\/graphqlsha\/([0-9a-f]+)$/.exec(url.pathname);
    const engine = m ? bySha.get(m[1]!) : undefined;
    if (req.method !== 'POST' || !engine) return void res.writeHead(404).end();
    let body = '';
    req.on('data', (c: Buffer) => (body += c));
    req.on('end', async () => {
      const { query, variables } = JSON.parse(body) as {
        query: string;
        variables?: Record<string, unknown>;
      };
      const result = await engine.execute(query, variables ?? null);
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(result));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/graphql`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

const start = useExampleEnvironment();
let env: ExampleEnvironment;
let bundles: { url: string; close(): Promise<void> };
let shas: { base: string; unrelated: string; changed: string };
/** A second server whose current bundle is the "unrelated" MR bundle (set by the first test). */
let unrelatedUrl = '';

beforeAll(async () => {
  env = await start({ namespaces: true });
  const base = env.appInterfaceDir;
  // Bundle of the target branch, and two MR bundles: one changes nothing
  // openshift-resources reads, one changes a resource only appint-ex-02 uses.
  const unrelated = `${env.dir}/unrelated`;
  const changed = `${env.dir}/changed`;
  await cp(base, unrelated, { recursive: true });
  await cp(base, changed, { recursive: true });
  await editFile(join(unrelated, 'data/access/users/carol.yml'), (t) =>
    t.replace('org_username: carol', 'org_username: carol2'),
  );
  await editFile(join(changed, 'resources/example-app/canary-deployment.yml'), (t) =>
    t.replace(/replicas: \d+/, 'replicas: 3'),
  );
  const [b, u, c] = await Promise.all([base, unrelated, changed].map((d) => loadEmbeddedEngine(d)));
  shas = { base: b!.sha256, unrelated: u!.sha256, changed: c!.sha256 };
  bundles = await serveBundles(c!, [b!, u!]);
});
afterAll(async () => bundles?.close());

async function configFor(current: 'unrelated' | 'changed'): Promise<string> {
  // The main server's current bundle is "changed"; "unrelated" is served by its own server.
  const config = parse(await readFile(env.configPath, 'utf8')) as Record<string, unknown>;
  config.graphql = { server: current === 'changed' ? bundles.url : unrelatedUrl };
  const path = join(env.dir, `config-${current}.toml`);
  await writeFile(path, stringify(config));
  return path;
}

describe('--early-exit-compare-sha (the MR check)', () => {
  it('exits 0 without touching a cluster when nothing the integration reads changed', async () => {
    const u = await loadEmbeddedEngine(`${env.dir}/unrelated`);
    const b = await loadEmbeddedEngine(env.appInterfaceDir);
    const server = await serveBundles(u, [b]);
    unrelatedUrl = server.url;
    try {
      env.server.resetLog();
      const run = await runQontractReconcile([
        '--config',
        await configFor('unrelated'),
        '--dry-run',
        '--early-exit-compare-sha',
        shas.base,
        'openshift-resources',
      ]);
      expect(shas.unrelated).not.toBe(shas.base);
      expect(run.code).toBe(0);
      expect(messages(run)).toContain('No changes in desired state. Exit PR check early.');
      expect(env.server.requestLog).toEqual([]);
    } finally {
      await server.close();
    }
  });

  it('runs the full dry-run when the desired state changed', async () => {
    env.server.resetLog();
    const run = await runQontractReconcile([
      '--config',
      await configFor('changed'),
      '--dry-run',
      '--early-exit-compare-sha',
      shas.base,
      'openshift-resources',
    ]);
    expect(run.code).toBe(0);
    expect(messages(run)).not.toContain('No changes in desired state. Exit PR check early.');
    expect(messages(run)).toContain(
      "['apply', 'privileged=False', 'appint-ex-01', 'example-app-stage', 'ConfigMap', 'example-app-config']",
    );
    expect(new Set(env.server.requestLog.map((r) => r.cluster)).size).toBe(3);
    expect(env.server.mutatingRequests()).toEqual([]);
  });

  it('with --check-only-affected-shards, dry-runs only the clusters whose state changed', async () => {
    env.server.resetLog();
    const run = await runQontractReconcile([
      '--config',
      await configFor('changed'),
      '--dry-run',
      '--early-exit-compare-sha',
      shas.base,
      '--check-only-affected-shards',
      'openshift-resources',
    ]);
    expect(run.code).toBe(0);
    expect(messages(run)).toContain("run openshift-resources for shards ['appint-ex-02']");
    expect(new Set(env.server.requestLog.map((r) => r.cluster))).toEqual(new Set(['appint-ex-02']));
    expect(env.server.mutatingRequests()).toEqual([]);
  });
});
