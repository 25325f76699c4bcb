import type { FaultRule } from '@qontract/fake-kube-apiserver';
import { secondaryRateLimit } from '@qontract/testing';
import type { FakeS3 } from '@qontract/testing/fake-s3';
import type { FakeVault } from '@qontract/testing/fake-vault';
import type { HttpFaultRule, HttpFaults } from '@qontract/testing/http-fake';
import type { Scenario, World } from './scenarios.ts';
import { moveSecretsToVault, s3State, serveGraphqlBehindProxy } from './services.ts';

/**
 * How a cell's run must end. `converges`: the fault is absorbed (retries,
 * patience) and everything is reconciled, deletions included. `target`: the
 * faulty target fails and is named in the errors; the healthy ones are
 * reconciled; nothing is deleted anywhere (for a scenario with
 * `scopedRemovals`: nothing in the faulty target). `run`: a service every target
 * needs is broken; nothing is written at all.
 */
type Outcome = 'converges' | 'target' | 'run';

export interface Fault {
  readonly name: string;
  readonly outcome: Outcome;
  /** Whether the fault means something for this scenario; every scenario when absent. */
  applies?(s: Scenario): boolean;
  /** Prepares the world before its logs are reset (a GraphQL server, Vault). */
  prepare?(world: World, s: Scenario): Promise<void>;
  /** Sets the fault up before the run under test (the world is set up, the logs reset). */
  inject(world: World, s: Scenario): Promise<void> | void;
  /** Runs beside the run under test (a cluster that goes down mid-run); resolves when done. */
  during?(world: World, s: Scenario, done: AbortSignal): Promise<void>;
  /** What the errors must say besides the target's name (a `run` outcome names no target). */
  readonly says?: RegExp;
  /** No write is even tried (the run stops before its first write). */
  readonly writesNothing?: boolean;
}

const WRITE_VERBS = ['create', 'update', 'patch', 'apply'] as const;
const WRITE_METHODS = ['POST', 'PUT', 'PATCH'] as const;

const kube = (s: Scenario) => s.service === 'kube';
const http = (s: Scenario) => s.service !== 'kube';

function onCluster(w: World, s: Scenario, rules: readonly FaultRule[]): void {
  for (const rule of rules) w.kube.server.faults.set(s.faulty, rule);
}

function onTarget(w: World, s: Scenario, rules: readonly HttpFaultRule[]): void {
  const path =
    w.faultyPath ?? s.faultyPath ?? new RegExp(`/${encodeURIComponent(s.faulty)}(/|$|%2F)`);
  for (const rule of rules) w.http?.faults.add({ path, ...rule });
}

const writes = (rule: FaultRule) => WRITE_VERBS.map((verb) => ({ ...rule, verb }));
const httpWrites = (rule: HttpFaultRule) => WRITE_METHODS.map((method) => ({ ...rule, method }));

/** Resolves once `check` holds (polled), or when `signal` aborts. */
async function until(check: () => boolean, signal: AbortSignal): Promise<boolean> {
  while (!signal.aborted) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 10));
  }
  return false;
}

