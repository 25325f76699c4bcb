import { QontractError, type RunContext } from '@qontract/core';
import { type FakePrometheus, startFakePrometheus } from '@qontract/testing/fake-prometheus';
import { afterEach, describe, expect, it } from 'vitest';
import {
  breachedSlosByKey,
  currentSloValue,
  type SloDocument,
  SloRetrievalError,
  sloCheckerForRun,
  targetSloKeys,
} from './slo.ts';
import { inTestRun } from './test-support/run.ts';

const ref = (path: string, field: string) => ({
  path,
  field,
  version: null,
  format: null,
});
const SECRETS: Record<string, string> = {
  'clusters/c1/token': 'cluster-c1-token',
  'prom/user': 'slo-reader',
  'prom/password': 'slo-password-1234',
};

let fakes: FakePrometheus[] = [];
afterEach(async () => {
  await Promise.all(fakes.map((f) => f.close()));
  fakes = [];
});
async function prometheus(options: Parameters<typeof startFakePrometheus>[0]) {
  const fake = await startFakePrometheus(options);
  fakes.push(fake);
  return fake;
}

const EXPR = 'sum(rate(http_ok[{{ window }}])) / sum(rate(http_all[{{ window }}]))';
const QUERY = 'sum(rate(http_ok[28d])) / sum(rate(http_all[28d]))';

/** An SLO document: stage read through the cluster's Prometheus, production through prometheusAccess. */
function document(clusterUrl: string, accessUrl: string, name = 'example-slos'): SloDocument {
  const ns = (namespace: string, cluster: string) => ({
    name: namespace,
    app: { name: 'example-app' },
    cluster: {
      name: cluster,
      automationToken: ref(`clusters/${cluster}/token`, 'token'),
      prometheusUrl: clusterUrl,
      spec: null,
    },
  });
  return {
    name,
    namespaces: [
      { prometheusAccess: null, namespace: ns('app-stage', 'c1'), SLONamespace: null },
      {
        prometheusAccess: {
          url: accessUrl,
          username: ref('prom/user', 'u'),
          password: ref('prom/password', 'p'),
        },
        namespace: ns('app-production', 'c2'),
        SLONamespace: null,
      },
    ],
    slos: [
      {
        name: 'availability',
        expr: EXPR,
        SLIType: 'availability',
        SLOParameters: { window: '28d' },
        SLOTarget: 0.99,
        SLOTargetUnit: 'percent_0_1',
      },
    ],
  };
}

/** Runs `body` in a throw-away integration; returns its log lines (on the error too). */
async function inRun(body: (ctx: RunContext) => Promise<void>): Promise<string[]> {
  const lines: string[] = [];
  try {
    await inTestRun(body, { secrets: SECRETS, onLog: (l) => lines.push(l) });
  } catch (e) {
    throw Object.assign(e as Error, { lines });
  }
  return lines;
}

