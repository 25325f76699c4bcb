import { randomUUID } from 'node:crypto';
import { gqlClient } from '@qontract/app-interface';
import {
  commonOptions,
  defineIntegration,
  errorMessage,
  executeActions,
  QontractError,
  type RunContext,
  unleashToggles,
} from '@qontract/core';
import { type GitlabApi, type GitlabMergeRequest, gitlabApi } from '@qontract/gitlab';
import {
  isCommitSha,
  loadSaasFiles,
  PromotionState,
  repoSourcesForRun,
  sloCheckerForRun,
} from '@qontract/saas';
import pLimit from 'p-limit';
import { type Addition, Reason, type ReasonName, reconcileBatches } from './batcher.ts';
import {
  buildInventory,
  computeDesiredState,
  deploymentInfo,
  hasDiff,
  type Inventory,
  type Publisher,
  type Subscriber,
} from './inventory.ts';
import {
  desiredState,
  parseMergeRequests,
  renderDescription,
  renderTitle,
  SAPM_LABEL,
  SAPM_MR_LABELS,
} from './merge-requests.ts';
import { sapmMetrics } from './metrics.ts';
import { renderMergeRequestContent } from './render.ts';
import { SaasAutoPromotionsManagerSettingsDocument } from './saas-auto-promotions-manager.generated.ts';

const QONTRACT_INTEGRATION = 'saas-auto-promotions-manager';
const QONTRACT_INTEGRATION_VERSION = '2.3.0';
/** Whose state holds the promotion records (`promotions_v2/...`). */
const OPENSHIFT_SAAS_DEPLOY = 'openshift-saas-deploy';

interface Closing {
  readonly mr: GitlabMergeRequest;
  readonly comment: string;
  /** The batcher's reason (counted in `sapm_closed_mrs`), none for a broken MR. */
  readonly reason?: ReasonName;
}

interface Opening {
  readonly title: string;
  readonly description: string;
  readonly contentByPath: ReadonlyMap<string, string>;
  readonly addition: Addition;
}

/** Each publisher's commit sha and, per channel, the deployment its promotion record describes. */
async function fetchPublisherStates(
  ctx: RunContext,
  publishers: readonly Publisher[],
  concurrency: number,
): Promise<void> {
  const state = new PromotionState(await ctx.state(OPENSHIFT_SAAS_DEPLOY));
  const limit = pLimit(Math.max(1, concurrency));
  await Promise.all(
    publishers.map((p) =>
      limit(async () => {
        p.commitSha = isCommitSha(p.ref)
          ? p.ref
          : await repoSourcesForRun(ctx, { codeAuth: p.codeAuth }).resolveRef(p.repoUrl, p.ref);
        for (const channel of p.channels) {
          const record = await state.getPromotion(channel, p.uid, p.commitSha);
          p.deploymentByChannel.set(
            channel,
            record
              ? deploymentInfo(record, `promotions_v2/${channel}/${p.uid}/${p.commitSha}`)
              : null,
          );
        }
      }),
    ),
  );
}

/** The app-interface repository on GitLab: the instance's client and the project's path. */
async function appInterfaceProject(ctx: RunContext): Promise<{ api: GitlabApi; project: string }> {
  const gql = await ctx.client(gqlClient);
  const { settings, instances } = await gql.query(SaasAutoPromotionsManagerSettingsDocument);
  const repoUrl = settings?.length === 1 ? settings[0]?.repoUrl : undefined;
  if (!repoUrl) throw new QontractError('app-interface settings: repoUrl not uniquely defined');
  const instance = instances?.[0];
  if (!instance) throw new QontractError('no GitLab instance (gitlabinstance_v1) in app-interface');
  const base = instance.url.replace(/\/+$/, '');
  if (!repoUrl.startsWith(`${base}/`)) {
    throw new QontractError(
      `app-interface settings: repoUrl ${repoUrl} is not on the GitLab instance ${base}`,
    );
  }
  const project = repoUrl
    .slice(base.length + 1)
    .replace(/\/+$/, '')
    .replace(/\.git$/, '');
  return { api: await gitlabApi(ctx, { ...instance, url: base }), project };
}

/**
 * The files an addition changes, each subscriber's edit applied in turn; none
 * when one of them is gone from the repository (qontract-server not yet in sync).
 */
