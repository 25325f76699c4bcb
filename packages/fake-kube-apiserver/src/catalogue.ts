/** One kind of object the fake serves, as discovery describes it. */
export interface ResourceType {
  readonly group: string;
  /** Versions served, the first is the preferred (and storage) one. */
  readonly versions: readonly string[];
  /** Plural, lower case: the path segment. */
  readonly plural: string;
  readonly singular: string;
  readonly kind: string;
  readonly namespaced: boolean;
  readonly shortNames: readonly string[];
  /** Writes to the main resource leave `status` alone; `/status` writes only `status`. */
  readonly statusSubresource: boolean;
  /** `metadata.generation` is kept and bumped on spec changes. */
  readonly generation: boolean;
  /** Lists inside are merged by key (strategic merge patch, server-side apply). */
  readonly builtin: boolean;
  /** The server rolls the status to ready shortly after each spec change. */
  readonly workload?: boolean;
  /** Virtual resources backed by another (Project by Namespace). */
  readonly virtual?: 'project' | 'projectrequest';
  /** Discovery categories (`kubectl get all`). */
  readonly categories?: readonly string[];
}

/** `group/plural`: identifies the stored collection whatever version is asked. */
export function resourceKey(type: Pick<ResourceType, 'group' | 'plural'>): string {
  return `${type.group}/${type.plural}`;
}

/** `plural` or `plural.group` as the real server names resources in messages. */
export function qualifiedResource(type: Pick<ResourceType, 'group' | 'plural'>): string {
  return type.group === '' ? type.plural : `${type.plural}.${type.group}`;
}

export function apiVersionOf(group: string, version: string): string {
  return group === '' ? version : `${group}/${version}`;
}

interface Def {
  plural: string;
  kind: string;
  namespaced?: boolean;
  short?: string[];
  status?: boolean;
  workload?: boolean;
  virtual?: ResourceType['virtual'];
  all?: boolean;
  categories?: string[];
}

function defs(group: string, version: string, list: readonly Def[], generation = true) {
  return list.map(
    (d): ResourceType => ({
      group,
      versions: [version],
      plural: d.plural,
      singular: d.kind.toLowerCase(),
      kind: d.kind,
      namespaced: d.namespaced ?? true,
      shortNames: d.short ?? [],
      statusSubresource: d.status ?? false,
      generation,
      builtin: true,
      ...(d.workload ? { workload: true } : {}),
      ...(d.virtual ? { virtual: d.virtual } : {}),
      ...(d.all || d.categories
        ? { categories: [...(d.all ? ['all'] : []), ...(d.categories ?? [])] }
        : {}),
    }),
  );
}

const TEKTON = ['tekton', 'tekton-pipelines'];

