import {
  ApiException,
  AppsV1Api,
  CoreV1Api,
  KubeConfig,
  type KubernetesObject,
  KubernetesObjectApi,
  makeInformer,
  PatchStrategy,
  type V1ConfigMap,
  Watch,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeKubeApiServer, startFakeKubeApiServer } from './server.ts';

let server: FakeKubeApiServer;
let kc: KubeConfig;

beforeAll(async () => {
  server = await startFakeKubeApiServer({
    clusters: [{ name: 'one', openshift: true }, { name: 'two' }],
    // Roll-out status writes would move resourceVersions under the assertions.
    workloadReadyDelayMs: -1,
  });
  kc = new KubeConfig();
  kc.loadFromString(server.kubeconfig());
});
afterAll(() => server.close());

describe('@kubernetes/client-node against the fake', () => {
  it('reads namespaces through an ordinary kubeconfig, one context per cluster', async () => {
    expect(kc.getContexts().map((x) => x.name)).toEqual(['one', 'two']);
    kc.setCurrentContext('two');
    const core = kc.makeApiClient(CoreV1Api);
    const namespaces = await core.listNamespace();
    expect(namespaces.items.map((n) => n.metadata?.name)).toContain('kube-system');
    kc.setCurrentContext('one');
  });

  it('creates and pages through a list', async () => {
    const core = kc.makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: 'paged' } } });
    for (let i = 0; i < 7; i++) {
      await core.createNamespacedConfigMap({
        namespace: 'paged',
        body: { metadata: { name: `cm-${i}` }, data: { i: String(i) } },
      });
    }
    const names: string[] = [];
    let token: string | undefined;
    let calls = 0;
    do {
      const page = await core.listNamespacedConfigMap({
        namespace: 'paged',
        limit: 3,
        _continue: token,
      });
      names.push(...page.items.map((x) => x.metadata?.name ?? ''));
      token = page.metadata?._continue;
      calls++;
    } while (token);
    expect(calls).toBe(3);
    expect(names).toEqual(['cm-0', 'cm-1', 'cm-2', 'cm-3', 'cm-4', 'cm-5', 'cm-6']);
  });

  it('surfaces API errors with the Status body', async () => {
    const core = kc.makeApiClient(CoreV1Api);
    const error = await core
      .readNamespacedConfigMap({ namespace: 'paged', name: 'missing' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiException);
    expect((error as ApiException<string>).code).toBe(404);
    expect(String((error as ApiException<string>).body)).toContain(
      'configmaps \\"missing\\" not found',
    );
  });

  it('applies server-side through KubernetesObjectApi, with conflicts and force', async () => {
    const objects = KubernetesObjectApi.makeApiClient(kc);
    const deployment: KubernetesObject & { spec: unknown } = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'ssa', namespace: 'paged' },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'ssa' } },
        template: {
          metadata: { labels: { app: 'ssa' } },
          spec: { containers: [{ name: 'app', image: 'app:1' }] },
        },
      },
    };
    const created = await objects.patch(
      deployment,
      undefined,
      undefined,
      'qontract',
      false,
      PatchStrategy.ServerSideApply,
    );
    expect(created.metadata?.managedFields?.[0]?.manager).toBe('qontract');
    const changed = { ...deployment, spec: { ...(deployment.spec as object), replicas: 2 } };
    const conflict = await objects
      .patch(changed, undefined, undefined, 'other', false, PatchStrategy.ServerSideApply)
      .catch((e: unknown) => e);
    expect((conflict as ApiException<string>).code).toBe(409);
    const forced = await objects.patch(
      changed,
      undefined,
      undefined,
      'other',
      true,
      PatchStrategy.ServerSideApply,
    );
    expect((forced as unknown as { spec: { replicas: number } }).spec.replicas).toBe(2);
    const read = await objects.read({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'ssa', namespace: 'paged' },
    });
    expect(read.metadata?.resourceVersion).toBe(forced.metadata?.resourceVersion);
    const apps = kc.makeApiClient(AppsV1Api);
    const listed = await apps.listNamespacedDeployment({ namespace: 'paged' });
    expect(listed.items).toHaveLength(1);
  });

  /**
   * A client-node Watch of the `paged` ConfigMaps: resolves once it is set
   * up, with the promise of its first `count` events (as `describe` renders them).
   */
  async function watchUntil(
    query: Record<string, string>,
    count: number,
    describe: (phase: string, obj: KubernetesObject) => string,
  ): Promise<{ events: Promise<string[]> }> {
    const seen: string[] = [];
    let finish: () => void = () => {};
    const done = new Promise<void>((resolve) => {
      finish = resolve;
    });
    const controller = await new Watch(kc).watch(
      '/api/v1/namespaces/paged/configmaps',
      query,
      (phase, obj: KubernetesObject) => {
        seen.push(describe(phase, obj));
        if (seen.length === count) finish();
      },
      () => finish(),
    );
    return {
      events: done.then(() => {
        controller.abort();
        return seen;
      }),
    };
  }

  it('watches changes', async () => {
    const core = kc.makeApiClient(CoreV1Api);
    const watching = await watchUntil(
      { fieldSelector: 'metadata.name=watched' },
      2,
      (phase, obj) => `${phase} ${obj.metadata?.name}`,
    );
    await core.createNamespacedConfigMap({
      namespace: 'paged',
      body: { metadata: { name: 'watched' } },
    });
    await core.deleteNamespacedConfigMap({ namespace: 'paged', name: 'watched' });
    expect(await watching.events).toEqual(['ADDED watched', 'DELETED watched']);
  });

  it('reports an object whose labels leave a watch selection as DELETED', async () => {
    const core = kc.makeApiClient(CoreV1Api);
    const watching = await watchUntil(
      { labelSelector: 'pick=yes' },
      2,
      (phase, obj) => `${phase} ${obj.metadata?.name} ${obj.metadata?.resourceVersion}`,
    );
    const created = await core.createNamespacedConfigMap({
      namespace: 'paged',
      body: { metadata: { name: 'picked', labels: { pick: 'yes' } } },
    });
    const moved = await core.replaceNamespacedConfigMap({
      namespace: 'paged',
      name: 'picked',
      body: { ...created, metadata: { ...created.metadata, labels: { pick: 'no' } } },
    });
    expect(await watching.events).toEqual([
      `ADDED picked ${created.metadata?.resourceVersion}`,
      `DELETED picked ${moved.metadata?.resourceVersion}`,
    ]);
  });

  it('ends a watch from the server side after timeoutSeconds, with a last bookmark', async () => {
    const core = kc.makeApiClient(CoreV1Api);
    await core.createNamespacedConfigMap({
      namespace: 'paged',
      body: { metadata: { name: 'bookmarked' } },
    });
    const watch = new Watch(kc);
    const seen: string[] = [];
    let bookmark = '';
    const ended = new Promise<unknown>((resolve) => {
      void watch.watch(
        '/api/v1/namespaces/paged/configmaps',
        { fieldSelector: 'metadata.name=bookmarked', allowWatchBookmarks: true, timeoutSeconds: 1 },
        (phase, obj: KubernetesObject) => {
          seen.push(phase);
          if (phase === 'BOOKMARK') bookmark = obj.metadata?.resourceVersion ?? '';
        },
        resolve,
      );
    });
    expect(await ended).toBeNull();
    expect(seen).toEqual(['ADDED', 'BOOKMARK']);
    const list = await core.listNamespacedConfigMap({ namespace: 'paged' });
    expect(Number(bookmark)).toBeGreaterThanOrEqual(Number(list.metadata?.resourceVersion));
  });

  it('feeds an informer: list, then adds, updates and deletes by any client', async () => {
    const core = kc.makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: 'informed' } } });
    await core.createNamespacedConfigMap({
      namespace: 'informed',
      body: { metadata: { name: 'listed' } },
    });
    const informer = makeInformer<V1ConfigMap>(kc, '/api/v1/namespaces/informed/configmaps', () =>
      core.listNamespacedConfigMap({ namespace: 'informed' }),
    );
    const seen: string[] = [];
    informer.on('add', (o) => seen.push(`add ${o.metadata?.name}`));
    informer.on('update', (o) => seen.push(`update ${o.metadata?.name} ${o.data?.k ?? ''}`));
    informer.on('delete', (o) => seen.push(`delete ${o.metadata?.name}`));
    await informer.start();
    try {
      await core.createNamespacedConfigMap({
        namespace: 'informed',
        body: { metadata: { name: 'fresh' } },
      });
      // A change the fake makes itself (a seed), as another controller's would be.
      server.seed('one', [
        {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'fresh', namespace: 'informed' },
          data: { k: 'v' },
        },
      ]);
      await core.deleteNamespacedConfigMap({ namespace: 'informed', name: 'listed' });
      await expect
        .poll(() => seen, { timeout: 10_000, interval: 10 })
        .toEqual(['add listed', 'add fresh', 'update fresh v', 'delete listed']);
      expect(informer.list('informed').map((o) => o.metadata?.name)).toEqual(['fresh']);
    } finally {
      await informer.stop();
    }
  });
});
