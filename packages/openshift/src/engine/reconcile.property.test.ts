import {
  ConfigSecretReader,
  configFromObject,
  createLogger,
  DEFAULT_GLOBAL_OPTIONS,
  defineIntegration,
  runIntegration,
  SecretRedactor,
} from '@qontract/core';
import {
  type FakeKubeApiServer,
  type FaultRule,
  startFakeKubeApiServer,
} from '@qontract/fake-kube-apiserver';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClusterMap } from '../cluster/cluster-map.ts';
import { OpenshiftResource } from '../resource/openshift-resource.ts';
import type { CurrentStateSpec } from './fetch.ts';
import { type DesiredResource, reconcileResources } from './reconcile.ts';

/** The values an arbitrary generates. */
type ArbValue<A> = A extends fc.Arbitrary<infer T> ? T : never;

/**
 * The safety rules (README "Safety rules") end to end: the engine through
 * core's runner against the fake API server, with random desired and current
 * ConfigMaps on two clusters and random faults (a write refused, throttled or
 * cut off on one cluster, a cluster down). A few runs only: each one is a
 * real run over HTTP.
 */

const INTEGRATION = 'openshift_engine_prop';
const VERSION = '1.0.0';
const CLUSTERS = ['c1', 'c2'] as const;
const NAMES = ['a', 'b', 'c', 'd'] as const;
let server: FakeKubeApiServer;
let runNumber = 0;

beforeAll(async () => {
  server = await startFakeKubeApiServer({
    clusters: CLUSTERS.map((name, i) => ({ name, token: `t${i + 1}` })),
  });
});
afterAll(async () => server?.close());

/** What is on a cluster before the run: written by us, by hand, by another integration, owned by something. */
const currentArb = fc.record({
  writer: fc.constantFrom('ours', 'ours', 'unannotated', 'other-integration'),
  ownerReferences: fc.boolean(),
  data: fc.constantFrom('v1', 'v2'),
});
const clusterArb = fc.record({
  current: fc.dictionary(fc.constantFrom(...NAMES), currentArb, { maxKeys: NAMES.length }),
  desired: fc.dictionary(fc.constantFrom(...NAMES), fc.constantFrom('v1', 'v2'), {
    maxKeys: NAMES.length,
  }),
});
// A refused write during the apply phase is what tests the executor's own gate: weighted up.
const faultArb = fc.oneof(
  fc.constant({ type: 'none' as const }),
  {
    weight: 3,
    arbitrary: fc.record({
      type: fc.constant('write' as const),
      cluster: fc.constantFrom(...CLUSTERS),
      failure: fc.constantFrom('403', '429', 'drop'),
      /** Unlimited, or lapses after one request (a retry then goes through). */
      times: fc.constantFrom(undefined, 1),
    }),
  },
  fc.record({ type: fc.constant('down' as const), cluster: fc.constantFrom(...CLUSTERS) }),
);
const scenarioArb = fc.record({
  clusters: fc.tuple(clusterArb, clusterArb),
  takeOver: fc.boolean(),
  dryRun: fc.constantFrom(false, false, true),
  fault: faultArb,
});
type Scenario = ArbValue<typeof scenarioArb>;
type CurrentSpec = ArbValue<typeof currentArb>;

const configMap = (name: string, data: string) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name },
  data: { k: data },
});

function seedObject(namespace: string, name: string, spec: CurrentSpec): Record<string, unknown> {
  let body: Record<string, unknown> = configMap(name, spec.data);
  if (spec.writer !== 'unannotated') {
    const integration = spec.writer === 'ours' ? INTEGRATION : 'openshift_someone_else';
    body = JSON.parse(new OpenshiftResource(body, integration, VERSION).annotate().toJson());
  }
  const metadata = body.metadata as Record<string, unknown>;
  metadata.namespace = namespace;
  if (spec.ownerReferences) {
    metadata.ownerReferences = [{ apiVersion: 'v1', kind: 'Pod', name: 'p', uid: 'u' }];
  }
  return body;
}

