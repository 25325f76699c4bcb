import { KubeClient } from '@qontract/openshift';
import pLimit from 'p-limit';

/** How the measured requests reach the API server. */
export const ConnectionMode = {
  /** The engine's KubeClient as it is. */
  kubeClient: 'kube-client',
  /** The same client-node request path, with the first request's dispatcher reused. */
  reusedDispatcher: 'reused-dispatcher',
} as const;
export type ConnectionMode = (typeof ConnectionMode)[keyof typeof ConnectionMode];

export interface ConnectionRun {
  readonly mode: ConnectionMode;
  readonly url: string;
  readonly token: string;
  readonly requests: number;
  readonly concurrency: number;
}

/**
 * One warm-up request, then `requests` GETs of `/api/v1/namespaces/default/configmaps` (a tiny list),
 * `concurrency` at a time. With @kubernetes/client-node 2.0.1,
 * `KubeConfig.applySecurityAuthentication` builds a new undici Agent for
 * every request (createDispatcher has no cache), so every request opens a
 * new TCP connection and TLS session; the second mode keeps the first
 * request's dispatcher, which is all a fix in KubeClient needs.
 */
export async function measureConnections(
  run: ConnectionRun,
): Promise<{ wallMs: number; cpuMs: number }> {
  const limit = pLimit(run.concurrency);
  const path = '/api/v1/namespaces/default/configmaps';
  let get: () => Promise<unknown>;
  if (run.mode === ConnectionMode.kubeClient) {
    const client = new KubeClient(
      { name: 'bench', server: run.url, token: run.token, insecureSkipTLSVerify: true },
      { attempts: 1 },
    );
    get = () => client.request('GET', path, 'list');
  } else {
    const lib = await import('@kubernetes/client-node');
    const kc = new lib.KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'bench', server: run.url, skipTLSVerify: true }],
      users: [{ name: 'bench', token: run.token }],
      contexts: [{ name: 'bench', cluster: 'bench', user: 'bench' }],
      currentContext: 'bench',
    });
    const http = new lib.IsomorphicFetchHttpLibrary();
    let dispatcher: ReturnType<InstanceType<typeof lib.RequestContext>['getDispatcher']>;
    get = async () => {
      const ctx = new lib.RequestContext(`${run.url}${path}`, lib.HttpMethod.GET);
      await kc.applySecurityAuthentication(ctx);
      if (dispatcher) ctx.setDispatcher(dispatcher);
      else dispatcher = ctx.getDispatcher();
      ctx.setHeaderParam('Accept', 'application/json');
      const response = await http.send(ctx).toPromise();
      return JSON.parse(await response.body.text());
    };
  }
  await get(); // the first connection and the lazy module load are not what is compared
  const cpu = process.cpuUsage();
  const started = performance.now();
  await Promise.all(Array.from({ length: run.requests }, () => limit(get)));
  const used = process.cpuUsage(cpu);
  return { wallMs: performance.now() - started, cpuMs: (used.user + used.system) / 1000 };
}
