import { mkdir, open } from 'node:fs/promises';
import { join } from 'node:path';
import { finished } from 'node:stream/promises';
import { errorMessage, executeActions, type RunContext } from '@qontract/core';
import {
  type ApiResourceCatalog,
  type ClusterMap,
  followJobLogs,
  isClusterProblem,
  type KubeClient,
  pyRepr,
} from '@qontract/openshift';

/** How often to look for a running pod of a job: the original's 20 tries (1, 2, … 19 s apart). */
function runningTries(ctx: RunContext): number {
  const n = Number(ctx.env.vars.QONTRACT_SAAS_DEPLOY_JOB_RUNNING_TRIES ?? '');
  return Number.isSafeInteger(n) && n > 0 ? n : 20;
}

/** An object the engine wrote (what its `onWritten` tells). */
interface Written {
  readonly fn: string;
  readonly cluster: string;
  readonly namespace: string;
  readonly kind: string;
  readonly name: string;
}

interface JobLog {
  readonly cluster: string;
  readonly namespace: string;
  readonly job: string;
  readonly client: KubeClient;
  readonly catalog: ApiResourceCatalog;
}

/**
 * The saas file's `publishJobLogs` (the original's `follow_logs`): the logs of
 * every Job the deploy applied, and of the jobs of every applied
 * ClowdJobInvocation (its `status.jobMap`), each written to
 * `<io-dir>/<job name>` as `oc logs --all-containers=true -f job/NAME` writes
 * it. Following starts as soon as the object is written, while the deploy
 * waits for rollouts (the original starts its `oc logs` before validating);
 * `done` waits until every followed container has ended. Wet runs only. The
 * content is the job's own output: it goes to the file, never to our log.
 */
export class JobLogCollector {
  readonly #ctx: RunContext;
  readonly #clusters: ClusterMap;
  readonly #ioDir: string;
  readonly #privileged: boolean;
  readonly #collecting: Promise<void>[] = [];

  constructor(
    ctx: RunContext,
    clusters: ClusterMap,
    options: { readonly ioDir: string; readonly privileged: boolean },
  ) {
    this.#ctx = ctx;
    this.#clusters = clusters;
    this.#ioDir = options.ioDir;
    this.#privileged = options.privileged;
  }

  /** The engine wrote an object: an applied Job or ClowdJobInvocation gets its logs followed. */
  written(write: Written): void {
    const kind = write.kind.split('.')[0];
    if (write.fn !== 'apply' || (kind !== 'Job' && kind !== 'ClowdJobInvocation')) return;
    this.#collecting.push(this.#collect(write, kind));
  }

  /** Every log followed to its end (failures are registered errors). */
  async done(): Promise<void> {
    await Promise.all(this.#collecting);
  }

  /** Never rejects: a failure is the run's error, and the deploy goes on. */
  async #collect(write: Written, kind: string): Promise<void> {
    const { cluster, namespace, name } = write;
    const ctx = this.#ctx;
    ctx.log.info(pyRepr(['collecting', cluster, namespace, kind, name]));
    let jobs: JobLog[];
    try {
      const handle = this.#clusters.get(cluster, this.#privileged);
      // The object was just written there; a cluster given up since has said why.
      if (isClusterProblem(handle)) return;
      const base = { cluster, namespace, client: handle.client, catalog: handle.catalog };
      if (kind === 'Job') {
        jobs = [{ ...base, job: name }];
      } else {
        const cji = await handle.client.get(handle.catalog.get(write.kind), namespace, name);
        const status = (cji?.status ?? {}) as { jobMap?: Record<string, unknown> };
        jobs = Object.keys(status.jobMap ?? {}).map((job) => {
          ctx.log.info(pyRepr(['collecting', cluster, namespace, kind, job]));
          return { ...base, job };
        });
      }
    } catch (e) {
      ctx.errors.register(
        `${cluster}/${namespace}`,
        `[${cluster}/${namespace}] collecting the logs of ${kind} ${name} failed: ${errorMessage(e)}`,
      );
      return;
    }
    await executeActions(
      ctx,
      jobs,
      {
        name: () => 'publish_job_logs',
        sideEffect: true,
        describe: (j) => `following the logs of job ${j.job} into ${join(this.#ioDir, j.job)}`,
        destructive: () => false,
        execute: (j) => this.#follow(j),
        failure: (j, e) => ({
          scope: `${j.cluster}/${j.namespace}`,
          message: `[${j.cluster}/${j.namespace}] collecting the logs of job ${j.job} failed: ${errorMessage(e)}`,
        }),
      },
      // Every job at once: a followed job holds its place until its containers end.
      { concurrency: Math.max(1, jobs.length) },
    );
  }

  async #follow(j: JobLog): Promise<void> {
    await mkdir(this.#ioDir, { recursive: true });
    // Opened first, so that a file that cannot be written is this job's error at once.
    const file = (await open(join(this.#ioDir, j.job), 'w')).createWriteStream();
    try {
      await followJobLogs(j.client, j.catalog, j.namespace, j.job, file, {
        attempts: runningTries(this.#ctx),
        log: (line) => this.#ctx.log.info(line),
        signal: this.#ctx.signal,
      });
    } finally {
      file.end();
      await finished(file);
    }
  }
}
