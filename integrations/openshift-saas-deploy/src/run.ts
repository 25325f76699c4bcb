import { gqlClient } from '@qontract/app-interface';
import { errorMessage, QontractError, type RunContext } from '@qontract/core';
import {
  type ActionResult,
  clusterMapForNamespaces,
  type DesiredResource,
  isClusterProblem,
  OpenshiftResource,
  reconcileResources,
} from '@qontract/openshift';
import { collectImages, loadSaasFiles, type SaasFile, selectSaasFiles } from '@qontract/saas';
import { QONTRACT_INTEGRATION, QONTRACT_INTEGRATION_VERSION } from './constants.ts';
import {
  currentStateSpecs,
  gatherDesired,
  runFeatures,
  runScope,
  type SaasDesiredObject,
} from './desired.ts';
import { JobLogCollector } from './job-logs.ts';
import { deployNotifier, type NotifyOptions } from './notify.ts';
import {
  SaasherderSettingsDocument,
  type SaasherderSettingsQuery,
} from './openshift-saas-deploy.generated.ts';
import { writeTriggerOutputs } from './outputs.ts';
import { validatePlannedNamespace } from './planned-data.ts';
import { gatePromotions, lazyPromotionState, publishPromotions } from './promotions.ts';
import { runReaders } from './readers.ts';
import { desiredForTarget, type TargetOutcome } from './target.ts';

export interface SaasDeployOptions extends NotifyOptions {
  readonly threadPoolSize: number;
  readonly ioDir: string;
}

/** How long a rollout may take before it counts as failed (the original retries for hours). */
function rolloutTimeoutMs(ctx: RunContext): number {
  const s = Number(ctx.env.vars.QONTRACT_SAAS_DEPLOY_ROLLOUT_TIMEOUT_SECONDS ?? '');
  return (Number.isFinite(s) && s > 0 ? s : 1800) * 1000;
}

/**
 * How long an apply waits for its namespace to be created (openshift-namespaces
 * runs beside the deploy job): the original's `wait_for_namespace` tries 30
 * times, sleeping 1, 2, … 29 s between tries, about 435 s in all.
 */
function namespaceWaitMs(ctx: RunContext): number {
  const raw = ctx.env.vars.QONTRACT_SAAS_DEPLOY_NAMESPACE_WAIT_SECONDS;
  const s = raw ? Number(raw) : Number.NaN;
  return (Number.isFinite(s) && s >= 0 ? s : 435) * 1000;
}

function rolloutPollMs(ctx: RunContext): number {
  const s = Number(ctx.env.vars.QONTRACT_SAAS_DEPLOY_ROLLOUT_POLL_MS ?? '');
  return Number.isFinite(s) && s > 0 ? s : 5000;
}

/**
 * One run of openshift-saas-deploy (the original's `run`), in its order:
 * saas files → targets → current state and desired state (read together) →
 * promotion gates → planned-data validation → apply (caller rules) →
 * rollout → promotions published (one saas file, not in dry-run).
 */
export async function runSaasDeploy(ctx: RunContext, opts: SaasDeployOptions): Promise<void> {
  const gql = await ctx.client(gqlClient);
  const [allSaasFiles, { settings }] = await Promise.all([
    loadSaasFiles(gql),
    gql.query(SaasherderSettingsDocument),
  ]);
  const saasFiles = selectSaasFiles(allSaasFiles, {
    name: opts.saasFileName,
    envName: opts.envName,
  });
  if (saasFiles.length === 0) throw new QontractError('no saas files found');
  const slack = await deployNotifier(ctx, saasFiles, opts);
  await slack?.start();
  let completed = false;
  try {
    const deployed = await deploy(ctx, opts, saasFiles, allSaasFiles, settings?.[0]);
    // As the original: the events and outputs only after a deploy without any error.
    if (deployed && !ctx.errors.hasErrors) {
      await slack?.events(deployed.results);
      if (!ctx.dryRun && saasFiles.length === 1)
        await writeTriggerOutputs(ctx, saasFiles[0]!, { ...opts, images: deployed.images });
    }
    completed = true;
  } finally {
    // Also when the run throws: the owners hear of a failed deploy.
    await slack?.finish(completed && !ctx.errors.hasErrors);
    slack?.registerFailures();
  }
}

