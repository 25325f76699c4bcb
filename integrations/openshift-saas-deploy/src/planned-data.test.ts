import { describe, expect, it } from 'vitest';
import { resourcesUsedInPodSpec, validatePlannedNamespace } from './planned-data.ts';

const podSpec = {
  volumes: [
    { name: 'a', secret: { secretName: 'tls' } },
    { name: 'b', secret: { secretName: 'optional', optional: true } },
    { name: 'c', configMap: { name: 'settings' } },
  ],
  containers: [
    {
      name: 'app',
      envFrom: [{ secretRef: { name: 'env' } }, { configMapRef: { name: 'opt', optional: true } }],
      env: [
        { name: 'K', valueFrom: { secretKeyRef: { name: 'creds', key: 'password' } } },
        { name: 'L', valueFrom: { configMapKeyRef: { name: 'settings', key: 'level' } } },
        { name: 'M', value: 'plain' },
      ],
    },
  ],
  initContainers: [
    {
      name: 'init',
      env: [{ name: 'U', valueFrom: { secretKeyRef: { name: 'creds', key: 'user' } } }],
    },
  ],
};

const deployment = {
  kind: 'Deployment',
  name: 'app',
  body: { spec: { template: { spec: podSpec } } },
};

describe('resourcesUsedInPodSpec', () => {
  it('collects the non-optional references and the keys read', () => {
    expect(resourcesUsedInPodSpec(podSpec, 'Secret')).toEqual(
      new Map([
        ['tls', new Set()],
        ['env', new Set()],
        ['creds', new Set(['password', 'user'])],
      ]),
    );
    expect(resourcesUsedInPodSpec(podSpec, 'ConfigMap')).toEqual(
      new Map([['settings', new Set(['level'])]]),
    );
  });
});

describe('validatePlannedNamespace', () => {
  it('passes when everything is desired, served or on the cluster', async () => {
    const problems = await validatePlannedNamespace(
      'c',
      'ns',
      [
        deployment,
        { kind: 'ConfigMap', name: 'settings', body: { data: { level: 'info' } } },
        {
          kind: 'Service',
          name: 'svc',
          body: {
            metadata: {
              annotations: { 'service.beta.openshift.io/serving-cert-secret-name': 'tls' },
            },
          },
        },
      ],
      async (kind, name) =>
        kind === 'Secret' && name === 'env'
          ? { data: {} }
          : kind === 'Secret' && name === 'creds'
            ? { data: { password: 'x' }, stringData: { user: 'y' } }
            : undefined,
    );
    expect(problems).toEqual([]);
  });

  it('names what is missing, as the original words it', async () => {
    const problems = await validatePlannedNamespace('c', 'ns', [deployment], async (_, name) =>
      name === 'creds' ? { data: { password: 'x' } } : undefined,
    );
    expect(problems).toEqual([
      '[c/ns] [Deployment/app] Secret tls does not exist',
      '[c/ns] [Deployment/app] Secret env does not exist',
      "[c/ns] [Deployment/app] Secret creds does not contain keys: {'user'}",
      '[c/ns] [Deployment/app] ConfigMap settings does not exist',
    ]);
  });
});
