import { request } from 'node:https';
import {
  ConfigSecretReader,
  configFromObject,
  createLogger,
  createMetrics,
  DEFAULT_GLOBAL_OPTIONS,
  deepFreeze,
  defineIntegration,
  LoopScope,
  type Metrics,
  type RunContext,
  runIntegration,
  SecretRedactor,
} from '@qontract/core';
import { type FakeKubeApiServer, startFakeKubeApiServer } from '@qontract/fake-kube-apiserver';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { clusterMapForClusters } from '../cluster/for-run.ts';
import { OpenshiftResource } from '../resource/openshift-resource.ts';
import type { DesiredCluster, DesiredSource } from './desired-source.ts';
import type { CurrentStateSpec } from './fetch.ts';
import { type DesiredResource, fieldManagerFor, reconcileResources } from './reconcile.ts';

const INTEGRATION = 'openshift_engine_test';
const VERSION = '1.0.0';
let server: FakeKubeApiServer;

beforeAll(async () => {
  server = await startFakeKubeApiServer({
    clusters: [
      { name: 'c1', token: 't1' },
      { name: 'c2', token: 't2' },
    ],
  });
});
afterAll(async () => server.close());
beforeEach(() => {
  server.faults.clear();
});

interface Scenario {
  desired: Array<{ cluster: string; namespace: string; body: Record<string, unknown> }>;
  kinds?: string[];
  namespaces?: Array<[string, string]>;
  takeOver?: boolean;
  dryRun?: boolean;
  /** The loop the run is one of: runs sharing a repeating scope are the runs of a loop. */
  loop?: LoopScope;
  /** The process's metrics, shared by the runs of a loop. */
  metrics?: Metrics;
  /** Wait for the applied workloads' rollout (openshift-saas-deploy does). */
  waitForReady?: { timeoutMs: number; pollMs: number };
  /**
   * Hands the engine each cluster's desired objects on their own too
   * (a `DesiredSource`), once `gate(cluster)` resolves; `error` is registered
   * for that cluster's namespace first, as a failed build would; `fail`
   * rejects instead.
   */
  byCluster?: {
    gate?: (cluster: string) => Promise<void>;
    error?: Record<string, string>;
    fail?: Record<string, string>;
  };
}

/** Runs the engine once through core's runner, like an integration does. */
async function run(s: Scenario) {
  const logs: Array<{ msg: string; level: number }> = [];
  const redactor = new SecretRedactor();
  const config = configFromObject({
    graphql: { server: 'file://unused' },
    creds: Object.fromEntries(
      ['c1', 'c2'].map((c) => [
        c,
        { server: server.cluster(c).url, token: server.cluster(c).token },
      ]),
    ),
  });
  const namespaces = s.namespaces ?? [
    ['c1', 'app'],
    ['c2', 'app'],
  ];
  const kinds = s.kinds ?? ['ConfigMap'];
  let ctxSeen: RunContext | undefined;
  const def = defineIntegration({
    name: 'openshift-engine-test',
    version: VERSION,
    description: 'engine test',
    options: {},
    run: async (ctx) => {
      ctxSeen = ctx;
      const clusters = await clusterMapForClusters(
        ctx,
        [...new Set(namespaces.map(([c]) => c))].map((name) => ({
          name,
          serverUrl: server.cluster(name).url,
          insecureSkipTLSVerify: true,
          automationToken: { path: `creds/${name}`, field: 'token' },
        })),
      );
      const specs: CurrentStateSpec[] = namespaces.flatMap(([cluster, namespace]) =>
        kinds.map((kind) => ({ cluster, namespace, kind, privileged: false })),
      );
      const desired: DesiredResource[] = s.desired.map((d) => ({
        cluster: d.cluster,
        namespace: d.namespace,
        // A frozen body is the desired cache's: the same object in every run that uses it.
        resource: new OpenshiftResource(
          Object.isFrozen(d.body) ? d.body : structuredClone(d.body),
          INTEGRATION,
          VERSION,
        ),
      }));
      const byCluster = s.byCluster;
      const parts = new Map<string, Promise<DesiredCluster>>();
      const ofCluster = (cluster: string): Promise<DesiredCluster> => {
        let part = parts.get(cluster);
        if (!part) {
          part = (async () => {
            await byCluster?.gate?.(cluster);
            const failure = byCluster?.fail?.[cluster];
            if (failure) throw new Error(failure);
            const error = byCluster?.error?.[cluster];
            return {
              objects: desired.filter((d) => d.cluster === cluster),
              errors: error ? [{ cluster, namespace: 'app', message: error }] : [],
            };
          })();
          parts.set(cluster, part);
        }
        return part;
      };
      const clusterNames = [...new Set(namespaces.map(([c]) => c))];
      const source: DesiredSource = {
        ofCluster,
        all: async () =>
          new Map(
            await Promise.all(clusterNames.map(async (c) => [c, await ofCluster(c)] as const)),
          ),
      };
      await reconcileResources({
        ctx,
        integration: INTEGRATION,
        integrationVersion: VERSION,
        clusters,
        specs,
        desired: byCluster ? source : desired,
        takeOver: s.takeOver ?? false,
        ...(s.waitForReady ? { waitForReady: s.waitForReady } : {}),
      });
    },
  });
  const result = await runIntegration({
    definition: def,
    options: {},
    globals: { ...DEFAULT_GLOBAL_OPTIONS, configPath: '', dryRun: s.dryRun ?? false },
    config,
    log: createLogger({
      level: 'DEBUG',
      dryRun: false,
      redactor,
      destination: { write: (l: string) => logs.push(JSON.parse(l)) },
    }),
    redactor,
    env: { vars: {} },
    secrets: () => new ConfigSecretReader(config, redactor),
    ...(s.loop ? { loop: s.loop } : {}),
    ...(s.metrics ? { metrics: s.metrics } : {}),
  });
  return { code: result.exitCode, logs, messages: logs.map((l) => l.msg), ctx: ctxSeen };
}

