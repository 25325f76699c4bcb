import { describe, expect, it } from 'vitest';
import { OpenshiftResource } from '../resource/openshift-resource.ts';
import { type InventoryItemView, type PlanOptions, planItem } from './plan.ts';

const INTEGRATION = 'openshift_test';
const VERSION = '1.2.0';
const now = new Date('2026-01-01T00:00:00Z');

function cm(
  name: string,
  data: Record<string, string>,
  extra: { annotations?: Record<string, string>; ownerReferences?: unknown[] } = {},
) {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name,
      ...(extra.annotations ? { annotations: extra.annotations } : {}),
      ...(extra.ownerReferences ? { ownerReferences: extra.ownerReferences } : {}),
    },
    data,
  };
}
const desiredOr = (body: object, caller?: string) =>
  new OpenshiftResource(body, INTEGRATION, VERSION, caller ? { callerName: caller } : {});
/** What a cluster holds after we applied `body` (as `caller`, by `integration`/`version`). */
function appliedOr(
  body: object,
  o: { caller?: string; integration?: string; version?: string } = {},
) {
  const annotated = new OpenshiftResource(
    body,
    o.integration ?? INTEGRATION,
    o.version ?? VERSION,
    o.caller ? { callerName: o.caller } : {},
  ).annotate({ now });
  return new OpenshiftResource(JSON.parse(annotated.toJson()), INTEGRATION, VERSION);
}
const item = (
  current: Record<string, OpenshiftResource>,
  desired: Record<string, OpenshiftResource>,
  admin: string[] = [],
): InventoryItemView => ({
  cluster: 'c1',
  namespace: 'ns',
  kind: 'ConfigMap',
  current: new Map(Object.entries(current)),
  desired: new Map(Object.entries(desired)),
  useAdminToken: new Map(admin.map((n) => [n, true])),
});
const opts = (o: Partial<PlanOptions> = {}): PlanOptions => ({
  takeOver: false,
  clusterHasError: () => false,
  now,
  ...o,
});
const summary = (p: ReturnType<typeof planItem>) =>
  p.actions.map((a) => `${a.action} ${a.name} (${a.reason})`);

