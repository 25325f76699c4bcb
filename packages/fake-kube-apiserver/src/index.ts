export type { ResourceType } from './catalogue.ts';
export { KUBERNETES_TYPES, OPENSHIFT_TYPES } from './catalogue.ts';
export type { FakeCluster } from './cluster.ts';
export type { FaultRule } from './faults.ts';
export type { JsonObject } from './json.ts';
export type { KubeconfigObject } from './kubeconfig.ts';
export type { Verb } from './route.ts';
export {
  type ClusterHandle,
  type FakeClusterSpec,
  type FakeKubeApiServer,
  type FakeKubeApiServerOptions,
  type FaultControl,
  parseSeedYaml,
  type RequestFilter,
  type RequestLogEntry,
  startFakeKubeApiServer,
} from './server.ts';