const cm = (name: string, data: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name },
  data,
});
const get = (cluster: string, name: string, ns = 'app', kind = 'ConfigMap', apiVersion = 'v1') =>
  server.get(cluster, apiVersion, kind, ns, name) as
    | {
        data?: Record<string, string>;
        metadata: {
          annotations?: Record<string, string>;
          managedFields?: Array<{ manager: string }>;
        };
        spec?: Record<string, unknown>;
      }
    | undefined;

/**
 * A dry-run of two clusters, c1 answering last: planned once everything is
 * in, said in the inventory's order, nothing written (`byCluster`: with each
 * cluster's desired objects given on their own too).
 */
async function dryRunPlansInInventoryOrder(byCluster?: Scenario['byCluster']): Promise<void> {
  server.faults.set('c1', { verb: 'list', latencyMs: 300 });
  server.resetLog();
  const r = await run({
    dryRun: true,
    desired: [
      { cluster: 'c1', namespace: 'app', body: cm('first', { k: 'v' }) },
      { cluster: 'c2', namespace: 'app', body: cm('second', { k: 'v' }) },
    ],
    ...(byCluster ? { byCluster } : {}),
  });
  expect(r.code).toBe(0);
  expect(r.messages.filter((m) => m.startsWith("['apply'"))).toEqual([
    "['apply', 'privileged=False', 'c1', 'app', 'ConfigMap', 'first']",
    "['apply', 'privileged=False', 'c2', 'app', 'ConfigMap', 'second']",
  ]);
  expect(server.mutatingRequests()).toEqual([]);
}

