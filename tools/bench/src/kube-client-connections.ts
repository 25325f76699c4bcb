import { KubeClient } from '@qontract/openshift';
import pLimit from 'p-limit';

export interface ConnectionRun {
  readonly url: string;
  readonly token: string;
  readonly requests: number;
  readonly concurrency: number;
}

/**
 * The engine's API client under many small requests: one warm-up request,
 * then `requests` GETs of `/api/v1/namespaces/default/configmaps` (a tiny
 * list), `concurrency` at a time. The child counts the TCP connections: with
 * connections reused they stay near `concurrency` (until 1e29e01,
 * @kubernetes/client-node 2.0.1 made KubeClient open one TCP connection and
 * TLS session per request).
 */
export async function measureConnections(
  run: ConnectionRun,
): Promise<{ wallMs: number; cpuMs: number }> {
  const limit = pLimit(run.concurrency);
  const path = '/api/v1/namespaces/default/configmaps';
  const client = new KubeClient(
    { name: 'bench', server: run.url, token: run.token, insecureSkipTLSVerify: true },
    { attempts: 1 },
  );
  const get = () => client.request('GET', path, 'list');
  await get(); // the first connection (TLS handshake) is not what is measured
  const cpu = process.cpuUsage();
  const started = performance.now();
  await Promise.all(Array.from({ length: run.requests }, () => limit(get)));
  const used = process.cpuUsage(cpu);
  return { wallMs: performance.now() - started, cpuMs: (used.user + used.system) / 1000 };
}
