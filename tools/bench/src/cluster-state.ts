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
  /** Objects to seed, per cluster name. */
  readonly objects: ReadonlyMap<string, BenchObject[]>;
  /** Objects of each listed kind per cluster after seeding (pages of the lower bound). */
  readonly listed: ReadonlyMap<string, ReadonlyMap<string, number>>;
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

/**
 * The clusters of a scenario: every desired object as our engine would have
 * applied it, except the drifted ones, which are edited in place (changed)
 * or left out (missing). Objects are numbered cluster by cluster, namespace
 * by namespace, so a drift choice is reproducible.
 */
export function clusterState(workload: Workload, scale: Scale, drift: DriftChoice): ClusterState {
  const objects = new Map<string, BenchObject[]>();
  const listed = new Map<string, Map<string, number>>();
  let expectedWrites = 0;
  let index = 0;
  const perNamespace =
    workload === Workload.resources
      ? scale.resources
      : workload === Workload.rolebindings
        ? 2 * rolebindingUsers(scale)
        : 1;
  for (let c = 0; c < scale.clusters; c++) {
    const cluster = clusterName(c);
    const list: BenchObject[] = [];
    const counts = new Map<string, number>();
    const count = (kind: string) => counts.set(kind, (counts.get(kind) ?? 0) + 1);
    objects.set(cluster, list);
    listed.set(cluster, counts);
    if (workload === Workload.resources) for (const k of MANAGED_KINDS) counts.set(k, 0);
    else counts.set(workload === Workload.namespaces ? 'Namespace' : 'RoleBinding', 0);
    for (let n = 0; n < scale.namespaces; n++) {
      const namespace = namespaceName(n);
      const namespaceObject: BenchObject = {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: namespace },
      };
      for (let i = 0; i < perNamespace; i++, index++) {
        const missing = drift.missing.has(index);
        const changed = drift.changed.has(index);
        if (missing || changed) expectedWrites++;
        if (workload === Workload.namespaces) {
          // A namespace cannot be "changed" for openshift-namespaces: both kinds of drift delete it.
          if (!missing && !changed) {
            list.push(namespaceObject);
            count('Namespace');
          }
          continue;
        }
        list.push(namespaceObject); // seeding needs the namespace; duplicates are harmless updates
        if (missing) continue;
        const applied =
          workload === Workload.resources
            ? appliedObject(desiredBody(cluster, namespace, i), namespace)
            : appliedRoleBinding(scale, i, namespace);
        if (changed) changeOnCluster(applied);
        list.push(applied);
        count(applied.kind);
      }
    }
    // Namespaces first, once each: the fake creates missing namespaces on seed anyway.
    const seen = new Set<string>();
    objects.set(
      cluster,
      list.filter((o) => {
        if (o.kind !== 'Namespace') return true;
        if (seen.has(o.metadata.name)) return false;
        seen.add(o.metadata.name);
        return true;
      }),
    );
  }
  return { objects, listed, expectedWrites };
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
