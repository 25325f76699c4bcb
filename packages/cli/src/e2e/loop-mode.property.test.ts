import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { LoopScope } from '@qontract/core';
import { type ExampleEnvironment, startExampleEnvironment } from '@qontract/testing';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type CliRun,
  createNamespaces,
  editFile,
  messages,
  runQontractReconcile,
} from './harness.ts';

/**
 * Loop mode as a property: whatever app-interface and the clusters do between
 * the runs of a loop, each warm run plans what a fresh process would plan on
 * the same inputs, and what a loop with its caches switched off plans.
 *
 * A loop is runs that share one repeating loop scope, in one process, as
 * run-integration makes them; its runs are wet, so its caches see their own
 * writes. Right before each of its runs, on the same state, two dry-runs
 * (they write nothing) give the reference plans:
 * - "fresh": a run without a loop (the runner gives it an empty scope of its
 *   own, as in a fresh process: every cache outlives a run only in a loop);
 * - "caches off": a second loop of its own with QONTRACT_LOOP_CACHES=off
 *   (every loop cache off; kept cluster clients stay, they are not a cache).
 * Neither reference run reads or fills the caches of the loop under test.
 *
 * Few iterations and runs by default (each iteration is six CLI runs over
 * HTTP); QONTRACT_RELIABILITY=full (npm run test:reliability) runs more. A
 * failure names the integration and the round and prints fast-check's
 * counterexample; QONTRACT_LOOP_SEED=N runs another seed.
 */

const FULL = process.env.QONTRACT_RELIABILITY === 'full';
const SEED = Number(process.env.QONTRACT_LOOP_SEED ?? 9);
const NUM_RUNS = FULL ? 12 : 2;
const ITERATIONS = FULL ? 8 : 4;

// ---- the edits ----------------------------------------------------------------------------

/** The namespaces the engine integrations below manage, by cluster. */
const NAMESPACES = {
  stage: { cluster: 'appint-ex-01', name: 'example-app-stage' },
  production: { cluster: 'appint-ex-02', name: 'example-app-production' },
  edge: { cluster: 'appint-ex-k8s', name: 'example-app-edge' },
} as const;
type Ns = keyof typeof NAMESPACES;
const nsArb = fc.constantFrom<Ns>('stage', 'production', 'edge');

/** Edits of the app-interface copy: each one a rewrite of one file. */
const appEditArb = fc.oneof(
  // A resource file's data (shared by the three namespaces), a shared resource's.
  fc.record({ t: fc.constant('data' as const), value: fc.nat(5) }),
  fc.record({ t: fc.constant('shared' as const), value: fc.nat(5) }),
  // A template's parameter in a namespace file.
  fc.record({
    t: fc.constant('param' as const),
    ns: fc.constantFrom('stage', 'production'),
    value: fc.nat(5),
  }),
  // A resource added to or removed from a namespace.
  fc.record({
    t: fc.constant('resource' as const),
    ns: nsArb,
    path: fc.constantFrom('/example-app/configmap.yml', '/example-app/extra.yml'),
  }),
  // A managed type added to or removed from a namespace (one still filled: an error).
  fc.record({
    t: fc.constant('type' as const),
    ns: nsArb,
    kind: fc.constantFrom('ConfigMap', 'Secret', 'Service'),
  }),
  // openshift-limitranges: the limits, and a namespace that stops (starts) having them.
  fc.record({ t: fc.constant('limits' as const), value: fc.nat(5) }),
  fc.record({ t: fc.constant('limitRef' as const), ns: nsArb }),
);
type AppEdit = typeof appEditArb extends fc.Arbitrary<infer T> ? T : never;

/** Edits of the simulated clusters. */
const clusterEditArb = fc.oneof(
  // An object of ours edited by hand (a value, or only a label nobody wants), or deleted.
  {
    weight: 3,
    arbitrary: fc.record({
      t: fc.constant('edit' as const),
      pick: fc.nat(),
      label: fc.constantFrom(false, false, true),
    }),
  },
  fc.record({ t: fc.constant('delete' as const), pick: fc.nat() }),
  // An object nobody declared: not annotated, another integration's, or ours but not desired.
  fc.record({
    t: fc.constant('add' as const),
    ns: nsArb,
    kind: fc.constantFrom('ConfigMap', 'LimitRange'),
    owner: fc.constantFrom('none', 'other', 'ours'),
  }),
  // A cluster whose lists fail (every kind, or one) for this iteration.
  fc.record({
    t: fc.constant('failList' as const),
    ns: nsArb,
    resource: fc.constantFrom(undefined, 'configmaps', 'limitranges'),
  }),
);
type ClusterEdit = typeof clusterEditArb extends fc.Arbitrary<infer T> ? T : never;

