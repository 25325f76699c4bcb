import { deepFreeze } from '@qontract/core';
import { describe, expect, it } from 'vitest';
import { cpuEqual } from './cpu.ts';
import { jsonPatchFromDiff } from './json-patch-diff.ts';
import { OpenshiftResource } from './openshift-resource.ts';
import type { PyObject } from './py-values.ts';
import {
  isValidChange,
  patchDesiredResourceForRecycleAnnotations,
  resourcesEqual,
  threeWayDiffUsingHash,
} from './three-way-diff.ts';

// Upstream reconcile/test/test_three_way_diff_strategy.py. The fixture is
// already canonical (annotations present, no server fields), so annotate(canonicalize=false)
// stores the same sha as the canonical one, as with upstream's deployment.yml.
function deployment(): PyObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'test-deployment', annotations: { 'test-annotation': 'value' } },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: 'test' } },
      template: {
        metadata: { labels: { app: 'test' } },
        spec: {
          containers: [
            {
              name: 'test',
              image: 'quay.io/test:1',
              env: [{ name: 'X', value: 'y' }],
              resources: {
                requests: { cpu: '100m', memory: '1Gi' },
                limits: { cpu: '1', memory: '1Gi' },
              },
            },
          ],
        },
      },
    },
  };
}

// biome-ignore lint/suspicious/noExplicitAny: test fixtures are navigated and mutated freely
type Loose = any;
const spec = (r: OpenshiftResource) => (r.body as Loose).spec as Loose;
const container = (r: OpenshiftResource) => spec(r).template.spec.containers[0];

function pair(mutateDesired?: (d: OpenshiftResource) => void): {
  c: OpenshiftResource;
  d: OpenshiftResource;
} {
  const d = new OpenshiftResource(deployment(), '', '');
  mutateDesired?.(d);
  const c = d.annotate({ canonicalize: false });
  return { c, d };
}

describe('three_way_diff_using_hash', () => {
  it('equal objects should not apply', () => {
    const { c, d } = pair();
    expect(threeWayDiffUsingHash(c, d)).toBe(true);
  });

  it('a field only on current should not apply', () => {
    const { c, d } = pair();
    spec(c).manual_added_attr = 5;
    expect(threeWayDiffUsingHash(c, d)).toBe(true);
  });

  it('a changed desired should apply (sha differs)', () => {
    const { c, d } = pair();
    delete (d.body as Loose).metadata.annotations;
    expect(threeWayDiffUsingHash(c, d)).toBe(false);
  });

  it('a changed current should apply', () => {
    const { c, d } = pair();
    spec(c).replicas = 5;
    expect(threeWayDiffUsingHash(c, d)).toBe(false);
  });

  it('a numerically equal cpu should not apply', () => {
    const { c, d } = pair((x) => {
      container(x).resources.limits.cpu = '1000m';
    });
    container(c).resources.limits.cpu = '1';
    expect(threeWayDiffUsingHash(c, d)).toBe(true);
  });

  it('an empty env value missing on current should not apply', () => {
    const { c, d } = pair((x) => {
      container(x).env = [{ name: 'test_env', value: '' }];
    });
    container(c).env = [{ name: 'test_env' }];
    expect(threeWayDiffUsingHash(c, d)).toBe(true);
  });

  it('an annotation missing on current should apply', () => {
    const { c, d } = pair((x) => {
      (x.body as Loose).metadata.annotations['new-annotation'] = 'x';
    });
    delete (c.body as Loose).metadata.annotations['new-annotation'];
    expect(threeWayDiffUsingHash(c, d)).toBe(false);
  });

  it('detects a switch of integration through the aliased body (upstream setup)', () => {
    const shared = deployment();
    const d = new OpenshiftResource(shared, 'same-integration', '');
    (shared.metadata as Loose).annotations['qontract.integration'] = 'different-integration';
    const c = new OpenshiftResource(shared, 'same-integration', '').annotate({
      canonicalize: false,
    });
    expect(threeWayDiffUsingHash(c, d)).toBe(false);
  });

  it('a current object owned by another integration should apply', () => {
    const d = new OpenshiftResource(deployment(), 'y', '1.0.0');
    const c = d.annotate();
    (c.body as Loose).metadata.annotations['qontract.integration'] = 'x';
    expect(threeWayDiffUsingHash(c, d)).toBe(false);
  });

  it('no sha annotation on current applies; a sha without integration raises', () => {
    const d = new OpenshiftResource(deployment(), 'int', '1.0.0');
    expect(threeWayDiffUsingHash(new OpenshiftResource(deployment(), 'int', '1.0.0'), d)).toBe(
      false,
    );
    const c = d.annotate();
    delete (c.body as Loose).metadata.annotations['qontract.integration'];
    expect(() => threeWayDiffUsingHash(c, d)).toThrow(/KeyError/);
  });

  it('null annotations on current raise (TypeError upstream)', () => {
    const d = new OpenshiftResource(deployment(), 'int', '1.0.0');
    const body = deployment();
    (body.metadata as Record<string, unknown>).annotations = null;
    expect(() => threeWayDiffUsingHash(new OpenshiftResource(body, 'int', '1.0.0'), d)).toThrow(
      /TypeError/,
    );
  });
});

