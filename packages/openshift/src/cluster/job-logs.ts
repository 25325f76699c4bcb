/**
 * A Job's logs as `oc logs --all-containers=true -f job/NAME` writes them (the
 * original's `OC.job_logs`), through the API: no `oc` binary.
 */
import { once } from 'node:events';
import type { Readable, Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ApiResourceCatalog } from './api-resources.ts';
import type { KubeClient, KubeObject } from './kube-client.ts';

export class JobNotRunningError extends Error {}

export interface JobLogOptions {
  /** Lines for the run's log (the original's `waiting for job to run: NAME`). */
  readonly log?: (line: string) => void;
  /** Tries before giving up on a pod that runs: the original's 20. */
  readonly attempts?: number;
  /** The wait after try `n`: the original's retry helper sleeps n seconds. */
  readonly delayMs?: (attempt: number) => number;
  readonly signal?: AbortSignal | undefined;
}

const PHASE_RANK: Readonly<Record<string, number>> = { Pending: 0, Unknown: 1, Running: 2 };

function statusOf(pod: KubeObject): Record<string, unknown> {
  return (pod.status ?? {}) as Record<string, unknown>;
}

function isReady(pod: KubeObject): boolean {
  const conditions = statusOf(pod).conditions;
  return (
    Array.isArray(conditions) && conditions.some((c) => c?.type === 'Ready' && c?.status === 'True')
  );
}

/**
 * The pod kubectl logs for `job/NAME`: its `GetFirstPod` sorts the job's pods
 * most active first (the reverse of the controllers' `ActivePods`): scheduled
 * before unscheduled, Running before Unknown before the rest (Pending,
 * Succeeded and Failed rank alike there), ready before not ready, then the
 * oldest. (The ready-since and restart-count tie-breaks are left out.)
 */
function firstPod(pods: readonly KubeObject[]): KubeObject | undefined {
  const key = (p: KubeObject) => {
    const spec = (p.spec ?? {}) as Record<string, unknown>;
    return [
      spec.nodeName ? 1 : 0,
      PHASE_RANK[String(statusOf(p).phase ?? '')] ?? 0,
      isReady(p) ? 1 : 0,
    ];
  };
  const created = (p: KubeObject) => String(p.metadata?.creationTimestamp ?? '');
  return [...pods].sort((a, b) => {
    const [ka, kb] = [key(a), key(b)];
    for (let i = 0; i < ka.length; i++) if (ka[i] !== kb[i]) return (kb[i] ?? 0) - (ka[i] ?? 0);
    return created(a).localeCompare(created(b));
  })[0];
}

/**
 * The job's pods, by the `job-name` label the original selects with (the Job
 * controller sets it and, since Kubernetes 1.27, `batch.kubernetes.io/job-name`
 * too; the newer one alone is asked for when the old one finds nothing).
 */
async function jobPods(
  client: KubeClient,
  catalog: ApiResourceCatalog,
  namespace: string,
  job: string,
): Promise<KubeObject[]> {
  const pods = catalog.get('Pod');
  const legacy = await client.list(pods, namespace, { labelSelector: `job-name=${job}` });
  if (legacy.length > 0) return legacy;
  return client.list(pods, namespace, { labelSelector: `batch.kubernetes.io/job-name=${job}` });
}

/** The original's `wait_for_job_running`: until a pod of the job is Running or Succeeded. */
async function waitForJobRunning(
  client: KubeClient,
  catalog: ApiResourceCatalog,
  namespace: string,
  job: string,
  options: JobLogOptions,
): Promise<KubeObject[]> {
  const attempts = options.attempts ?? 20;
  for (let attempt = 1; ; attempt++) {
    options.log?.(`waiting for job to run: ${job}`);
    const pods = await jobPods(client, catalog, namespace, job);
    const running = pods.some((p) => ['Running', 'Succeeded'].includes(String(statusOf(p).phase)));
    if (running) return pods;
    if (attempt >= attempts) {
      throw new JobNotRunningError(
        `[${client.name}/${namespace}] job ${job}: no pod running after ${attempts} tries`,
      );
    }
    await sleep((options.delayMs ?? ((n) => n * 1000))(attempt), undefined, {
      signal: options.signal,
    });
  }
}

/** Each container of the pod in `--all-containers` order: init containers, containers, ephemeral ones. */
function containerNames(pod: KubeObject): string[] {
  const spec = (pod.spec ?? {}) as Record<string, unknown>;
  return ['initContainers', 'containers', 'ephemeralContainers'].flatMap((field) => {
    const list = spec[field];
    return Array.isArray(list) ? list.map((c) => String(c?.name ?? '')) : [];
  });
}

async function write(out: Writable, chunk: Buffer): Promise<void> {
  // A destroyed stream would never say 'drain'.
  if (out.destroyed) throw out.errored ?? new Error('the log output was closed');
  if (!out.write(chunk)) await once(out, 'drain');
}

/**
 * Copies one container's followed log to `out` a whole line at a time, as
 * kubectl's `DefaultConsumeRequest` does (a last line without its newline is
 * written as it is), so that the lines of containers followed together
 * interleave but never break.
 */
async function copyLines(body: AsyncIterable<Buffer>, out: Writable): Promise<void> {
  let pending: Buffer = Buffer.alloc(0);
  for await (const chunk of body) {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    let newline = pending.indexOf(10);
    while (newline !== -1) {
      await write(out, pending.subarray(0, newline + 1));
      pending = pending.subarray(newline + 1);
      newline = pending.indexOf(10);
    }
  }
  if (pending.length > 0) await write(out, pending);
}

/**
 * Waits for a pod of the job to run, then writes to `out` what
 * `oc logs --all-containers=true -f job/NAME` writes: one pod (the one kubectl
 * picks, see `firstPod`), every container of it followed at once (kubectl
 * follows several streams in parallel) until each has ended, lines
 * interleaved as they come, no prefixes. kubectl refuses to follow more than
 * five streams (`--max-log-requests`); that limit is not copied. `out` is not
 * ended here.
 */
export async function followJobLogs(
  client: KubeClient,
  catalog: ApiResourceCatalog,
  namespace: string,
  job: string,
  out: Writable,
  options: JobLogOptions = {},
): Promise<void> {
  const pod = firstPod(await waitForJobRunning(client, catalog, namespace, job, options));
  const podName = pod?.metadata?.name;
  if (!pod || !podName) throw new JobNotRunningError(`job ${job} has no pod`);
  // The first failure ends the other streams: a running container would otherwise hold the run.
  const bodies = new Set<Readable>();
  let failure: { error: unknown } | undefined;
  const copy = async (container: string) => {
    try {
      const body = await client.podLog(namespace, podName, container, { follow: true });
      bodies.add(body);
      if (failure) body.destroy();
      await copyLines(body, out);
    } catch (error) {
      failure ??= { error };
      for (const b of bodies) b.destroy();
    }
  };
  await Promise.all(containerNames(pod).map(copy));
  if (failure) throw failure.error;
}
