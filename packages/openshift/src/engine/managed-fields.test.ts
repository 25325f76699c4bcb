import { describe, expect, it } from 'vitest';
import { mergeFieldSets, migratedManagedFields } from './managed-fields.ts';

const csaObject = {
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: {
    name: 'cm',
    resourceVersion: '7',
    managedFields: [
      {
        manager: 'kubectl-client-side-apply',
        operation: 'Update',
        apiVersion: 'v1',
        fieldsType: 'FieldsV1',
        fieldsV1: {
          'f:data': { 'f:a': {}, 'f:b': {} },
          'f:metadata': {
            'f:annotations': { '.': {}, 'f:kubectl.kubernetes.io/last-applied-configuration': {} },
          },
        },
      },
      {
        manager: 'kube-controller-manager',
        operation: 'Update',
        apiVersion: 'v1',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:metadata': { 'f:labels': { 'f:x': {} } } },
      },
      {
        manager: 'qontract-reconcile-test',
        operation: 'Apply',
        apiVersion: 'v1',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:data': { 'f:c': {} } },
      },
    ],
  },
};

describe('migratedManagedFields', () => {
  it('moves client-side-apply fields into our Apply entry and keeps other managers', () => {
    const out = migratedManagedFields(
      csaObject,
      'qontract-reconcile-test',
      new Date('2026-01-01T00:00:00.123Z'),
    )!;
    expect(out.map((e) => `${e.manager}/${e.operation}`)).toEqual([
      'kube-controller-manager/Update',
      'qontract-reconcile-test/Apply',
    ]);
    expect(out[1]).toEqual({
      manager: 'qontract-reconcile-test',
      operation: 'Apply',
      apiVersion: 'v1',
      time: '2026-01-01T00:00:00Z',
      fieldsType: 'FieldsV1',
      fieldsV1: {
        'f:data': { 'f:a': {}, 'f:b': {}, 'f:c': {} },
        'f:metadata': {
          'f:annotations': { '.': {}, 'f:kubectl.kubernetes.io/last-applied-configuration': {} },
        },
      },
    });
  });

  it('does nothing for objects already managed by server-side apply', () => {
    const ssa = {
      ...csaObject,
      metadata: { ...csaObject.metadata, managedFields: [csaObject.metadata.managedFields[2]!] },
    };
    expect(migratedManagedFields(ssa, 'qontract-reconcile-test')).toBeUndefined();
    expect(migratedManagedFields({ metadata: {} }, 'x')).toBeUndefined();
  });

  it('merges field sets deeply', () => {
    expect(mergeFieldSets({ 'f:a': { 'f:x': {} } }, { 'f:a': { 'f:y': {} }, 'f:b': {} })).toEqual({
      'f:a': { 'f:x': {}, 'f:y': {} },
      'f:b': {},
    });
  });
});