/** One run of the engine through core's runner, in a namespace of its own on both clusters. */
async function runScenario(s: Scenario) {
  const namespace = `prop-${runNumber++}`;
  CLUSTERS.forEach((cluster, i) => {
    server.seed(cluster, [
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } },
      ...Object.entries(s.clusters[i]!.current).map(([name, spec]) =>
        seedObject(namespace, name, spec),
      ),
    ]);
  });
  const logs: string[] = [];
  const redactor = new SecretRedactor();
  const config = configFromObject({
    graphql: { server: 'file://unused' },
    creds: Object.fromEntries(
      CLUSTERS.map((c) => [c, { server: server.cluster(c).url, token: server.cluster(c).token }]),
    ),
  });
  const def = defineIntegration({
    name: 'openshift-engine-prop',
    version: VERSION,
    description: 'engine property test',
    options: {},
    run: async (ctx) => {
      // As clusterMapForClusters builds it, with retries that do not wait a second each.
      const clusters = await ClusterMap.fromClusters(
        CLUSTERS.map((name) => ({
          name,
          serverUrl: server.cluster(name).url,
          insecureSkipTLSVerify: true,
          automationToken: { path: `creds/${name}`, field: 'token' },
        })),
        {
          integration: ctx.integration,
          secrets: ctx.secrets,
          clientOptions: { attempts: 3, backoffMs: 5, signal: ctx.signal },
        },
      );
      for (const p of clusters.problems()) {
        ctx.errors.register(p.name, p.message, { clusterWide: true });
      }
      try {
        const specs: CurrentStateSpec[] = CLUSTERS.map((cluster) => ({
          cluster,
          namespace,
          kind: 'ConfigMap',
          privileged: false,
        }));
        const desired: DesiredResource[] = CLUSTERS.flatMap((cluster, i) =>
          Object.entries(s.clusters[i]!.desired).map(([name, data]) => ({
            cluster,
            namespace,
            resource: new OpenshiftResource(configMap(name, data), INTEGRATION, VERSION),
          })),
        );
        await reconcileResources({
          ctx,
          integration: INTEGRATION,
          integrationVersion: VERSION,
          clusters,
          specs,
          desired,
          takeOver: s.takeOver,
        });
      } finally {
        await clusters.close();
      }
    },
  });

  server.faults.clear();
  server.resetLog();
  const { fault } = s;
  if (fault.type === 'write') {
    const rule: FaultRule = {
      verb: 'apply',
      ...(fault.failure === 'drop' ? { drop: true } : { status: Number(fault.failure) }),
      ...(fault.times ? { times: fault.times } : {}),
    };
    server.faults.set(fault.cluster, rule);
  }
  if (fault.type === 'down') await server.faults.down(fault.cluster);
  try {
    const result = await runIntegration({
      definition: def,
      options: {},
      globals: { ...DEFAULT_GLOBAL_OPTIONS, configPath: '', dryRun: s.dryRun },
      config,
      log: createLogger({
        level: 'INFO',
        dryRun: false,
        redactor,
        destination: { write: (l: string) => logs.push((JSON.parse(l) as { msg: string }).msg) },
      }),
      redactor,
      env: { vars: {} },
      secrets: () => new ConfigSecretReader(config, redactor),
    });
    return { namespace, code: result.exitCode, logs, requests: [...server.requestLog] };
  } finally {
    server.faults.clear();
    if (fault.type === 'down') await server.faults.up(fault.cluster);
  }
}

describe('reconcileResources: safety properties at the fake API server', () => {
  it('dry-run sends no write; a run with an error deletes nothing; nothing not ours is deleted without take-over', async () => {
    const seen = { failedRuns: 0, deletingRuns: 0, dryRuns: 0 };
    await fc.assert(
      fc.asyncProperty(scenarioArb, async (s) => {
        const r = await runScenario(s);
        const context = `${r.namespace}, exit ${r.code}:\n${r.logs.join('\n')}`;
        const writes = r.requests.filter((q) =>
          ['create', 'update', 'patch', 'apply', 'delete', 'deletecollection'].includes(q.verb),
        );
        const deletes = r.requests.filter(
          (q) => q.verb === 'delete' || q.verb === 'deletecollection',
        );
        if (s.dryRun) {
          seen.dryRuns++;
          expect(writes, context).toEqual([]);
        }
        if (r.code !== 0) {
          seen.failedRuns++;
          expect(deletes, context).toEqual([]);
        }
        if (deletes.length > 0) seen.deletingRuns++;
        // What is desired stays; what is not ours is deleted only when taken over, and never when owned.
        CLUSTERS.forEach((cluster, i) => {
          const { current, desired } = s.clusters[i]!;
          for (const q of deletes.filter((q) => q.cluster === cluster)) {
            expect(desired[q.name], context).toBeUndefined();
            const spec = current[q.name];
            expect(spec, context).toBeDefined();
            if (spec && spec.writer !== 'ours') {
              expect(s.takeOver, context).toBe(true);
              expect(spec.ownerReferences, context).toBe(false);
            }
          }
        });
      }),
      { numRuns: 25, endOnFailure: true },
    );
    // Runs of each kind were made (the properties were not vacuous), unless chance said otherwise.
    expect(seen.dryRuns + seen.failedRuns + seen.deletingRuns).toBeGreaterThan(0);
  });
});