const iterationArb = fc.record({
  app: fc.array(appEditArb, { maxLength: 2 }),
  cluster: fc.array(clusterEditArb, { maxLength: 2 }),
});
type Iteration = typeof iterationArb extends fc.Arbitrary<infer T> ? T : never;

const RESOURCE_ENTRY = (path: string) => `  - provider: resource\n    path: ${path}\n`;
const LIMIT_REF = 'limitRanges:\n  $ref: /openshift/limitranges/example-default.yml\n';

/** Removes `entry` from the text, or adds it after `anchor` (at the end without one). */
function toggle(text: string, entry: string, anchor?: string): string {
  if (text.includes(entry)) return text.replace(entry, '');
  if (anchor === undefined) return `${text.endsWith('\n') ? text : `${text}\n`}${entry}`;
  if (!text.includes(anchor)) throw new Error(`no ${JSON.stringify(anchor)} to add after`);
  return text.replace(anchor, `${anchor}${entry}`);
}

async function applyAppEdit(env: ExampleEnvironment, e: AppEdit): Promise<void> {
  const dir = env.appInterfaceDir;
  const nsFile = (ns: Ns) =>
    join(dir, `data/services/example-app/namespaces/${NAMESPACES[ns].name}.yml`);
  switch (e.t) {
    case 'data':
      return editFile(join(dir, 'resources/example-app/configmap.yml'), (t) =>
        t.replace(/CACHE_TTL_SECONDS: "\d+"/, `CACHE_TTL_SECONDS: "${300 + e.value}"`),
      );
    case 'shared':
      return editFile(join(dir, 'resources/shared/example-common-configmap.yml'), (t) =>
        t.replace(/MANAGED_BY: .*/, `MANAGED_BY: app-interface-${e.value}`),
      );
    case 'param':
      return editFile(nsFile(e.ns), (t) =>
        e.ns === 'stage'
          ? t.replace(/greeting: .*/, `greeting: hello ${e.value}`)
          : t.replace(/replicas: \d+/, `replicas: ${e.value + 1}`),
      );
    case 'resource':
      return editFile(nsFile(e.ns), (t) =>
        toggle(t, RESOURCE_ENTRY(e.path), 'openshiftResources:\n'),
      );
    case 'type':
      return editFile(nsFile(e.ns), (t) => toggle(t, `  - ${e.kind}\n`, 'managedResourceTypes:\n'));
    case 'limits':
      return editFile(join(dir, 'data/openshift/limitranges/example-default.yml'), (t) =>
        t.replace(/default:\n {6}cpu: \S+/, `default:\n      cpu: ${(e.value + 1) * 100}m`),
      );
    case 'limitRef':
      return editFile(nsFile(e.ns), (t) => toggle(t, LIMIT_REF));
  }
}

interface Live {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  data?: Record<string, string>;
  spec?: { limits?: Array<{ default?: Record<string, string> }> };
}

const KINDS = [
  ['v1', 'ConfigMap'],
  ['v1', 'Secret'],
  ['v1', 'Service'],
  ['v1', 'LimitRange'],
] as const;

/** The objects an integration annotated, in the managed namespaces, in a stable order. */
function ours(env: ExampleEnvironment): Array<{ cluster: string; object: Live }> {
  return Object.values(NAMESPACES).flatMap(({ cluster, name }) =>
    KINDS.flatMap(([apiVersion, kind]) =>
      (env.server.list(cluster, apiVersion, kind, name) as unknown as Live[])
        .filter((o) => o.metadata.annotations?.['qontract.integration'] !== undefined)
        .sort((a, b) => a.metadata.name.localeCompare(b.metadata.name))
        .map((object) => ({ cluster, object })),
    ),
  );
}

