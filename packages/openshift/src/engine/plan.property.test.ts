import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OpenshiftResource } from '../resource/openshift-resource.ts';
import { type InventoryItemView, type PlanOptions, planItem } from './plan.ts';

/** The values an arbitrary generates. */
type ArbValue<A> = A extends fc.Arbitrary<infer T> ? T : never;

/**
 * The deletion rules of the plan (README "Safety rules") as properties over
 * random inventories: current objects written by us, by another integration,
 * by another major version of us, by another caller, by hand (no
 * annotations), some with ownerReferences; desired objects with or without a
 * caller; random take-over, deletion switch and caller settings.
 */

const INTEGRATION = 'openshift_prop';
const VERSION = '1.2.0';
const NAMES = ['a', 'b', 'c', 'd', 'e', 'f'] as const;
const CALLERS = ['saas-a', 'saas-b', 'saas-c'] as const;
const now = new Date('2026-01-01T00:00:00Z');

/** Who wrote a current object; `ours` is decided here, not by the code under test. */
const writerArb = fc.oneof(
  fc.constant({ kind: 'unannotated' as const }),
  fc.record({
    kind: fc.constant('annotated' as const),
    integration: fc.constantFrom(INTEGRATION, 'openshift_other', 'openshift-prop'),
    version: fc.constantFrom(VERSION, '1.9.3', '0.9.0', '2.0.0'),
    caller: fc.option(fc.constantFrom(...CALLERS), { nil: undefined }),
  }),
);

const currentArb = fc.record({
  writer: writerArb,
  data: fc.constantFrom('v1', 'v2'),
  ownerReferences: fc.boolean(),
  /** Extra annotations of somebody else (not ours, not ownership). */
  foreignAnnotations: fc.boolean(),
});

const desiredArb = fc.record({
  data: fc.constantFrom('v1', 'v2'),
  caller: fc.option(fc.constantFrom(...CALLERS), { nil: undefined }),
});

const itemArb = fc.record({
  current: fc.dictionary(fc.constantFrom(...NAMES), currentArb, { maxKeys: NAMES.length }),
  desired: fc.dictionary(fc.constantFrom(...NAMES), desiredArb, { maxKeys: NAMES.length }),
  admin: fc.subarray([...NAMES]),
});

const optionsArb = fc.record({
  takeOver: fc.boolean(),
  caller: fc.option(fc.constantFrom(...CALLERS), { nil: undefined }),
  allCallers: fc.option(fc.subarray([...CALLERS]), { nil: undefined }),
  clusterHasError: fc.constantFrom(false, false, false, true),
});

type CurrentSpec = ArbValue<typeof currentArb>;

const configMap = (name: string, data: string, extraAnnotations?: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, ...(extraAnnotations ? { annotations: extraAnnotations } : {}) },
  data: { k: data },
});

/** The object as a list returns it: written (annotated) by its writer, read back by this integration. */
function currentObject(name: string, spec: CurrentSpec): OpenshiftResource {
  const foreign = spec.foreignAnnotations ? { 'example.com/owner': 'team-x' } : undefined;
  let body: Record<string, unknown> = configMap(name, spec.data, foreign);
  if (spec.writer.kind === 'annotated') {
    const w = spec.writer;
    const annotated = new OpenshiftResource(body, w.integration, w.version, {
      ...(w.caller ? { callerName: w.caller } : {}),
    }).annotate({ now });
    body = JSON.parse(annotated.toJson()) as Record<string, unknown>;
  }
  if (spec.ownerReferences) {
    (body.metadata as Record<string, unknown>).ownerReferences = [
      { apiVersion: 'apps/v1', kind: 'Deployment', name: 'owner', uid: 'u-1' },
    ];
  }
  return new OpenshiftResource(body, INTEGRATION, VERSION, { validate: false });
}

/** Written by this integration, any version of the same major: what the rules call ours. */
const isOurs = (spec: CurrentSpec) =>
  spec.writer.kind === 'annotated' &&
  spec.writer.integration === INTEGRATION &&
  spec.writer.version.split('.')[0] === VERSION.split('.')[0];

describe('planItem: deletion properties', () => {
  it('never plans a delete that the ownership, take-over, deletion and desired rules forbid', () => {
    const seen = { removed: 0, takeOverDelete: 0 };
    fc.assert(
      fc.property(itemArb, optionsArb, (spec, o) => {
        const build = (): InventoryItemView => ({
          cluster: 'c1',
          namespace: 'ns',
          kind: 'ConfigMap',
          current: new Map(Object.entries(spec.current).map(([n, c]) => [n, currentObject(n, c)])),
          desired: new Map(
            Object.entries(spec.desired).map(([n, d]) => [
              n,
              new OpenshiftResource(configMap(n, d.data), INTEGRATION, VERSION, {
                ...(d.caller ? { callerName: d.caller } : {}),
              }),
            ]),
          ),
          useAdminToken: new Map(spec.admin.map((n) => [n, true])),
        });
        const options: PlanOptions = {
          takeOver: o.takeOver,
          caller: o.caller ?? null,
          allCallers: o.allCallers,
          clusterHasError: () => o.clusterHasError,
          now,
        };
        const plan = planItem(build(), options);
        const deletes = plan.actions.filter((a) => a.action === 'delete');
        seen.removed += deletes.filter((d) => d.reason === 'removed').length;
        seen.takeOverDelete += deletes.filter((d) => d.reason === 'take-over-delete').length;

        if (o.clusterHasError) expect(plan.actions).toEqual([]);
        for (const d of deletes) {
          const current = spec.current[d.name];
          // Only what is on the cluster, never what is desired.
          expect(current).toBeDefined();
          expect(spec.desired[d.name]).toBeUndefined();
          expect(d).toMatchObject({ cluster: 'c1', namespace: 'ns', kind: 'ConfigMap' });
          expect(d.privileged).toBe((spec.admin as readonly string[]).includes(d.name));
          if (!current) continue;
          if (isOurs(current)) {
            // Ours, but another caller's: kept.
            if (o.caller) expect(current.writer).toMatchObject({ caller: o.caller });
            expect(d.reason).toBe('removed');
          } else {
            // Not ours: only taken over, and never what something else owns.
            expect(o.takeOver).toBe(true);
            expect(current.ownerReferences).toBe(false);
            expect(d.reason).toBe('take-over-delete');
          }
        }
        // Every planned action names a distinct object, applies only desired ones.
        expect(new Set(plan.actions.map((a) => a.name)).size).toBe(plan.actions.length);
        for (const a of plan.actions.filter((a) => a.action === 'apply')) {
          expect(spec.desired[a.name]).toBeDefined();
        }
      }),
      { numRuns: 500 },
    );
    // The generators reach every kind of delete (the properties are not vacuous).
    expect(seen.removed).toBeGreaterThan(0);
    expect(seen.takeOverDelete).toBeGreaterThan(0);
  });
});
