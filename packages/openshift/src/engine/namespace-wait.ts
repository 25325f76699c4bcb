import { setTimeout as sleep } from 'node:timers/promises';
import { apiResourceOf, type ClusterHandle } from '../cluster/cluster-map.ts';

/** How long an apply into a namespace that does not exist (yet) waits for it. */
export interface NamespaceWait {
  readonly timeoutMs: number;
  readonly pollMs?: number;
}

/**
 * Waits for namespaces to appear, one wait per cluster and namespace shared by
 * every apply into it (the original's `wait_for_namespace`, used by
 * openshift-saas-deploy: a target whose namespace openshift-namespaces has not
 * created yet waits for it, bounded, and then fails). Resolves once the
 * namespace exists; rejects with an error naming it after the bound, or when
 * `signal` stops the run. The outcome is kept for the run: the applies that
 * start after a namespace failed to appear fail at once instead of waiting
 * the whole bound again.
 */
export function namespaceWaiter(
  options: NamespaceWait,
  signal?: AbortSignal,
): (handle: ClusterHandle, namespace: string) => Promise<void> {
  const waits = new Map<string, Promise<void>>();
  return (handle, namespace) => {
    const key = `${handle.client.name}\u0000${namespace}`;
    let wait = waits.get(key);
    if (!wait) {
      wait = pollUntilExists(handle, namespace, options, signal);
      waits.set(key, wait);
    }
    return wait;
  };
}

async function pollUntilExists(
  handle: ClusterHandle,
  namespace: string,
  options: NamespaceWait,
  signal: AbortSignal | undefined,
): Promise<void> {
  // As the original's project check: a Project on OpenShift (readable with
  // access to it alone), a Namespace elsewhere.
  const resource = await apiResourceOf(
    handle,
    handle.catalog.isKindSupported('Project.project.openshift.io')
      ? 'Project.project.openshift.io'
      : 'Namespace',
  );
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    if (await handle.client.get(resource, undefined, namespace)) return;
    if (Date.now() >= deadline) {
      throw new Error(
        `namespace ${namespace} does not exist after waiting ${Math.round(options.timeoutMs / 1000)}s`,
      );
    }
    await sleep(options.pollMs ?? 5_000, undefined, signal ? { signal } : {});
  }
}