function applyClusterEdit(env: ExampleEnvironment, e: ClusterEdit, round: number): void {
  const { server } = env;
  switch (e.t) {
    case 'edit':
    case 'delete': {
      const all = ours(env);
      if (all.length === 0) return;
      const { cluster, object } = all[e.pick % all.length]!;
      if (e.t === 'delete') {
        const state = server.cluster(cluster).state;
        state.delete(
          state.findKind(object.apiVersion, object.kind)!,
          object.metadata.namespace,
          object.metadata.name,
          { dryRun: false },
        );
        return;
      }
      const edited = structuredClone(object);
      if (e.label) edited.metadata.labels = { ...edited.metadata.labels, edited: `r${round}` };
      else if (edited.kind === 'LimitRange')
        edited.spec!.limits![0]!.default = { cpu: '1', memory: '1Gi' };
      else if (edited.kind === 'Service')
        edited.metadata.annotations = {
          ...edited.metadata.annotations,
          'qontract.sha256sum': 'edited',
        };
      else {
        // A value changed (a key added would be no drift: the original ignores what the
        // desired object leaves out).
        const [key] = Object.keys(edited.data ?? {});
        const value = `edited in round ${round}`;
        if (key === undefined) return;
        edited.data![key] =
          edited.kind === 'Secret' ? Buffer.from(value).toString('base64') : value;
      }
      server.seed(cluster, [edited as never], { manager: 'kubectl-edit' });
      return;
    }
    case 'add': {
      const { cluster, name: namespace } = NAMESPACES[e.ns];
      const integration = e.kind === 'LimitRange' ? 'openshift-limitranges' : 'openshift_resources';
      const annotations =
        e.owner === 'none'
          ? undefined
          : {
              'qontract.integration': e.owner === 'ours' ? integration : 'openshift-other',
              'qontract.integration_version':
                e.owner === 'ours' ? (e.kind === 'LimitRange' ? '0.1.0' : '1.9.3') : '1.0.0',
              'qontract.sha256sum': '0'.repeat(64),
            };
      const metadata = {
        name: `hand-made-${e.owner}-r${round}`,
        namespace,
        ...(annotations ? { annotations } : {}),
      };
      server.seed(cluster, [
        e.kind === 'LimitRange'
          ? {
              apiVersion: 'v1',
              kind: 'LimitRange',
              metadata,
              spec: { limits: [{ type: 'Container', default: { cpu: '200m' } }] },
            }
          : { apiVersion: 'v1', kind: 'ConfigMap', metadata, data: { round: String(round) } },
      ]);
      return;
    }
    case 'failList':
      server.faults.set(NAMESPACES[e.ns].cluster, {
        verb: 'list',
        status: 500,
        ...(e.resource ? { resource: e.resource } : {}),
      });
      return;
  }
}

// ---- the runs -----------------------------------------------------------------------------

/** What is compared of a run: its plan (`--plan-out`) and its exit code. */
interface Outcome {
  readonly code: number;
  readonly heldBack: number;
  readonly actions: readonly unknown[];
}

async function outcome(run: CliRun, planOut: string): Promise<Outcome> {
  // A run that stops before planning writes no plan.
  const text = await readFile(planOut, 'utf8').catch(() => '{"actions": null}');
  const doc = JSON.parse(text) as {
    heldBack?: number;
    actions: Array<Record<string, unknown>> | null;
  };
  return {
    code: run.code,
    heldBack: doc.heldBack ?? 0,
    actions: (doc.actions ?? []).map(({ outcome, ...a }) => ({
      ...a,
      // What was planned, not how executing it went: a dry-run only logs it.
      heldBack: outcome === 'disabled',
      // The readable diff: its changed lines, but the apply's time (qontract.update), which
      // also decides whether its hunk is there at all (the same second: no change).
      unifiedDiff: String(a.unifiedDiff ?? '')
        .split('\n')
        .filter((l) => /^[-+](?![-+]{2} )/.test(l) && !l.includes('qontract.update')),
    })),
  };
}

/**
 * What the warm runs met, over every property run: the property says nothing
 * unless the loop caches were used and the plans were not all empty.
 */
const seen = {
  /** Listed objects handed out from the previous run's list. */
  reusedObjects: 0,
  /** Clusters whose previous empty plan was taken over. */
  unchangedClusters: 0,
  applies: 0,
  deletes: 0,
  heldBack: 0,
  failedRuns: 0,
};

