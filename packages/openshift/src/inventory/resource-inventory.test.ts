import { ErrorRegistry } from '@qontract/core';
import { describe, expect, it } from 'vitest';
import { OpenshiftResource } from '../resource/openshift-resource.ts';
import {
  ResourceKeyExistsError,
  ResourceNotManagedError,
  ResourceTypeNotInitializedError,
} from './errors.ts';
import { ResourceInventory } from './resource-inventory.ts';

// Upstream reconcile/test/test_openshift_resource.py `test_resource_inventory_*`.
function buildResource(kind: string, apiVersion: string, name: string): OpenshiftResource {
  return new OpenshiftResource({ kind, apiVersion, metadata: { name } }, 'int', 'int-v');
}

describe('ResourceInventory', () => {
  it('adds a desired resource and iterates (cluster, namespace, type, data)', () => {
    const ri = new ResourceInventory();
    ri.initializeResourceType('cl', 'ns', 'Deployment');
    const resource = buildResource('Deployment', 'apps/v1', 'name');
    ri.addDesired('cl', 'ns', 'Deployment', 'name', resource);
    const items = [...ri];
    expect(items).toHaveLength(1);
    const [cluster, namespace, type, data] = items[0]!;
    expect([cluster, namespace, type]).toEqual(['cl', 'ns', 'Deployment']);
    expect(data.desired.get('name')).toBe(resource);
    expect(data.useAdminToken.get('name')).toBe(false);
  });

  it('throws for a kind that was not registered (KeyError upstream)', () => {
    const ri = new ResourceInventory();
    ri.initializeResourceType('cl', 'ns', 'ApprovedType');
    const resource = buildResource('AnotherType', 'v1', 'name');
    expect(() => ri.addDesired('cl', 'ns', 'AnotherType', 'name', resource)).toThrow(
      ResourceTypeNotInitializedError,
    );
    expect(() => ri.addCurrent('cl', 'ns', 'AnotherType', 'name', resource)).toThrow(
      ResourceTypeNotInitializedError,
    );
    expect(() => ri.addDesiredResource('cl', 'other-ns', resource)).toThrow(
      ResourceTypeNotInitializedError,
    );
  });

  it('ignores a desired resource for a cluster that was never initialised', () => {
    const ri = new ResourceInventory();
    expect(ri.addDesiredResource('nope', 'ns', buildResource('Deployment', 'apps/v1', 'n'))).toBe(
      false,
    );
    expect(ri.isClusterPresent('nope')).toBe(false);
  });

  it.each([
    ['a managed name', 'name', undefined],
    ['an unmanaged name', 'an-unmanaged-name', ResourceNotManagedError],
  ])('with managed names, accepts %s or throws', (_what, name, error) => {
    const ri = new ResourceInventory();
    ri.initializeResourceType('cl', 'ns', 'Deployment', ['name']);
    const add = () =>
      ri.addDesired('cl', 'ns', 'Deployment', name, buildResource('Deployment', 'apps/v1', name));
    if (error) expect(add).toThrow(error);
    else expect(add).not.toThrow();
  });

  it('checks managed names before duplicates', () => {
    const ri = new ResourceInventory();
    ri.initializeResourceType('cl', 'ns', 'Deployment', ['name']);
    expect(() =>
      ri.addDesired(
        'cl',
        'ns',
        'Deployment',
        'other',
        buildResource('Deployment', 'apps/v1', 'other'),
      ),
    ).toThrow(ResourceNotManagedError);
  });

  it('keeps the first registration, including its managed names', () => {
    const ri = new ResourceInventory();
    ri.initializeResourceType('cl', 'ns', 'Deployment', ['a']);
    ri.initializeResourceType('cl', 'ns', 'Deployment');
    expect(ri.managedNames('cl', 'ns', 'Deployment')).toEqual(['a']);
  });

  it('stores the privileged flag', () => {
    const ri = new ResourceInventory();
    ri.initializeResourceType('cl', 'ns', 'Deployment');
    ri.addDesired(
      'cl',
      'ns',
      'Deployment',
      'name',
      buildResource('Deployment', 'apps/v1', 'name'),
      { privileged: true },
    );
    expect([...ri][0]![3].useAdminToken.get('name')).toBe(true);
  });

  it('reports a duplicate desired object with both sources', () => {
    const ri = new ResourceInventory();
    ri.initializeResourceType('cl', 'ns', 'ConfigMap');
    const first = buildResource('ConfigMap', 'v1', 'cm');
    ri.addDesiredResource('cl', 'ns', first, { source: 'resources/a.yml' });
    let error: unknown;
    try {
      ri.addDesiredResource('cl', 'ns', buildResource('ConfigMap', 'v1', 'cm'), {
        source: 'resources/b.yml',
      });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ResourceKeyExistsError);
    expect((error as ResourceKeyExistsError).sources).toEqual([
      'resources/a.yml',
      'resources/b.yml',
    ]);
    expect((error as Error).message).toBe(
      'ConfigMap/cm is desired twice (resources/a.yml and resources/b.yml)',
    );
    expect(ri.getDesired('cl', 'ns', 'ConfigMap', 'cm')).toBe(first);
  });

  it.each([
    ['short kind registered', ['Deployment'], 'Deployment'],
    ['long kind registered', ['Deployment.apps'], 'Deployment.apps'],
    ['both registered: the long kind wins', ['Deployment', 'Deployment.apps'], 'Deployment.apps'],
  ])('addDesiredResource with %s', (_what, types, expected) => {
    const ri = new ResourceInventory();
    for (const t of types) ri.initializeResourceType('cl', 'ns', t);
    ri.addDesiredResource('cl', 'ns', buildResource('Deployment', 'apps/v1', 'name'));
    expect(ri.getDesired('cl', 'ns', expected, 'name')).toBeDefined();
    for (const t of types.filter((x) => x !== expected))
      expect(ri.getDesiredByType('cl', 'ns', t)?.size).toBe(0);
  });

  it('overwrites current objects silently and returns undefined for missing keys', () => {
    const ri = new ResourceInventory();
    ri.initializeResourceType('cl', 'ns', 'ConfigMap');
    const a = buildResource('ConfigMap', 'v1', 'cm');
    const b = buildResource('ConfigMap', 'v1', 'cm');
    ri.addCurrent('cl', 'ns', 'ConfigMap', 'cm', a);
    ri.addCurrent('cl', 'ns', 'ConfigMap', 'cm', b);
    expect(ri.getCurrent('cl', 'ns', 'ConfigMap', 'cm')).toBe(b);
    expect(ri.getCurrent('cl', 'ns', 'Secret', 'cm')).toBeUndefined();
    expect(ri.getDesired('x', 'ns', 'ConfigMap', 'cm')).toBeUndefined();
  });

  it('keeps a per-cluster error registry next to the global flag', () => {
    const errors = new ErrorRegistry();
    const ri = new ResourceInventory(errors);
    expect(ri.hasErrorRegistered()).toBe(false);
    ri.registerError('cluster unreachable', 'cl-1');
    expect(ri.hasErrorRegistered('cl-1')).toBe(true);
    expect(ri.hasErrorRegistered('cl-2')).toBe(false);
    expect(ri.hasErrorRegistered()).toBe(true);
    ri.registerError('bad item');
    expect(ri.hasErrorRegistered('cl-2')).toBe(false);
    expect(errors.errors.map((e) => e.message)).toEqual(['cluster unreachable', 'bad item']);
  });

  it('iterates in insertion order and counts for the inventory gauge', () => {
    const ri = new ResourceInventory();
    ri.initializeResourceType('b', 'ns', 'Secret');
    ri.initializeResourceType('a', 'ns', 'ConfigMap');
    ri.addCurrent('a', 'ns', 'ConfigMap', 'x', buildResource('ConfigMap', 'v1', 'x'));
    expect([...ri.items()].map((i) => i.cluster)).toEqual(['b', 'a']);
    expect(ri.counts()).toEqual([
      { cluster: 'b', namespace: 'ns', kind: 'Secret', state: 'current', count: 0 },
      { cluster: 'b', namespace: 'ns', kind: 'Secret', state: 'desired', count: 0 },
      { cluster: 'a', namespace: 'ns', kind: 'ConfigMap', state: 'current', count: 1 },
      { cluster: 'a', namespace: 'ns', kind: 'ConfigMap', state: 'desired', count: 0 },
    ]);
  });
});
