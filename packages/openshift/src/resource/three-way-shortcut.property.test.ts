import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonPatchFromDiff } from './json-patch-diff.ts';
import { OpenshiftResource } from './openshift-resource.ts';
import { PyFloat, type PyObject, type PyValue, pyDeepCopy } from './py-values.ts';
import { isValidChange, normalizedDesiredContained, normalizeObject } from './three-way-diff.ts';

/** The full decision of three_way_diff_using_hash after the sha check: no add or replace that counts. */
function fullDiffEqual(current: PyValue, desired: PyValue): boolean {
  const c = normalizeObject(new OpenshiftResource(current, 'i', '1.0.0', { validate: false }));
  const d = normalizeObject(new OpenshiftResource(desired, 'i', '1.0.0', { validate: false }));
  return !jsonPatchFromDiff(c, d).some((op) => isValidChange(c, op));
}

const scalar = fc.oneof(
  fc.constantFrom('a', 'b', '', '500m', '0.5', 'true'),
  fc.constantFrom(0, 1, 2, 0.5, -1),
  fc.boolean(),
  fc.constant(null),
  fc.constant(new PyFloat(1)),
);
const value: fc.Arbitrary<PyValue> = fc.letrec((tie) => ({
  v: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalar,
    fc.array(tie('v'), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom('x', 'y', 'cpu', 'value', 'name', 'env'), tie('v'), {
      maxKeys: 3,
    }),
  ),
})).v as fc.Arbitrary<PyValue>;

const annotations = fc.dictionary(
  fc.constantFrom(
    'a',
    'b',
    'qontract.integration',
    'qontract.sha256sum',
    'kubectl.kubernetes.io/last-applied-configuration',
  ),
  fc.oneof(fc.constantFrom('1', '2', ''), fc.constant(null)),
  { maxKeys: 3 },
);

const desiredBody = fc.record({
  apiVersion: fc.constantFrom('v1', 'apps/v1'),
  kind: fc.constantFrom('ConfigMap', 'Secret', 'Deployment'),
  metadata: fc.record(
    {
      name: fc.constant('x'),
      namespace: fc.constantFrom('ns', 'other'),
      labels: fc.dictionary(fc.constantFrom('app', 'tier'), fc.constantFrom('a', 'b')),
      annotations: fc.oneof(annotations, fc.constant(null), fc.constant({})),
      uid: fc.constant('desired-uid'),
    },
    { requiredKeys: ['name'] },
  ),
  data: fc.dictionary(fc.constantFrom('k1', 'k2', 'k3'), value, { maxKeys: 3 }),
  stringData: fc.option(fc.dictionary(fc.constantFrom('k1', 'k4'), fc.constantFrom('s')), {
    nil: undefined,
  }),
  spec: value,
});

/** The cluster's copy: what the server adds, and some edits anywhere. */
type Edit = { path: number[]; kind: 'drop' | 'set' | 'add' | 'push'; value: PyValue };
const edit = fc.record({
  path: fc.array(fc.nat(5), { minLength: 1, maxLength: 4 }),
  kind: fc.constantFrom('drop', 'set', 'add', 'push') as fc.Arbitrary<Edit['kind']>,
  value,
});

function applyEdit(body: PyObject, e: Edit): void {
  let node: PyValue = body;
  for (let i = 0; i < e.path.length; i++) {
    const last = i === e.path.length - 1;
    if (Array.isArray(node)) {
      if (node.length === 0) return;
      const at: number = e.path[i]! % node.length;
      if (last) {
        if (e.kind === 'drop') node.splice(at, 1);
        else if (e.kind === 'push') node.push(e.value);
        else node[at] = e.value;
        return;
      }
      node = node[at]!;
    } else if (node !== null && typeof node === 'object' && !(node instanceof PyFloat)) {
      const obj = node as PyObject;
      const keys = Object.keys(obj);
      if (keys.length === 0) return;
      const key = keys[e.path[i]! % keys.length]!;
      if (last) {
        if (e.kind === 'drop') delete obj[key];
        else if (e.kind === 'add') obj[`${key}-extra`] = e.value;
        else obj[key] = e.value;
        return;
      }
      node = obj[key]!;
    } else return;
  }
}

function withServerFields(body: PyObject): PyObject {
  const metadata = { ...(body.metadata as PyObject) };
  Object.assign(metadata, {
    uid: 'cluster-uid',
    resourceVersion: '42',
    managedFields: [{ manager: 'm' }],
    creationTimestamp: '2026-01-01T00:00:00Z',
  });
  return { ...body, metadata, status: { ready: true } };
}

const clean = (body: Record<string, unknown>): PyObject =>
  Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined)) as PyObject;

describe('the three-way shortcut (normalised desired contained in normalised current)', () => {
  it('never says equal where the full diff would apply', () => {
    fc.assert(
      fc.property(desiredBody, fc.array(edit, { maxLength: 3 }), (generated, edits) => {
        const desired = clean(generated);
        const current = withServerFields(pyDeepCopy(desired) as PyObject);
        for (const e of edits) applyEdit(current, e);
        let full: boolean;
        try {
          full = fullDiffEqual(current, desired);
        } catch {
          // The full diff raises: the shortcut must not have decided.
          expect(normalizedDesiredContained(current, desired)).toBe(false);
          return;
        }
        if (normalizedDesiredContained(current, desired)) expect(full).toBe(true);
      }),
      { numRuns: 3000 },
    );
  });

  it('takes the shortcut for an unchanged object with the server fields, the sha annotations and last-applied', () => {
    fc.assert(
      fc.property(desiredBody, (generated) => {
        const desired = clean({ ...generated, stringData: undefined });
        const current = withServerFields(pyDeepCopy(desired) as PyObject);
        const metadata = current.metadata as PyObject;
        metadata.annotations = {
          ...((metadata.annotations as PyObject | null) ?? {}),
          'qontract.sha256sum': 'abc',
          'kubectl.kubernetes.io/last-applied-configuration': '{}',
        };
        expect(normalizedDesiredContained(current, desired)).toBe(true);
        expect(fullDiffEqual(current, desired)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('leaves to the full diff what only it can decide', () => {
    const desired: PyObject = {
      kind: 'Deployment',
      metadata: { name: 'x' },
      spec: { cpu: '500m', env: [{ name: 'A', value: '' }] },
    };
    // A numerically equal cpu and an empty env value missing on the cluster: equal, but not contained.
    const current: PyObject = {
      kind: 'Deployment',
      metadata: { name: 'x' },
      spec: { cpu: 0.5, env: [{ name: 'A' }] },
    };
    expect(normalizedDesiredContained(current, desired)).toBe(false);
    // A Secret's stringData is merged into data first.
    const secret: PyObject = { kind: 'Secret', metadata: { name: 's' }, stringData: { a: 'b' } };
    expect(normalizedDesiredContained({ ...secret, data: { a: 'Yg==' } }, secret)).toBe(false);
    // Python floats and lists of another length.
    expect(
      normalizedDesiredContained(
        { kind: 'A', metadata: {}, v: new PyFloat(1) },
        { kind: 'A', metadata: {}, v: new PyFloat(1) },
      ),
    ).toBe(false);
    expect(
      normalizedDesiredContained(
        { kind: 'A', metadata: {}, v: [1, 2] },
        { kind: 'A', metadata: {}, v: [1] },
      ),
    ).toBe(false);
  });
});