function count(run: CliRun, o: Outcome): void {
  for (const line of messages(run, 20)) {
    const listed = /^listed objects: (\d+) unchanged/.exec(line);
    if (listed) seen.reusedObjects += Number(listed[1]);
    const unchanged = /^clusters unchanged since the previous run: (\d+)/.exec(line);
    if (unchanged) seen.unchangedClusters += Number(unchanged[1]);
  }
  for (const a of o.actions as Array<{ action: string; heldBack: boolean }>) {
    if (a.heldBack) continue;
    if (a.action === 'delete') seen.deletes++;
    else seen.applies++;
  }
  seen.heldBack += o.heldBack;
  if (o.code !== 0) seen.failedRuns++;
}

const INTEGRATIONS = ['openshift-resources', 'openshift-limitranges'] as const;

const CACHES_OFF = { QONTRACT_LOOP_CACHES: 'off' };

/** One loop per integration, and the loop with its caches off beside it. */
function loops() {
  return new Map(
    INTEGRATIONS.map((i) => [
      i,
      {
        warm: new LoopScope({ repeats: true, env: {} }),
        off: new LoopScope({ repeats: true, env: CACHES_OFF }),
      },
    ]),
  );
}

async function checkLoop(iterations: readonly Iteration[]): Promise<void> {
  // One environment per property run, closed by it: the runs are many in the full suite.
  const env = await startExampleEnvironment();
  const running = loops();
  try {
    await createNamespaces(env);
    await writeFile(
      join(env.appInterfaceDir, 'resources/example-app/extra.yml'),
      '---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: example-app-extra\ndata:\n  EXTRA: "yes"\n',
    );
    // The loop's first (cold) run applies everything, its second finds nothing to do (and
    // keeps every cluster as unchanged); the random edits come after.
    const quiet: Iteration = { app: [], cluster: [] };
    for (const [round, step] of [quiet, quiet, ...iterations].entries()) {
      env.server.faults.clear();
      for (const e of step.app) await applyAppEdit(env, e);
      for (const e of step.cluster) applyClusterEdit(env, e, round);
      for (const integration of INTEGRATIONS) {
        const { warm, off } = running.get(integration)!;
        const run = async (name: string, vars: Record<string, string>, loop?: LoopScope) => {
          const planOut = join(env.dir, `plan-${integration}-${round}-${name}.json`);
          const dryRun = name === 'warm' ? [] : ['--dry-run'];
          const argv = ['--config', env.configPath, '--log-level', 'DEBUG', ...dryRun];
          const r = await runQontractReconcile(
            [...argv, '--plan-out', planOut, integration],
            { QONTRACT_CLUSTER_RETRY_UNIT_MS: '1', ...vars },
            loop,
          );
          return { r, o: await outcome(r, planOut) };
        };
        const fresh = await run('fresh', {});
        const cachesOff = await run('caches-off', CACHES_OFF, off);
        const warmRun = await run('warm', {}, warm);
        count(warmRun.r, warmRun.o);
        // Rounds 0 and 1 are the cold and the unchanged run, then the iterations generated.
        const where = `${integration}, round ${round}`;
        expect(warmRun.o, `${where}: the warm run against a fresh process`).toEqual(fresh.o);
        expect(warmRun.o, `${where}: the warm run against the loop with its caches off`).toEqual(
          cachesOff.o,
        );
      }
    }
  } finally {
    for (const { warm, off } of running.values()) {
      warm.close();
      off.close();
    }
    await env.close();
  }
}

describe('loop mode (runs of one process sharing a loop scope)', () => {
  it('plans in each warm run what a fresh process and a loop without caches plan on the same inputs', {
    timeout: FULL ? 1_800_000 : 300_000,
  }, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(iterationArb, { minLength: ITERATIONS, maxLength: ITERATIONS }),
        checkLoop,
      ),
      {
        numRuns: NUM_RUNS,
        seed: SEED,
        // No shrinking: each step of it is a loop of dozens of CLI runs. The failure names the
        // integration and the round; the counterexample holds every iteration's edits.
        endOnFailure: true,
      },
    );
    // The warm runs reused what the loop kept, and had something to plan, delete and fail.
    expect(seen.reusedObjects, JSON.stringify(seen)).toBeGreaterThan(0);
    expect(seen.unchangedClusters, JSON.stringify(seen)).toBeGreaterThan(0);
    expect(seen.applies, JSON.stringify(seen)).toBeGreaterThan(0);
    expect(seen.deletes, JSON.stringify(seen)).toBeGreaterThan(0);
    expect(seen.heldBack + seen.failedRuns, JSON.stringify(seen)).toBeGreaterThan(0);
  });
});