describe('cpu mutations and valid changes', () => {
  const current = {
    spec: { template: { spec: { containers: [{ resources: { requests: { cpu: '2' } } }] } } },
  };
  const path = '/spec/template/spec/containers/0/resources/requests/cpu';
  it.each([
    ['2000m', false],
    ['20m', true],
  ])('replace cpu "2" with %s is a valid change: %s', (value, expected) => {
    expect(isValidChange(current, { op: 'replace', path, value })).toBe(expected);
  });

  it('an add at a cpu path raises like the pointer lookup upstream', () => {
    expect(() => isValidChange({ spec: {} }, { op: 'add', path, value: '1' })).toThrow();
  });

  it.each([
    ['1', '1000m', true],
    ['0.5', '500m', true],
    [1, '1000m', true],
    ['100m', '0.1', true],
    ['1.001', '1001m', false],
    [' 1e3 ', '1000000m', true],
    ['1_000', '1000000m', true],
    ['inf', 'inf', true],
    ['1Gi', '1024Mi', false],
    [true, '1000m', true],
  ])('cpuEqual(%j, %j) = %s', (a, b, expected) => {
    expect(cpuEqual(a, b)).toBe(expected);
  });
});

describe('jsonpatch 1.33 semantics', () => {
  it.each([
    [
      'dict values compare by JSON text',
      { a: 1 },
      { a: true },
      [{ op: 'replace', path: '/a', value: true }],
    ],
    ['list items compare with Python ==', { a: [1] }, { a: [true] }, []],
    [
      'a renamed key with the same value is a move',
      { a: 'v' },
      { b: 'v' },
      [{ op: 'move', from: '/a', path: '/b' }],
    ],
    [
      'a reordered list pairs into moves',
      { a: ['x', 'y'] },
      { a: ['y', 'x'] },
      [{ op: 'move', from: '/a/0', path: '/a/1' }],
    ],
    [
      'adjacent remove and add at one index become a replace',
      { a: ['x'] },
      { a: ['y'] },
      [{ op: 'replace', path: '/a/0', value: 'y' }],
    ],
    [
      'surplus source items are removed at the end index',
      { a: [1, 2, 3] },
      { a: [1] },
      [
        { op: 'remove', path: '/a/1' },
        { op: 'remove', path: '/a/1' },
      ],
    ],
    [
      'keys are escaped in paths',
      { 'a/b~': 1 },
      { 'a/b~': 2 },
      [{ op: 'replace', path: '/a~1b~0', value: 2 }],
    ],
  ])('%s', (_name, src, dst, expected) => {
    expect(jsonPatchFromDiff(src, dst)).toEqual(expected);
  });
});

