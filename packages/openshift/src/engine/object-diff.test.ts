import { Buffer } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import { renderObjectDiff } from './object-diff.ts';

const where = { cluster: 'c1', namespace: 'ns1', kind: 'ConfigMap', name: 'settings' };
const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');

const liveConfigMap = {
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: {
    name: 'settings',
    namespace: 'ns1',
    uid: '5f0c-uid',
    resourceVersion: '4711',
    generation: 3,
    creationTimestamp: '2026-01-01T00:00:00Z',
    selfLink: '/api/v1/namespaces/ns1/configmaps/settings',
    managedFields: [{ manager: 'kubectl', operation: 'Update', fieldsV1: { 'f:data': {} } }],
    annotations: {
      'kubectl.kubernetes.io/last-applied-configuration': '{"data":{"GREETING":"hello"}}',
      'qontract.integration': 'openshift_resources',
    },
    labels: { app: 'example' },
  },
  data: { GREETING: 'hello', REPLICAS: '2' },
  status: { observed: true },
};

const desiredConfigMap = {
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: {
    name: 'settings',
    namespace: 'ns1',
    annotations: { 'qontract.integration': 'openshift_resources' },
    labels: { app: 'example' },
  },
  data: { GREETING: 'hello there', REPLICAS: '2' },
};

describe('renderObjectDiff', () => {
  it('a change: headers name cluster/namespace/kind/name, only the changed line differs', () => {
    const text = renderObjectDiff({ ...where, current: liveConfigMap, desired: desiredConfigMap });
    expect(text).toBe(
      [
        '--- live/c1/ns1/ConfigMap/settings',
        '+++ desired/c1/ns1/ConfigMap/settings',
        '@@ -1,6 +1,6 @@',
        ' apiVersion: v1',
        ' data:',
        '-  GREETING: hello',
        '+  GREETING: hello there',
        '   REPLICAS: "2"',
        ' kind: ConfigMap',
        ' metadata:',
      ].join('\n'),
    );
  });

  it('leaves out the fields the server owns', () => {
    const text = renderObjectDiff({ ...where, current: liveConfigMap });
    for (const field of [
      'managedFields',
      'resourceVersion',
      'uid',
      'creationTimestamp',
      'generation',
      'selfLink',
      'status',
      'last-applied-configuration',
      'kubectl',
    ]) {
      expect(text).not.toContain(field);
    }
    expect(text).toContain('-    qontract.integration: openshift_resources');
  });

  it('a desired object without metadata.namespace is shown in the namespace it is applied to', () => {
    const { namespace: _ns, ...metadata } = desiredConfigMap.metadata;
    const desired = { ...desiredConfigMap, metadata };
    const text = renderObjectDiff({ ...where, current: liveConfigMap, desired });
    expect(text).not.toMatch(/^[-+]\s+namespace:/m);
    expect(renderObjectDiff({ ...where, namespace: 'cluster', desired })).not.toContain(
      'namespace',
    );
  });

  it('both sides equal once server-owned fields are dropped: no diff', () => {
    const live = { ...liveConfigMap, data: desiredConfigMap.data };
    expect(renderObjectDiff({ ...where, current: live, desired: desiredConfigMap })).toBe('');
  });

  it('a creation shows the whole desired object added', () => {
    const text = renderObjectDiff({ ...where, desired: desiredConfigMap });
    const lines = text.split('\n');
    expect(lines.slice(0, 2)).toEqual(['--- /dev/null', '+++ desired/c1/ns1/ConfigMap/settings']);
    expect(lines[2]).toMatch(/^@@ -0,0 \+1,\d+ @@$/);
    expect(lines.slice(3).every((l) => l.startsWith('+'))).toBe(true);
    expect(lines).toContain('+  GREETING: hello there');
    expect(lines).toContain('+    app: example');
  });

  it('a deletion shows the whole current object removed', () => {
    const text = renderObjectDiff({ ...where, current: liveConfigMap });
    const lines = text.split('\n');
    expect(lines.slice(0, 2)).toEqual(['--- live/c1/ns1/ConfigMap/settings', '+++ /dev/null']);
    expect(lines[2]).toMatch(/^@@ -1,\d+ \+0,0 @@$/);
    expect(lines.slice(3).every((l) => l.startsWith('-'))).toBe(true);
    expect(lines).toContain('-  GREETING: hello');
  });

  describe('Secrets', () => {
    const secretWhere = { ...where, kind: 'Secret', name: 'creds' };
    const live = {
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'Opaque',
      metadata: {
        name: 'creds',
        namespace: 'ns1',
        annotations: {
          'kubectl.kubernetes.io/last-applied-configuration': `{"data":{"password":"${b64('old-s3cret')}"}}`,
        },
      },
      data: { password: b64('old-s3cret'), user: b64('admin'), gone: b64('bye-value') },
    };
    const desired = {
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'Opaque',
      metadata: {
        name: 'creds',
        namespace: 'ns1',
        annotations: { 'qontract.sha256sum': 'abc123' },
      },
      data: { password: b64('new-s3cret') },
      stringData: { user: 'admin', token: 'fresh-t0ken' },
    };
    const secrets = ['old-s3cret', 'new-s3cret', 'admin', 'bye-value', 'fresh-t0ken'];

    const assertNoSecret = (text: string) => {
      for (const s of secrets) {
        expect(text).not.toContain(s);
        expect(text).not.toContain(b64(s));
        expect(text).not.toContain(b64(s).replace(/=+$/, ''));
      }
    };

    it('a change: per key changed / unchanged / added / removed, never a value', () => {
      const text = renderObjectDiff({ ...secretWhere, current: live, desired });
      assertNoSecret(text);
      expect(text).toContain('--- live/c1/ns1/Secret/creds');
      expect(text).toContain('-  gone: "*** (removed)"');
      expect(text).toContain('-  password: "*** (old value)"');
      expect(text).toContain('+  password: "*** (changed)"');
      expect(text).toContain('+  token: "*** (added)"');
      // stringData is compared with the cluster's base64 data: `user` is the same value.
      expect(text).toContain('   user: "*** (unchanged)"');
      expect(text).not.toContain('stringData');
      // The body's hash could be used to guess a weak value: masked too.
      expect(text).not.toContain('abc123');
      expect(text).toContain('+    qontract.sha256sum: "*** (added)"');
    });

    it('equal values (one as data, one as stringData) give no diff', () => {
      const same = {
        ...desired,
        metadata: { name: 'creds', namespace: 'ns1' },
        data: { password: b64('old-s3cret'), gone: b64('bye-value') },
      };
      const current = { ...live, data: { ...live.data, token: b64('fresh-t0ken') } };
      expect(renderObjectDiff({ ...secretWhere, current, desired: same })).toBe('');
    });

    it('a creation and a deletion mask every key', () => {
      const created = renderObjectDiff({ ...secretWhere, desired });
      const deleted = renderObjectDiff({ ...secretWhere, current: live });
      assertNoSecret(created);
      assertNoSecret(deleted);
      expect(created).toContain('+  password: "*** (added)"');
      expect(created).toContain('+  user: "*** (added)"');
      expect(deleted).toContain('-  password: "*** (removed)"');
      expect(deleted).toContain('+++ /dev/null');
    });
  });
});
