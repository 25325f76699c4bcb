import {
  configFromObject,
  createSecretReader,
  QontractError,
  type RunContext,
  type SecretReader,
  SecretRedactor,
  silentLogger,
} from '@qontract/core';
import type { DesiredCluster } from '@qontract/openshift';
import { type FakeVault, startFakeVault } from '@qontract/testing/fake-vault';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DesiredBuild } from './desired-build.ts';
import { DesiredCache } from './desired-cache.ts';
import type { NamespaceData, OpenshiftResourceData, SelectedNamespace } from './model.ts';
import { templateRendererFor } from './templates.ts';

let vault: FakeVault;
let secrets: SecretReader;

beforeAll(async () => {
  vault = await startFakeVault({ mounts: { app: { version: 2 } } });
  vault.put('app/db', { password: 'p4ss' });
  secrets = createSecretReader({
    useVault: true,
    config: configFromObject({
      graphql: { server: 'file://unused' },
      vault: { server: vault.url, token: vault.rootToken },
    }),
    redactor: new SecretRedactor(),
  });
});

afterAll(() => vault.close());

const configMap = (path: string, name: string): OpenshiftResourceData =>
  ({
    provider: 'resource',
    path: {
      path,
      content: `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  a: b\n`,
    },
  }) as unknown as OpenshiftResourceData;
const broken = (path: string): OpenshiftResourceData =>
  ({
    provider: 'resource',
    path: { path, content: 'kind: x\na: [' },
  }) as unknown as OpenshiftResourceData;
/** A Secret from Vault: its build waits for Vault's answer. */
const secret = (vaultPath: string): OpenshiftResourceData =>
  ({
    provider: 'vault-secret',
    vault_path: vaultPath,
    version: 1,
    name: null,
    labels: null,
    annotations: null,
    vault_type: null,
  }) as unknown as OpenshiftResourceData;

const ns = (
  cluster: string,
  name: string,
  resources: readonly OpenshiftResourceData[],
): SelectedNamespace => ({
  namespace: { name, cluster: { name: cluster } } as unknown as NamespaceData,
  openshiftResources: resources,
});

function build(
  namespaces: readonly SelectedNamespace[],
  options: { concurrency?: number; signal?: AbortSignal; cache?: DesiredCache } = {},
): DesiredBuild {
  return new DesiredBuild({
    namespaces,
    providers: {
      integration: 'openshift_resources',
      integrationVersion: '1.9.3',
      secrets,
      // No template here: the renderer is never called.
      render: templateRendererFor({ secrets } as unknown as RunContext),
      repoUrl: 'https://git.example/app-interface',
      cache: (options.cache ?? new DesiredCache()).beginRun(),
    },
    concurrency: options.concurrency ?? 10,
    signal: options.signal ?? new AbortController().signal,
    log: silentLogger(),
  });
}

/** What a cluster's part says, for comparing: each object as kind/name from its source. */
const summary = (part: DesiredCluster) => ({
  objects: part.objects.map(
    (d) =>
      `${d.namespace} ${(d.resource.body as { kind: string }).kind}/${d.resource.name} ${d.source}`,
  ),
  errors: part.errors.map((e) => `${e.cluster}/${e.namespace}: ${e.message}`),
});