export const FAULTS: readonly Fault[] = [
  // ------------------------------------------------------------- clusters
  {
    name: 'latency (50 ms a request)',
    outcome: 'converges',
    applies: kube,
    inject: (w, s) => onCluster(w, s, [{ latencyMs: 50 }]),
  },
  {
    name: '500 on every request',
    outcome: 'target',
    applies: kube,
    inject: (w, s) => onCluster(w, s, [{ status: 500 }]),
  },
  {
    name: '503 on writes',
    outcome: 'target',
    applies: kube,
    inject: (w, s) => onCluster(w, s, writes({ status: 503 })),
  },
  {
    name: '429 with Retry-After, twice',
    outcome: 'converges',
    applies: kube,
    inject: (w, s) => onCluster(w, s, [{ status: 429, retryAfter: 1, times: 2 }]),
  },
  {
    name: '429 on every write',
    outcome: 'target',
    applies: kube,
    inject: (w, s) => onCluster(w, s, writes({ status: 429, retryAfter: 0 })),
  },
  {
    name: 'connections reset on every request',
    outcome: 'target',
    applies: kube,
    inject: (w, s) => onCluster(w, s, [{ drop: true }]),
  },
  {
    name: 'one connection reset on a read',
    outcome: 'converges',
    applies: kube,
    inject: (w, s) =>
      onCluster(w, s, [
        { verb: 'get', drop: true, times: 1 },
        { verb: 'list', drop: true, times: 1 },
      ]),
  },
  {
    name: 'cluster down from the start',
    outcome: 'target',
    applies: kube,
    inject: (w, s) => w.kube.server.faults.down(s.faulty),
  },
  {
    name: 'cluster goes down mid-run (during its first write)',
    outcome: 'target',
    applies: kube,
    inject: (w, s) => onCluster(w, s, writes({ hang: true, times: 1 })),
    async during(w, s, done) {
      const hung = () => w.kube.server.requests({ cluster: s.faulty }).some((r) => r.status === 0);
      if (await until(hung, done)) await w.kube.server.faults.down(s.faulty);
    },
  },
  {
    name: 'list continue token expires (410)',
    outcome: 'target',
    applies: (s) => s.bigList !== undefined,
    inject(w, s) {
      w.kube.server.seed(s.faulty, s.bigList?.() ?? []);
      onCluster(w, s, [{ verb: 'list', continued: true, status: 410 }]);
    },
  },
  {
    name: '409 conflict on every write',
    outcome: 'target',
    applies: kube,
    inject: (w, s) => onCluster(w, s, writes({ status: 409 })),
  },
  {
    name: '422 immutable field on every write',
    outcome: 'target',
    applies: kube,
    inject: (w, s) => onCluster(w, s, writes({ status: 422 })),
  },
  // ------------------------------------------------------------- GitHub / GitLab
  {
    name: 'latency (50 ms a request)',
    outcome: 'converges',
    applies: http,
    inject: (w) => w.http?.faults.add({ latencyMs: 50 }),
  },
  {
    name: '500 on every request of the target',
    outcome: 'target',
    applies: http,
    inject: (w, s) => onTarget(w, s, [{ status: 500 }]),
  },
  {
    name: '429 with Retry-After, once',
    outcome: 'converges',
    applies: http,
    inject: (w, s) =>
      s.service === 'github'
        ? w.http?.faults.add(secondaryRateLimit({ retryAfterSeconds: 1, times: 1 }))
        : w.http?.faults.add({
            status: 429,
            headers: { 'Retry-After': '1' },
            body: { message: '429 Too Many Requests' },
            times: 1,
          }),
  },
  {
    name: 'connections reset on every request of the target',
    outcome: 'target',
    applies: http,
    inject: (w, s) => onTarget(w, s, [{ drop: true }]),
  },
  {
    name: 'service down from the start',
    outcome: 'run',
    applies: http,
    inject: (w) => w.http?.close(),
  },
  {
    name: 'service goes down mid-run (during the first write)',
    outcome: 'run',
    applies: http,
    inject: (w) => {
      for (const method of [...WRITE_METHODS, 'DELETE']) w.http?.faults.add({ method, hang: true });
    },
    async during(w, _s, done) {
      const fake = w.github ?? w.gitlab;
      const hung = () => (fake?.requestLog ?? []).some((r) => r.status === 0);
      if (await until(hung, done)) await w.http?.close();
    },
  },
  {
    name: '409 conflict on every write to the target',
    outcome: 'target',
    applies: http,
    inject: (w, s) => onTarget(w, s, httpWrites({ status: 409, body: { message: 'conflict' } })),
  },
  {
    name: '422 on every write to the target',
    outcome: 'target',
    applies: http,
    inject: (w, s) =>
      onTarget(w, s, httpWrites({ status: 422, body: { message: 'Validation Failed' } })),
  },
];

// ------------------------------------------------------------- GraphQL, Vault, S3

/** The fault rules of the GraphQL proxy of a world (set by `prepare`). */
const graphqlProxies = new WeakMap<World, HttpFaults>();
const graphql = async (w: World) => {
  const proxy = await serveGraphqlBehindProxy(w.kube.appInterfaceDir, w.kube.configPath);
  graphqlProxies.set(w, proxy.faults);
};
const onGraphql = (w: World, rule: HttpFaultRule) => graphqlProxies.get(w)?.add(rule);

const vaults = new WeakMap<World, FakeVault>();
const vault = async (w: World) => {
  const { vault } = await moveSecretsToVault(w.kube.appInterfaceDir, w.kube.configPath);
  vaults.set(w, vault);
};

const s3Stores = new WeakMap<World, FakeS3>();

export const SERVICE_FAULTS: readonly Fault[] = [
  {
    name: 'GraphQL answers 500',
    outcome: 'run',
    writesNothing: true,
    prepare: graphql,
    inject: (w) => onGraphql(w, { path: '/graphql', status: 500, body: 'Internal Server Error' }),
  },
  {
    name: 'GraphQL answers an HTML page',
    outcome: 'run',
    writesNothing: true,
    prepare: graphql,
    inject: (w) =>
      onGraphql(w, {
        path: '/graphql',
        status: 200,
        headers: { 'Content-Type': 'text/html' },
        body: '<html><body><h1>Application is not available</h1></body></html>',
      }),
  },
  {
    name: 'GraphQL answers slowly (300 ms)',
    outcome: 'converges',
    prepare: graphql,
    inject: (w) => onGraphql(w, { latencyMs: 300 }),
  },
  {
    name: 'GraphQL drops the connection',
    outcome: 'run',
    writesNothing: true,
    prepare: graphql,
    inject: (w) => onGraphql(w, { path: '/graphql', drop: true }),
  },
  {
    name: 'GraphQL fails twice, then answers',
    outcome: 'converges',
    prepare: graphql,
    inject: (w) => onGraphql(w, { path: '/graphql', status: 503, times: 2 }),
  },
  {
    name: 'Vault down',
    outcome: 'run',
    writesNothing: true,
    prepare: vault,
    inject: (w) => vaults.get(w)?.close(),
  },
  {
    name: 'Vault answers 503 twice, then recovers',
    outcome: 'converges',
    prepare: vault,
    inject: (w) => vaults.get(w)?.failNext(2, 503),
  },
  {
    name: 'S3 state store down',
    outcome: 'run',
    writesNothing: true,
    applies: (s) => s.integration === 'openshift-namespace-labels',
    async prepare(w) {
      const { s3, env } = await s3State();
      Object.assign(w.env, env);
      s3Stores.set(w, s3);
    },
    inject: (w) => s3Stores.get(w)?.close(),
  },
];
