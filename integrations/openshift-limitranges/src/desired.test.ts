import { describe, expect, it } from 'vitest';
import {
  currentStateSpecs,
  desiredLimitRanges,
  isManagedNamespace,
  limitRangeBody,
} from './desired.ts';
import type { OpenshiftLimitrangesNamespacesQuery } from './namespaces.generated.ts';

type Namespace = NonNullable<OpenshiftLimitrangesNamespacesQuery['namespaces']>[number];

const item = (extra: Record<string, unknown> = {}) => ({
  type: null,
  default: null,
  defaultRequest: null,
  max: null,
  maxLimitRequestRatio: null,
  min: null,
  ...extra,
});
const limitRange = {
  path: '/openshift/limitranges/default.yml',
  name: 'default',
  limits: [item({ type: 'Container', max: { cpu: '2', memory: '2Gi' } })],
};
const ns = (name: string, extra: Partial<Namespace> = {}, cluster = 'c1'): Namespace =>
  ({
    path: `/services/x/${name}.yml`,
    name,
    delete: null,
    clusterAdmin: null,
    cluster: { name: cluster },
    managedResourceNames: null,
    limitRanges: limitRange,
    ...extra,
  }) as Namespace;

describe('limitRangeBody', () => {
  it.each([
    {
      title: 'copies the non-null keys of each item',
      limits: [
        item({
          type: 'Container',
          default: { cpu: '500m', memory: '512Mi' },
          defaultRequest: { cpu: '100m', memory: '128Mi' },
          maxLimitRequestRatio: { cpu: '4', memory: null },
        }),
        item({ type: 'Pod', min: { cpu: '10m', memory: '1Mi' } }),
      ],
      expected: [
        {
          type: 'Container',
          default: { cpu: '500m', memory: '512Mi' },
          defaultRequest: { cpu: '100m', memory: '128Mi' },
          // inner nulls stay: the original hashes them
          maxLimitRequestRatio: { cpu: '4', memory: null },
        },
        { type: 'Pod', min: { cpu: '10m', memory: '1Mi' } },
      ],
    },
    { title: 'keeps an item without keys as {}', limits: [item()], expected: [{}] },
    { title: 'turns an empty list into null', limits: [], expected: null },
  ])('$title', ({ limits, expected }) => {
    expect(limitRangeBody({ name: 'lr', limits })).toEqual({
      apiVersion: 'v1',
      kind: 'LimitRange',
      metadata: { name: 'lr' },
      spec: { limits: expected },
    });
  });
});

describe('isManagedNamespace', () => {
  it.each([
    { title: 'with limitRanges', ns: ns('a'), expected: true },
    { title: 'without limitRanges', ns: ns('a', { limitRanges: null }), expected: false },
    { title: 'being deleted', ns: ns('a', { delete: true }), expected: false },
    { title: 'delete: false', ns: ns('a', { delete: false }), expected: true },
  ])('$title → $expected', ({ ns, expected }) => {
    expect(isManagedNamespace(ns)).toBe(expected);
  });
});

describe('currentStateSpecs', () => {
  it.each([
    {
      title: 'one LimitRange spec per managed namespace',
      namespaces: [ns('a'), ns('b', { limitRanges: null }), ns('c', { delete: true })],
      expected: [{ cluster: 'c1', namespace: 'a', kind: 'LimitRange', privileged: false }],
    },
    {
      title: 'privileged for clusterAdmin namespaces',
      namespaces: [ns('a', { clusterAdmin: true })],
      expected: [{ cluster: 'c1', namespace: 'a', kind: 'LimitRange', privileged: true }],
    },
    {
      title: 'only the managedResourceNames of LimitRange (the last entry wins)',
      namespaces: [
        ns('a', {
          managedResourceNames: [
            { resource: 'Deployment', resourceNames: ['app'] },
            { resource: 'LimitRange', resourceNames: ['first'] },
            { resource: 'LimitRange', resourceNames: ['default'] },
          ],
        }),
        ns('b', { managedResourceNames: [{ resource: 'Deployment', resourceNames: ['app'] }] }),
      ],
      expected: [
        {
          cluster: 'c1',
          namespace: 'a',
          kind: 'LimitRange',
          privileged: false,
          resourceNames: ['default'],
        },
        { cluster: 'c1', namespace: 'b', kind: 'LimitRange', privileged: false },
      ],
    },
  ])('$title', ({ namespaces, expected }) => {
    expect(currentStateSpecs(namespaces)).toEqual(expected);
  });
});

describe('desiredLimitRanges', () => {
  it.each([
    {
      title: 'one LimitRange per managed namespace with a cluster client',
      namespaces: [
        ns('a'),
        ns('b', {}, 'c2'),
        ns('gone', { delete: true }),
        ns('no-client', {}, 'c9'),
      ],
      expected: ['c1/a/default', 'c2/b/default'],
    },
    {
      title: 'nothing without managed namespaces',
      namespaces: [ns('a', { limitRanges: null })],
      expected: [],
    },
    {
      title: 'a namespace defined twice gives two items (the engine reports the duplicate)',
      namespaces: [ns('a'), ns('a')],
      expected: ['c1/a/default', 'c1/a/default'],
    },
  ])('$title', ({ namespaces, expected }) => {
    const r = desiredLimitRanges({ namespaces, clusters: new Set(['c1', 'c2']) });
    expect(r.map((d) => `${d.cluster}/${d.namespace}/${d.body.metadata.name}`)).toEqual(expected);
  });

  it('names the data files it came from', () => {
    const [d] = desiredLimitRanges({ namespaces: [ns('a')], clusters: new Set(['c1']) });
    expect(d!.source).toBe('/services/x/a.yml (limitRanges /openshift/limitranges/default.yml)');
    expect(d!.body.spec.limits).toEqual([{ type: 'Container', max: { cpu: '2', memory: '2Gi' } }]);
  });
});
