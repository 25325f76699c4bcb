import { stringify } from 'yaml';

export interface KubeconfigCluster {
  readonly name: string;
  readonly url: string;
  readonly token: string;
  /** Base64 PEM of the CA that signed the serving certificate. */
  readonly caData: string;
}

/** A kubeconfig as `kubectl` and `@kubernetes/client-node` read it. */
export interface KubeconfigObject {
  apiVersion: 'v1';
  kind: 'Config';
  clusters: { name: string; cluster: { server: string; 'certificate-authority-data': string } }[];
  users: { name: string; user: { token: string } }[];
  contexts: { name: string; context: { cluster: string; user: string; namespace: string } }[];
  'current-context': string;
  preferences: Record<string, never>;
}

/** One context per cluster, named after it; the first is current. */
export function kubeconfigObject(clusters: readonly KubeconfigCluster[]): KubeconfigObject {
  return {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: clusters.map((c) => ({
      name: c.name,
      cluster: { server: c.url, 'certificate-authority-data': c.caData },
    })),
    users: clusters.map((c) => ({ name: `${c.name}-admin`, user: { token: c.token } })),
    contexts: clusters.map((c) => ({
      name: c.name,
      context: { cluster: c.name, user: `${c.name}-admin`, namespace: 'default' },
    })),
    'current-context': clusters[0]?.name ?? '',
    preferences: {},
  };
}

export function kubeconfigYaml(clusters: readonly KubeconfigCluster[]): string {
  return stringify(kubeconfigObject(clusters));
}
