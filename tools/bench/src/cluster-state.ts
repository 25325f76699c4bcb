import { OpenshiftResource } from '@qontract/openshift';
import type { DriftChoice } from './drift.ts';
import {
  appliedObject,
  type BenchObject,
  clusterName,
  desiredBody,
  MANAGED_KINDS,
  type ManagedKind,
  namespaceName,
  type Scale,
} from './model.ts';
import { rolebindingUsers } from './tree.ts';

/** What a scenario's clusters hold before the run, and what the run must do about it. */
export interface ClusterState {
  /** Objects to seed, per cluster name (each namespace before its objects). */
  readonly objects: ReadonlyMap<string, BenchObject[]>;
  /** The kinds the integration lists on every cluster (the lists of the lower bound). */
  readonly listedKinds: readonly string[];
  /** Writes a correct wet run makes: one per drifted object. */
  readonly expectedWrites: number;
  /** Objects of namespaces no integration manages (`otherNamespaces`), per cluster name. */
  readonly others: ReadonlyMap<string, BenchObject[]>;
}

/** Which of a scenario's integrations the state is for. */
export const Workload = {
  resources: 'openshift-resources',
  namespaces: 'openshift-namespaces',
  rolebindings: 'openshift-rolebindings',
} as const;
export type Workload = (typeof Workload)[keyof typeof Workload];

/** The identity openshift-rolebindings annotates with (its module constants). */
const ROLEBINDINGS_INTEGRATION = 'openshift-rolebindings';
const ROLEBINDINGS_INTEGRATION_VERSION = '0.3.0';

/** How many managed objects a namespace holds for `workload` (a namespace itself, for openshift-namespaces). */
export function objectsPerNamespace(workload: Workload, scale: Scale): number {
  if (workload === Workload.resources) return scale.resources;
  if (workload === Workload.rolebindings) return 2 * rolebindingUsers(scale);
  return 1;
}

/**
 * The clusters of a scenario: every desired object as our engine would have
 * applied it, except the drifted ones, which are edited in place (changed)
 * or left out (missing). Objects are numbered cluster by cluster, namespace
 * by namespace, so a drift choice is reproducible. For openshift-namespaces
 * both kinds of drift leave the namespace out (a namespace has nothing to edit).
 */
export function clusterState(
  workload: Workload,
  scale: Scale,
  drift: DriftChoice,
  otherNamespaces = 0,
): ClusterState {
  const objects = new Map<string, BenchObject[]>();
  const others = new Map<string, BenchObject[]>();
  const perNamespace = objectsPerNamespace(workload, scale);
  let expectedWrites = 0;
  let index = 0;
  for (let c = 0; c < scale.clusters; c++) {
    const cluster = clusterName(c);
    const list: BenchObject[] = [];
    objects.set(cluster, list);
    for (let n = 0; n < scale.namespaces; n++) {
      const namespace = namespaceName(n);
      const namespaceObject: BenchObject = {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: namespace },
      };
      if (workload === Workload.namespaces) {
        const drifted = drift.missing.has(index) || drift.changed.has(index);
        index++;
        if (drifted) expectedWrites++;
        else list.push(namespaceObject);
        continue;
      }
      list.push(namespaceObject);
      for (let i = 0; i < perNamespace; i++, index++) {
        const missing = drift.missing.has(index);
        const changed = drift.changed.has(index);
        if (missing || changed) expectedWrites++;
        if (missing) continue;
        const applied =
          workload === Workload.resources
            ? appliedObject(desiredBody(cluster, namespace, i), namespace)
            : appliedRoleBinding(scale, i, namespace);
        if (changed) changeOnCluster(applied);
        list.push(applied);
      }
    }
  }
  if (workload === Workload.resources && otherNamespaces > 0) {
    for (const cluster of objects.keys()) others.set(cluster, clusterOwnObjects(otherNamespaces));
  }
  const listedKinds =
    workload === Workload.resources
      ? [...MANAGED_KINDS]
      : [workload === Workload.namespaces ? 'Namespace' : 'RoleBinding'];
  return { objects, listedKinds, expectedWrites, others };
}