describe('reconcileResources against the fake API server', () => {
  beforeAll(() => {
    server.seed('c1', [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'app' } }]);
    server.seed('c2', [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'app' } }]);
  });

  it('creates, is a no-op the second time, updates, reverts drift and deletes only its own objects', async () => {
    server.seed(
      'c1',
      [cm('not-ours', { x: '1' })].map((o) => ({
        ...o,
        metadata: { ...o.metadata, namespace: 'app' },
      })),
    );
    const desired = [
      { cluster: 'c1', namespace: 'app', body: cm('a', { k: 'v1' }) },
      { cluster: 'c1', namespace: 'app', body: cm('b', { k: 'v1' }) },
    ];

    server.resetLog();
    const dry = await run({ desired, dryRun: true });
    expect(dry.code).toBe(0);
    expect(dry.messages).toContain("['apply', 'privileged=False', 'c1', 'app', 'ConfigMap', 'a']");
    expect(server.mutatingRequests()).toEqual([]);

    const created = await run({ desired });
    expect(created.code).toBe(0);
    expect(get('c1', 'a')?.data).toEqual({ k: 'v1' });
    expect(get('c1', 'a')?.metadata.annotations?.['qontract.integration']).toBe(INTEGRATION);
    expect(get('c1', 'a')?.metadata.managedFields?.map((m) => m.manager)).toEqual([
      fieldManagerFor('openshift-engine-test'),
    ]);

    server.resetLog();
    const noop = await run({ desired });
    expect(noop.code).toBe(0);
    expect(server.mutatingRequests()).toEqual([]);

    const updated = await run({
      desired: [{ cluster: 'c1', namespace: 'app', body: cm('a', { k: 'v2' }) }, desired[1]!],
    });
    expect(updated.code).toBe(0);
    expect(get('c1', 'a')?.data).toEqual({ k: 'v2' });

    // Somebody edits the object by hand: the next run puts it back.
    const live = server.get('c1', 'v1', 'ConfigMap', 'app', 'b')!;
    server.seed('c1', [{ ...live, data: { k: 'edited' } }], { manager: 'kubectl-edit' });
    server.resetLog();
    await run({
      desired: [{ cluster: 'c1', namespace: 'app', body: cm('a', { k: 'v2' }) }, desired[1]!],
    });
    expect(get('c1', 'b')?.data).toEqual({ k: 'v1' });
    expect(server.mutatingRequests().map((r) => r.name)).toEqual(['b']);
    // The list told the plan everything: no extra read of the object before its apply.
    expect(server.requests({ verb: 'get', name: 'b' })).toEqual([]);

    // b leaves the desired state: it is deleted; the unannotated object stays.
    const removed = await run({
      desired: [{ cluster: 'c1', namespace: 'app', body: cm('a', { k: 'v2' }) }],
    });
    expect(removed.code).toBe(0);
    expect(removed.messages).toContain(
      "['delete', 'privileged=False', 'c1', 'app', 'ConfigMap', 'b']",
    );
    expect(get('c1', 'b')).toBeUndefined();
    expect(get('c1', 'not-ours')).toBeDefined();
  });

  it('with take-over, deletes unannotated objects of the managed kind that nobody owns', async () => {
    server.seed('c2', [
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'stray', namespace: 'app' } },
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: {
          name: 'owned',
          namespace: 'app',
          ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'p', uid: 'u' }],
        },
      },
    ]);
    const r = await run({
      desired: [{ cluster: 'c2', namespace: 'app', body: cm('kept', { k: 'v' }) }],
      namespaces: [['c2', 'app']],
      takeOver: true,
    });
    expect(r.code).toBe(0);
    expect(get('c2', 'stray')).toBeUndefined();
    expect(get('c2', 'owned')).toBeDefined();
    expect(get('c2', 'kept')).toBeDefined();
  });

  it('takes over an object last written by client-side apply, so a removed field really goes', async () => {
    server.seed(
      'c1',
      [
        {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: {
            name: 'csa',
            namespace: 'app',
            annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{}' },
          },
          data: { keep: '1', drop: '2' },
        },
      ],
      { manager: 'kubectl-client-side-apply' },
    );
    const r = await run({
      desired: [{ cluster: 'c1', namespace: 'app', body: cm('csa', { keep: '1' }) }],
      namespaces: [['c1', 'app']],
    });
    expect(r.code).toBe(0);
    expect(get('c1', 'csa')?.data).toEqual({ keep: '1' });
    expect(get('c1', 'csa')?.metadata.managedFields?.map((m) => m.manager)).not.toContain(
      'kubectl-client-side-apply',
    );
  });

  it('recreates a Service whose immutable clusterIP changed', async () => {
    server.seed('c1', [
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'svc', namespace: 'app' },
        spec: { clusterIP: '10.0.0.5', ports: [{ port: 80 }] },
      },
    ]);
    const svc = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'svc' },
      spec: { clusterIP: '10.0.0.9', ports: [{ port: 80 }] },
    };
    const r = await run({
      desired: [{ cluster: 'c1', namespace: 'app', body: svc }],
      namespaces: [['c1', 'app']],
      kinds: ['Service'],
    });
    expect(r.code).toBe(0);
    expect(r.messages).toContain("['delete_and_apply', 'c1', 'app', 'Service', 'svc']");
    expect(get('c1', 'svc', 'app', 'Service')?.spec?.clusterIP).toBe('10.0.0.9');
  });

  it('skips an apply into a namespace that does not exist yet, with a warning and a summary that says so', async () => {
    const r = await run({
      desired: [{ cluster: 'c1', namespace: 'not-yet', body: cm('early', { k: 'v' }) }],
      namespaces: [['c1', 'not-yet']],
    });
    expect(r.code).toBe(0);
    expect(r.messages).toContain(
      "['apply', 'privileged=False', 'c1', 'not-yet', 'ConfigMap', 'early']",
    );
    expect(r.messages).toContain('[c1/not-yet] namespace does not exist (yet).');
    expect(r.messages.at(-1)).toMatch(/finished: success, 0 error\(s\), 1 apply skipped in /);
  });

  it('any other refusal of an apply is an error: exit 1, nothing deleted', async () => {
    await run({
      desired: [{ cluster: 'c1', namespace: 'app', body: cm('kept', { k: 'v' }) }],
      namespaces: [['c1', 'app']],
    });
    server.faults.set('c1', { verb: 'apply', name: 'refused', status: 403 });
    const r = await run({
      desired: [{ cluster: 'c1', namespace: 'app', body: cm('refused', { k: 'v' }) }],
      namespaces: [['c1', 'app']],
    });
    expect(r.code).toBe(1);
    expect(r.logs.some((l) => l.level === 50 && l.msg.startsWith('[c1/app] '))).toBe(true);
    expect(get('c1', 'kept')).toBeDefined();
    expect(r.messages.at(-1)).toMatch(/finished: failed \(exit code 1\), 1 error\(s\)/);
  });

  it("waits for Clowder's ClowdApp and ClowdJobInvocation as for a Deployment: a failed post-deploy test fails the run", async () => {
    const crd = (kind: string, plural: string) => ({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `${plural}.cloud.redhat.com` },
      spec: {
        group: 'cloud.redhat.com',
        scope: 'Namespaced',
        names: { plural, singular: kind.toLowerCase(), kind },
        versions: [{ name: 'v1alpha1', served: true, storage: true }],
      },
    });
    server.seed('c1', [
      crd('ClowdApp', 'clowdapps'),
      crd('ClowdJobInvocation', 'clowdjobinvocations'),
      // What Clowder reported: the app's two Deployments, one ready; the test job failed.
      {
        apiVersion: 'cloud.redhat.com/v1alpha1',
        kind: 'ClowdApp',
        metadata: { name: 'app', namespace: 'app' },
        status: { deployments: { managedDeployments: 2, readyDeployments: 1 } },
      },
      {
        apiVersion: 'cloud.redhat.com/v1alpha1',
        kind: 'ClowdJobInvocation',
        metadata: { name: 'smoke', namespace: 'app' },
        status: { completed: true, jobMap: { 'smoke-iqe': 'Failed' } },
      },
    ]);
    const body = (kind: string, name: string) => ({
      apiVersion: 'cloud.redhat.com/v1alpha1',
      kind,
      metadata: { name },
      spec: { envName: 'stage' },
    });
    const r = await run({
      desired: [
        { cluster: 'c1', namespace: 'app', body: body('ClowdApp', 'app') },
        { cluster: 'c1', namespace: 'app', body: body('ClowdJobInvocation', 'smoke') },
      ],
      namespaces: [['c1', 'app']],
      kinds: ['ClowdApp', 'ClowdJobInvocation'],
      waitForReady: { timeoutMs: 300, pollMs: 50 },
    });
    expect(r.code).toBe(1);
    const errors = r.logs.filter((l) => l.level === 50).map((l) => l.msg);
    expect(errors).toContain('[c1/app] ClowdApp/app is not ready after 0s');
    expect(errors).toContain('[c1/app] ClowdJobInvocation smoke failed jobs: smoke-iqe');
  });

  it('goes on with the other clusters when one is down, exits 1, and deletes nothing', async () => {
    await run({
      desired: [{ cluster: 'c1', namespace: 'app', body: cm('to-delete', { k: 'v' }) }],
      namespaces: [['c1', 'app']],
    });
    expect(get('c1', 'to-delete')).toBeDefined();
    await server.faults.down('c2');
    try {
      const r = await run({
        desired: [
          { cluster: 'c2', namespace: 'app', body: cm('x', { k: 'v' }) },
          { cluster: 'c1', namespace: 'app', body: cm('new-one', { k: 'v' }) },
        ],
      });
      expect(r.code).toBe(1);
      expect(r.messages.some((m) => m.startsWith('[c2] is unreachable'))).toBe(true);
      expect(get('c1', 'new-one')).toBeDefined();
      expect(get('c1', 'to-delete')).toBeDefined();
      expect(r.messages).toContainEqual(
        expect.stringMatching(
          /^'delete' action is disabled due to previous errors \(\d+ held back\)\.$/,
        ),
      );
    } finally {
      await server.faults.up('c2');
    }
  });

  it("applies a cluster's changes while another cluster is still being read; deletes wait for every read", async () => {
    await run({
      desired: [{ cluster: 'c1', namespace: 'app', body: cm('going', { k: 'v' }) }],
      namespaces: [['c1', 'app']],
    });
    expect(get('c1', 'going')).toBeDefined();
    server.faults.set('c2', { verb: 'list', latencyMs: 600 });
    server.resetLog();
    const r = await run({
      desired: [
        { cluster: 'c1', namespace: 'app', body: cm('coming', { k: 'v' }) },
        { cluster: 'c2', namespace: 'app', body: cm('x', { k: 'v' }) },
      ],
    });
    expect(r.code).toBe(0);
    // The request log is in the order the fake answered.
    const order = server
      .requests()
      .filter((q) => q.kind === 'ConfigMap')
      .map((q) => `${q.cluster} ${q.verb} ${q.name}`);
    const at = (entry: string) => {
      expect(order).toContain(entry);
      return order.indexOf(entry);
    };
    expect(at('c1 apply coming')).toBeLessThan(at('c2 list '));
    expect(at('c1 delete going')).toBeGreaterThan(at('c2 list '));
    expect(get('c1', 'coming')).toBeDefined();
    expect(get('c2', 'x')).toBeDefined();
    expect(get('c1', 'going')).toBeUndefined();
  });

  describe("a cluster's own desired objects (a DesiredSource)", () => {
    /** Opens c2's gate once c1's apply of `name` reached the fake (or after 3 s), and says when. */
    const afterC1Applies = (name: string) => {
      const seen = { c1AppliedFirst: false, opened: false };
      const gate = async (cluster: string) => {
        if (cluster !== 'c2') return;
        const until = Date.now() + 3000;
        while (Date.now() < until) {
          if (server.requests({ cluster: 'c1', verb: 'apply' }).some((q) => q.name === name)) {
            seen.c1AppliedFirst = true;
            break;
          }
          await new Promise((r) => setTimeout(r, 10));
        }
        seen.opened = true;
        server.resetLog();
      };
      return { seen, gate };
    };
    /** A run that leaves our `name` in `cluster` alone, then a clean request log. */
    const leave = async (cluster: string, name: string) => {
      await run({
        desired: [{ cluster, namespace: 'app', body: cm(name, { k: 'v' }) }],
        namespaces: [[cluster, 'app']],
      });
      server.resetLog();
    };

    it("applies a cluster once its read and its own objects are in, before another cluster's are built; deletes wait for all", async () => {
      await leave('c1', 'old');
      const { seen, gate } = afterC1Applies('new');
      const r = await run({
        desired: [
          { cluster: 'c1', namespace: 'app', body: cm('new', { k: 'v' }) },
          { cluster: 'c2', namespace: 'app', body: cm('other', { k: 'v' }) },
        ],
        byCluster: { gate },
      });
      expect(r.code).toBe(0);
      expect(seen.c1AppliedFirst).toBe(true);
      // After the gate opened (the log was reset then): c2's apply and c1's delete.
      expect(server.requests({ cluster: 'c1', verb: 'delete' }).map((q) => q.name)).toEqual([
        'old',
      ]);
      expect(server.requests({ cluster: 'c2', verb: 'apply' }).map((q) => q.name)).toEqual([
        'other',
      ]);
      expect(get('c1', 'old')).toBeUndefined();
      expect(get('c2', 'other')).toBeDefined();
    });

    it("holds every delete back when a cluster built later has an error, after the others' applies", async () => {
      await leave('c1', 'stays');
      const { seen, gate } = afterC1Applies('added');
      const r = await run({
        desired: [{ cluster: 'c1', namespace: 'app', body: cm('added', { k: 'v' }) }],
        byCluster: { gate, error: { c2: '[c2/app] a template failed' } },
      });
      expect(r.code).toBe(1);
      expect(seen.c1AppliedFirst).toBe(true);
      expect(get('c1', 'added')).toBeDefined();
      expect(get('c1', 'stays')).toBeDefined();
      expect(server.mutatingRequests().filter((q) => q.verb === 'delete')).toEqual([]);
      expect(r.messages).toContainEqual(
        expect.stringMatching(
          /^'delete' action is disabled due to previous errors \(\d+ held back\)\.$/,
        ),
      );
    });

    it('fails the run and deletes nothing when a cluster cannot be built', async () => {
      await leave('c2', 'kept');
      const r = await run({
        desired: [{ cluster: 'c1', namespace: 'app', body: cm('one', { k: 'v' }) }],
        byCluster: { fail: { c2: 'the build broke' } },
      });
      expect(r.code).toBe(1);
      expect(r.messages.join('\n')).toContain('the build broke');
      expect(get('c2', 'kept')).toBeDefined();
      expect(server.mutatingRequests().filter((q) => q.verb === 'delete')).toEqual([]);
    });

    it('is not used by a dry-run: it plans once everything is in, in the inventory order', async () => {
      await dryRunPlansInInventoryOrder({});
    });
  });

  it("deletes nothing when a cluster read after another cluster's applies fails", async () => {
    await run({
      desired: [{ cluster: 'c1', namespace: 'app', body: cm('kept', { k: 'v' }) }],
      namespaces: [['c1', 'app']],
    });
    server.faults.set('c2', { verb: 'list', latencyMs: 400, status: 403 });
    const r = await run({
      desired: [
        { cluster: 'c1', namespace: 'app', body: cm('added', { k: 'v' }) },
        { cluster: 'c2', namespace: 'app', body: cm('x', { k: 'v' }) },
      ],
    });
    expect(r.code).toBe(1);
    expect(get('c1', 'added')).toBeDefined();
    expect(get('c1', 'kept')).toBeDefined();
    expect(server.requests({ cluster: 'c2', verb: 'patch' })).toEqual([]);
    expect(r.messages).toContain(
      "['delete', 'privileged=False', 'c1', 'app', 'ConfigMap', 'kept']",
    );
    expect(r.messages).toContainEqual(
      expect.stringMatching(
        /^'delete' action is disabled due to previous errors \(\d+ held back\)\.$/,
      ),
    );
  });

  it('plans a dry-run once every cluster is read, in the inventory order, and writes nothing', async () => {
    await dryRunPlansInInventoryOrder();
  });

  it("says what planning found in the inventory's order, whichever cluster answered first", async () => {
    // Both reads fail (cluster-wide errors: planning skips both clusters); c1 answers last.
    server.faults.set('c1', { verb: 'list', latencyMs: 300, status: 403 });
    server.faults.set('c2', { verb: 'list', status: 403 });
    const r = await run({
      dryRun: true,
      desired: [
        { cluster: 'c1', namespace: 'app', body: cm('first', { k: 'v' }) },
        { cluster: 'c2', namespace: 'app', body: cm('second', { k: 'v' }) },
      ],
    });
    expect(r.code).toBe(1);
    expect(r.messages.filter((m) => m.includes('skipping realize_data'))).toEqual([
      '[c1] skipping realize_data for cluster with errors',
      '[c2] skipping realize_data for cluster with errors',
    ]);
    expect(r.messages.some((m) => m.startsWith("['apply'"))).toBe(false);
  });

  it('restarts the workloads that mount a qontract.recycle Secret when it changes', async () => {
    server.seed('c1', [
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'web', namespace: 'app' },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: 'web' } },
          template: {
            metadata: { labels: { app: 'web' } },
            spec: { containers: [{ name: 'c', image: 'i' }] },
          },
        },
      },
      {
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        metadata: {
          name: 'web-1',
          namespace: 'app',
          ownerReferences: [
            { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'u1', controller: true },
          ],
        },
        spec: {
          selector: { matchLabels: { app: 'web' } },
          template: {
            metadata: { labels: { app: 'web' } },
            spec: { containers: [{ name: 'c', image: 'i' }] },
          },
        },
      },
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name: 'web-1-a',
          namespace: 'app',
          ownerReferences: [
            {
              apiVersion: 'apps/v1',
              kind: 'ReplicaSet',
              name: 'web-1',
              uid: 'u2',
              controller: true,
            },
          ],
        },
        spec: {
          containers: [{ name: 'c', image: 'i' }],
          volumes: [{ name: 'v', secret: { secretName: 'creds' } }],
        },
      },
    ]);
    const secret = (value: string) => ({
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'Opaque',
      metadata: { name: 'creds', annotations: { 'qontract.recycle': 'true' } },
      data: { k: Buffer.from(value).toString('base64') },
    });
    const first = await run({
      desired: [{ cluster: 'c1', namespace: 'app', body: secret('one') }],
      namespaces: [['c1', 'app']],
      kinds: ['Secret'],
    });
    expect(first.code).toBe(0);
    expect(first.messages).toContain("['recycle_deployment', 'c1', 'app', 'web']");
    const restarted = (
      get('c1', 'web', 'app', 'Deployment', 'apps/v1')!.spec as {
        template: { metadata: { annotations?: Record<string, string> } };
      }
    ).template.metadata.annotations?.['kubectl.kubernetes.io/restartedAt'];
    expect(restarted).toMatch(/^\d{4}-\d\d-\d\dT/);
    // Unchanged secret: nothing is applied, nothing restarts.
    const again = await run({
      desired: [{ cluster: 'c1', namespace: 'app', body: secret('one') }],
      namespaces: [['c1', 'app']],
      kinds: ['Secret'],
    });
    expect(again.messages.some((m) => m.startsWith("['recycle_"))).toBe(false);
  });

  it('re-creates a Deployment whose selector changed (Recreate strategy)', async () => {
    const deployment = (label: string) => ({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'moved' },
      spec: {
        replicas: 1,
        strategy: { type: 'Recreate' },
        selector: { matchLabels: { app: label } },
        template: {
          metadata: { labels: { app: label } },
          spec: { containers: [{ name: 'c', image: 'i' }] },
        },
      },
    });
    const kinds = ['Deployment'];
    expect(
      (
        await run({
          desired: [{ cluster: 'c2', namespace: 'app', body: deployment('old') }],
          namespaces: [['c2', 'app']],
          kinds,
        })
      ).code,
    ).toBe(0);
    const r = await run({
      desired: [{ cluster: 'c2', namespace: 'app', body: deployment('new') }],
      namespaces: [['c2', 'app']],
      kinds,
    });
    expect(r.code).toBe(0);
    expect(r.messages).toContain("['replace', 'c2', 'app', 'Deployment', 'moved']");
    const spec = get('c2', 'moved', 'app', 'Deployment', 'apps/v1')?.spec as {
      selector: { matchLabels: Record<string, string> };
    };
    expect(spec.selector.matchLabels).toEqual({ app: 'new' });
  });

  it('switches a running Deployment to the Recreate strategy in place (the defaulted rolling update dropped)', async () => {
    const deployment = (strategy?: { type: string }) => ({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'operator' },
      spec: {
        replicas: 1,
        ...(strategy ? { strategy } : {}),
        selector: { matchLabels: { app: 'operator' } },
        template: {
          metadata: { labels: { app: 'operator' } },
          spec: { containers: [{ name: 'c', image: 'i' }] },
        },
      },
    });
    const kinds = ['Deployment'];
    const scenario = (body: ReturnType<typeof deployment>) => ({
      desired: [{ cluster: 'c2', namespace: 'app', body }],
      namespaces: [['c2', 'app']] as Array<[string, string]>,
      kinds,
    });
    expect((await run(scenario(deployment()))).code).toBe(0);
    type Live = { metadata: { uid: string }; spec: { strategy: unknown } };
    const before = get('c2', 'operator', 'app', 'Deployment', 'apps/v1') as Live;
    expect(before.spec.strategy).toMatchObject({ type: 'RollingUpdate', rollingUpdate: {} });
    const r = await run(scenario(deployment({ type: 'Recreate' })));
    expect(r.code).toBe(0);
    const after = get('c2', 'operator', 'app', 'Deployment', 'apps/v1') as Live;
    expect(after.spec.strategy).toEqual({ type: 'Recreate' });
    // The same object: neither deleted nor re-created.
    expect(after.metadata.uid).toBe(before.metadata.uid);
  });

  it('re-creates a Deployment whose selector changed (RollingUpdate): the old ReplicaSets are handed over', async () => {
    const deployment = (label: string) => ({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'rolling' },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: label } },
        template: {
          metadata: { labels: { app: label } },
          spec: { containers: [{ name: 'c', image: 'i' }] },
        },
      },
    });
    const kinds = ['Deployment'];
    const first = await run({
      desired: [{ cluster: 'c2', namespace: 'app', body: deployment('old') }],
      namespaces: [['c2', 'app']],
      kinds,
    });
    expect(first.code).toBe(0);
    // The fake's Deployment controller makes the ReplicaSet a moment later.
    const oldSets = await vi.waitFor(() => {
      const sets = server.list('c2', 'apps/v1', 'ReplicaSet', 'app') as Array<{
        metadata: { name: string };
      }>;
      expect(sets.length).toBeGreaterThan(0);
      return sets;
    });
    const r = await run({
      desired: [{ cluster: 'c2', namespace: 'app', body: deployment('new') }],
      namespaces: [['c2', 'app']],
      kinds,
    });
    expect(r.code).toBe(0);
    expect(r.messages).toContain("['replace', 'c2', 'app', 'Deployment', 'rolling']");
    const now = get('c2', 'rolling', 'app', 'Deployment', 'apps/v1') as {
      metadata: { uid: string };
      spec: { selector: { matchLabels: Record<string, string> } };
    };
    expect(now.spec.selector.matchLabels).toEqual({ app: 'new' });
    // The orphaned ReplicaSet now belongs to the new Deployment (the rollout scales it down).
    const adopted = server.get('c2', 'apps/v1', 'ReplicaSet', 'app', oldSets[0]!.metadata.name) as {
      metadata: { ownerReferences?: Array<{ uid: string }>; labels?: Record<string, string> };
    };
    expect(adopted.metadata.ownerReferences?.map((o) => o.uid)).toEqual([now.metadata.uid]);
    expect(adopted.metadata.labels?.app).toBe('new');
  });

  it('re-creates a StatefulSet whose forbidden field changed (orphaning its pods)', async () => {
    const statefulSet = (serviceName: string) => ({
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name: 'db' },
      spec: {
        replicas: 1,
        serviceName,
        selector: { matchLabels: { app: 'db' } },
        template: {
          metadata: { labels: { app: 'db' } },
          spec: { containers: [{ name: 'c', image: 'i' }] },
        },
      },
    });
    const kinds = ['StatefulSet'];
    const first = await run({
      desired: [{ cluster: 'c2', namespace: 'app', body: statefulSet('db') }],
      namespaces: [['c2', 'app']],
      kinds,
    });
    expect(first.code).toBe(0);
    const before = get('c2', 'db', 'app', 'StatefulSet', 'apps/v1') as {
      metadata: { uid: string };
    };
    const r = await run({
      desired: [{ cluster: 'c2', namespace: 'app', body: statefulSet('db-headless') }],
      namespaces: [['c2', 'app']],
      kinds,
    });
    expect(r.code).toBe(0);
    expect(r.messages).toContain("['delete_sts_and_apply', 'c2', 'app', 'StatefulSet', 'db']");
    const after = get('c2', 'db', 'app', 'StatefulSet', 'apps/v1') as {
      metadata: { uid: string };
      spec: { serviceName: string };
    };
    expect(after.spec.serviceName).toBe('db-headless');
    expect(after.metadata.uid).not.toBe(before.metadata.uid);
    expect(
      server
        .mutatingRequests({ cluster: 'c2', verb: 'delete' })
        .filter((q) => q.name === 'db')
        .map((q) => q.path),
    ).toEqual([expect.stringContaining('propagationPolicy=Orphan')]);
  });

  it('closes its cluster connections when the run ends (a loop does not pile them up)', async () => {
    const sockets = () =>
      process.getActiveResourcesInfo().filter((r) => r === 'TLSWRAP' || r === 'TCPSocketWrap')
        .length;
    const desired = [{ cluster: 'c1', namespace: 'app', body: cm('loop', { a: '1' }) }];
    expect((await run({ desired, dryRun: true })).code).toBe(0);
    await vi.waitFor(() => expect(sockets()).toBe(0));
    for (let i = 0; i < 3; i++) expect((await run({ desired, dryRun: true })).code).toBe(0);
    await vi.waitFor(() => expect(sockets()).toBe(0));
  });

  it('reports a duplicate desired object with both sources and an unknown kind, exit 1', async () => {
    const r = await run({
      desired: [
        { cluster: 'c1', namespace: 'app', body: cm('dup', { k: '1' }) },
        { cluster: 'c1', namespace: 'app', body: cm('dup', { k: '2' }) },
        {
          cluster: 'c1',
          namespace: 'app',
          body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' } },
        },
      ],
      namespaces: [['c1', 'app']],
    });
    expect(r.code).toBe(1);
    expect(
      r.messages.some((m) => m.startsWith('[c1/app] desired item already exists: ConfigMap/dup.')),
    ).toBe(true);
    expect(r.messages).toContain(
      '[c1/app] unknown kind: Secret. hint: is it missing from managedResourceTypes?',
    );
  });
});

