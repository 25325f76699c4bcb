import { OpenshiftResource } from '@qontract/openshift';

/** C clusters × N namespaces per cluster × R openshift resources per namespace. */
export interface Scale {
  readonly clusters: number;
  readonly namespaces: number;
  readonly resources: number;
}

/** The identity the engine annotates objects with, as the original's openshift-resources. */
export const RESOURCES_INTEGRATION = 'openshift_resources';
export const RESOURCES_INTEGRATION_VERSION = '1.9.3';

/** Kinds of every generated namespace, in the order `managedResourceTypes` lists them. */
export const MANAGED_KINDS = ['ConfigMap', 'Secret', 'Deployment'] as const;
export type ManagedKind = (typeof MANAGED_KINDS)[number];

export function clusterName(c: number): string {
  return `bench-${String(c + 1).padStart(2, '0')}`;
}

export function namespaceName(n: number): string {
  return `app-${String(n + 1).padStart(3, '0')}`;
}

export function scaleLabel(s: Scale): string {
  return `${s.clusters}×${s.namespaces}×${s.resources}`;
}

/** Three ConfigMaps, one Secret, one Deployment in every five resources. */
function kindOf(index: number): ManagedKind {
  const slot = index % 5;
  return slot < 3 ? 'ConfigMap' : slot === 3 ? 'Secret' : 'Deployment';
}

export function resourceName(index: number): string {
  const prefix = { ConfigMap: 'config', Secret: 'secret', Deployment: 'web' }[kindOf(index)];
  return `${prefix}-${String(index + 1).padStart(4, '0')}`;
}

/**
 * The desired body of resource `index` of a namespace: realistic sizes (a few
 * hundred bytes to ~1.5 KiB of JSON), distinct per cluster and namespace so
 * that nothing is shared by accident.
 */
export function desiredBody(cluster: string, namespace: string, index: number): BenchObject {
  const name = resourceName(index);
  const labels = { app: 'bench', 'app.kubernetes.io/name': name, tier: `t${index % 7}` };
  switch (kindOf(index)) {
    case 'ConfigMap':
      return {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name, labels },
        data: {
          'application.properties': `cluster=${cluster}\nnamespace=${namespace}\nindex=${index}\n`,
          LOG_LEVEL: index % 2 ? 'info' : 'debug',
          FEATURE_FLAGS: `search,export,item-${index}`,
          'settings.json': JSON.stringify({ replicas: (index % 4) + 1, region: 'local', index }),
        },
      };
    case 'Secret':
      return {
        apiVersion: 'v1',
        kind: 'Secret',
        type: 'Opaque',
        metadata: { name, labels },
        data: {
          username: Buffer.from(`user-${namespace}-${index}`).toString('base64'),
          password: Buffer.from(`not-a-real-password-${cluster}-${index}`).toString('base64'),
        },
      };
    case 'Deployment':
      return {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name, labels, annotations: { 'bench.example.com/owner': 'sre' } },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: name } },
          template: {
            metadata: { labels: { app: name } },
            spec: {
              containers: [
                {
                  name: 'web',
                  image: `quay.io/bench/web:${index.toString(16).padStart(7, '0')}`,
                  args: ['--port', '8080'],
                  ports: [{ containerPort: 8080, name: 'http', protocol: 'TCP' }],
                  env: [
                    { name: 'NAMESPACE', value: namespace },
                    { name: 'LOG_LEVEL', value: 'info' },
                  ],
                  resources: {
                    requests: { cpu: '100m', memory: '128Mi' },
                    limits: { cpu: '500m', memory: '512Mi' },
                  },
                },
              ],
            },
          },
        },
      };
  }
}

export type BenchObject = Record<string, unknown> & {
  apiVersion: string;
  kind: string;
  metadata: Record<string, unknown> & { name: string };
};

/**
 * The object as our engine leaves it on the cluster after applying it: the
 * body with the `qontract.*` annotations of the same OpenshiftResource
 * annotate() (so the hashes match), in its namespace. Deployments carry a
 * status so the fake's controller leaves them alone, as a settled cluster.
 */
export function appliedObject(body: BenchObject, namespace: string): BenchObject {
  const annotated = new OpenshiftResource(
    structuredClone(body),
    RESOURCES_INTEGRATION,
    RESOURCES_INTEGRATION_VERSION,
  ).annotate({ now: FIXED_APPLY_TIME }).body as BenchObject;
  annotated.metadata = { ...annotated.metadata, namespace };
  if (annotated.kind === 'Deployment') {
    annotated.status = { observedGeneration: 1, replicas: 2, readyReplicas: 2 };
  }
  return annotated;
}

const FIXED_APPLY_TIME = new Date('2026-01-01T00:00:00Z');
