import { describe, expect, it } from 'vitest';
import { tektonTriggerResource } from './pipeline-run.ts';

const input = {
  saasFileName: 'saas-app',
  envName: 'App-Stage',
  pipelineName: 'o-openshift-saas-deploy-saas-app',
  timeout: null,
  consoleUrl: 'https://console.c1.example.com',
  namespace: 'app-sre-pipelines',
  integration: 'openshift-saas-deploy-trigger-configs',
  includeTriggerTrace: false,
  reason: null,
  targetRef: 'main',
};

describe('tektonTriggerResource', () => {
  it("builds the original's PipelineRun: generateName, labels, annotations, params", () => {
    const run = tektonTriggerResource(input);
    expect(run.name).toBe('saas-app-app-stage');
    expect(run.dedupeKey).toBe('saas-app-app-stage');
    expect(run.body).toEqual({
      apiVersion: 'tekton.dev/v1',
      kind: 'PipelineRun',
      metadata: {
        generateName: 'saas-app-app-stage-',
        annotations: {
          'qontract.trigger_integration': 'openshift-saas-deploy-trigger-configs',
          'qontract.trigger_reason': '',
        },
        labels: {
          'qontract.saas_file_name': 'saas-app',
          'qontract.env_name': 'App-Stage',
          'qontract.target_ref': 'main',
        },
      },
      spec: {
        pipelineRef: { name: 'o-openshift-saas-deploy-saas-app' },
        params: [
          { name: 'saas_file_name', value: 'saas-app' },
          { name: 'env_name', value: 'App-Stage' },
          { name: 'tkn_cluster_console_url', value: 'https://console.c1.example.com' },
          { name: 'tkn_namespace_name', value: 'app-sre-pipelines' },
        ],
      },
    });
  });

  it('cuts the name to 56 characters but dedupes on the whole saas-file-env name', () => {
    const long = tektonTriggerResource({
      ...input,
      saasFileName: `saas-${'x'.repeat(45)}`,
      envName: 'production',
    });
    expect(long.name).toBe(`saas-${'x'.repeat(45)}-produ`);
    expect(long.dedupeKey).toBe(`saas-${'x'.repeat(45)}-production`);
  });

  it('adds the trace params and the timeouts; a timeout under an hour is refused', () => {
    const run = tektonTriggerResource({
      ...input,
      includeTriggerTrace: true,
      reason: 'https://gitlab/ai/commit/abc',
      timeout: '1h30m',
    });
    const spec = run.body.spec as { params: unknown[]; timeouts: unknown };
    expect(spec.params.slice(4)).toEqual([
      { name: 'trigger_integration', value: 'openshift-saas-deploy-trigger-configs' },
      { name: 'trigger_reason', value: 'https://gitlab/ai/commit/abc' },
    ]);
    expect(spec.timeouts).toEqual({ pipeline: '0', tasks: '1h30m' });
    expect(() => tektonTriggerResource({ ...input, timeout: '59m' })).toThrow(
      '[saas-app/App-Stage] timeout 59m is smaller than 60 minutes',
    );
    expect(() => tektonTriggerResource({ ...input, includeTriggerTrace: true })).toThrow(
      'reason must be provided if include_trigger_trace is True',
    );
  });
});