/**
 * The deploy itself: targets, current and desired state, gates, apply,
 * rollout, promotions. The applied actions and the images of the objects
 * (sorted), or undefined when it stopped before applying anything (no
 * target, refused promotions).
 */
async function deploy(
  ctx: RunContext,
  opts: SaasDeployOptions,
  saasFiles: readonly SaasFile[],
  allSaasFiles: readonly SaasFile[],
  appSettings: SaasherderSettings | undefined,
): Promise<{ results: readonly ActionResult[]; images: string[] } | undefined> {
  const notify = saasFiles.length === 1;
  const features = runFeatures(saasFiles);
  const { work, namespaces } = runScope(saasFiles, {
    hashLength: appSettings?.hashLength ?? 7,
    useChannelInImageTag: features.useChannelInImageTag,
  });
  if (namespaces.length === 0) {
    ctx.log.warn('no targets found');
    return undefined;
  }

  const clusters = await clusterMapForNamespaces(
    ctx,
    namespaces.map((ns) => ({
      cluster: ns.namespace.cluster,
      clusterAdmin: features.clusterAdmin,
    })),
    { concurrency: opts.threadPoolSize },
  );
  const readers = runReaders(ctx, {
    concurrency: opts.threadPoolSize,
    blockRules: (appSettings?.imagePatternsBlockRules ?? []).map((r) => ({
      environmentLabelSelector: parseSelector(r.environmentLabelSelector),
      imagePatterns: r.imagePatterns,
    })),
  });

  // Targets are built all at once, each failure failing only its target: the
  // readers' pools bound the requests per peer. A pool of targets would not:
  // targets of one saas file wait for one shared read, holding places
  // that other files' reads could use.
  const outcomes: (TargetOutcome & (typeof work)[number])[] = await Promise.all(
    work.map(async (w) => ({
      ...w,
      ...(await desiredForTarget(w, readers.forSaasFile(w.saasFile))),
    })),
  );
  for (const o of outcomes) {
    for (const p of o.problems)
      ctx.errors.register(`${o.saasFile.name}/${o.resourceTemplate.name}`, p);
  }
  const gathered = gatherDesired(outcomes, (l) => ctx.log.info(l));
  for (const p of gathered.problems) ctx.errors.register(p.scope, p.message);

  // The gate comes before anything is applied: a blocked promotion deploys nothing.
  const state = lazyPromotionState(ctx);
  const promotion = await gatePromotions(ctx, state, saasFiles, allSaasFiles, outcomes);
  if (!promotion.valid) {
    ctx.errors.register('promotions', 'invalid promotions');
    return undefined;
  }

  if (features.validatePlannedData) {
    await validatePlannedData(ctx, clusters, gathered.objects, features.clusterAdmin);
  }

  const desired = desiredResources(ctx, gathered.objects, features.clusterAdmin);
  const jobLogs =
    !ctx.dryRun && features.publishJobLogs
      ? new JobLogCollector(ctx, clusters, { ioDir: opts.ioDir, privileged: features.clusterAdmin })
      : undefined;

  const { results } = await reconcileResources({
    ctx,
    integration: QONTRACT_INTEGRATION,
    integrationVersion: QONTRACT_INTEGRATION_VERSION,
    clusters,
    specs: currentStateSpecs(namespaces, features.clusterAdmin),
    desired,
    takeOver: features.takeover,
    // `compare: false`: a wet run applies every object, unchanged ones too.
    skipCompare: !features.compare,
    caller: opts.saasFileName,
    // Every object of the namespace is read, other saas files' included: the
    // caller rules (not the read) keep them safe.
    filterCurrentByCaller: false,
    allCallers: allSaasFiles.filter((sf) => !sf.deprecated).map((sf) => sf.name),
    concurrency: opts.threadPoolSize,
    recyclePods: true,
    ...(ctx.dryRun
      ? {}
      : {
          waitForReady: { timeoutMs: rolloutTimeoutMs(ctx), pollMs: rolloutPollMs(ctx) },
          waitForNamespace: { timeoutMs: namespaceWaitMs(ctx), pollMs: rolloutPollMs(ctx) },
        }),
    ...(jobLogs ? { onWritten: (write) => jobLogs.written(write) } : {}),
  });
  // As the original: a job whose logs could not be collected is an error before the publish.
  await jobLogs?.done();

  if (notify) {
    await publishPromotions(ctx, state, promotion.targets, deployedAll(ctx, results));
  }
  const images = new Set(outcomes.flatMap((o) => o.objects.flatMap((d) => [...collectImages(d)])));
  return { results, images: [...images].sort() };
}

