/**
 * The trigger framework (the original's `openshift_saas_deploy_trigger_base`
 * and the trigger parts of `SaasHerder`): one place for the run rules every
 * trigger type shares. A trigger type is one file: how to compute the specs
 * of a saas file that must be deployed (`TriggerType.diff`), each with the
 * state key and content that record it as deployed.
 */
import { gqlClient } from '@qontract/app-interface';
import { errorMessage, executeActions, QontractError, type RunContext } from '@qontract/core';
import {
  type ClusterMap,
  clusterMapForNamespaces,
  isClusterProblem,
  OpenshiftResource,
  pyRepr,
} from '@qontract/openshift';
import {
  loadSaasFiles,
  repoSourcesForRun,
  requestPool,
  type SaasFile,
  type SaasResourceTemplate,
  type SaasTarget,
  type SloDocument,
  targetConfigStateModel,
  tektonPipelineName,
} from '@qontract/saas';
import pLimit from 'p-limit';
import { type PipelineRun, tektonTriggerResource } from './pipeline-run.ts';
import { TriggerSettingsDocument } from './triggers.generated.ts';

type PipelinesProvider = SaasFile['pipelinesProvider'];
type TektonProvider = Extract<PipelinesProvider, { namespace: unknown }>;

/** What a trigger type asks to deploy: one target (or one of its refs, images, jobs). */
export interface TriggerSpec {
  readonly saasFileName: string;
  readonly envName: string;
  readonly timeout: string | null;
  readonly pipelinesProvider: PipelinesProvider;
  readonly resourceTemplateName: string;
  readonly clusterName: string;
  readonly namespaceName: string;
  /** Under `state/<integration>/`: the original's key, so both share a bucket. */
  readonly stateKey: string;
  /** Written (force) once the PipelineRun is created: the original's JSON, to the byte. */
  readonly stateContent: unknown;
  /** Why (`--include-trigger-trace`): the annotation and the deploy's `--trigger-reason`. */
  readonly reason: string | null;
  /** The `qontract.target_ref` label: the target's ref or the commit it resolved to. */
  readonly targetRef: string;
  /** The configs trigger's: the resource template's url (hotfix versions are looked up by it). */
  readonly resourceTemplateUrl?: string;
  /** The configs trigger's: the target's SLO documents (its SLO gate). */
  readonly slos?: readonly SloDocument[] | null;
}

/** The fields of a spec that its target gives, whatever the trigger type. */
export function targetSpec(
  saasFile: SaasFile,
  rt: SaasResourceTemplate,
  target: SaasTarget,
): Omit<TriggerSpec, 'stateKey' | 'stateContent' | 'reason' | 'targetRef'> & {
  /** `<saas file>/<rt>/<cluster>/<namespace>/<env>`: every type's state key starts so. */
  readonly keyPrefix: string;
} {
  const ns = target.namespace;
  return {
    saasFileName: saasFile.name,
    envName: ns.environment.name,
    timeout: saasFile.timeout,
    pipelinesProvider: saasFile.pipelinesProvider,
    resourceTemplateName: rt.name,
    clusterName: ns.cluster.name,
    namespaceName: ns.name,
    keyPrefix: `${saasFile.name}/${rt.name}/${ns.cluster.name}/${ns.name}/${ns.environment.name}`,
  };
}

/** What a trigger type may use while computing its specs. */
export interface TriggerRun {
  readonly ctx: RunContext;
  /** `--thread-pool-size`. */
  readonly threadPoolSize: number;
  /** The saas files of this shard (hotfix versions of their apps' code components). */
  readonly saasFiles: readonly SaasFile[];
  readonly includeTriggerTrace: boolean;
  /** app-interface settings: `repoUrl`, `hashLength`. */
  readonly settings: { readonly repoUrl: string; readonly hashLength: number };
  /** The commit of the app-interface bundle the run reads (`None` when unknown, as the original). */
  readonly bundleCommit: string;
  /** A ref of a GitHub/GitLab repository as a commit sha (the saas file's code credentials). */
  resolveRef(saasFile: SaasFile, url: string, ref: string): Promise<string>;
  /** The stored content of a key; null when there is none. */
  stored(key: string): Promise<unknown>;
  /** Stores a spec's state without a trigger (a first sight): a side effect, never in dry-run. */
  store(spec: TriggerSpec): Promise<void>;
  /**
   * A moving-commits / images spec: false when it is what is stored; the
   * first time a target is seen, its value is stored without a trigger (the
   * configs trigger deploys new targets), never in dry-run, and false.
   */
  changedSinceStored(spec: TriggerSpec): Promise<boolean>;
}

