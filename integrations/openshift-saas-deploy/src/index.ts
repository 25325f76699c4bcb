import { commonOptions, defineIntegration } from '@qontract/core';
import { QONTRACT_INTEGRATION_VERSION } from './constants.ts';
import { runSaasDeploy } from './run.ts';

/**
 * Deploys the targets of saas files: each target's ref resolved to a commit
 * in GitHub or GitLab, its OpenShift template (or directory) fetched at that
 * commit and processed with the target's parameters, images validated, the
 * promotion gates checked, then applied through the engine with the saas file
 * as caller, rolled out and, for a single saas file, promotions published.
 */
export const openshiftSaasDeploy = defineIntegration({
  name: 'openshift-saas-deploy',
  version: QONTRACT_INTEGRATION_VERSION,
  description: 'Manage OpenShift resources defined in Saas files.',
  options: {
    threadPoolSize: commonOptions.threadPoolSize(10),
    ioDir: {
      type: 'string',
      default: 'throughput/',
      env: 'IO_DIR',
      describe: 'directory of the job log files and trigger outputs',
    },
    saasFileName: { type: 'string', describe: 'saas-file to act on.' },
    envName: { type: 'string', describe: 'environment to deploy to.' },
    grafanaSaasDeployUrl: { type: 'string', describe: 'Grafana dashboard URL' },
    pipelinerunName: {
      type: 'string',
      describe: 'Tekton PipelineRun name for Grafana log links.',
    },
    triggerIntegration: {
      type: 'string',
      describe: 'integration that triggered this run (for notifications)',
    },
    triggerReason: {
      type: 'string',
      describe: 'why this run was triggered (for notifications)',
    },
  },
  run: (ctx, opts) => runSaasDeploy(ctx, opts),
});
export { openshiftSaasDeployChangeTester } from './change-tester.ts';
