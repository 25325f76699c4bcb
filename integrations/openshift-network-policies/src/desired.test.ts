import { describe, expect, it } from 'vitest';
import {
  currentStateSpecs,
  desiredNetworkPolicies,
  isManagedNamespace,
  networkPolicyBody,
} from './desired.ts';
import type { OpenshiftNetworkPoliciesNamespacesQuery } from './namespaces.generated.ts';

type Namespace = NonNullable<OpenshiftNetworkPoliciesNamespacesQuery['namespaces']>[number];

const allow = (name: string, cluster = 'c1') => ({ name, cluster: { name: cluster } });
const ns = (name: string, extra: Partial<Namespace> = {}, cluster = 'c1'): Namespace =>
  ({
    path: `/services/x/${name}.yml`,
    name,
    delete: null,
    clusterAdmin: null,
    cluster: { name: cluster },
    networkPoliciesAllow: [allow('monitoring')],
    ...extra,
  }) as Namespace;
const all = () => true;

describe('networkPolicyBody', () => {
  it('allows ingress from every pod of the source namespace', () => {
    expect(networkPolicyBody('monitoring')).toEqual({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      metadata: { name: 'allow-from-monitoring-namespace' },
      spec: {
        ingress: [
          {
            from: [
              {
                namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } },
              },
            ],
          },
        ],
        podSelector: {},
        policyTypes: ['Ingress'],
      },
    });
  });
});

describe('isManagedNamespace', () => {
  it.each([
    { title: 'with allowed namespaces', ns: ns('a'), shard: all, expected: true },
    {
      title: 'allow list null',
      ns: ns('a', { networkPoliciesAllow: null }),
      shard: all,
      expected: false,
    },
    {
      title: 'allow list empty',
      ns: ns('a', { networkPoliciesAllow: [] }),
      shard: all,
      expected: false,
    },
    { title: 'being deleted', ns: ns('a', { delete: true }), shard: all, expected: false },
    {
      title: 'in another shard',
      ns: ns('a'),
      shard: (k: string) => k !== 'c1/a',
      expected: false,
    },
    { title: 'in this shard', ns: ns('a'), shard: (k: string) => k === 'c1/a', expected: true },
  ])('$title → $expected', ({ ns, shard, expected }) => {
    expect(isManagedNamespace(ns, shard)).toBe(expected);
  });
});

describe('currentStateSpecs', () => {
  it('reads NetworkPolicies per namespace, privileged when clusterAdmin', () => {
    expect(currentStateSpecs([ns('a'), ns('b', { clusterAdmin: true }, 'c2')])).toEqual([
      { cluster: 'c1', namespace: 'a', kind: 'NetworkPolicy', privileged: false },
      { cluster: 'c2', namespace: 'b', kind: 'NetworkPolicy', privileged: true },
    ]);
  });
});

describe('desiredNetworkPolicies', () => {
  it.each([
    {
      title: 'one policy per allowed source namespace',
      namespaces: [ns('app', { networkPoliciesAllow: [allow('monitoring'), allow('ingress')] })],
      expected: [
        'c1/app/allow-from-monitoring-namespace:false',
        'c1/app/allow-from-ingress-namespace:false',
      ],
      problems: [],
    },
    {
      title: 'privileged when the target namespace is clusterAdmin',
      namespaces: [ns('app', { clusterAdmin: true })],
      expected: ['c1/app/allow-from-monitoring-namespace:true'],
      problems: [],
    },
    {
      title: 'a source on another cluster is a problem; the other sources still count',
      namespaces: [ns('app', { networkPoliciesAllow: [allow('remote', 'c2'), allow('ingress')] })],
      expected: ['c1/app/allow-from-ingress-namespace:false'],
      problems: [
        { scope: 'c1/app', message: "[c1/app] Network Policy from cluster 'c2' not allowed." },
      ],
    },
    {
      title: 'nothing for clusters without a client',
      namespaces: [ns('app', {}, 'c9')],
      expected: [],
      problems: [],
    },
  ])('$title', ({ namespaces, expected, problems }) => {
    const r = desiredNetworkPolicies({ namespaces, clusters: new Set(['c1', 'c2']) });
    expect(
      r.desired.map((d) => `${d.cluster}/${d.namespace}/${d.body.metadata.name}:${d.privileged}`),
    ).toEqual(expected);
    expect(r.problems).toEqual(problems);
  });

  it('names the data file it came from', () => {
    const { desired } = desiredNetworkPolicies({
      namespaces: [ns('a')],
      clusters: new Set(['c1']),
    });
    expect(desired[0]!.source).toBe('/services/x/a.yml (networkPoliciesAllow monitoring)');
  });
});
