import { createRunGqlClient, gqlClient } from '@qontract/app-interface';
import { commonOptions, defineIntegration, QontractError } from '@qontract/core';
import { changedSaasTargets, loadSaasFiles } from '@qontract/saas';
import { runSaasDeploy } from './run.ts';

/**
 * The original's `openshift-saas-deploy-change-tester`, which merge-request
 * pipelines call by that name: the saas targets whose state differs between
 * the comparison bundle (the target branch) and this one, then
 * openshift-saas-deploy for each (saas file, environment) they belong to, in
 * this run (a dry-run in the MR check). Any error fails the run (exit 1).
 */
export const openshiftSaasDeployChangeTester = defineIntegration({
  name: 'openshift-saas-deploy-change-tester',
  version: '0.1.0',
  description: 'Runs openshift-saas-deploy for each saas-file that changed within a bundle.',
  options: {
    gitlabProjectId: { type: 'argument', describe: "the merge request's GitLab project id" },
    gitlabMergeRequestId: { type: 'argument', describe: 'the merge request id (iid)' },
    threadPoolSize: commonOptions.threadPoolSize(10),
    comparisonSha: { type: 'string', describe: 'bundle sha to compare to to find changes' },
  },
  run: async (ctx, opts) => {
    if (!opts.comparisonSha) {
      throw new QontractError('--comparison-sha is required: the bundle to find changes against');
    }
    // The comparison bundle is read without the schema check, as the original reads it.
    const comparison = await createRunGqlClient(
      { ...ctx, globals: { ...ctx.globals, validateSchemas: false } },
      { sha: opts.comparisonSha },
    );
    let before: Awaited<ReturnType<typeof loadSaasFiles>>;
    try {
      before = await loadSaasFiles(comparison);
    } finally {
      await comparison.close();
    }
    const after = await loadSaasFiles(await ctx.client(gqlClient));
    const pairs = changedSaasTargets(before, after).filter((p) => p.inHead);
    if (pairs.length === 0) {
      ctx.log.info(`no saas file target changed against bundle ${opts.comparisonSha}`);
      return;
    }
    const links = [...new Set(pairs.flatMap((p) => p.compareUrls))];
    if (links.length > 0) {
      // The body of the "Diffs:" comment the original writes on the merge request.
      ctx.log.info(`Diffs:\n${links.map((l) => `- ${l}`).join('\n')}`);
    }
    // One pair after the other in this run (the original runs them in threads): their
    // errors are this run's, so any failure ends it with exit 1, as the original's.
    for (const pair of pairs) {
      ctx.log.info(
        `openshift-saas-deploy --saas-file-name ${pair.saasFile} --env-name ${pair.environment}`,
      );
      try {
        await runSaasDeploy(ctx, {
          threadPoolSize: opts.threadPoolSize,
          ioDir: 'throughput/',
          saasFileName: pair.saasFile,
          envName: pair.environment,
        });
      } catch (e) {
        // An expected failure of one pair (the original's SystemExit of its run) fails only it.
        if (!(e instanceof QontractError)) throw e;
        ctx.errors.register(`${pair.saasFile}/${pair.environment}`, e);
      }
    }
  },
});
