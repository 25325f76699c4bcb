import { describe, expect, it } from 'vitest';
import { managedLabelsStateKey, planNamespaceLabels } from './plan.ts';

interface Case {
  readonly name: string;
  readonly desired: Record<string, string>;
  readonly managed: string[];
  readonly current: Record<string, string>;
  readonly changes: Record<string, string | null>;
  readonly newManaged: string[] | undefined;
  readonly conflicts: string[];
}

describe('planNamespaceLabels', () => {
  it.each<Case>([
    {
      name: 'nothing to do when all is in place',
      desired: { team: 'a' },
      managed: ['team'],
      current: { team: 'a', other: 'x' },
      changes: {},
      newManaged: undefined,
      conflicts: [],
    },
    {
      name: 'a new label is set and managed from now on',
      desired: { team: 'a', tier: 'edge' },
      managed: ['team'],
      current: { team: 'a' },
      changes: { tier: 'edge' },
      newManaged: ['team', 'tier'],
      conflicts: [],
    },
    {
      name: 'a managed label with another value is set',
      desired: { team: 'b' },
      managed: ['team'],
      current: { team: 'a' },
      changes: { team: 'b' },
      newManaged: undefined,
      conflicts: [],
    },
    {
      name: 'a managed label no longer wanted is removed (its key stays managed until it is gone)',
      desired: {},
      managed: ['team'],
      current: { team: 'a', 'kubernetes.io/metadata.name': 'ns' },
      changes: { team: null },
      newManaged: undefined,
      conflicts: [],
    },
    {
      name: 'a managed key gone from both sides is forgotten',
      desired: { tier: 'edge' },
      managed: ['old', 'tier'],
      current: { tier: 'edge' },
      changes: {},
      newManaged: ['tier'],
      conflicts: [],
    },
    {
      name: 'the last managed key forgotten leaves an empty list (stored, unlike upstream)',
      desired: {},
      managed: ['old'],
      current: {},
      changes: {},
      newManaged: [],
      conflicts: [],
    },
    {
      name: 'a label someone else set is a conflict, never overwritten',
      desired: { team: 'a' },
      managed: [],
      current: { team: 'b' },
      changes: {},
      newManaged: undefined,
      conflicts: ['Label conflict: desired team=a vs current team=b'],
    },
    {
      name: 'an unmanaged label with the wanted value is a conflict too, as upstream',
      desired: { team: 'a' },
      managed: [],
      current: { team: 'a' },
      changes: {},
      newManaged: undefined,
      conflicts: ['Label conflict: desired team=a vs current team=a'],
    },
    {
      name: 'sets come before removals, new keys after the old ones',
      desired: { b: '2', a: '1' },
      managed: ['z', 'gone'],
      current: { z: 'x' },
      changes: { b: '2', a: '1', z: null },
      newManaged: ['z', 'b', 'a'],
      conflicts: [],
    },
  ])('$name', ({ desired, managed, current, changes, newManaged, conflicts }) => {
    expect(
      planNamespaceLabels({ cluster: 'c', namespace: 'ns', desired, managed, current }),
    ).toEqual({ cluster: 'c', namespace: 'ns', changes, managed: newManaged, conflicts });
  });

  it('keeps the state key layout of the original', () => {
    expect(managedLabelsStateKey('appint-ex-01', 'example-app-stage')).toBe(
      'appint-ex-01/example-app-stage-managed-labels',
    );
  });
});
