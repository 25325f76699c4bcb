import { deepFreeze } from '@qontract/core';
import { describe, expect, it } from 'vitest';
import { cpuEqual } from './cpu.ts';
import { jsonPatchFromDiff } from './json-patch-diff.ts';
import { OpenshiftResource } from './openshift-resource.ts';
import type { PyObject } from './py-values.ts';
import {
  isValidChange,
  resourcesEqual,
  threeWayDiffUsingHash,
  withRecycleAnnotations,
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
    const before = structuredClone(desired.body);
    const patched = withRecycleAnnotations(desired, current);
    expect(desired.body).toEqual(before);
    expect(spec(patched).template.metadata.annotations).toEqual({
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
    const previous = withRecycleAnnotations(
      new OpenshiftResource(deployment(), 'i', '1.0.0'),
      current,
    );
    (current.body as Loose).metadata.annotations['qontract.sha256sum'] = previous.sha256sum();
    expect(resourcesEqual(current, withRecycleAnnotations(desired, current))).toBe(true);
  });

  it('raises when desired pod template annotations are null', () => {
    const desired = new OpenshiftResource(withTemplateAnnotations(null), 'i', '1.0.0');
    const current = new OpenshiftResource(
      withTemplateAnnotations({ 'kubectl.kubernetes.io/restartedAt': 't' }),
      'i',
      '1.0.0',
    );
    expect(() => withRecycleAnnotations(desired, current)).toThrow(/TypeError/);
  });

  it('does nothing for kinds that do not own pods', () => {
    const body = { kind: 'ConfigMap', metadata: { name: 'c' } };
    const desired = new OpenshiftResource(structuredClone(body), 'i', '1.0.0');
    expect(withRecycleAnnotations(desired, new OpenshiftResource(body, 'i', '1.0.0'))).toBe(
      desired,
    );
    expect(desired.body).toEqual(body);
  });
});

describe('verdicts kept for a frozen desired body and an object version', () => {
  // A ConfigMap: no restart annotations to copy, so the desired body stays shared.
  const configMap = (value: string): PyObject => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'cm' },
    data: { KEY: value },
  });
  const desiredOf = (body: PyObject, integration = 'openshift-resources') =>
    new OpenshiftResource(deepFreeze(body), integration, '1.0.0');
  /** The cluster's object: what we applied, as the server stores it (uid, resourceVersion). */
  const onCluster = (value: string, version: { uid?: string; rv?: string } = {}) => {
    const body = new OpenshiftResource(configMap(value), 'openshift-resources', '1.0.0').annotate()
      .body as Loose;
    body.metadata.uid = version.uid ?? 'uid-1';
    body.metadata.resourceVersion = version.rv ?? '100';
    return body as PyObject;
  };
  const current = (body: PyObject) =>
    new OpenshiftResource(body, 'openshift-resources', '1.0.0', { validate: false });
  /** The body with its reads of `data` counted: a compare reads it, a kept verdict does not. */
  const counted = (body: PyObject) => {
    const reads = { n: 0 };
    const data = (body as Loose).data;
    Object.defineProperty(body, 'data', {
      enumerable: true,
      get: () => {
        reads.n += 1;
        return data;
      },
    });
    return { body, reads };
  };

  it('compares an object version against a desired body once, in this run or a later one', () => {
    const desired = desiredOf(configMap('a'));
    const first = counted(onCluster('a'));
    expect(resourcesEqual(current(first.body), desired)).toBe(true);
    expect(first.reads.n).toBeGreaterThan(0);
    // A later run lists the object again: a new body, the same uid and resourceVersion.
    const again = counted(onCluster('a'));
    expect(resourcesEqual(current(again.body), desiredOf(configMap('a')))).toBe(true);
    expect(again.reads.n).toBeGreaterThan(0); // another desired body: compared
    const third = counted(onCluster('a'));
    expect(resourcesEqual(current(third.body), desired)).toBe(true);
    expect(third.reads.n).toBe(0); // the same desired body: the verdict is kept
  });

  it('compares afresh a new version, another object, another integration or a desired body that can change', () => {
    const desired = desiredOf(configMap('a'));
    expect(resourcesEqual(current(onCluster('a')), desired)).toBe(true);
    // Edited on the cluster: a new resourceVersion, a new verdict.
    expect(resourcesEqual(current(onCluster('edited', { rv: '101' })), desired)).toBe(false);
    // The same version read through another API version is another body.
    const otherVersion = onCluster('edited', { rv: '100' }) as Loose;
    otherVersion.apiVersion = 'v1beta1';
    expect(resourcesEqual(current(otherVersion), desired)).toBe(false);
    // Deleted and created again: a new uid.
    expect(resourcesEqual(current(onCluster('edited', { uid: 'uid-2' })), desired)).toBe(false);
    // The first version again (a verdict is kept for an object's latest version only): still right.
    expect(resourcesEqual(current(onCluster('a')), desired)).toBe(true);
    // The same desired body for an integration whose annotation the object does not carry.
    const other = new OpenshiftResource(desired.body, 'openshift-routes', '1.0.0');
    expect(resourcesEqual(current(onCluster('a')), other)).toBe(false);
    // A desired body that is not frozen may change between two calls: each call compares.
    const loose = new OpenshiftResource(configMap('a'), 'openshift-resources', '1.0.0');
    expect(resourcesEqual(current(onCluster('a')), loose)).toBe(true);
    (loose.body as Loose).data.KEY = 'b';
    expect(resourcesEqual(current(onCluster('a')), loose)).toBe(false);
  });

  it('never keeps a verdict for an object without a uid or a resourceVersion', () => {
    const desired = desiredOf(configMap('a'));
    const body = onCluster('a') as Loose;
    delete body.metadata.resourceVersion;
    expect(resourcesEqual(current(body), desired)).toBe(true);
    const same = counted(structuredClone(body));
    expect(resourcesEqual(current(same.body), desired)).toBe(true);
    expect(same.reads.n).toBeGreaterThan(0);
  });
});
