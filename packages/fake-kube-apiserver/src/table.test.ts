import { describe, expect, it } from 'vitest';
import { table, wantsTable } from './table.ts';

describe('tables', () => {
  it('are what kubectl asks for with as=Table', () => {
    expect(wantsTable('application/json;as=Table;v=v1;g=meta.k8s.io,application/json')).toBe(true);
    expect(wantsTable('application/json')).toBe(false);
    expect(wantsTable(undefined)).toBe(false);
  });

  it('use the real columns for the kinds we print, Name and Age elsewhere', () => {
    const now = new Date().toISOString();
    const deployment = {
      kind: 'Deployment',
      metadata: { name: 'web', creationTimestamp: now, managedFields: [{}] },
      spec: { replicas: 2 },
      status: { readyReplicas: 1, updatedReplicas: 2, availableReplicas: 1 },
    };
    const parsed = JSON.parse(table([deployment], { resourceVersion: '5' }, 'Metadata'));
    expect(parsed.columnDefinitions.map((c: { name: string }) => c.name)).toEqual([
      'Name',
      'Ready',
      'Up-to-date',
      'Available',
      'Age',
    ]);
    expect(parsed.rows[0].cells).toEqual(['web', '1/2', 2, 1, expect.stringMatching(/^\d+s$/)]);
    expect(parsed.rows[0].object).toEqual({
      kind: 'PartialObjectMetadata',
      apiVersion: 'meta.k8s.io/v1',
      metadata: { name: 'web', creationTimestamp: now },
    });
    const service = {
      kind: 'Service',
      metadata: { name: 's' },
      spec: {
        type: 'ClusterIP',
        clusterIP: '172.30.0.1',
        ports: [
          { port: 80, protocol: 'TCP' },
          { port: 53, protocol: 'UDP' },
        ],
      },
    };
    expect(JSON.parse(table([service], {}, 'None')).rows[0]).toEqual({
      cells: ['s', 'ClusterIP', '172.30.0.1', '<none>', '80/TCP,53/UDP', '0s'],
    });
    const event = {
      kind: 'Event',
      metadata: { name: 'settings.1a2b3', namespace: 'ns' },
      involvedObject: { apiVersion: 'v1', kind: 'ConfigMap', name: 'settings', namespace: 'ns' },
      type: 'Warning',
      reason: 'FightDetected',
      message: 'keeps being changed',
      lastTimestamp: now,
    };
    const events = JSON.parse(table([event], {}, 'None'));
    expect(events.columnDefinitions.map((c: { name: string }) => c.name)).toEqual([
      'Last Seen',
      'Type',
      'Reason',
      'Object',
      'Message',
    ]);
    expect(events.rows[0].cells).toEqual([
      expect.stringMatching(/^\d+s$/),
      'Warning',
      'FightDetected',
      'configmap/settings',
      'keeps being changed',
    ]);
    const widget = { kind: 'Widget', metadata: { name: 'w' } };
    expect(
      JSON.parse(table([widget], {}, 'Object')).columnDefinitions.map(
        (c: { name: string }) => c.name,
      ),
    ).toEqual(['Name', 'Age']);
  });
});
