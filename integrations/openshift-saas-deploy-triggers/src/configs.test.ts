import { pyJsonDumps } from '@qontract/pycompat';
import { resolveSaasFiles, targetConfigStateModel } from '@qontract/saas';
import { rawNamespace, rawSaasFile, rawSloDocument, rawTarget } from '@qontract/saas/test-support';
import { describe, expect, it } from 'vitest';
import type { TriggerRun } from './base.ts';
import { configChanged, configSpec, configsTrigger } from './configs.ts';

const stage = rawNamespace('app-stage', { cluster: 'c1', env: 'stage' });
const raw = rawSaasFile(
  'saas-app',
  [
    rawTarget({
      namespace: stage,
      ref: 'main',
      parameters: JSON.stringify({ REPLICAS: 1 }),
      promotion: {
        auto: true,
        publish: null,
        subscribe: ['stage-deployed'],
        redeployOnPublisherConfigChange: null,
        soakDays: null,
        schedule: null,
        promotion_data: null,
      },
    }),
    rawTarget({ namespace: stage, name: 'canary', ref: 'main' }),
  ],
  { parameters: JSON.stringify({ IMAGE: 'quay.io/org/app' }) },
);
const [saasFile] = resolveSaasFiles([raw], [stage]);
const rt = saasFile!.resourceTemplates[0]!;

describe('the configs trigger spec', () => {
  it("has the original's state key: <saas>/<rt>/<cluster>/<namespace>/<env>[/<target name>]", () => {
    expect(configSpec(saasFile!, rt, rt.targets[0]!, undefined).stateKey).toBe(
      'saas-app/rt/c1/app-stage/stage',
    );
    expect(configSpec(saasFile!, rt, rt.targets[1]!, undefined).stateKey).toBe(
      'saas-app/rt/c1/app-stage/stage/canary',
    );
  });

  it('stores the JSON text the original writes (json.dumps, sort_keys)', () => {
    const spec = configSpec(saasFile!, rt, rt.targets[0]!, undefined);
    // Written from _build_trigger_spec_config_state_content: every field, unset ones null.
    expect(pyJsonDumps(spec.stateContent, { sortKeys: true, model: targetConfigStateModel })).toBe(
      '{"delete": null, "disable": null, "images": null, "name": null, ' +
        '"namespace": {"app": {"name": "app"}, "cluster": {"name": "c1", "serverUrl": "https://c1.example.com"}, "name": "app-stage"}, ' +
        '"parameters": "{\\"REPLICAS\\":1}", "path": "/openshift/template.yaml", ' +
        '"promotion": {"auto": true, "promotion_data": null, "publish": null, "redeployOnPublisherConfigChange": null, "schedule": null, "soakDays": null, "subscribe": ["stage-deployed"]}, ' +
        '"ref": "main", "rt_parameters": null, "saas_file_managed_resource_types": ["Deployment"], ' +
        '"saas_file_parameters": "{\\"IMAGE\\":\\"quay.io/org/app\\"}", "secretParameters": null, ' +
        '"slos": null, "upstream": null, "url": "https://github.com/org/app"}',
    );
    expect(spec.targetRef).toBe('main');
    expect(spec.reason).toBeNull();
  });

  it('names the bundle commit as the reason, [auto-promotion] for auto targets', () => {
    const trace = { repoUrl: 'https://gitlab.example.com/app-interface', bundleCommit: 'abc123' };
    expect(configSpec(saasFile!, rt, rt.targets[0]!, trace).reason).toBe(
      'https://gitlab.example.com/app-interface/commit/abc123 [auto-promotion]',
    );
    expect(configSpec(saasFile!, rt, rt.targets[1]!, trace).reason).toBe(
      'https://gitlab.example.com/app-interface/commit/abc123',
    );
  });
});

describe('configChanged', () => {
  const desired = configSpec(saasFile!, rt, rt.targets[0]!, undefined).stateContent;
  const stored = JSON.parse(pyJsonDumps(desired)) as Record<string, unknown>;

  it('is false for what was stored, whatever nulls the stored or desired one has', () => {
    expect(configChanged(stored, desired)).toBe(false);
    const { images: _, upstream: __, ...older } = stored;
    expect(configChanged({ ...older, newField: null }, desired)).toBe(false);
  });

  it('is true for a new target and for a changed field', () => {
    expect(configChanged(null, desired)).toBe(true);
    expect(configChanged({ ...stored, ref: 'other' }, desired)).toBe(true);
    expect(configChanged({ ...stored, parameters: '{"REPLICAS":2}' }, desired)).toBe(true);
  });
});

describe('the SLO gate of the configs trigger', () => {
  const HOTFIX = 'c'.repeat(40);
  const slo = rawSloDocument('example-slos');
  const withSlos = rawSaasFile(
    'saas-slo',
    [rawTarget({ namespace: stage, ref: HOTFIX, slos: [slo] })],
    {
      app: {
        ...raw.app,
        codeComponents: [
          { url: 'https://github.com/org/app', blockedVersions: null, hotfixVersions: [HOTFIX] },
        ],
      },
    },
  );
  const [hotfixFile] = resolveSaasFiles([withSlos], [stage]);
  const hotfixRt = hotfixFile!.resourceTemplates[0]!;

  it('lets a hotfix ref and targets without SLOs through without asking Prometheus', async () => {
    const specs = [
      configSpec(hotfixFile!, hotfixRt, hotfixRt.targets[0]!, undefined),
      configSpec(saasFile!, rt, rt.targets[1]!, undefined),
    ];
    expect(specs[0]?.slos).toHaveLength(1);
    // No RunContext: any Prometheus read would throw.
    const run = { saasFiles: [hotfixFile!, saasFile!], threadPoolSize: 1 } as unknown as TriggerRun;
    await expect(configsTrigger.gate?.(specs, run)).resolves.toEqual(specs);
  });
});
