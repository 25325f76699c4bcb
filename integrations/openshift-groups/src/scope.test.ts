import { describe, expect, it } from 'vitest';
import { type ClusterScopeFilter, clusterScope } from './scope.ts';

const clusters = [
  { name: 'managed', managedGroups: ['g'] },
  { name: 'empty', managedGroups: [] },
  { name: 'none', managedGroups: null },
  { name: 'internal', internal: true, managedGroups: ['g'] },
  { name: 'disabled', managedGroups: ['g'], disable: { integrations: ['openshift-groups'] } },
  { name: 'other-shard', managedGroups: ['g'] },
];
const filter = (extra: Partial<ClusterScopeFilter> = {}): ClusterScopeFilter => ({
  isInShard: (name) => name !== 'other-shard',
  integration: 'openshift-groups',
  ...extra,
});
const names = (r: ReturnType<typeof clusterScope>) => ({
  managed: r.managed.map((c) => c.name),
  unmanaged: r.unmanaged.map((c) => c.name),
});

describe('clusterScope', () => {
  it.each([
    ['all clusters', filter(), { managed: ['managed', 'internal'], unmanaged: ['empty', 'none'] }],
    ['--internal', filter({ internal: true }), { managed: ['internal'], unmanaged: [] }],
    [
      '--external',
      filter({ internal: false }),
      { managed: ['managed'], unmanaged: ['empty', 'none'] },
    ],
  ])(
    '%s: shard, disable.integrations and internal decide; managedGroups splits',
    (_t, f, expected) => {
      expect(names(clusterScope(clusters, f))).toEqual(expected);
    },
  );
});
