import { describe, expect, it } from 'vitest';
import type { NamespaceData } from './model.ts';
import { checkClusterOptions, selectNamespaces } from './select.ts';

const r = (provider: string, path: string) => ({ provider, path: { path, content: '' } });
const ns = (cluster: string, name: string, extra: Record<string, unknown> = {}) =>
  ({
    name,
    cluster: { name: cluster },
    openshiftResources: [r('resource', `/${name}.yml`)],
    ...extra,
  }) as unknown as NamespaceData;
const base = {
  isInShard: () => true,
  clusterNames: [],
  excludeClusters: [],
  providers: ['resource', 'resource-template'] as const,
};
const keys = (s: ReturnType<typeof selectNamespaces>) =>
  s.map(
    (x) =>
      `${x.namespace.cluster.name}/${x.namespace.name}:${x.openshiftResources.map((o) => (o as { path: { path: string } }).path.path).join(',')}`,
  );

describe('selectNamespaces', () => {
  it.each([
    {
      title: 'all',
      input: [ns('c1', 'a'), ns('c2', 'b')],
      filter: {},
      expected: ['c1/a:/a.yml', 'c2/b:/b.yml'],
    },
    {
      title: 'deleted namespaces are left out',
      input: [ns('c1', 'a', { delete: true }), ns('c1', 'b')],
      filter: {},
      expected: ['c1/b:/b.yml'],
    },
    {
      title: '--cluster-name',
      input: [ns('c1', 'a'), ns('c2', 'b')],
      filter: { clusterNames: ['c2'] },
      expected: ['c2/b:/b.yml'],
    },
    {
      title: '--exclude-cluster',
      input: [ns('c1', 'a'), ns('c2', 'b')],
      filter: { excludeClusters: ['c2'] },
      expected: ['c1/a:/a.yml'],
    },
    {
      title: '--namespace-name',
      input: [ns('c1', 'a'), ns('c1', 'b')],
      filter: { namespaceName: 'b' },
      expected: ['c1/b:/b.yml'],
    },
    {
      title: 'shard',
      input: [ns('c1', 'a'), ns('c1', 'b')],
      filter: { isInShard: (k: string) => k === 'c1/a' },
      expected: ['c1/a:/a.yml'],
    },
    {
      title: 'shared resources come after the namespace’s own',
      input: [
        ns('c1', 'a', {
          sharedResources: [{ openshiftResources: [r('resource', '/shared.yml')] }],
        }),
      ],
      filter: {},
      expected: ['c1/a:/a.yml,/shared.yml'],
    },
    {
      title: 'other providers are left out, and a namespace left with nothing is dropped',
      input: [
        ns('c1', 'a', { openshiftResources: [r('route', '/r.yml'), r('resource', '/x.yml')] }),
        ns('c1', 'b', { openshiftResources: [r('vault-secret', '/s')] }),
      ],
      filter: {},
      expected: ['c1/a:/x.yml'],
    },
  ])('$title', ({ input, filter, expected }) => {
    expect(keys(selectNamespaces(input, { ...base, ...filter }))).toEqual(expected);
  });
});

describe('checkClusterOptions', () => {
  it.each([
    [
      { clusterNames: [], excludeClusters: ['c'], dryRun: false },
      '--exclude-cluster is only supported in dry-run mode',
    ],
    [
      { clusterNames: ['a'], excludeClusters: ['c'], dryRun: true },
      '--cluster-name and --exclude-cluster can not be used together',
    ],
    [
      { clusterNames: ['a', 'b'], excludeClusters: [], dryRun: false },
      'Running with multiple clusters is only supported in dry-run mode',
    ],
  ])('%j', (o, message) => {
    expect(() => checkClusterOptions(o)).toThrow(message);
  });

  it('accepts what the original accepts', () => {
    expect(() =>
      checkClusterOptions({ clusterNames: ['a', 'b'], excludeClusters: [], dryRun: true }),
    ).not.toThrow();
    expect(() =>
      checkClusterOptions({ clusterNames: [], excludeClusters: ['c'], dryRun: true }),
    ).not.toThrow();
  });
});