describe('the SLO checker', () => {
  it('reads each namespace with its credentials, the expr rendered with its window; below the target is breached', async () => {
    const cluster = await prometheus({ bearerToken: 'cluster-c1-token' });
    const access = await prometheus({
      basic: { username: 'slo-reader', password: 'slo-password-1234' },
    });
    cluster.setVector(QUERY, [{ metric: { namespace: 'app-stage' }, value: 0.99 }]);
    access.setVector(QUERY, [{ metric: { namespace: 'app-production' }, value: 0.985 }]);
    let breached: Awaited<ReturnType<ReturnType<typeof sloCheckerForRun>['breachedSlos']>> = [];
    await inRun(async (ctx) => {
      const doc = document(cluster.url, access.url);
      // The document listed twice (two targets): read once.
      breached = await sloCheckerForRun(ctx, { concurrency: 2 }).breachedSlos([doc, doc]);
    });
    // 0.99 meets 0.99 (only strictly below breaches); 0.985 misses it.
    expect(breached.map((b) => [b.namespaceName, b.clusterName, b.currentValue])).toEqual([
      ['app-production', 'c2', 0.985],
    ]);
    expect(cluster.queries).toEqual([QUERY]);
    expect(access.queries).toEqual([QUERY]);
    expect([...cluster.requestLog, ...access.requestLog].map((r) => r.status)).toEqual([200, 200]);
  });

  it('fails closed: an unreadable value (error answer, empty result) is logged and nothing passes', async () => {
    const cluster = await prometheus({ bearerToken: 'cluster-c1-token' });
    const access = await prometheus({});
    cluster.setError(QUERY, 422, 'execution', 'query processing would load too many samples');
    // access: no series at all, an empty vector.
    const failure = await inRun(async (ctx) => {
      await sloCheckerForRun(ctx, { concurrency: 1 }).breachedSlos([
        document(cluster.url, access.url),
      ]);
    }).then(
      () => undefined,
      (e: Error & { lines: string[] }) => e,
    );
    expect(failure).toBeInstanceOf(SloRetrievalError);
    expect(failure?.message).toBe('slo validation failed due to retrival errors');
    const text = failure?.lines.join('') ?? '';
    expect(text).toContain(
      'Unexpected error getting current value for SLO: availability of document: example-slos for namespace: app-stage details: 127.0.0.1:',
    );
    expect(text).toContain('HTTP 422: execution: query processing would load too many samples');
    expect(text).toContain(
      'Unexpected error getting current value for SLO: availability of document: example-slos for namespace: app-production details: prometheus returned empty result',
    );
    expect(text).not.toContain('slo-password-1234');
    expect(text).not.toContain('cluster-c1-token');
  });

  it('fails the run when Prometheus cannot be reached (after retries), with the original line', async () => {
    const down = await prometheus({});
    const url = down.url;
    await down.close();
    fakes = [];
    const failure = await inRun(async (ctx) => {
      await sloCheckerForRun(ctx, { concurrency: 1, retries: 1 }).breachedSlos([
        document(url, url),
      ]);
    }).then(
      () => undefined,
      (e: Error & { lines: string[] }) => e,
    );
    expect(failure).toBeInstanceOf(QontractError);
    expect(failure?.message).toMatch(/cannot reach Prometheus: .*ECONNREFUSED/);
    expect(failure?.lines.join('')).toContain(
      'Connection error  getting current value for SLO: availability of document: example-slos for namespace: app-stage',
    );
  });

  it('refuses a cluster without automation token, naming it', async () => {
    const cluster = await prometheus({});
    const doc = document(cluster.url, cluster.url);
    const noToken: SloDocument = {
      ...doc,
      namespaces: [
        {
          ...doc.namespaces[0]!,
          namespace: {
            ...doc.namespaces[0]!.namespace,
            cluster: { ...doc.namespaces[0]!.namespace.cluster, automationToken: null },
          },
        },
      ],
    };
    await expect(
      inRun(async (ctx) => {
        await sloCheckerForRun(ctx, { concurrency: 1 }).breachedSlos([noToken]);
      }),
    ).rejects.toThrow('cluster c1 does not have automation token set');
  });
});

describe('SLO values and keys', () => {
  it('takes the first sample of a vector or a scalar; NaN is no value', () => {
    const vector = (v: string) => ({
      resultType: 'vector' as const,
      result: [{ metric: {}, value: [1, v] as [number, string] }],
    });
    expect(currentSloValue(vector('0.5'))).toBe(0.5);
    expect(currentSloValue(vector('+Inf'))).toBe(Number.POSITIVE_INFINITY);
    expect(currentSloValue({ resultType: 'scalar', result: [1, '0.25'] })).toBe(0.25);
    expect(() => currentSloValue(vector('NaN'))).toThrow('slo value should be a number');
    expect(() => currentSloValue({ resultType: 'vector', result: [] })).toThrow(
      'prometheus returned empty result',
    );
  });

  it("keys a target's documents by its own namespace and cluster only", () => {
    const doc = document('http://a', 'http://b');
    expect(targetSloKeys([doc], 'app-production', 'c2')).toEqual([
      JSON.stringify(['example-slos', 'app-production', 'c2']),
    ]);
    expect(targetSloKeys([doc], 'app-production', 'c1')).toEqual([]);
    const details = {
      documentName: 'example-slos',
      namespaceName: 'app-production',
      clusterName: 'c2',
      serviceName: 'example-app',
      slo: doc.slos![0]!,
      currentValue: 0.5,
    };
    const map = breachedSlosByKey([details, { ...details, currentValue: 0.4 }]);
    expect(map.get(JSON.stringify(['example-slos', 'app-production', 'c2']))).toHaveLength(2);
  });
});
