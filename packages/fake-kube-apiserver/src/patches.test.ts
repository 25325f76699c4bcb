import { describe, expect, it } from 'vitest';
import { applyJsonPatch, applyMergePatch, applyStrategicMergePatch } from './patches.ts';

describe('JSON merge patch', () => {
  it('merges maps, deletes on null and replaces lists', () => {
    expect(
      applyMergePatch({ a: { b: 1, c: 2 }, l: [1, 2] }, { a: { b: null, d: 3 }, l: [3] }),
    ).toEqual({
      a: { c: 2, d: 3 },
      l: [3],
    });
  });
});

describe('JSON patch', () => {
  it('applies operations and refuses failing tests with 422', () => {
    expect(applyJsonPatch({ a: 1 }, [{ op: 'add', path: '/b', value: 2 }])).toEqual({ a: 1, b: 2 });
    expect(() => applyJsonPatch({ a: 1 }, [{ op: 'test', path: '/a', value: 2 }])).toThrow(
      expect.objectContaining({ code: 422 }),
    );
    expect(() => applyJsonPatch({ a: 1 }, { op: 'add' })).toThrow(
      expect.objectContaining({ code: 400 }),
    );
  });
});

describe('strategic merge patch', () => {
  const pod = {
    metadata: { finalizers: ['a'] },
    spec: {
      containers: [
        {
          name: 'app',
          image: 'app:1',
          env: [{ name: 'A', value: '1' }],
          ports: [{ containerPort: 80, protocol: 'TCP' }],
        },
        { name: 'side', image: 'side:1' },
      ],
      tolerations: [{ key: 'x' }],
    },
  };

  it('merges keyed lists item by item and replaces atomic ones', () => {
    const patched = applyStrategicMergePatch(pod, {
      metadata: { finalizers: ['b'] },
      spec: {
        containers: [
          {
            name: 'app',
            env: [{ name: 'B', value: '2' }],
            ports: [{ containerPort: 80, name: 'http' }],
          },
        ],
        tolerations: [{ key: 'y' }],
      },
    });
    expect(patched).toEqual({
      metadata: { finalizers: ['a', 'b'] },
      spec: {
        containers: [
          {
            name: 'app',
            image: 'app:1',
            env: [
              { name: 'A', value: '1' },
              { name: 'B', value: '2' },
            ],
            ports: [{ containerPort: 80, protocol: 'TCP', name: 'http' }],
          },
          { name: 'side', image: 'side:1' },
        ],
        tolerations: [{ key: 'y' }],
      },
    });
  });

  it('honours $patch, $retainKeys, $deleteFromPrimitiveList and ignores $setElementOrder', () => {
    const patched = applyStrategicMergePatch(pod, {
      metadata: { '$deleteFromPrimitiveList/finalizers': ['a'] },
      spec: {
        '$setElementOrder/containers': [{ name: 'side' }],
        containers: [
          { name: 'side', $patch: 'delete' },
          { name: 'app', $retainKeys: ['name', 'image'], image: 'app:2' },
        ],
      },
    });
    expect(patched).toEqual({
      metadata: { finalizers: [] },
      spec: { containers: [{ name: 'app', image: 'app:2' }], tolerations: [{ key: 'x' }] },
    });
    const replaced = applyStrategicMergePatch(pod, {
      spec: { containers: [{ $patch: 'replace' }, { name: 'only', image: 'o' }] },
    }) as { spec: { containers: unknown[] } };
    expect(replaced.spec.containers).toEqual([{ name: 'only', image: 'o' }]);
    expect(applyStrategicMergePatch(pod, { spec: { $patch: 'replace', containers: [] } })).toEqual({
      metadata: { finalizers: ['a'] },
      spec: { containers: [] },
    });
  });
});