/** Kubernetes built-ins our integrations touch (core objects carry no generation). */
export const KUBERNETES_TYPES: readonly ResourceType[] = [
  ...defs(
    '',
    'v1',
    [
      { plural: 'namespaces', kind: 'Namespace', namespaced: false, short: ['ns'], status: true },
      { plural: 'configmaps', kind: 'ConfigMap', short: ['cm'] },
      { plural: 'secrets', kind: 'Secret' },
      { plural: 'services', all: true, kind: 'Service', short: ['svc'], status: true },
      { plural: 'serviceaccounts', kind: 'ServiceAccount', short: ['sa'] },
      { plural: 'pods', all: true, kind: 'Pod', short: ['po'], status: true },
      { plural: 'persistentvolumeclaims', kind: 'PersistentVolumeClaim', short: ['pvc'] },
      { plural: 'persistentvolumes', kind: 'PersistentVolume', namespaced: false, short: ['pv'] },
      { plural: 'endpoints', kind: 'Endpoints', short: ['ep'] },
      { plural: 'events', kind: 'Event', short: ['ev'] },
      { plural: 'limitranges', kind: 'LimitRange', short: ['limits'] },
      { plural: 'resourcequotas', kind: 'ResourceQuota', short: ['quota'], status: true },
      { plural: 'nodes', kind: 'Node', namespaced: false, short: ['no'], status: true },
      { plural: 'replicationcontrollers', all: true, kind: 'ReplicationController', short: ['rc'] },
    ],
    false,
  ),
  ...defs('apps', 'v1', [
    {
      plural: 'deployments',
      all: true,
      kind: 'Deployment',
      short: ['deploy'],
      status: true,
      workload: true,
    },
    {
      plural: 'statefulsets',
      all: true,
      kind: 'StatefulSet',
      short: ['sts'],
      status: true,
      workload: true,
    },
    {
      plural: 'daemonsets',
      all: true,
      kind: 'DaemonSet',
      short: ['ds'],
      status: true,
      workload: true,
    },
    {
      plural: 'replicasets',
      all: true,
      kind: 'ReplicaSet',
      short: ['rs'],
      status: true,
      workload: true,
    },
    { plural: 'controllerrevisions', kind: 'ControllerRevision' },
  ]),
  ...defs('batch', 'v1', [
    { plural: 'jobs', all: true, kind: 'Job', status: true, workload: true },
    { plural: 'cronjobs', all: true, kind: 'CronJob', short: ['cj'], status: true },
  ]),
  ...defs('autoscaling', 'v2', [
    {
      plural: 'horizontalpodautoscalers',
      all: true,
      kind: 'HorizontalPodAutoscaler',
      short: ['hpa'],
    },
  ]),
  ...defs('rbac.authorization.k8s.io', 'v1', [
    { plural: 'roles', kind: 'Role' },
    { plural: 'rolebindings', kind: 'RoleBinding' },
    { plural: 'clusterroles', kind: 'ClusterRole', namespaced: false },
    { plural: 'clusterrolebindings', kind: 'ClusterRoleBinding', namespaced: false },
  ]),
  ...defs('networking.k8s.io', 'v1', [
    { plural: 'networkpolicies', kind: 'NetworkPolicy', short: ['netpol'] },
    { plural: 'ingresses', kind: 'Ingress', short: ['ing'], status: true },
    { plural: 'ingressclasses', kind: 'IngressClass', namespaced: false },
  ]),
  ...defs('policy', 'v1', [
    { plural: 'poddisruptionbudgets', kind: 'PodDisruptionBudget', short: ['pdb'], status: true },
  ]),
  ...defs('coordination.k8s.io', 'v1', [{ plural: 'leases', kind: 'Lease' }]),
  ...defs('apiextensions.k8s.io', 'v1', [
    {
      plural: 'customresourcedefinitions',
      kind: 'CustomResourceDefinition',
      namespaced: false,
      short: ['crd', 'crds'],
      status: true,
    },
  ]),
  // Served by the prometheus-operator CRDs on every cluster we manage.
  ...defs('monitoring.coreos.com', 'v1', [
    { plural: 'servicemonitors', kind: 'ServiceMonitor', short: ['smon'] },
    { plural: 'podmonitors', kind: 'PodMonitor', short: ['pmon'] },
    { plural: 'prometheusrules', kind: 'PrometheusRule', short: ['promrule'] },
    { plural: 'probes', kind: 'Probe', short: ['prb'] },
    { plural: 'prometheuses', kind: 'Prometheus', short: ['prom'], status: true },
    { plural: 'alertmanagers', kind: 'Alertmanager', short: ['am'], status: true },
    { plural: 'thanosrulers', kind: 'ThanosRuler', short: ['ruler'], status: true },
  ]).map((t) => ({ ...t, builtin: false })),
  // Tekton's CRDs (OpenShift Pipelines on OpenShift), served wherever a pipelines provider's
  // namespace may live. v1 only: the original's templates and PipelineRuns are all tekton.dev/v1.
  // Names, short names, categories and the status subresource as in Tekton's own CRDs.
  ...defs('tekton.dev', 'v1', [
    { plural: 'pipelines', kind: 'Pipeline', status: true, categories: TEKTON },
    { plural: 'tasks', kind: 'Task', status: true, categories: TEKTON },
    {
      plural: 'pipelineruns',
      kind: 'PipelineRun',
      short: ['pr', 'prs'],
      status: true,
      categories: TEKTON,
    },
  ]).map((t) => ({ ...t, builtin: false })),
];

/** Only OpenShift clusters serve these; the engine detects OpenShift by `Project`. */
export const OPENSHIFT_TYPES: readonly ResourceType[] = [
  ...defs('project.openshift.io', 'v1', [
    { plural: 'projects', kind: 'Project', namespaced: false, virtual: 'project' },
    {
      plural: 'projectrequests',
      kind: 'ProjectRequest',
      namespaced: false,
      virtual: 'projectrequest',
    },
  ]),
  ...defs('user.openshift.io', 'v1', [
    { plural: 'groups', kind: 'Group', namespaced: false },
    { plural: 'users', kind: 'User', namespaced: false },
  ]),
  ...defs('route.openshift.io', 'v1', [
    { plural: 'routes', all: true, kind: 'Route', status: true },
  ]),
  // OLM ships with every OpenShift 4 cluster; these are its CRDs (lists atomic, no strategic merge).
  ...defs('operators.coreos.com', 'v1', [
    { plural: 'operatorgroups', kind: 'OperatorGroup', short: ['og'], status: true },
  ]).map((t) => ({ ...t, builtin: false })),
  ...defs('operators.coreos.com', 'v1alpha1', [
    { plural: 'subscriptions', kind: 'Subscription', short: ['sub', 'subs'], status: true },
    { plural: 'catalogsources', kind: 'CatalogSource', short: ['catsrc'], status: true },
    {
      plural: 'clusterserviceversions',
      kind: 'ClusterServiceVersion',
      short: ['csv', 'csvs'],
      status: true,
    },
    { plural: 'installplans', kind: 'InstallPlan', short: ['ip'], status: true },
  ]).map((t) => ({ ...t, builtin: false })),
  ...defs('apps.openshift.io', 'v1', [
    {
      plural: 'deploymentconfigs',
      all: true,
      kind: 'DeploymentConfig',
      short: ['dc'],
      status: true,
      workload: true,
    },
  ]),
];

/** Discovery verbs of an ordinary resource. */
export const RESOURCE_VERBS = [
  'create',
  'delete',
  'deletecollection',
  'get',
  'list',
  'patch',
  'update',
  'watch',
] as const;
