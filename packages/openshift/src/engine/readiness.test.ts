import { describe, expect, it } from 'vitest';
import { isReady } from './readiness.ts';
import { resourcesUsedInPodSpec } from './recycle.ts';

describe('isReady', () => {
  const deployment = (status: Record<string, unknown>, replicas = 2, generation = 3) => ({
    kind: 'Deployment',
    metadata: { name: 'd', generation },
    spec: { replicas },
    status,
  });
  it.each([
    [
      deployment({ observedGeneration: 3, replicas: 2, readyReplicas: 2, updatedReplicas: 2 }),
      true,
    ],
    [
      deployment({ observedGeneration: 2, replicas: 2, readyReplicas: 2, updatedReplicas: 2 }),
      false,
    ],
    [
      deployment({ observedGeneration: 3, replicas: 2, readyReplicas: 1, updatedReplicas: 2 }),
      false,
    ],
    [deployment({ observedGeneration: 3 }, 0), true],
    [
      {
        kind: 'DaemonSet',
        metadata: { generation: 1 },
        status: {
          observedGeneration: 1,
          desiredNumberScheduled: 3,
          numberReady: 3,
          updatedNumberScheduled: 3,
        },
      },
      true,
    ],
    [{ kind: 'Job', status: { succeeded: 1 } }, true],
    [{ kind: 'Job', status: {} }, false],
    [
      { kind: 'ClowdApp', status: { deployments: { managedDeployments: 2, readyDeployments: 2 } } },
      true,
    ],
    [
      { kind: 'ClowdApp', status: { deployments: { managedDeployments: 2, readyDeployments: 1 } } },
      false,
    ],
    [{ kind: 'ClowdApp', status: {} }, false],
    [{ kind: 'ClowdJobInvocation', status: { completed: false } }, false],
    [{ kind: 'ClowdJobInvocation', status: { completed: true, jobMap: { t: 'Complete' } } }, true],
  ])('decides readiness of %j', (obj, ready) => {
    expect(isReady(obj)).toBe(ready);
  });

  it('fails fast on a failed Job', () => {
    expect(() =>
      isReady({
        kind: 'Job',
        metadata: { name: 'j' },
        status: {
          conditions: [{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded' }],
        },
      }),
    ).toThrow('j: BackoffLimitExceeded');
  });
});

describe('resourcesUsedInPodSpec', () => {
  const spec = {
    volumes: [{ secret: { secretName: 's-vol' } }, { configMap: { name: 'cm-vol' } }],
    containers: [
      {
        envFrom: [{ secretRef: { name: 's-envfrom' } }],
        env: [
          { valueFrom: { secretKeyRef: { name: 's-key' } } },
          { valueFrom: { configMapKeyRef: { name: 'cm-key' } } },
        ],
      },
    ],
    initContainers: [{ envFrom: [{ configMapRef: { name: 'cm-init' } }] }],
  };
  it('finds Secrets and ConfigMaps in volumes, envFrom and keyRefs', () => {
    expect([...resourcesUsedInPodSpec(spec, 'Secret')].sort()).toEqual([
      's-envfrom',
      's-key',
      's-vol',
    ]);
    expect([...resourcesUsedInPodSpec(spec, 'ConfigMap')].sort()).toEqual([
      'cm-init',
      'cm-key',
      'cm-vol',
    ]);
  });
});
