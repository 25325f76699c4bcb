// What other packages use, by name, so that knip reports an export nobody imports.
// A new import from '@qontract/openshift' adds its name here.

// Access rules shared by the RBAC integrations (roles, users, groups).
export {
  type ClusterGroupMember,
  desiredClusterUsers,
  isRoleActive,
  managesRoleBindings,
  type RbacSubject,
  roleBindingSubjects,
  roleGroupMembers,
  userKeysForAccess,
} from './access.ts';
// Cluster clients and the clusters a run may use.
export {
  AmbiguousResourceTypeError,
  ApiResourceCatalog,
  KindNotFoundError,
} from './cluster/api-resources.ts';
export {
  type ClusterHandle,
  type ClusterMap,
  isClusterProblem,
  leavesOut,
} from './cluster/cluster-map.ts';
export { clusterMapForClusters, clusterMapForNamespaces } from './cluster/for-run.ts';
export { followJobLogs } from './cluster/job-logs.ts';
export {
  KubeApiError,
  KubeClient,
  type KubeObject,
} from './cluster/kube-client.ts';
// The engine: read, plan, apply, for polling runs and watch mode.
export type { ActionResult } from './engine/apply.ts';
export { appInterfaceBundle } from './engine/bundle-source.ts';
export { defineEngineIntegration } from './engine/define.ts';
/** @public Imported by the integrations `npm run new-integration` generates. */
export type { DesiredBody } from './engine/desired.ts';
export type {
  DesiredCluster,
  DesiredError,
  DesiredSource,
} from './engine/desired-source.ts';
export { type CurrentStateSpec, specsForKind } from './engine/fetch.ts';
export { pyRepr } from './engine/py-repr.ts';
export {
  type DesiredResource,
  fieldManagerFor,
  type ReconcileResult,
  reconcileResources,
} from './engine/reconcile.ts';
export { runWatchMode, type WatchedState } from './engine/watch-mode.ts';
export { reconcileTimeObserver } from './reconcile-time.ts';
// The resource model: one object as the Python original sees it.
export { ResourceDataError } from './resource/errors.ts';
export {
  base64EncodeSecretFieldValue,
  fullyQualifiedKind,
  OpenshiftResource,
  type OpenshiftResourceOptions,
} from './resource/openshift-resource.ts';
export { parseResource, YamlError } from './resource/parse-resource.ts';
export { pyStr } from './resource/py-str.ts';
export {
  dictGet,
  dictSet,
  isDict,
  type PyDict,
  type PyObject,
  type PyValue,
  pyDeepCopy,
} from './resource/py-values.ts';
export {
  resourcesEqual,
  withRecycleAnnotations,
} from './resource/three-way-diff.ts';