export interface TriggerType {
  /** The integration name: its state prefix and the `qontract.trigger_integration` annotation. */
  readonly integration: string;
  /** The specs of one saas file to trigger (compared with the state already). */
  diff(saasFile: SaasFile, run: TriggerRun): Promise<readonly TriggerSpec[]>;
  /**
   * The specs of every saas file that may go on (the configs trigger's SLO
   * gate); a failure fails the run before anything is triggered.
   */
  gate?(specs: readonly TriggerSpec[], run: TriggerRun): Promise<readonly TriggerSpec[]>;
}

export interface TriggerOptions {
  readonly threadPoolSize: number;
  readonly internal?: boolean | undefined;
  readonly includeTriggerTrace: boolean;
}

/** The saas files of this shard, without their disabled targets (the original's `setup`). */
function shardSaasFiles(ctx: RunContext, saasFiles: readonly SaasFile[]): SaasFile[] {
  if (saasFiles.length === 0) throw new QontractError('no saas files found');
  return saasFiles
    .filter((sf) => ctx.isInShard(sf.name))
    .map((sf) => ({
      ...sf,
      resourceTemplates: sf.resourceTemplates.map((rt) => ({
        ...rt,
        targets: rt.targets.filter((t) => !t.disable),
      })),
    }));
}

function tektonProviders(saasFiles: readonly SaasFile[]): TektonProvider[] {
  const byName = new Map<string, TektonProvider>();
  for (const sf of saasFiles) {
    const p = sf.pipelinesProvider;
    if ('namespace' in p && !byName.has(p.name)) byName.set(p.name, p);
  }
  return [...byName.values()];
}

/** One PipelineRun to create and the specs it deploys (several when they share saas file and env). */
interface TriggerAction {
  readonly cluster: string;
  readonly namespace: string;
  readonly run: PipelineRun;
  readonly specs: TriggerSpec[];
}

/** The state records of a run: side effects, written only in a wet run, after their trigger. */
function stateWrites(ctx: RunContext, state: () => ReturnType<RunContext['state']>) {
  return (specs: readonly TriggerSpec[]) =>
    executeActions(ctx, specs, {
      name: () => 'update_state',
      sideEffect: true,
      describe: (s) => pyRepr(['update_state', s.stateKey]),
      destructive: () => false,
      execute: async (s) =>
        (await state()).add(s.stateKey, s.stateContent, {
          force: true,
          model: targetConfigStateModel,
        }),
      failure: (s, e) => ({
        scope: s.saasFileName,
        message: `[${s.saasFileName}] could not store the state ${s.stateKey}: ${errorMessage(e)}`,
      }),
    });
}

/**
 * One run of a trigger integration: the saas files' diffs against the stored
 * state, then per spec the saas file's Pipeline must exist in its provider
 * namespace, one PipelineRun per (saas file, env) is created, and only after
 * it was created is the spec's state stored (never in dry-run).
 */
export async function runTriggers(
  ctx: RunContext,
  type: TriggerType,
  version: string,
  opts: TriggerOptions,
): Promise<void> {
  const gql = await ctx.client(gqlClient);
  const [all, { settings }] = await Promise.all([
    loadSaasFiles(gql),
    gql.query(TriggerSettingsDocument),
  ]);
  const saasFiles = shardSaasFiles(ctx, all);
  const clusters = await clusterMapForNamespaces(
    ctx,
    tektonProviders(saasFiles).map((p) => ({ cluster: p.namespace.cluster })),
    { internal: opts.internal, concurrency: opts.threadPoolSize },
  );
  let store: ReturnType<RunContext['state']> | undefined;
  const state = () => (store ??= ctx.state());
  const writeState = stateWrites(ctx, state);
  // One pool per peer, each of --thread-pool-size (as the deploy's readers):
  // only requests really made take a place, so targets waiting for a ref
  // another target resolves hold none.
  const git = requestPool(opts.threadPoolSize);
  const stateReads = requestPool(opts.threadPoolSize);
  const run: TriggerRun = {
    ctx,
    threadPoolSize: opts.threadPoolSize,
    saasFiles,
    includeTriggerTrace: opts.includeTriggerTrace,
    settings: {
      repoUrl: settings?.[0]?.repoUrl ?? '',
      hashLength: settings?.[0]?.hashLength ?? 7,
    },
    bundleCommit: gql.gitCommit?.commit ?? 'None',
    resolveRef: (sf, url, ref) =>
      repoSourcesForRun(ctx, { codeAuth: sf.authentication?.code ?? null, limit: git }).resolveRef(
        url,
        ref,
      ),
    stored: async (key) => {
      const store = await state();
      return stateReads(() => store.get(key, null));
    },
    store: async (spec) => {
      await writeState([spec]);
    },
    async changedSinceStored(spec) {
      const current = await run.stored(spec.stateKey);
      if (current === spec.stateContent) return false;
      if (current === null) {
        await run.store(spec);
        return false;
      }
      return true;
    },
  };

  const diffs = (
    await Promise.all(
      saasFiles.map(async (sf) => {
        try {
          return await type.diff(sf, run);
        } catch (e) {
          ctx.errors.register(sf.name, `[${sf.name}] ${errorMessage(e)}`);
          return [];
        }
      }),
    )
  ).flat();
  const specs = type.gate ? await type.gate(diffs, run) : diffs;

  const actions = await triggerActions(ctx, type.integration, clusters, specs, opts);
  const created = new Set<TriggerAction>();
  await executeActions(
    ctx,
    actions,
    {
      name: () => 'create',
      describe: (a) => pyRepr(['create', a.cluster, a.namespace, 'PipelineRun', a.run.name]),
      planEntry: (a) => ({
        action: 'create',
        cluster: a.cluster,
        namespace: a.namespace,
        kind: 'PipelineRun',
        name: a.run.name,
      }),
      destructive: () => false,
      execute: async (a) => {
        const handle = clusters.get(a.cluster);
        if (isClusterProblem(handle)) throw new QontractError(handle.message);
        // The qontract.* annotations, as the original's `oc.create(namespace, resource.annotate())`.
        const annotated = new OpenshiftResource(a.run.body, type.integration, version, {
          errorDetails: a.run.name,
        }).annotate();
        await handle.client.create(
          handle.catalog.get('PipelineRun.tekton.dev'),
          a.namespace,
          annotated.toJson(),
        );
        created.add(a);
      },
      failure: (a, e) => ({
        scope: `${a.cluster}/${a.namespace}`,
        message: `could not trigger pipeline ${a.run.dedupeKey} in ${a.cluster}/${a.namespace}. details: ${errorMessage(e)}`,
      }),
    },
    { concurrency: opts.threadPoolSize },
  );
  // Only what was created is recorded: a failed create is tried again next run.
  if (created.size > 0)
    await writeState(actions.filter((a) => created.has(a)).flatMap((a) => a.specs));
}

