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
export function clusterState(workload: Workload, scale: Scale, drift: DriftChoice): ClusterState {
  const objects = new Map<string, BenchObject[]>();
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
  const listedKinds =
    workload === Workload.resources
      ? [...MANAGED_KINDS]
      : [workload === Workload.namespaces ? 'Namespace' : 'RoleBinding'];
  return { objects, listedKinds, expectedWrites };
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
