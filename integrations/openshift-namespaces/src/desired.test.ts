import { describe, expect, it } from 'vitest';
import { desiredNamespaces, type NamespaceInput, planNamespaceActions } from './desired.ts';

const ns = (
  cluster: string,
  name: string,
  extra: Partial<NamespaceInput> = {},
): NamespaceInput => ({
  name,
  cluster: { name: cluster },
  ...extra,
});
const all = { isInShard: () => true };

describe('desiredNamespaces', () => {
  it.each([
    {
      title: 'nothing',
      input: [],
      filter: all,
      expected: [] as string[],
      duplicates: [] as string[],
    },
    {
      title: 'sorted by cluster and name, with delete and clusterAdmin flags',
      input: [
        ns('c2', 'b'),
        ns('c1', 'z', { delete: true }),
        ns('c1', 'a', { clusterAdmin: true }),
      ],
      filter: all,
      expected: ['c1/a admin', 'c1/z delete', 'c2/b'],
      duplicates: [],
    },
    {
      title: 'a key defined twice is reported and left alone',
      input: [ns('c1', 'a'), ns('c1', 'a', { delete: true }), ns('c1', 'b')],
      filter: all,
      expected: ['c1/b'],
      duplicates: ['c1/a'],
    },
    {
      title: 'externally managed namespaces are ignored',
      input: [ns('c1', 'a', { managedByExternal: true }), ns('c1', 'b')],
      filter: all,
      expected: ['c1/b'],
      duplicates: [],
    },
    {
      title: 'duplicates are detected before the filters apply',
      input: [ns('c1', 'a'), ns('c1', 'a'), ns('c2', 'a')],
      filter: { ...all, clusterNames: ['c2'] },
      expected: ['c2/a'],
      duplicates: ['c1/a'],
    },
    {
      title: '--cluster-name and --namespace-name',
      input: [ns('c1', 'a'), ns('c1', 'b'), ns('c2', 'a'), ns('c3', 'a')],
      filter: { ...all, clusterNames: ['c1', 'c2'], namespaceName: 'a' },
      expected: ['c1/a', 'c2/a'],
      duplicates: [],
    },
    {
      title: 'only the keys of this shard',
      input: [ns('c1', 'a'), ns('c1', 'b')],
      filter: { isInShard: (k: string) => k === 'c1/b' },
      expected: ['c1/b'],
      duplicates: [],
    },
  ])('$title', ({ input, filter, expected, duplicates }) => {
    const result = desiredNamespaces(input, filter);
    expect(
      result.desired.map(
        (d) =>
          `${d.cluster}/${d.namespace}${d.clusterAdmin ? ' admin' : ''}${d.delete ? ' delete' : ''}`,
      ),
    ).toEqual(expected);
    expect(result.duplicates).toEqual(duplicates);
  });
});

describe('planNamespaceActions', () => {
  const { desired } = desiredNamespaces(
    [
      ns('c1', 'new'),
      ns('c1', 'present'),
      ns('c1', 'gone', { delete: true }),
      ns('c1', 'doomed', { delete: true, clusterAdmin: true }),
    ],
    all,
  );
  it('creates missing namespaces and deletes only existing ones marked for deletion', () => {
    const existing = new Set(['c1/present', 'c1/doomed', 'c1/unknown-to-app-interface']);
    expect(planNamespaceActions(desired, (c, n) => existing.has(`${c}/${n}`))).toEqual([
      {
        action: 'delete',
        cluster: 'c1',
        namespace: 'doomed',
        kind: 'Namespace',
        name: 'doomed',
        privileged: true,
        reason: 'marked for deletion',
      },
      {
        action: 'create',
        cluster: 'c1',
        namespace: 'new',
        kind: 'Namespace',
        name: 'new',
        privileged: false,
        reason: 'missing',
      },
    ]);
  });
});