/**
 * The PipelineRuns of the specs whose Pipeline exists: a missing Pipeline
 * (a new saas file that openshift-tekton-resources has not created it for
 * yet) is a warning, no trigger and no state; specs of the same (saas file,
 * env) share one PipelineRun.
 */
async function triggerActions(
  ctx: RunContext,
  integration: string,
  clusters: ClusterMap,
  specs: readonly TriggerSpec[],
  opts: TriggerOptions,
): Promise<TriggerAction[]> {
  const pipelines = new Map<string, Promise<boolean>>();
  const pipelineExists = (cluster: string, namespace: string, name: string) => {
    const key = `${cluster}/${namespace}/${name}`;
    let found = pipelines.get(key);
    if (!found) {
      const handle = clusters.get(cluster);
      found = isClusterProblem(handle)
        ? Promise.reject(new QontractError(`No OC client for ${cluster}: ${handle.message}`))
        : handle.client
            .get(handle.catalog.get('Pipeline.tekton.dev'), namespace, name)
            .then((o) => o !== undefined);
      pipelines.set(key, found);
    }
    return found;
  };
  const limit = pLimit(opts.threadPoolSize);
  const planned = await Promise.all(
    specs.map((spec) =>
      limit(async () => {
        const p = spec.pipelinesProvider;
        if (!('namespace' in p) || p.provider !== 'tekton') {
          ctx.errors.register(
            spec.saasFileName,
            `[${spec.saasFileName}] unsupported provider: ${p.provider}`,
          );
          return undefined;
        }
        const template = (p.pipelineTemplates ?? p.defaults.pipelineTemplates).openshiftSaasDeploy
          .name;
        const cluster = p.namespace.cluster.name;
        const namespace = p.namespace.name;
        try {
          const pipeline = tektonPipelineName(template, spec.saasFileName);
          if (!(await pipelineExists(cluster, namespace, pipeline))) {
            ctx.log.warn(`Pipeline ${pipeline} does not exist in ${cluster}/${namespace}.`);
            return undefined;
          }
          const run = tektonTriggerResource({
            saasFileName: spec.saasFileName,
            envName: spec.envName,
            pipelineName: pipeline,
            timeout: spec.timeout,
            consoleUrl: p.namespace.cluster.consoleUrl,
            namespace,
            integration,
            includeTriggerTrace: opts.includeTriggerTrace,
            reason: spec.reason,
            targetRef: spec.targetRef,
          });
          return { cluster, namespace, run, spec };
        } catch (e) {
          ctx.errors.register(`${cluster}/${namespace}`, errorMessage(e));
          return undefined;
        }
      }),
    ),
  );
  // The original's `already_triggered`: the first spec of a (saas file, env) creates its run.
  const byKey = new Map<string, TriggerAction>();
  for (const p of planned) {
    if (!p) continue;
    const known = byKey.get(p.run.dedupeKey);
    if (known) known.specs.push(p.spec);
    else byKey.set(p.run.dedupeKey, { ...p, specs: [p.spec] });
  }
  return [...byKey.values()];
}
