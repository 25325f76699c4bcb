import type { Logger } from '@qontract/core';
import type { ApiResource } from '../cluster/api-resources.ts';
import type { KubeClient, KubeObject } from '../cluster/kube-client.ts';
import { pyRepr } from './py-repr.ts';

/**
 * The kinds whose rollout is waited for: every kind the original's
 * `validate_realized_data` checks (Clowder's ClowdApp and
 * ClowdJobInvocation included), plus DaemonSet.
 */
const WORKLOADS = new Set([
  'Deployment',
  'DeploymentConfig',
  'StatefulSet',
  'DaemonSet',
  'Job',
  'Subscription',
  'ClowdApp',
  'ClowdJobInvocation',
]);

/** Whether a workload has rolled out: the controller saw the latest generation and every replica is ready and updated. */
export function isReady(obj: KubeObject): boolean {
  const meta = obj.metadata as { generation?: number } | undefined;
  const status = (obj.status ?? {}) as Record<string, number | undefined> & {
    conditions?: Array<{ type?: string; status?: string; reason?: string }>;
  };
  const spec = (obj.spec ?? {}) as { replicas?: number };
  if (obj.kind === 'Job') {
    const failed = status.conditions?.find((c) => c.type === 'Failed' && c.status === 'True');
    if (failed) throw new Error(`${obj.metadata?.name}: ${failed.reason ?? 'Failed'}`);
    return (status.succeeded ?? 0) > 0;
  }
  if (obj.kind === 'ClowdApp') {
    // Clowder reports the Deployments it manages and how many of them are ready.
    const deployments = (obj.status as { deployments?: Record<string, unknown> } | undefined)
      ?.deployments;
    return (
      Boolean(deployments) && deployments?.managedDeployments === deployments?.readyDeployments
    );
  }
  if (obj.kind === 'ClowdJobInvocation') {
    // A post-deploy test: done once completed, failed when any of its jobs failed.
    const cji = (obj.status ?? {}) as { completed?: boolean; jobMap?: Record<string, string> };
    if (!cji.completed) return false;
    const failed = Object.entries(cji.jobMap ?? {})
      .filter(([, state]) => state === 'Failed')
      .map(([job]) => job);
    if (failed.length > 0) {
      throw new Error(`ClowdJobInvocation ${obj.metadata?.name} failed jobs: ${failed.join(', ')}`);
    }
    return true;
  }
  if (obj.kind === 'Subscription') {
    return (obj.status as { state?: string } | undefined)?.state === 'AtLatestKnown';
  }
  if ((status.observedGeneration ?? 0) < (meta?.generation ?? 0)) return false;
  if (obj.kind === 'DaemonSet') {
    const desired = status.desiredNumberScheduled ?? 0;
    return status.numberReady === desired && (status.updatedNumberScheduled ?? 0) === desired;
  }
  const want = spec.replicas ?? 1;
  if (want === 0) return true;
  return (
    status.replicas === want && status.readyReplicas === want && status.updatedReplicas === want
  );
}

/** Polls a workload until it is ready, or throws after the timeout. Non-workload kinds return at once. */
export async function waitForReady(
  client: KubeClient,
  r: ApiResource,
  namespace: string,
  name: string,
  options: { timeoutMs: number; pollMs?: number },
  log: Logger,
): Promise<void> {
  if (!WORKLOADS.has(r.kind)) return;
  log.info(pyRepr(['validating', client.name, namespace, r.kind, name]));
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    const obj = await client.get(r, namespace, name);
    if (obj && isReady(obj)) return;
    if (Date.now() >= deadline) {
      throw new Error(
        `${r.kind}/${name} is not ready after ${Math.round(options.timeoutMs / 1000)}s`,
      );
    }
    await new Promise((res) => setTimeout(res, options.pollMs ?? 1_000));
  }
}
