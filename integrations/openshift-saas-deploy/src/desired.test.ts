import type { SaasFile, SaasNamespace, SaasTarget } from '@qontract/saas';
import { describe, expect, it } from 'vitest';
import { currentStateSpecs, gatherDesired, runFeatures, runScope } from './desired.ts';
import type { ManagedDocument } from './render.ts';

const ns = (cluster: string, name: string) =>
  ({
    name,
    cluster: { name: cluster },
    environment: { name: 'stage' },
  }) as unknown as SaasNamespace;

const target = (namespace: SaasNamespace, extra: Partial<SaasTarget> = {}) =>
  ({ name: null, namespace, ref: 'main', parameters: null, ...extra }) as unknown as SaasTarget;

function saasFile(name: string, targets: SaasTarget[], extra: Partial<SaasFile> = {}): SaasFile {
  return {
    name,
    managedResourceTypes: ['Deployment', 'Service'],
    managedResourceNames: null,
    resourceTemplates: [{ name: 'rt', url: 'https://github.com/o/r', path: '/t.yaml', targets }],
    ...extra,
  } as unknown as SaasFile;
}

const doc = (kind: string, name: string): ManagedDocument => ({
  apiVersion: 'v1',
  kind,
  metadata: { name },
});

describe('runFeatures', () => {
  it("takes the saas file's settings only when it is the run's only one", () => {
    const one = saasFile('a', [], { takeover: true, compare: false, clusterAdmin: true });
    expect(runFeatures([one])).toMatchObject({
      takeover: true,
      compare: false,
      clusterAdmin: true,
      validatePlannedData: true,
    });
    // Several saas files: compared (the original skips the compare then, on purpose not here).
    expect(runFeatures([one, saasFile('b', [])])).toEqual({
      takeover: false,
      compare: true,
      publishJobLogs: false,
      clusterAdmin: false,
      validatePlannedData: false,
      useChannelInImageTag: false,
    });
  });
});

describe('runScope and currentStateSpecs', () => {
  it('leaves disabled targets out and reads each (namespace, kind) once', () => {
    const a = saasFile('a', [target(ns('c1', 'n1')), target(ns('c1', 'n2'), { disable: true })], {
      managedResourceNames: [{ resource: 'Service', resourceNames: ['web'] }],
    } as Partial<SaasFile>);
    const b = saasFile('b', [target(ns('c1', 'n1'))], {
      managedResourceTypes: ['Deployment', 'ConfigMap'],
    } as Partial<SaasFile>);
    const { work, namespaces } = runScope([a, b], { hashLength: 7, useChannelInImageTag: false });
    expect(work.map((w) => `${w.saasFile.name}/${w.target.namespace.name}`)).toEqual([
      'a/n1',
      'b/n1',
    ]);
    expect(work[0]!.hashLength).toBe(7);
    expect(currentStateSpecs(namespaces, false)).toEqual([
      { cluster: 'c1', namespace: 'n1', kind: 'Deployment', privileged: false },
      {
        cluster: 'c1',
        namespace: 'n1',
        kind: 'Service',
        privileged: false,
        resourceNames: ['web'],
      },
      { cluster: 'c1', namespace: 'n1', kind: 'ConfigMap', privileged: false },
    ]);
  });
});

describe('gatherDesired', () => {
  it('skips names outside managedResourceNames and reports duplicates with the original words', () => {
    const a = saasFile('a', [], {
      managedResourceNames: [{ resource: 'Service', resourceNames: ['web'] }],
    } as Partial<SaasFile>);
    const t = target(ns('c1', 'n1'));
    const rt = a.resourceTemplates[0]!;
    const info: string[] = [];
    const { objects, problems } = gatherDesired(
      [
        {
          saasFile: a,
          resourceTemplate: rt,
          target: t,
          objects: [doc('Service', 'web'), doc('Service', 'other'), doc('Deployment', 'web')],
        },
        { saasFile: a, resourceTemplate: rt, target: t, objects: [doc('Deployment', 'web')] },
      ],
      (l) => info.push(l),
    );
    expect(objects.map((o) => `${o.kind}/${o.name}`)).toEqual(['Service/web', 'Deployment/web']);
    expect(info).toEqual([
      '[c1/n1] desired item not managed, skipping: Service/other. saas file name: a, resource template name: rt.',
    ]);
    expect(problems).toEqual([
      {
        scope: 'c1/n1',
        message:
          '[c1/n1] Duplicate resources in your deployment template detected. The following is defined multiple times in your deployment template: Deployment/web. saas file name: a, resource template name: rt.',
      },
    ]);
  });
});
