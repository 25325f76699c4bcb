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

const deployment = (name: string) => buildResource('Deployment', 'apps/v1', name);

/** The one item of the inventory for (cluster, namespace, kind). */
function item(ri: ResourceInventory, cluster: string, namespace: string, kind: string) {
  const found = [...ri.items()].filter(
    (i) => i.cluster === cluster && i.namespace === namespace && i.kind === kind,
  );
  expect(found).toHaveLength(1);
  return found[0]!;
}

/** What `fn` throws. */
function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error('expected a throw');
}

describe('ResourceInventory', () => {
  it('adds a desired resource and lists it as (cluster, namespace, kind, data)', () => {
    const ri = new ResourceInventory();
    ri.initializeResourceType('cl', 'ns', 'Deployment');
    const resource = deployment('name');
    expect(ri.addDesiredResource('cl', 'ns', resource)).toBe(true);
    const items = [...ri.items()];
    expect(items).toHaveLength(1);
    const { cluster, namespace, kind, desired, current, useAdminToken } = items[0]!;
    expect([cluster, namespace, kind]).toEqual(['cl', 'ns', 'Deployment']);
    expect(desired.get('name')).toBe(resource);
    expect(current.size).toBe(0);
    expect(useAdminToken.get('name')).toBe(false);
  });

  it('throws for a kind or namespace that was not registered (KeyError upstream)', () => {
    const ri = new ResourceInventory();
    ri.initializeResourceType('cl', 'ns', 'ApprovedType');
    const resource = buildResource('AnotherType', 'v1', 'name');
    expect(() => ri.addDesiredResource('cl', 'ns', resource)).toThrow(
      ResourceTypeNotInitializedError,
    );
    expect(() => ri.addCurrent('cl', 'ns', 'AnotherType', 'name', resource)).toThrow(
      ResourceTypeNotInitializedError,
    );
    expect(() => ri.addDesiredResource('cl', 'other-ns', resource)).toThrow(
      ResourceTypeNotInitializedError,
    );
    expect(item(ri, 'cl', 'ns', 'ApprovedType').desired.size).toBe(0);
  });

  it('ignores a desired resource for a cluster that was never initialised', () => {
    const ri = new ResourceInventory();
    expect(ri.addDesiredResource('nope', 'ns', deployment('n'))).toBe(false);
    expect(ri.isClusterPresent('nope')).toBe(false);
    expect([...ri.items()]).toEqual([]);
  });

  it.each([
    ['a managed name', 'name', undefined],
    ['an unmanaged name', 'an-unmanaged-name', ResourceNotManagedError],
  ])('with managed names, accepts %s or throws', (_what, name, error) => {
    const ri = new ResourceInventory();
    ri.initializeResourceType('cl', 'ns', 'Deployment', ['name']);
    const add = () => ri.addDesiredResource('cl', 'ns', deployment(name));
    if (error) expect(add).toThrow(error);
    else expect(add).not.toThrow();
  });

  it('checks managed names before duplicates', () => {
    const ri = new ResourceInventory();
    ri.initializeResourceType('cl', 'ns', 'Deployment', ['name']);
    ri.addDesiredResource('cl', 'ns', deployment('name'));
    // An unmanaged name is refused before anything is stored: adding it again is still "not
    // managed", never "desired twice"; a managed name added twice is the duplicate.
    expect(() => ri.addDesiredResource('cl', 'ns', deployment('other'))).toThrow(
      ResourceNotManagedError,
    );
    expect(() => ri.addDesiredResource('cl', 'ns', deployment('other'))).toThrow(
      ResourceNotManagedError,
    );
    expect(() => ri.addDesiredResource('cl', 'ns', deployment('name'))).toThrow(
      ResourceKeyExistsError,
    );
  });

  it('keeps the first registration, including its managed names', () => {
    const ri = new ResourceInventory();
    ri.initializeResourceType('cl', 'ns', 'Deployment', ['a']);
    ri.initializeResourceType('cl', 'ns', 'Deployment');
    expect(() => ri.addDesiredResource('cl', 'ns', deployment('b'))).toThrow(
      ResourceNotManagedError,
    );
    ri.addDesiredResource('cl', 'ns', deployment('a'));
    expect([...ri.items()]).toHaveLength(1);
    expect([...item(ri, 'cl', 'ns', 'Deployment').desired.keys()]).toEqual(['a']);
  });

  it('stores the privileged flag', () => {
    const ri = new ResourceInventory();
    ri.initializeResourceType('cl', 'ns', 'Deployment');
    ri.addDesiredResource('cl', 'ns', deployment('admin'), { privileged: true });
    ri.addDesiredResource('cl', 'ns', deployment('plain'), { privileged: false });
    ri.addDesiredResource('cl', 'ns', deployment('default'));
    const { useAdminToken } = item(ri, 'cl', 'ns', 'Deployment');
    expect(Object.fromEntries(useAdminToken)).toEqual({
      admin: true,
      plain: false,
      default: false,
    });
  });

  it('reports a duplicate desired object with both sources and keeps the first', () => {
    const ri = new ResourceInventory();
    ri.initializeResourceType('cl', 'ns', 'ConfigMap');
    const first = buildResource('ConfigMap', 'v1', 'cm');
    ri.addDesiredResource('cl', 'ns', first, { source: 'resources/a.yml' });
    const error = thrown(() =>
      ri.addDesiredResource('cl', 'ns', buildResource('ConfigMap', 'v1', 'cm'), {
        source: 'resources/b.yml',
        privileged: true,
      }),
    );
    expect(error).toBeInstanceOf(ResourceKeyExistsError);
    expect((error as ResourceKeyExistsError).sources).toEqual([
      'resources/a.yml',
      'resources/b.yml',
    ]);
    expect((error as Error).message).toBe(
      'ConfigMap/cm is desired twice (resources/a.yml and resources/b.yml)',
    );
    const { desired, useAdminToken } = item(ri, 'cl', 'ns', 'ConfigMap');
    expect(desired.get('cm')).toBe(first);
    expect(useAdminToken.get('cm')).toBe(false);
  });

  it('names only the sources it knows of a duplicate', () => {
    const ri = new ResourceInventory();
    ri.initializeResourceType('cl', 'ns', 'ConfigMap');
    ri.addDesiredResource('cl', 'ns', buildResource('ConfigMap', 'v1', 'cm'));
    const error = thrown(() =>
      ri.addDesiredResource('cl', 'ns', buildResource('ConfigMap', 'v1', 'cm'), {
        source: 'resources/b.yml',
      }),
    );
    expect((error as ResourceKeyExistsError).sources).toEqual(['resources/b.yml']);
    expect((error as Error).message).toBe('ConfigMap/cm is desired twice (resources/b.yml)');
  });

  it.each([
    ['short kind registered', ['Deployment'], 'Deployment'],
    ['long kind registered', ['Deployment.apps'], 'Deployment.apps'],
    ['both registered: the long kind wins', ['Deployment', 'Deployment.apps'], 'Deployment.apps'],
  ])('addDesiredResource with %s', (_what, types, expected) => {
    const ri = new ResourceInventory();
    for (const t of types) ri.initializeResourceType('cl', 'ns', t);
    ri.addDesiredResource('cl', 'ns', deployment('name'));
    expect(item(ri, 'cl', 'ns', expected).desired.has('name')).toBe(true);
    for (const t of types.filter((x) => x !== expected))
      expect(item(ri, 'cl', 'ns', t).desired.size).toBe(0);
  });

  it('overwrites current objects silently, per kind', () => {
    const ri = new ResourceInventory();
    ri.initializeResourceType('cl', 'ns', 'ConfigMap');
    ri.initializeResourceType('cl', 'ns', 'Secret');
    const a = buildResource('ConfigMap', 'v1', 'cm');
    const b = buildResource('ConfigMap', 'v1', 'cm');
    ri.addCurrent('cl', 'ns', 'ConfigMap', 'cm', a);
    ri.addCurrent('cl', 'ns', 'ConfigMap', 'cm', b);
    const configMaps = item(ri, 'cl', 'ns', 'ConfigMap');
    expect(configMaps.current.size).toBe(1);
    expect(configMaps.current.get('cm')).toBe(b);
    expect(configMaps.desired.size).toBe(0);
    expect(item(ri, 'cl', 'ns', 'Secret').current.size).toBe(0);
  });

  it('lists in insertion order and counts for the inventory gauge', () => {
    const ri = new ResourceInventory();
    ri.initializeResourceType('b', 'ns', 'Secret');
    ri.initializeResourceType('a', 'ns', 'ConfigMap');
    ri.addCurrent('a', 'ns', 'ConfigMap', 'x', buildResource('ConfigMap', 'v1', 'x'));
    ri.initializeResourceType('b', 'other', 'Secret');
    expect([...ri.items()].map((i) => `${i.cluster}/${i.namespace}`)).toEqual([
      'b/ns',
      'b/other',
      'a/ns',
    ]);
    expect(ri.clusters()).toEqual(['b', 'a']);
    expect([...ri.items('b')].map((i) => i.namespace)).toEqual(['ns', 'other']);
    expect([...ri.items('a')].map((i) => i.kind)).toEqual(['ConfigMap']);
    expect(ri.isClusterPresent('a')).toBe(true);
    expect(ri.counts()).toEqual([
      { cluster: 'b', namespace: 'ns', kind: 'Secret', state: 'current', count: 0 },
      { cluster: 'b', namespace: 'ns', kind: 'Secret', state: 'desired', count: 0 },
      { cluster: 'b', namespace: 'other', kind: 'Secret', state: 'current', count: 0 },
      { cluster: 'b', namespace: 'other', kind: 'Secret', state: 'desired', count: 0 },
      { cluster: 'a', namespace: 'ns', kind: 'ConfigMap', state: 'current', count: 1 },
      { cluster: 'a', namespace: 'ns', kind: 'ConfigMap', state: 'desired', count: 0 },
    ]);
  });
});
