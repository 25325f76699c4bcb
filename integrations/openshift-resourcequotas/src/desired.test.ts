import { describe, expect, it } from 'vitest';
import {
  currentStateSpecs,
  desiredResourceQuotas,
  flattenResources,
  isManagedNamespace,
  resourceQuotaBody,
} from './desired.ts';
import type { OpenshiftResourcequotasNamespacesQuery } from './namespaces.generated.ts';

type Namespace = NonNullable<OpenshiftResourcequotasNamespacesQuery['namespaces']>[number];

const quotaItem = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  scopes: null,
  resources: { pods: 10, limits: null, requests: null },
  ...extra,
});
const ns = (name: string, extra: Partial<Namespace> = {}, cluster = 'c1'): Namespace =>
  ({
    path: `/services/x/${name}.yml`,
    name,
    delete: null,
    clusterAdmin: null,
    cluster: { name: cluster },
    managedResourceNames: null,
    quota: { quotas: [quotaItem('compute'), quotaItem('pods')] },
    ...extra,
  }) as Namespace;

describe('flattenResources', () => {
  it.each([
    {
      title: 'joins nested keys with dots and stringifies leaves',
      resources: {
        pods: 20,
        limits: { cpu: '4', memory: '8Gi' },
        requests: { cpu: '2', memory: '4Gi' },
      },
      expected: {
        pods: '20',
        'limits.cpu': '4',
        'limits.memory': '8Gi',
        'requests.cpu': '2',
        'requests.memory': '4Gi',
      },
    },
    {
      title: 'drops null values and null maps',
      resources: { pods: null, limits: { cpu: '1', memory: null }, requests: null },
      expected: { 'limits.cpu': '1' },
    },
    { title: 'keeps zero', resources: { pods: 0 }, expected: { pods: '0' } },
    { title: 'writes booleans as Python does', resources: { x: true }, expected: { x: 'True' } },
    { title: 'an empty map gives nothing', resources: {}, expected: {} },
  ])('$title', ({ resources, expected }) => {
    expect(flattenResources(resources)).toEqual(expected);
  });
});

describe('resourceQuotaBody', () => {
  it.each([
    { title: 'no scopes', scopes: null, expected: undefined },
    { title: 'empty scopes', scopes: [], expected: undefined },
    { title: 'scopes', scopes: ['NotTerminating'], expected: ['NotTerminating'] },
  ])('sets spec.scopes only when non-empty: $title', ({ scopes, expected }) => {
    const body = resourceQuotaBody(
      quotaItem('q', {
        scopes,
        resources: { pods: 5, limits: { cpu: '1', memory: null }, requests: null },
      }) as Parameters<typeof resourceQuotaBody>[0],
    );
    expect(body).toEqual({
      apiVersion: 'v1',
      kind: 'ResourceQuota',
      metadata: { name: 'q' },
      spec: { hard: { pods: '5', 'limits.cpu': '1' }, ...(expected ? { scopes: expected } : {}) },
    });
    expect('scopes' in body.spec).toBe(expected !== undefined);
  });
});

describe('isManagedNamespace', () => {
  it.each([
    { title: 'with a quota', ns: ns('a'), expected: true },
    { title: 'without a quota', ns: ns('a', { quota: null }), expected: false },
    { title: 'being deleted', ns: ns('a', { delete: true }), expected: false },
  ])('$title → $expected', ({ ns, expected }) => {
    expect(isManagedNamespace(ns)).toBe(expected);
  });
});

describe('currentStateSpecs', () => {
  it.each([
    {
      title: 'one ResourceQuota spec per managed namespace, privileged when clusterAdmin',
      namespaces: [ns('a'), ns('b', { clusterAdmin: true }), ns('c', { quota: null })],
      expected: [
        { cluster: 'c1', namespace: 'a', kind: 'ResourceQuota', privileged: false },
        { cluster: 'c1', namespace: 'b', kind: 'ResourceQuota', privileged: true },
      ],
    },
    {
      title: 'only the managedResourceNames of ResourceQuota',
      namespaces: [
        ns('a', {
          managedResourceNames: [
            { resource: 'ResourceQuota', resourceNames: ['compute'] },
            { resource: 'ConfigMap', resourceNames: ['x'] },
          ],
        }),
      ],
      expected: [
        {
          cluster: 'c1',
          namespace: 'a',
          kind: 'ResourceQuota',
          privileged: false,
          resourceNames: ['compute'],
        },
      ],
    },
  ])('$title', ({ namespaces, expected }) => {
    expect(currentStateSpecs(namespaces)).toEqual(expected);
  });
});

describe('desiredResourceQuotas', () => {
  it.each([
    {
      title: 'one ResourceQuota per quota item of managed namespaces with a cluster client',
      namespaces: [ns('a'), ns('b', {}, 'c9'), ns('gone', { delete: true })],
      expected: ['c1/a/compute', 'c1/a/pods'],
    },
    {
      title: 'duplicate item names are passed on (the engine reports them)',
      namespaces: [ns('a', { quota: { quotas: [quotaItem('q'), quotaItem('q')] } })],
      expected: ['c1/a/q', 'c1/a/q'],
    },
    {
      title: 'an empty quota gives nothing',
      namespaces: [ns('a', { quota: { quotas: [] } })],
      expected: [],
    },
  ])('$title', ({ namespaces, expected }) => {
    const r = desiredResourceQuotas({ namespaces, clusters: new Set(['c1']) });
    expect(r.map((d) => `${d.cluster}/${d.namespace}/${d.body.metadata.name}`)).toEqual(expected);
  });

  it('names the data file it came from', () => {
    const [d] = desiredResourceQuotas({ namespaces: [ns('a')], clusters: new Set(['c1']) });
    expect(d!.source).toBe('/services/x/a.yml (quota compute)');
    expect(d!.body.spec).toEqual({ hard: { pods: '10' } });
  });
});
