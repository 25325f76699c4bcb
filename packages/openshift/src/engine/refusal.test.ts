import { describe, expect, it } from 'vitest';
import { type Recovery, type Refusal, recoveryFor } from './refusal.ts';

const IMMUTABLE = 'Service "x" is invalid: spec.selector: Invalid value: ...: field is immutable';

describe('recoveryFor', () => {
  it.each<[string, string, Refusal, string | undefined, Recovery]>([
    [
      'a missing namespace (Status details)',
      'ConfigMap',
      { status: 404, message: 'not found', details: { kind: 'namespaces', name: 'ns' } },
      'ns',
      'namespace-missing',
    ],
    [
      'a missing namespace (message)',
      'ConfigMap',
      { status: 404, message: 'namespaces "ns" not found' },
      'ns',
      'namespace-missing',
    ],
    [
      'another namespace missing is no recovery',
      'ConfigMap',
      { status: 404, message: 'namespaces "other" not found' },
      'ns',
      'none',
    ],
    [
      'a 404 of a cluster-scoped object',
      'ClusterRole',
      { status: 404, message: 'namespaces "ns" not found' },
      undefined,
      'none',
    ],
    ['a conflict', 'ConfigMap', { status: 409, message: 'conflict' }, 'ns', 'read-and-retry'],
    [
      'an immutable Deployment selector',
      'Deployment',
      { status: 422, message: 'spec.selector: field is immutable' },
      'ns',
      'recreate-deployment',
    ],
    [
      'a Deployment switched to Recreate that keeps its default rolling update',
      'Deployment',
      {
        status: 422,
        message:
          'Deployment.apps "op" is invalid: spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is \'Recreate\'',
      },
      'ns',
      'switch-to-recreate',
    ],
    ...(['Route', 'Service', 'Secret', 'Job'] as const).map(
      (kind): [string, string, Refusal, string, Recovery] => [
        `an immutable field of a ${kind}`,
        kind,
        { status: 422, message: IMMUTABLE },
        'ns',
        'delete-and-apply',
      ],
    ),
    [
      'an immutable field of a ConfigMap has no recovery',
      'ConfigMap',
      { status: 422, message: IMMUTABLE },
      'ns',
      'none',
    ],
    [
      'a Service clusterIP set once',
      'Service',
      { status: 422, message: 'spec.clusterIP: Invalid value: "": may not change once set' },
      'ns',
      'delete-and-apply',
    ],
    [
      'a Service primary clusterIP unset',
      'Service',
      { status: 422, message: 'spec.clusterIPs[0]: primary clusterIP can not be unset' },
      'ns',
      'delete-and-apply',
    ],
    [
      'a forbidden StatefulSet update',
      'StatefulSet',
      {
        status: 422,
        message: 'spec: Forbidden: updates to statefulset spec for fields other than ...',
      },
      'ns',
      'recreate-statefulset',
    ],
    [
      'the same message on another kind',
      'Deployment',
      { status: 422, message: 'updates to statefulset spec for fields other than ...' },
      'ns',
      'none',
    ],
    [
      'a body too large (413)',
      'ConfigMap',
      { status: 413, message: '' },
      'ns',
      'replace-or-create',
    ],
    [
      'an unsupported media type (415)',
      'ConfigMap',
      { status: 415, message: '' },
      'ns',
      'replace-or-create',
    ],
    [
      'a too-large message on another status',
      'ConfigMap',
      { status: 500, message: 'Request entity too large: limit is 3145728' },
      'ns',
      'replace-or-create',
    ],
    ['a forbidden write', 'ConfigMap', { status: 403, message: 'forbidden' }, 'ns', 'none'],
    ['an invalid object', 'ConfigMap', { status: 422, message: 'invalid' }, 'ns', 'none'],
  ])('%s', (_what, kind, refusal, namespace, expected) => {
    expect(recoveryFor(kind, refusal, namespace)).toBe(expected);
  });
});