describe('DesiredBuild', () => {
  it('hands a cluster its objects and errors once all of them are built, before the other clusters', async () => {
    const desired = build([
      ns('c1', 'a', [secret('app/db'), configMap('/a/cm.yml', 'settings')]),
      ns('c2', 'b', [broken('/b/broken.yml'), configMap('/b/cm.yml', 'banner')]),
    ]);
    expect(desired.builtAhead).toBe(true);
    const handed: string[] = [];
    // Asked before they are built: c1 waits for Vault, c2 is built at once.
    const c1 = desired.ofCluster('c1').then((part) => {
      handed.push('c1');
      return part;
    });
    const c2 = desired.ofCluster('c2').then((part) => {
      handed.push('c2');
      return part;
    });
    expect(summary(await c1)).toEqual({
      objects: ['a ConfigMap/settings /a/cm.yml', 'a Secret/db app/db'],
      errors: [],
    });
    expect(summary(await c2)).toEqual({
      objects: ['b ConfigMap/banner /b/cm.yml'],
      errors: [
        "c2/b: [c2/b] Could not parse data. Skipping resource: /b/broken.yml: invalid YAML: while parsing a flow node: expected the node content, but found '<stream-end>' (line 2, column 5)",
      ],
    });
    expect(handed).toEqual(['c2', 'c1']);
    // Asked once the build has ended: the same parts; a cluster nothing was built for has none.
    expect(await desired.ofCluster('c1')).toBe(await c1);
    expect(await desired.ofCluster('c3')).toEqual({ objects: [], errors: [] });
    expect([...(await desired.all())]).toEqual([
      ['c1', await c1],
      ['c2', await c2],
    ]);
  });

  it('all(): the clusters and each cluster’s objects and errors in build order, whatever the concurrency', async () => {
    vault.put('app/z', { key: 'z' });
    // Given in the order the clusters are read; a cluster's namespaces in any order.
    const namespaces = [
      ns('c2', 'y', [secret('app/z'), configMap('/y/b.yml', 'b'), broken('/y/a.yml')]),
      ns('c2', 'x', [secret('app/missing'), configMap('/x/a.yml', 'a')]),
      ns('c1', 'z', [configMap('/z/a.yml', 'a'), secret('app/db')]),
    ];
    const one = await build(namespaces, { concurrency: 1 }).all();
    const many = await build(namespaces, { concurrency: 8 }).all();
    expect([...one.keys()]).toEqual(['c1', 'c2']);
    expect(summary(one.get('c1')!)).toEqual({
      objects: ['z ConfigMap/a /z/a.yml', 'z Secret/db app/db'],
      errors: [],
    });
    expect(summary(one.get('c2')!)).toEqual({
      objects: ['x ConfigMap/a /x/a.yml', 'y ConfigMap/b /y/b.yml', 'y Secret/z app/z'],
      errors: [
        expect.stringMatching(/^c2\/x: \[c2\/x\] error fetching secret app\/missing \(version 1\)/),
        expect.stringMatching(
          /^c2\/y: \[c2\/y\] Could not parse data\. Skipping resource: \/y\/a\.yml/,
        ),
      ],
    });
    expect([...many].map(([c, part]) => [c, summary(part)])).toEqual(
      [...one].map(([c, part]) => [c, summary(part)]),
    );
  });

  it('a build the run stops (its signal) rejects the clusters not built by then, and all(); those built stay so', async () => {
    const run = new AbortController();
    // One at a time: c0 is built at once, c1's Secret is under way when the run stops.
    const desired = build(
      [
        ns('c0', 'a', [configMap('/a/cm.yml', 'one')]),
        ns('c1', 'b', [secret('app/db'), configMap('/b/cm.yml', 'two')]),
        ns('c2', 'c', [configMap('/c/cm.yml', 'three')]),
      ],
      { concurrency: 1, signal: run.signal },
    );
    const c1 = desired.ofCluster('c1');
    const c1Failed = expect(c1).rejects.toThrow('interrupted');
    run.abort(new Error('interrupted'));
    await c1Failed;
    await expect(desired.ofCluster('c2')).rejects.toThrow('interrupted');
    await expect(desired.all()).rejects.toThrow('interrupted');
    expect(summary(await desired.ofCluster('c0')).objects).toEqual(['a ConfigMap/one /a/cm.yml']);
  });

  it('stop(): ends the build after the objects under way and its cache run with it; the rest is not built', async () => {
    const cache = new DesiredCache();
    const namespaces = [
      ns('c1', 'a', [secret('app/db'), configMap('/a/cm.yml', 'one')]),
      ns('c2', 'b', [configMap('/b/cm.yml', 'two')]),
    ];
    await build(namespaces, { cache }).all();
    expect(cache.size.objects).toBe(2);
    // The next run stops while c1's Secret is under way: the files are not looked up.
    const desired = build(namespaces, { cache, concurrency: 1 });
    await desired.stop();
    await expect(desired.ofCluster('c1')).rejects.toThrow(
      new QontractError('the desired objects were not all built: the run stopped first'),
    );
    await expect(desired.ofCluster('c2')).rejects.toThrow(QontractError);
    await expect(desired.all()).rejects.toThrow(QontractError);
    // Its cache run has ended: what it did not use is dropped (a run still open would keep it).
    expect(cache.size.objects).toBe(0);
  });
});
