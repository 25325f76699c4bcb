import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../cluster/kube-client.ts';
import { OpenshiftResource } from '../resource/openshift-resource.ts';
import { type ClusterInput, planCluster } from './cluster-plan.ts';
import type { CurrentStateSpec } from './fetch.ts';
import { PlanMemo } from './plan-memo.ts';

const INTEGRATION = 'openshift_test';
const VERSION = '1.2.0';
const RULES = { integration: INTEGRATION, integrationVersion: VERSION, renderDiff: false };

const deployment = (annotations?: Record<string, string>) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web' },
  spec: {
    selector: { matchLabels: { app: 'web' } },
    template: {
      metadata: { labels: { app: 'web' }, ...(annotations ? { annotations } : {}) },
      spec: { containers: [{ name: 'web', image: 'web:1' }] },
    },
  },
});

/** What the cluster holds after our apply of `body`. */
const applied = (body: object) =>
  JSON.parse(
    new OpenshiftResource(structuredClone(body), INTEGRATION, VERSION).annotate().toJson(),
  ) as KubeObject & { spec: { template: { metadata: { annotations?: object } } } };

/** What the cluster holds after our apply of `body` and a rollout restart. */
function restarted(body: object): KubeObject {
  const object = applied(body);
  object.spec.template.metadata.annotations = {
    'kubectl.kubernetes.io/restartedAt': '2026-11-01T00:00:00Z',
  };
  return object;
}

const specs: CurrentStateSpec[] = [
  { cluster: 'c1', namespace: 'ns', kind: 'Deployment', privileged: false },
  { cluster: 'c1', namespace: 'ns', kind: 'ConfigMap', privileged: false },
];

function input(o: Partial<ClusterInput> & Pick<ClusterInput, 'desired'>): ClusterInput {
  return { cluster: 'c1', specs, states: [], hasClusterError: false, ...o };
}

const desiredOf = (body: object) => ({
  cluster: 'c1',
  namespace: 'ns',
  resource: new OpenshiftResource(body, INTEGRATION, VERSION),
});

describe('planCluster', () => {
  it('plans with the restart annotations of the cluster and changes nothing it is given', () => {
    const body = Object.freeze(deployment());
    const current = restarted({ ...deployment(), spec: { ...deployment().spec, replicas: 2 } });
    const desired = desiredOf(body);
    const plan = planCluster(
      input({ desired: [desired], states: [{ spec: specs[0]!, items: [current] }] }),
      RULES,
    );
    expect(plan.actions.map((a) => `${a.action} ${a.name} (${a.reason})`)).toEqual([
      'apply web (changed)',
    ]);
    const applied = JSON.parse(plan.actions[0]!.payload!) as ReturnType<typeof deployment>;
    expect(applied.spec.template.metadata.annotations).toEqual({
      'kubectl.kubernetes.io/restartedAt': '2026-11-01T00:00:00Z',
    });
    // The desired object keeps the body it was built with: the desired cache's, shared.
    expect(desired.resource.body).toBe(body);
    expect(body.spec.template.metadata).toEqual({ labels: { app: 'web' } });
    expect(plan.unusedTypes).toEqual([
      '[c1/ns] unused resource type: ConfigMap. please remove it in a following PR.',
    ]);
  });

  it('returns the errors of desired objects the inventory refuses instead of registering them', () => {
    const plan = planCluster(
      input({
        desired: [
          desiredOf({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' } }),
          desiredOf({
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name: 'a', namespace: 'x' },
          }),
        ],
      }),
      RULES,
    );
    expect(plan.errors.map((e) => e.message)).toEqual([
      '[c1/ns] unknown kind: Secret. hint: is it missing from managedResourceTypes?',
      "[c1/ns] ConfigMap/a: metadata.namespace 'x' does not match the namespace it is declared in ('ns')",
    ]);
  });

  it('skips a cluster with errors: no action, one skip', () => {
    const plan = planCluster(
      input({ desired: [desiredOf(deployment())], hasClusterError: true }),
      RULES,
    );
    expect([plan.actions.length, plan.skipped]).toEqual([0, true]);
  });
});

describe('PlanMemo', () => {
  const frozenCurrent = Object.freeze(applied(deployment())) as KubeObject;
  const body = Object.freeze(deployment());
  const steady = (o: Partial<ClusterInput> = {}) =>
    input({
      desired: [desiredOf(body)],
      states: [{ spec: specs[0]!, items: [frozenCurrent], revision: 7 }],
      ...o,
    });

  it('hands back an empty clean plan while nothing it is planned from changed', () => {
    const memo = new PlanMemo();
    const first = steady();
    const plan = planCluster(first, RULES);
    expect(plan.actions).toEqual([]);
    memo.save(first, plan, true);
    expect(memo.lookup(steady())).toBe(plan);
    // Another desired body (a changed resource), another object read, another spec, an error:
    expect(memo.lookup(steady({ desired: [desiredOf(Object.freeze(deployment()))] }))).toBe(
      undefined,
    );
    expect(
      memo.lookup(
        steady({
          states: [{ spec: specs[0]!, items: [frozenCurrent], revision: 8 }],
        }),
      ),
    ).toBe(undefined);
    expect(memo.lookup(steady({ specs: specs.slice(0, 1) }))).toBe(undefined);
    expect(memo.lookup(steady({ hasClusterError: true }))).toBe(undefined);
  });

  it('keeps nothing it cannot recognise (a body built afresh, a scope without revision), nor plans that do something or saw an error', () => {
    const memo = new PlanMemo();
    const mutable = steady({ desired: [desiredOf(deployment())] });
    memo.save(mutable, planCluster(mutable, RULES), true);
    expect(memo.lookup(mutable)).toBe(undefined);
    const unknown = steady({ states: [{ spec: specs[0]!, items: [frozenCurrent] }] });
    memo.save(unknown, planCluster(unknown, RULES), true);
    expect(memo.lookup(unknown)).toBe(undefined);
    const dirty = steady();
    memo.save(dirty, planCluster(dirty, RULES), false);
    expect(memo.lookup(dirty)).toBe(undefined);
    const changing = steady({ states: [] });
    const plan = planCluster(changing, RULES);
    expect(plan.actions.length).toBe(1);
    memo.save(changing, plan, true);
    expect(memo.lookup(changing)).toBe(undefined);
  });
});
