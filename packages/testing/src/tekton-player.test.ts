import { describe, expect, it } from 'vitest';
import { tektonCommands } from './tekton-player.ts';

const pipeline = {
  spec: {
    tasks: [
      {
        name: 'deploy',
        taskRef: { name: 'o-deploy-saas' },
        params: [
          { name: 'saas_file_name', value: '$(params.saas_file_name)' },
          { name: 'env_name', value: '$(params.env_name)' },
        ],
      },
    ],
    finally: [{ name: 'status', taskRef: { name: 'o-status' } }],
  },
};
const task = {
  spec: {
    steps: [
      { name: 'config', args: ['echo "$(CONFIG_TOML)" | base64 -d > config.toml'] },
      {
        name: 'qontract-reconcile',
        args: [
          'qontract-reconcile --config config.toml openshift-saas-deploy\n--saas-file-name $(params.saas_file_name) --env-name $(params.env_name)',
        ],
      },
    ],
  },
};
const run = (params: Array<{ name: string; value: string }>) => ({
  metadata: { name: 'saas-stage-abcde' },
  spec: { pipelineRef: { name: 'o-pipeline' }, params },
});
const objects: Record<string, Record<string, unknown>> = {
  'Pipeline/o-pipeline': pipeline,
  'Task/o-deploy-saas': task,
};
const read = (kind: string, name: string) => objects[`${kind}/${name}`];

describe('tektonCommands: what Tekton would run for a PipelineRun', () => {
  it("resolves the run's params through the Pipeline's task params into the step's command line", () => {
    expect(
      tektonCommands(
        run([
          { name: 'saas_file_name', value: 'saas-a' },
          { name: 'env_name', value: 'stage' },
        ]),
        read,
      ),
    ).toEqual([
      {
        task: 'deploy',
        argv: ['openshift-saas-deploy', '--saas-file-name', 'saas-a', '--env-name', 'stage'],
      },
    ]);
  });

  it('names what is missing instead of guessing', () => {
    expect(() => tektonCommands(run([{ name: 'saas_file_name', value: 'a' }]), read)).toThrow(
      'Pipeline o-pipeline: no value for $(params.env_name)',
    );
    expect(() =>
      tektonCommands({ metadata: { name: 'r' }, spec: { pipelineRef: { name: 'gone' } } }, read),
    ).toThrow('PipelineRun r: Pipeline gone not found');
  });
});