async function renderContent(
  ctx: RunContext,
  read: (path: string) => Promise<string>,
  subscribers: readonly Subscriber[],
): Promise<Map<string, string> | undefined> {
  const content = new Map<string, string>();
  for (const s of subscribers) {
    let current = content.get(s.targetFilePath);
    if (current === undefined) {
      try {
        current = await read(s.targetFilePath);
      } catch (e) {
        if (!(e instanceof Error && e.name === 'GitlabNotFoundError')) throw e;
        ctx.log.error(
          `The saas file ${s.targetFilePath} does not exist anylonger. Most likely qontract-server data not in synch. This should resolve soon on its own.`,
        );
        return undefined;
      }
    }
    content.set(s.targetFilePath, renderMergeRequestContent(s, current));
  }
  return content;
}

/** The original's publisher-data.json: each publisher's commit and how its deployment went. */
function publisherData(publishers: readonly Publisher[]): Record<string, unknown> {
  const data: Record<string, unknown> = {};
  for (const p of publishers) {
    const infos = [...p.deploymentByChannel.values()];
    const state = infos.some((i) => i && !i.success)
      ? 'failed'
      : infos.some((i) => !i)
        ? 'missing'
        : 'success';
    // redeploy_on_config_change marks a test job; Python prints the bool as True/False.
    const key = [
      p.appName,
      p.saasName,
      p.resourceTemplateName,
      p.targetName,
      p.clusterName,
      p.namespaceName,
      p.redeployOnConfigChange ? 'True' : 'False',
    ].join('/');
    data[key] = { commit_sha: p.commitSha, deployment_state: state };
  }
  return data;
}

/**
 * The original's `saas-auto-promotions-manager`: reads what the publishers
 * deployed from openshift-saas-deploy's promotion records, computes each
 * auto-promoted subscriber's ref and config hashes, and opens, batches and
 * closes the SAPM merge requests of the app-interface repository that bump
 * them. Dry-run reads everything and writes nothing.
 */
export const saasAutoPromotionsManager = defineIntegration({
  name: QONTRACT_INTEGRATION,
  version: QONTRACT_INTEGRATION_VERSION,
  description: 'Manage auto-promotions defined in SaaS files',
  options: {
    threadPoolSize: commonOptions.threadPoolSize(),
    envName: { type: 'string', describe: 'environment to filter saas files by' },
    appName: { type: 'string', describe: 'app to filter saas files by.' },
  },
  run: async (ctx, opts) => {
    const gql = await ctx.client(gqlClient);
    const saasFiles = await loadSaasFiles(gql, { envName: opts.envName, appName: opts.appName });
    const inventory: Inventory = buildInventory(saasFiles, ctx.log);
    await fetchPublisherStates(ctx, inventory.publishers, opts.threadPoolSize);
    const now = new Date();
    const slos = sloCheckerForRun(ctx, { concurrency: opts.threadPoolSize });
    for (const s of inventory.subscribers) {
      await computeDesiredState(s, now, ctx.log, (docs) => slos.breachedSlos(docs));
    }
    const withDiff = inventory.subscribers.filter(hasDiff);

    const { api, project } = await appInterfaceProject(ctx);
    const sapmMrs = (await api.listOpenMergeRequests(project)).filter((m) =>
      m.labels.includes(SAPM_LABEL),
    );
    const parsed = await parseMergeRequests(
      sapmMrs,
      async (mr) => (await api.mergeRequestPipelineStatuses(project, mr.iid))[0] === 'failed',
    );
    const desired = desiredState(withDiff);
    const diff = reconcileBatches(desired.promotions, parsed.open);
    const metrics = sapmMetrics(ctx.metrics.registry);
    metrics.parallelOpen(parsed.open.length - diff.deletions.length + diff.additions.length);

    const toggles = unleashToggles(ctx.env.vars);
    const [allowDeleting, allowOpening] = await Promise.all([
      toggles.isEnabled(`${QONTRACT_INTEGRATION}-allow-deleting-mrs`, {}, false),
      toggles.isEnabled(`${QONTRACT_INTEGRATION}-allow-opening-mrs`, {}, false),
    ]);

    for (const c of parsed.close) ctx.log.info(c.log);
    const closings: Closing[] = [
      ...parsed.close.map((c) => ({ mr: c.mr, comment: c.comment })),
      ...diff.deletions.map((d) => ({ mr: d.mr.raw, comment: Reason[d.reason], reason: d.reason })),
    ];
    for (const d of diff.deletions) metrics.closed(d.reason);
    // Closed first: a new MR of the same title is refused while the old one is open.
    await executeActions(ctx, closings, {
      name: () => 'close_merge_request',
      describe: (c) => `closing ${c.mr.webUrl}: ${c.comment}`,
      destructive: () => false,
      execute: async (c) => {
        if (!allowDeleting) {
          ctx.log.info('Deleting MRs is disabled. Skipping.');
          return 'skipped';
        }
        await api.addMergeRequestNote(project, c.mr.iid, c.comment);
        await api.closeMergeRequest(project, c.mr.iid);
        await api.deleteBranch(project, c.mr.sourceBranch);
        return undefined;
      },
      failure: (c, e) => ({
        scope: QONTRACT_INTEGRATION,
        message: `closing merge request ${c.mr.webUrl}: ${errorMessage(e)}`,
      }),
      planEntry: (c) => ({ action: 'close', mr: c.mr.webUrl, comment: c.comment }),
    });

    const mainBranch = await api.defaultBranch(project);
    const read = (path: string) =>
      api.getFile(
        project,
        path.startsWith('data') ? path : `data/${path.replace(/^\/+/, '')}`,
        mainBranch,
      );
    const openings: Opening[] = [];
    for (const addition of diff.additions) {
      metrics.opened(addition.batchable, addition.contentHashes.size);
      const subs = [...addition.contentHashes].flatMap(
        (h) => desired.subscribersByContentHash.get(h) ?? [],
      );
      const contentByPath = await renderContent(ctx, read, subs);
      if (!contentByPath) continue;
      const channels = [...addition.channels].join(',');
      ctx.log.info(`Open MR for update in channel(s) ${channels}`);
      openings.push({
        title: renderTitle(channels, addition.contentHashes.size),
        description: renderDescription(
          [...addition.contentHashes].join(','),
          channels,
          addition.batchable,
        ),
        contentByPath,
        addition,
      });
    }
    await executeActions(
      ctx,
      openings,
      {
        name: () => 'open_merge_request',
        describe: (o) =>
          `opening merge request '${o.title}' (${[...o.contentByPath.keys()].join(', ')})`,
        destructive: () => false,
        execute: (o) => openMergeRequest(ctx, api, project, mainBranch, o, allowOpening),
        failure: (o, e) => ({
          scope: QONTRACT_INTEGRATION,
          message: `opening merge request '${o.title}': ${errorMessage(e)}`,
        }),
        planEntry: (o) => ({ action: 'open', title: o.title, files: [...o.contentByPath.keys()] }),
      },
      { concurrency: 1 },
    );

    await executeActions(ctx, [publisherData(inventory.publishers)], {
      name: () => 'export_publisher_data',
      sideEffect: true,
      describe: () => 'writing publisher-data.json',
      destructive: () => false,
      execute: async (data) =>
        (await ctx.state()).add('publisher-data.json', data, { force: true }),
      failure: (_d, e) => ({
        scope: QONTRACT_INTEGRATION,
        message: `writing publisher-data.json: ${errorMessage(e)}`,
      }),
    });
  },
});

