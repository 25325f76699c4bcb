import { describe, expect, it } from 'vitest';
import {
  fieldSetOf,
  fromFieldsV1,
  pathToString,
  removeAt,
  toFieldsV1,
  valueAt,
} from './fieldpath.ts';

const deployment = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: {
    name: 'd',
    namespace: 'n',
    labels: { a: 'b' },
    finalizers: ['f'],
    resourceVersion: '1',
  },
  spec: {
    template: {
      spec: {
        containers: [{ name: 'c', image: 'i', ports: [{ containerPort: 80 }], args: ['x'] }],
      },
    },
  },
  status: { replicas: 1 },
};

describe('field sets', () => {
  it('describe an object in FieldsV1 form, leaving identity and status out', () => {
    const set = fieldSetOf(deployment, { builtin: true, mode: 'apply', skipStatus: true });
    expect(toFieldsV1(set)).toEqual({
      'f:metadata': { 'f:finalizers': { 'v:"f"': {} }, 'f:labels': { 'f:a': {} } },
      'f:spec': {
        'f:template': {
          'f:spec': {
            'f:containers': {
              'k:{"name":"c"}': {
                '.': {},
                'f:args': {},
                'f:image': {},
                'f:name': {},
                'f:ports': {
                  'k:{"containerPort":80,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {} },
                },
              },
            },
          },
        },
      },
    });
    expect(fromFieldsV1(toFieldsV1(set))).toEqual(set);
  });

  it('mark free-form maps with "." in update mode', () => {
    const set = fieldSetOf(
      { metadata: { labels: { a: 'b' } }, data: { k: 'v' } },
      { builtin: true, mode: 'update', skipStatus: true },
    );
    expect(toFieldsV1(set)).toEqual({
      'f:data': { '.': {}, 'f:k': {} },
      'f:metadata': { 'f:labels': { '.': {}, 'f:a': {} } },
    });
  });

  it('locate, print and remove paths', () => {
    const obj = structuredClone(deployment) as Record<string, unknown>;
    const image = 'f:spec\nf:template\nf:spec\nf:containers\nk:{"name":"c"}\nf:image';
    expect(valueAt(obj, image)).toEqual({ found: true, value: 'i' });
    expect(pathToString(image)).toBe('.spec.template.spec.containers[name="c"].image');
    expect(pathToString('f:metadata\nf:finalizers\nv:"f"')).toBe('.metadata.finalizers[="f"]');
    removeAt(obj, 'f:spec\nf:template\nf:spec\nf:containers\nk:{"name":"c"}\n.');
    // The emptied list and the maps holding it go too.
    expect(obj.spec).toBeUndefined();
    removeAt(obj, 'f:metadata\nf:finalizers\nv:"f"');
    expect((obj.metadata as Record<string, unknown>).finalizers).toBeUndefined();
  });
});