describe('restartedAt annotations (patch_desired_resource_for_recycle_annotations)', () => {
  const withTemplateAnnotations = (annotations: unknown) => {
    const body = deployment();
    ((body.spec as Loose).template as Loose).metadata.annotations = annotations as Loose;
    return body;
  };

  it('copies the current restart annotations into desired, desired wins', () => {
    const desired = new OpenshiftResource(
      withTemplateAnnotations({ 'openshift.openshift.io/restartedAt': 'mine' }),
      'i',
      '1.0.0',
    );
    const current = new OpenshiftResource(
      withTemplateAnnotations({
        'kubectl.kubernetes.io/restartedAt': 't1',
        'openshift.openshift.io/restartedAt': 't2',
        other: 'x',
      }),
      'i',
      '1.0.0',
    );
    patchDesiredResourceForRecycleAnnotations(desired, current);
    expect(spec(desired).template.metadata.annotations).toEqual({
      'kubectl.kubernetes.io/restartedAt': 't1',
      'openshift.openshift.io/restartedAt': 'mine',
    });
  });

  it('keeps a rollout restart on the cluster from counting as drift', () => {
    const desired = new OpenshiftResource(deployment(), 'i', '1.0.0');
    const applied = desired.annotate();
    const current = new OpenshiftResource(structuredClone(applied.body), 'i', '1.0.0');
    spec(current).template.metadata.annotations = {
      'kubectl.kubernetes.io/restartedAt': '2024-05-01T00:00:00Z',
    };
    // Upstream's previous apply already carried the copied annotation, so the stored sha covers it.
    const previous = new OpenshiftResource(deployment(), 'i', '1.0.0');
    patchDesiredResourceForRecycleAnnotations(previous, current);
    (current.body as Loose).metadata.annotations['qontract.sha256sum'] = previous.sha256sum();
    expect(resourcesEqual(current, desired)).toBe(true);
  });

  it('raises when desired pod template annotations are null', () => {
    const desired = new OpenshiftResource(withTemplateAnnotations(null), 'i', '1.0.0');
    const current = new OpenshiftResource(
      withTemplateAnnotations({ 'kubectl.kubernetes.io/restartedAt': 't' }),
      'i',
      '1.0.0',
    );
    expect(() => patchDesiredResourceForRecycleAnnotations(desired, current)).toThrow(/TypeError/);
  });

  it('does nothing for kinds that do not own pods', () => {
    const body = { kind: 'ConfigMap', metadata: { name: 'c' } };
    const desired = new OpenshiftResource(structuredClone(body), 'i', '1.0.0');
    patchDesiredResourceForRecycleAnnotations(desired, new OpenshiftResource(body, 'i', '1.0.0'));
    expect(desired.body).toEqual(body);
  });
});

describe('verdicts on frozen bodies (the caches of a watch and of the desired state)', () => {
  // A ConfigMap: no restart annotations to copy, so the bodies stay shared.
  const configMap = (value: string): PyObject => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'cm' },
    data: { KEY: value },
  });
  const frozen = (body: unknown): PyObject => deepFreeze(body) as PyObject;
  const annotated = (body: PyObject, integration = 'openshift-resources') =>
    new OpenshiftResource(body, integration, '1.0.0').annotate().body;

  it('compares the same two bodies once', () => {
    const desired = new OpenshiftResource(frozen(configMap('a')), 'openshift-resources', '1.0.0');
    let reads = 0;
    const body = annotated(configMap('a')) as Loose;
    const metadata = body.metadata;
    Object.defineProperty(body, 'metadata', {
      enumerable: true,
      get: () => {
        reads += 1;
        return metadata;
      },
    });
    const current = new OpenshiftResource(frozen(body), 'openshift-resources', '1.0.0');
    const before = reads;
    expect(resourcesEqual(current, desired)).toBe(true);
    expect(reads).toBeGreaterThan(before);
    // Another iteration: new resources around the same frozen bodies.
    const again = new OpenshiftResource(current.body, 'openshift-resources', '1.0.0');
    const wanted = new OpenshiftResource(desired.body, 'openshift-resources', '1.0.0');
    const afterFirst = reads;
    expect(resourcesEqual(again, wanted)).toBe(true);
    expect(reads).toBe(afterFirst);
  });

  it('never answers for another desired body, another integration or bodies that can change', () => {
    const current = new OpenshiftResource(
      frozen(annotated(configMap('a'))),
      'openshift-resources',
      '1.0.0',
    );
    const same = new OpenshiftResource(frozen(configMap('a')), 'openshift-resources', '1.0.0');
    expect(resourcesEqual(current, same)).toBe(true);
    // The desired state changed: a new frozen body, compared afresh.
    const changed = new OpenshiftResource(frozen(configMap('b')), 'openshift-resources', '1.0.0');
    expect(resourcesEqual(current, changed)).toBe(false);
    expect(resourcesEqual(current, same)).toBe(true);
    // The same bodies for an integration whose annotation the object does not carry.
    const other = new OpenshiftResource(same.body, 'openshift-routes', '1.0.0');
    expect(resourcesEqual(current, other)).toBe(false);
    // A body that is not frozen may change between two calls: each call compares.
    const loose = new OpenshiftResource(configMap('a'), 'openshift-resources', '1.0.0');
    expect(resourcesEqual(current, loose)).toBe(true);
    (loose.body as Loose).data.KEY = 'b';
    expect(resourcesEqual(current, loose)).toBe(false);
    // An object edited on the cluster is a new frozen body in the cache: compared afresh.
    const edited = new OpenshiftResource(
      frozen({ ...(annotated(configMap('a')) as Loose), data: { KEY: 'edited' } }),
      'openshift-resources',
      '1.0.0',
    );
    expect(resourcesEqual(edited, same)).toBe(false);
  });
});