/**
 * The original's MergeRequestBase.submit_to_gitlab: a fresh `SAPM-xxxxxx`
 * branch, one commit with every file, then the MR. An MR of that title
 * already open, or no change against the main branch, cancels it (the
 * branch removed); a failure removes the branch and fails the action.
 */
async function openMergeRequest(
  ctx: RunContext,
  api: GitlabApi,
  project: string,
  mainBranch: string,
  o: Opening,
  allowed: boolean,
): Promise<'skipped' | undefined> {
  if (!allowed) {
    ctx.log.info('Creating MRs is disabled. Skipping.');
    return 'skipped';
  }
  const branch = `SAPM-${randomUUID().slice(0, 6)}`;
  if ((await api.listOpenMergeRequests(project)).some((m) => m.title === o.title)) {
    ctx.log.info(
      `SAPM MR canceled for branch ${branch}. Reason: MR with the same name '${o.title}' already exists. Aborting MR creation.`,
    );
    return 'skipped';
  }
  await api.createBranch(project, branch, mainBranch);
  try {
    await api.commitFiles(
      project,
      branch,
      'auto-promote subscriber',
      [...o.contentByPath].map(([path, content]) => ({
        action: 'update' as const,
        filePath: `data${path}`,
        content,
      })),
    );
    if (!(await api.hasChanges(project, mainBranch, branch))) {
      await api.deleteBranch(project, branch);
      ctx.log.info(
        `SAPM MR canceled for branch ${branch}. Reason: No changes when compared to ${mainBranch}. Aborting MR creation.`,
      );
      return 'skipped';
    }
    await api.createMergeRequest(project, {
      sourceBranch: branch,
      targetBranch: mainBranch,
      title: o.title,
      description: o.description,
      labels: SAPM_MR_LABELS,
      removeSourceBranch: true,
    });
    return undefined;
  } catch (e) {
    await api.deleteBranch(project, branch).catch((d: unknown) => {
      ctx.log.error(`Failed to delete branch ${branch}. Reason: ${errorMessage(d)}`);
    });
    throw e;
  }
}