// A looping process takes over the clusters whose run planned nothing when nothing they are
// planned from changed; these runs check that whatever did change (on a cluster, in the
// desired state, an error) is planned again.
describe('clusters unchanged since the previous run of a loop', () => {
  const NS = 'loop';
  beforeAll(() => {
    for (const c of ['c1', 'c2']) {
      server.seed(c, [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } }]);
    }
  });

  /** Desired bodies as the desired cache gives them: frozen, the same objects in every run. */
  const body = (name: string, value: string) => deepFreeze(cm(name, { value }));
  const metrics = createMetrics();
  /** The inventory gauge of a cluster's namespace: `[current, desired]`. */
  const counted = async (cluster: string) => {
    const gauge = metrics.registry.getSingleMetric(
      'qontract_reconcile_openshift_resource_inventory',
    );
    const values = (await gauge!.get()).values.filter(
      (v) => v.labels.cluster === cluster && v.labels.namespace === NS,
    );
    return ['current', 'desired'].map(
      (state) => values.find((v) => v.labels.state === state)?.value,
    );
  };
  const loopRun = async (
    loop: LoopScope,
    desired: ReadonlyArray<{ cluster: string; body: ReturnType<typeof cm> }>,
    dryRun = false,
  ) => {
    const r = await run({
      loop,
      dryRun,
      metrics,
      namespaces: [
        ['c1', NS],
        ['c2', NS],
      ],
      desired: desired.map((d) => ({ ...d, namespace: NS })),
    });
    const line = r.messages.find((m) => m.startsWith('clusters unchanged since the previous run'));
    return {
      ...r,
      plan: r.messages.filter((m) => m.startsWith("['")),
      unchanged: Number(/run: (\d+) of/.exec(line ?? '')?.[1] ?? Number.NaN),
    };
  };
  const value = (cluster: string, name: string) => get(cluster, name, NS)?.data?.value;
  /** `kubectl delete configmap NAME`: a deletion by hand, through the API. */
  const deleteByHand = (cluster: string, name: string): Promise<number> => {
    const c = server.cluster(cluster);
    return new Promise((resolve, reject) => {
      const req = request(
        `${c.url}/api/v1/namespaces/${NS}/configmaps/${name}`,
        { method: 'DELETE', ca: c.caCertificate, headers: { Authorization: `Bearer ${c.token}` } },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', reject);
      req.end();
    });
  };

  it('are taken over only while nothing they are planned from changed', async () => {
    const loop = new LoopScope({ repeats: true, env: {} });
    const a1 = body('a', '1');
    const b1 = body('b', '1');
    const desired = [
      { cluster: 'c1', body: a1 },
      { cluster: 'c2', body: b1 },
    ];

    // Applied, then steady: the run after a run that planned nothing takes both over.
    expect((await loopRun(loop, desired)).unchanged).toBe(0);
    const quiet = await loopRun(loop, desired);
    expect([quiet.code, quiet.unchanged, quiet.plan]).toEqual([0, 0, []]);
    server.resetLog();
    const taken = await loopRun(loop, desired);
    expect([taken.code, taken.unchanged, taken.plan]).toEqual([0, 2, []]);
    expect(server.mutatingRequests()).toEqual([]);
    // Its inventory still counts both sides of every taken-over namespace.
    expect(await counted('c1')).toEqual([1, 1]);

    // Deleted by hand on c1: c1 is read differently, planned again, and the object comes back.
    expect(await deleteByHand('c1', 'a')).toBe(200);
    const recreated = await loopRun(loop, desired);
    expect(recreated.unchanged).toBe(1);
    expect(recreated.plan).toEqual([
      `['apply', 'privileged=False', 'c1', '${NS}', 'ConfigMap', 'a']`,
    ]);
    expect(value('c1', 'a')).toBe('1');

    // Edited by hand on c2, and in a dry-run: planned, not written, and planned again next time.
    const live = server.get('c2', 'v1', 'ConfigMap', NS, 'b')!;
    server.seed('c2', [{ ...live, data: { value: 'by hand' } }], { manager: 'kubectl-edit' });
    server.resetLog();
    for (let i = 0; i < 2; i++) {
      const dry = await loopRun(loop, desired, true);
      expect(dry.plan).toEqual([`['apply', 'privileged=False', 'c2', '${NS}', 'ConfigMap', 'b']`]);
    }
    expect(server.mutatingRequests()).toEqual([]);
    expect((await loopRun(loop, desired)).plan).toHaveLength(1);
    expect(value('c2', 'b')).toBe('1');
    await loopRun(loop, desired);
    expect((await loopRun(loop, desired)).unchanged).toBe(2);

    // The desired state changes (a new body, an object more, one less): planned again.
    const changed = await loopRun(loop, [
      { cluster: 'c1', body: body('a', '2') },
      { cluster: 'c2', body: b1 },
      { cluster: 'c2', body: body('c', '1') },
    ]);
    expect(changed.unchanged).toBe(0);
    expect(changed.plan).toEqual([
      `['apply', 'privileged=False', 'c1', '${NS}', 'ConfigMap', 'a']`,
      `['apply', 'privileged=False', 'c2', '${NS}', 'ConfigMap', 'c']`,
    ]);
    expect(value('c1', 'a')).toBe('2');
    // Built afresh in each run: equal in content to the last run's, never the same object.
    const a2 = () => [
      { cluster: 'c1', body: body('a', '2') },
      { cluster: 'c2', body: b1 },
    ];
    const removed = await loopRun(loop, a2());
    expect(removed.plan).toEqual([
      `['delete', 'privileged=False', 'c2', '${NS}', 'ConfigMap', 'c']`,
    ]);
    expect(value('c2', 'c')).toBeUndefined();
    // The gauge follows the counts: c2 read b and c, and wanted b only.
    expect(await counted('c2')).toEqual([2, 1]);
    // A body equal in content but not the same object is compared, not recognised.
    await loopRun(loop, a2());
    const equalNotSame = await loopRun(loop, a2());
    expect([equalNotSame.plan, equalNotSame.unchanged]).toEqual([[], 1]);
    expect(await counted('c2')).toEqual([1, 1]);

    // A cluster failing in a run is not taken over, says so, and the run fails.
    // Back to a1 on c1 first: applied, then planned once more with nothing to do.
    expect((await loopRun(loop, desired)).plan).toHaveLength(1);
    await loopRun(loop, desired);
    expect((await loopRun(loop, desired)).unchanged).toBe(2);
    server.faults.set('c2', { verb: 'list', status: 403 });
    try {
      const failing = await loopRun(loop, desired);
      expect(failing.code).toBe(1);
      expect(failing.unchanged).toBe(1);
      expect(failing.messages).toContain('[c2] skipping realize_data for cluster with errors');
    } finally {
      server.faults.clear();
    }
    // Its run failed: the next one compares c2 again (and it is clean: taken over after that).
    expect((await loopRun(loop, desired)).unchanged).toBe(1);
    expect((await loopRun(loop, desired)).unchanged).toBe(2);
    loop.close();
  });

  it('are not kept by a single run (no loop)', async () => {
    const desired = [{ cluster: 'c1', body: body('single', '1') }];
    const once = new LoopScope({ repeats: false, env: {} });
    await loopRun(once, desired);
    const again = await loopRun(once, desired);
    expect(Number.isNaN(again.unchanged)).toBe(true);
    expect(again.plan).toEqual([]);
  });
});