/** Bytes that stand for a PEM bundle or a pull secret of about `size` characters. */
function filler(seed: string, size: number): string {
  const line = Buffer.from(seed.repeat(Math.ceil(48 / seed.length)).slice(0, 48)).toString(
    'base64',
  );
  return Array.from({ length: Math.ceil(size / (line.length + 1)) }, () => line).join('\n');
}

/**
 * What a cluster holds of the managed kinds in namespaces no integration
 * manages, as an OpenShift cluster's own namespaces do: per namespace the two
 * CA bundle ConfigMaps, the pull secrets of its three service accounts, a
 * serving certificate and one Deployment (with its status, so the fake's
 * controller leaves it alone: nothing changes while the run is measured).
 * None carries qontract annotations: the run must leave them alone and has no
 * use for them.
 */
function clusterOwnObjects(count: number): BenchObject[] {
  const out: BenchObject[] = [];
  for (let n = 0; n < count; n++) {
    const namespace = `openshift-bench-${String(n + 1).padStart(3, '0')}`;
    out.push({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
    for (const name of ['kube-root-ca.crt', 'openshift-service-ca.crt']) {
      out.push({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name, namespace },
        data: {
          'ca.crt': `-----BEGIN CERTIFICATE-----\n${filler(name, 1200)}\n-----END CERTIFICATE-----\n`,
        },
      });
    }
    for (const account of ['builder', 'default', 'deployer']) {
      out.push({
        apiVersion: 'v1',
        kind: 'Secret',
        type: 'kubernetes.io/dockercfg',
        metadata: {
          name: `${account}-dockercfg-bench`,
          namespace,
          annotations: { 'kubernetes.io/service-account.name': account },
        },
        data: { '.dockercfg': filler(`${namespace}/${account}`, 1500) },
      });
    }
    out.push({
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'kubernetes.io/tls',
      metadata: {
        name: 'serving-cert',
        namespace,
        annotations: { 'service.beta.openshift.io/originating-service-name': 'operator' },
      },
      data: {
        'tls.crt': filler(`crt/${namespace}`, 1600),
        'tls.key': filler(`key/${namespace}`, 1200),
      },
    });
    out.push({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'operator', namespace, labels: { app: 'operator' } },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'operator' } },
        template: {
          metadata: { labels: { app: 'operator' } },
          spec: { containers: [{ name: 'operator', image: `quay.io/bench/${namespace}:v1` }] },
        },
      },
      status: { observedGeneration: 1, replicas: 1, readyReplicas: 1 },
    });
  }
  return out;
}

/** RoleBinding `index` of a namespace: users × {view, edit}, as openshift-rolebindings names them. */
function appliedRoleBinding(scale: Scale, index: number, namespace: string): BenchObject {
  const users = rolebindingUsers(scale);
  const role = index < users ? 'view' : 'edit';
  const user = `bench-user-${String((index % users) + 1).padStart(3, '0')}-gh`;
  const body = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: `${role}-${user}` },
    roleRef: { kind: 'ClusterRole', name: role },
    subjects: [{ kind: 'User', name: user }],
  };
  const annotated = new OpenshiftResource(
    body,
    ROLEBINDINGS_INTEGRATION,
    ROLEBINDINGS_INTEGRATION_VERSION,
  ).annotate().body as BenchObject;
  annotated.metadata = { ...annotated.metadata, namespace };
  return annotated;
}

/** A hand edit on the cluster: the body no longer matches its `qontract.sha256sum`. */
function changeOnCluster(o: BenchObject): void {
  const kind = o.kind as ManagedKind | 'RoleBinding';
  if (kind === 'Deployment') {
    (o.spec as { replicas: number }).replicas = 7;
  } else if (kind === 'RoleBinding') {
    o.subjects = [{ kind: 'User', name: 'someone-else' }];
  } else {
    const data = o.data as Record<string, string>;
    const first = Object.keys(data)[0]!;
    data[first] = kind === 'Secret' ? Buffer.from('edited').toString('base64') : 'edited by hand';
  }
}