/** The engine's desired objects of the gathered ones; one that cannot be annotated is its target's error. */
function desiredResources(
  ctx: RunContext,
  objects: readonly SaasDesiredObject[],
  privileged: boolean,
): DesiredResource[] {
  const desired: DesiredResource[] = [];
  for (const o of objects) {
    try {
      desired.push({
        cluster: o.cluster,
        namespace: o.namespace,
        privileged,
        source: `${o.saasFile}/${o.resourceTemplate}`,
        resource: new OpenshiftResource(
          o.body,
          QONTRACT_INTEGRATION,
          QONTRACT_INTEGRATION_VERSION,
          {
            callerName: o.saasFile,
            errorDetails: o.name,
          },
        ),
      });
    } catch (e) {
      ctx.errors.register(
        `${o.cluster}/${o.namespace}`,
        `[${o.cluster}/${o.namespace}] ${o.kind}/${o.name} (saas file ${o.saasFile}): ${errorMessage(e)}`,
      );
    }
  }
  return desired;
}

/**
 * Whether the run deployed its commit: no error registered, not stopped, and
 * every apply written (and its rollout ready). A skipped apply deployed
 * nothing, so the commit never ran here and is not published with success.
 */
function deployedAll(ctx: RunContext, results: readonly ActionResult[]): boolean {
  return (
    !ctx.errors.hasErrors &&
    !ctx.signal.aborted &&
    results.every((r) => r.outcome !== 'skipped' || r.action.action === 'delete')
  );
}

type SaasherderSettings = NonNullable<SaasherderSettingsQuery['settings']>[number];

function parseSelector(value: unknown): Record<string, unknown> {
  const parsed = typeof value === 'string' ? (JSON.parse(value) as unknown) : value;
  return parsed !== null && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : {};
}

/** The planned-data check of every namespace, reading missing Secrets/ConfigMaps from the cluster. */
async function validatePlannedData(
  ctx: RunContext,
  clusters: Awaited<ReturnType<typeof clusterMapForNamespaces>>,
  objects: readonly SaasDesiredObject[],
  privileged: boolean,
): Promise<void> {
  const byNamespace = new Map<string, SaasDesiredObject[]>();
  for (const o of objects) {
    const key = `${o.cluster}/${o.namespace}`;
    const list = byNamespace.get(key) ?? [];
    byNamespace.set(key, list);
    list.push(o);
  }
  for (const [key, list] of byNamespace) {
    const { cluster, namespace } = list[0]!;
    const handle = clusters.get(cluster, privileged);
    if (isClusterProblem(handle)) continue;
    const problems = await validatePlannedNamespace(cluster, namespace, list, async (kind, name) =>
      handle.client.get(handle.catalog.get(kind), namespace, name),
    );
    for (const p of problems) ctx.errors.register(key, p);
  }
}