describe('planItem: the original realize_data rules', () => {
  it('applies what is only desired, with qontract annotations and the privileged flag', () => {
    const p = planItem(item({}, { a: desiredOr(cm('a', { k: 'v' })) }, ['a']), opts());
    expect(summary(p)).toEqual(['apply a (new)']);
    const body = JSON.parse(p.actions[0]!.payload!);
    expect(body.metadata.annotations).toMatchObject({
      'qontract.integration': INTEGRATION,
      'qontract.integration_version': VERSION,
      'qontract.update': '2026-01-01T00:00:00Z',
    });
    expect(body.metadata.annotations['qontract.sha256sum']).toMatch(/^[0-9a-f]{64}$/);
    expect(p.actions[0]!.privileged).toBe(true);
  });

  it('does nothing for an object equal to the desired one, and applies a changed one with its diff paths', () => {
    const same = cm('same', { k: 'v' });
    const p = planItem(
      item(
        { same: appliedOr(same), changed: appliedOr(cm('changed', { k: 'old' })) },
        { same: desiredOr(same), changed: desiredOr(cm('changed', { k: 'new' })) },
      ),
      opts(),
    );
    expect(summary(p)).toEqual(['apply changed (changed)']);
    expect(p.actions[0]!.diff).toEqual(['replace /data/k']);
  });

  it("skipCompare (compare: false) applies our unchanged objects too, never another caller's", () => {
    const same = cm('same', { k: 'v' });
    const theirs = cm('theirs', { k: 'v' });
    const p = planItem(
      item(
        { same: appliedOr(same, { caller: 'sf' }), theirs: appliedOr(theirs, { caller: 'other' }) },
        { same: desiredOr(same, 'sf'), theirs: desiredOr(theirs, 'sf') },
      ),
      opts({ caller: 'sf', allCallers: ['sf', 'other'], skipCompare: true }),
    );
    expect(summary(p)).toEqual(['apply same (unchanged)']);
    expect(p.errors.map((e) => e.message)).toEqual([
      "[c1/ns] resource 'ConfigMap/theirs' present and managed by another caller: other",
    ]);
  });

  it('applies an object changed by hand on the cluster (drift)', () => {
    const applied = appliedOr(cm('a', { k: 'v' }));
    (applied.body as { data: Record<string, string> }).data.k = 'edited';
    expect(
      summary(planItem(item({ a: applied }, { a: desiredOr(cm('a', { k: 'v' })) }), opts())),
    ).toEqual(['apply a (changed)']);
  });

  it('applies an unannotated object (no sha yet) to take it under management', () => {
    const current = new OpenshiftResource(cm('a', { k: 'v' }), INTEGRATION, VERSION);
    expect(
      summary(planItem(item({ a: current }, { a: desiredOr(cm('a', { k: 'v' })) }), opts())),
    ).toEqual(['apply a (changed)']);
  });

  describe('deletes', () => {
    const ours = appliedOr(cm('ours', { k: 'v' }));
    const otherMajor = appliedOr(cm('old-major', { k: 'v' }), { version: '0.9.0' });
    const otherIntegration = appliedOr(cm('theirs', { k: 'v' }), {
      integration: 'openshift_other',
    });
    const unannotated = new OpenshiftResource(cm('plain', { k: 'v' }), INTEGRATION, VERSION);
    const owned = new OpenshiftResource(
      cm('owned', { k: 'v' }, { ownerReferences: [{ kind: 'X', name: 'x' }] }),
      INTEGRATION,
      VERSION,
    );
    const current = {
      ours,
      'old-major': otherMajor,
      theirs: otherIntegration,
      plain: unannotated,
      owned,
    };

    it('deletes only our own objects without take-over', () => {
      expect(summary(planItem(item(current, {}), opts()))).toEqual(['delete ours (removed)']);
    });

    it('with take-over, also deletes what is not ours (other integration or major version, unannotated) unless owned', () => {
      expect(summary(planItem(item(current, {}), opts({ takeOver: true })))).toEqual([
        'delete ours (removed)',
        'delete old-major (take-over-delete)',
        'delete theirs (take-over-delete)',
        'delete plain (take-over-delete)',
      ]);
    });

    it("plans every delete the rules allow: holding them back is the executor's (the one gate)", () => {
      const p = planItem(item(current, {}), opts({ takeOver: true }));
      expect(p.actions.map((a) => a.name)).toEqual(['ours', 'old-major', 'theirs', 'plain']);
    });

    it("keeps another caller's objects", () => {
      const fromOther = appliedOr(cm('x', { k: 'v' }), { caller: 'saas-b' });
      expect(summary(planItem(item({ x: fromOther }, {}), opts({ caller: 'saas-a' })))).toEqual([]);
      expect(summary(planItem(item({ x: fromOther }, {}), opts({ caller: 'saas-b' })))).toEqual([
        'delete x (removed)',
      ]);
    });
  });

  describe('heldByOther (two integrations-managers of different upstreams)', () => {
    it('leaves a name another caller holds alone, applies the others', () => {
      const p = planItem(
        item(
          {},
          { svc: desiredOr(cm('svc', {}), 'up-a'), mine: desiredOr(cm('mine', {}), 'up-a') },
        ),
        opts({ caller: 'up-a', heldByOther: (_, name) => (name === 'svc' ? 'up-b' : undefined) }),
      );
      expect(summary(p)).toEqual(['apply mine (new)']);
      expect(p.left).toEqual([
        'ConfigMap/svc in c1/ns is held by another caller (up-b): left alone',
      ]);
    });
  });

  describe('callers', () => {
    const body = cm('x', { k: 'v' });
    const fromB = appliedOr(body, { caller: 'saas-b' });
    it.each([
      // identical, owned by another caller
      ['identical, take-over', fromB, body, { takeOver: true }, ['apply x (take-over)'], 0],
      [
        'identical, other caller unknown to all_callers',
        fromB,
        body,
        { allCallers: ['saas-a'] },
        ['apply x (take-over)'],
        0,
      ],
      ['identical, other known caller', fromB, body, { allCallers: ['saas-a', 'saas-b'] }, [], 1],
      ['identical, no all_callers', fromB, body, {}, [], 1],
      // changed, owned by another caller
      [
        'changed, other known caller',
        fromB,
        cm('x', { k: 'new' }),
        { allCallers: ['saas-a', 'saas-b'] },
        [],
        1,
      ],
      [
        'changed, other known caller but take-over',
        fromB,
        cm('x', { k: 'new' }),
        { allCallers: ['saas-a', 'saas-b'], takeOver: true },
        ['apply x (changed)'],
        0,
      ],
      [
        'changed, other caller not known',
        fromB,
        cm('x', { k: 'new' }),
        { allCallers: ['saas-a'] },
        ['apply x (changed)'],
        0,
      ],
    ] as const)('%s', (_title, current, desiredBody, o, expected, errors) => {
      const p = planItem(
        item({ x: current }, { x: desiredOr(desiredBody, 'saas-a') }),
        opts({ caller: 'saas-a', ...o }),
      );
      expect(summary(p)).toEqual(expected);
      expect(p.errors).toHaveLength(errors);
      if (errors) {
        expect(p.errors[0]!.message).toBe(
          "[c1/ns] resource 'ConfigMap/x' present and managed by another caller: saas-b",
        );
      }
    });
  });

  describe('renderDiff', () => {
    it('puts the unified diff of each action in the plan only when asked', () => {
      const current = {
        a: appliedOr(cm('a', { K: 'old' })),
        gone: appliedOr(cm('gone', { K: 'x' })),
      };
      const desired = { a: desiredOr(cm('a', { K: 'new' })), b: desiredOr(cm('b', { K: 'v' })) };
      const without = planItem(item(current, desired), opts());
      expect(without.actions.every((a) => a.unifiedDiff === undefined)).toBe(true);

      const p = planItem(item(current, desired), opts({ renderDiff: true }));
      const byName = new Map(p.actions.map((a) => [a.name, a.unifiedDiff ?? '']));
      expect(byName.get('a')).toContain('--- live/c1/ns/ConfigMap/a');
      expect(byName.get('a')).toContain('-  K: old\n+  K: new');
      expect(byName.get('b')).toContain('--- /dev/null\n+++ desired/c1/ns/ConfigMap/b');
      expect(byName.get('b')).toContain('+  K: v');
      expect(byName.get('gone')).toContain('--- live/c1/ns/ConfigMap/gone\n+++ /dev/null');
      expect(byName.get('gone')).toContain('-  K: x');
    });
  });

  it('skips a cluster with a cluster-wide error entirely', () => {
    const p = planItem(
      item({}, { a: desiredOr(cm('a', {})) }),
      opts({ clusterHasError: (c) => c === 'c1' }),
    );
    expect(p).toMatchObject({ actions: [], skippedForClusterError: true });
  });

  it('copies restartedAt from the cluster so that re-applying does not restart the pods again', () => {
    const deployment = (annotations?: Record<string, string>) => ({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'd' },
      spec: {
        template: {
          metadata: { ...(annotations ? { annotations } : {}) },
          spec: { containers: [{ name: 'c', image: 'i' }] },
        },
      },
    });
    const current = appliedOr(deployment());
    (current.body as ReturnType<typeof deployment>).spec.template.metadata = {
      annotations: { 'kubectl.kubernetes.io/restartedAt': '2026-01-01T10:00:00Z' },
    };
    const p = planItem(
      { ...item({ d: current }, { d: desiredOr(deployment()) }), kind: 'Deployment' },
      opts(),
    );
    // The stored sha predates the restart, so the object is applied once more, keeping the annotation.
    expect(summary(p)).toEqual(['apply d (changed)']);
    expect(JSON.parse(p.actions[0]!.payload!).spec.template.metadata.annotations).toEqual({
      'kubectl.kubernetes.io/restartedAt': '2026-01-01T10:00:00Z',
    });
  });

  it('marks recycle for Secrets/ConfigMaps annotated qontract.recycle', () => {
    const p = planItem(
      item(
        {},
        { a: desiredOr(cm('a', { k: 'v' }, { annotations: { 'qontract.recycle': 'true' } })) },
      ),
      opts(),
    );
    expect(p.actions[0]!.recycle).toBe(true);
  });

  it('marks the applies that qontract.ignore_reconcile_time leaves out of the reconcile time', () => {
    const ignored = { 'qontract.ignore_reconcile_time': 'true' };
    const p = planItem(
      item(
        {},
        {
          a: desiredOr(cm('a', { k: 'v' }, { annotations: ignored })),
          b: desiredOr(cm('b', { k: 'v' })),
        },
      ),
      opts(),
    );
    expect(p.actions.map((x) => [x.name, x.ignoreReconcileTime])).toEqual([
      ['a', true],
      ['b', undefined],
    ]);
  });
});
