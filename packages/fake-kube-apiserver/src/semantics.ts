import type { ResourceType } from './catalogue.ts';
import { deepEqual, isObject, type JsonObject, stringMap } from './json.ts';
import { type FieldError, invalid } from './status.ts';

/**
 * What the real API server does to objects beyond storing them: defaulting,
 * validation of names and immutable fields, generation, status preservation.
 */

const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

const SUBDOMAIN_MESSAGE =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_MESSAGE =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

/** Kinds whose names must be DNS labels rather than subdomains. */
const LABEL_NAMED = new Set(['Namespace', 'Service', 'Project', 'ProjectRequest']);

export function validateName(type: ResourceType, name: string): void {
  if (name === '') {
    throw invalid(type, name, [
      {
        type: 'FieldValueRequired',
        field: 'metadata.name',
        detail: 'Required value: name or generateName is required',
      },
    ]);
  }
  const label = LABEL_NAMED.has(type.kind);
  const ok = label
    ? LABEL.test(name) && name.length <= 63
    : SUBDOMAIN.test(name) && name.length <= 253;
  if (!ok) {
    throw invalid(type, name, [
      {
        type: 'FieldValueInvalid',
        field: 'metadata.name',
        detail: `Invalid value: "${name}": ${label ? LABEL_MESSAGE : SUBDOMAIN_MESSAGE}`,
      },
    ]);
  }
}

function spec(obj: JsonObject): JsonObject {
  return isObject(obj.spec) ? obj.spec : {};
}

/** Container ports and Service ports default their protocol (list keys depend on it). */
function defaultContainerPorts(node: unknown): void {
  if (Array.isArray(node)) {
    node.forEach(defaultContainerPorts);
    return;
  }
  if (!isObject(node)) return;
  for (const [key, value] of Object.entries(node)) {
    if ((key === 'containers' || key === 'initContainers') && Array.isArray(value)) {
      for (const container of value) {
        if (isObject(container) && Array.isArray(container.ports)) {
          for (const port of container.ports) {
            if (isObject(port) && port.protocol === undefined) port.protocol = 'TCP';
          }
        }
      }
    } else if (typeof value === 'object') defaultContainerPorts(value);
  }
}

export interface Allocator {
  nextClusterIP(): string;
}

export function applyDefaults(
  type: ResourceType,
  obj: JsonObject,
  live: JsonObject | undefined,
  allocator: Allocator,
  clusterName: string,
): void {
  if (!type.builtin) return;
  defaultContainerPorts(obj.spec);
  switch (type.kind) {
    case 'Namespace': {
      const metadata = isObject(obj.metadata) ? obj.metadata : {};
      metadata.labels = {
        ...stringMap(metadata.labels),
        'kubernetes.io/metadata.name': String(metadata.name),
      };
      if (!live) obj.spec = { finalizers: ['kubernetes'], ...spec(obj) };
      if (!isObject(obj.status)) obj.status = { phase: 'Active' };
      return;
    }
    case 'Secret': {
      if (obj.type === undefined) obj.type = live?.type ?? 'Opaque';
      if (isObject(obj.stringData)) {
        const data = isObject(obj.data) ? { ...obj.data } : {};
        for (const [k, v] of Object.entries(obj.stringData)) {
          data[k] = Buffer.from(String(v)).toString('base64');
        }
        obj.data = data;
        delete obj.stringData;
      }
      return;
    }
    case 'Service': {
      const s = spec(obj);
      obj.spec = s;
      if (s.type === undefined) s.type = 'ClusterIP';
      const liveSpec = live ? spec(live) : undefined;
      if (s.type !== 'ExternalName') {
        const unset = s.clusterIP === undefined || s.clusterIP === '';
        if (liveSpec?.clusterIP && unset && s.clusterIPs === undefined) {
          // An update that omits the allocated IPs keeps them, as the real registry does.
          s.clusterIP = liveSpec.clusterIP;
          s.clusterIPs = liveSpec.clusterIPs;
        } else if (!live && unset) {
          s.clusterIP = allocator.nextClusterIP();
        }
        if (s.clusterIPs === undefined && !unset) s.clusterIPs = [s.clusterIP];
        if (!live && s.clusterIPs === undefined) s.clusterIPs = [s.clusterIP];
        if (s.clusterIP !== 'None') {
          s.ipFamilies ??= ['IPv4'];
          s.ipFamilyPolicy ??= 'SingleStack';
        }
        s.sessionAffinity ??= 'None';
        s.internalTrafficPolicy ??= 'Cluster';
      }
      if (Array.isArray(s.ports)) {
        for (const port of s.ports) {
          if (!isObject(port)) continue;
          port.protocol ??= 'TCP';
          if (port.targetPort === undefined && s.type !== 'ExternalName')
            port.targetPort = port.port;
        }
      }
      return;
    }
    case 'Deployment':
    case 'StatefulSet':
    case 'ReplicaSet':
    case 'DeploymentConfig': {
      const s = spec(obj);
      obj.spec = s;
      s.replicas ??= 1;
      if (type.kind === 'Deployment') {
        // The real defaults: a rolling update of 25 % / 25 %. They stay on the object when a
        // later apply switches the type to Recreate (nobody owns them), which the server refuses.
        const strategy = isObject(s.strategy) ? s.strategy : {};
        s.strategy = strategy;
        strategy.type ??= 'RollingUpdate';
        if (strategy.type === 'RollingUpdate') {
          const rolling = isObject(strategy.rollingUpdate) ? strategy.rollingUpdate : {};
          strategy.rollingUpdate = rolling;
          rolling.maxSurge ??= '25%';
          rolling.maxUnavailable ??= '25%';
        }
      }
      return;
    }
    case 'Route': {
      const s = spec(obj);
      obj.spec = s;
      const metadata = isObject(obj.metadata) ? obj.metadata : {};
      // The router's default host: <name>-<namespace>.apps.<cluster domain>.
      if (s.host === undefined || s.host === '') {
        s.host = `${String(metadata.name)}-${String(metadata.namespace)}.apps.${clusterName}.example.com`;
      }
      s.wildcardPolicy ??= 'None';
      if (isObject(s.to)) s.to.weight ??= 100;
      return;
    }
    default:
      return;
  }
}

/** Go's `%#v` of a []string, as field errors print values. */
function goStrings(value: unknown): string {
  if (!Array.isArray(value)) return '[]string(nil)';
  return `[]string{${value.map((v) => JSON.stringify(String(v))).join(', ')}}`;
}

/** Go's `%#v` of a LabelSelector, as it appears in the real immutable-selector message. */
function goLabelSelector(selector: unknown): string {
  const s = isObject(selector) ? selector : {};
  const labels = stringMap(s.matchLabels);
  const keys = Object.keys(labels).sort();
  const matchLabels =
    keys.length === 0
      ? 'map[string]string(nil)'
      : `map[string]string{${keys.map((k) => `"${k}":"${labels[k]}"`).join(', ')}}`;
  const expressions =
    Array.isArray(s.matchExpressions) && s.matchExpressions.length > 0
      ? `[]v1.LabelSelectorRequirement{...}`
      : '[]v1.LabelSelectorRequirement(nil)';
  return `v1.LabelSelector{MatchLabels:${matchLabels}, MatchExpressions:${expressions}}`;
}

const STATEFULSET_MUTABLE = new Set([
  'replicas',
  'ordinals',
  'template',
  'updateStrategy',
  'persistentVolumeClaimRetentionPolicy',
  'minReadySeconds',
]);

function without(obj: JsonObject, keys: Set<string>): JsonObject {
  return Object.fromEntries(Object.entries(obj).filter(([k]) => !keys.has(k)));
}

/** Refuses changes the real server refuses, with its 422 wording. */
export function validateUpdate(
  type: ResourceType,
  name: string,
  live: JsonObject,
  next: JsonObject,
): void {
  if (!type.builtin) return;
  const errors: FieldError[] = [];
  const oldSpec = spec(live);
  const newSpec = spec(next);
  switch (type.kind) {
    case 'Service': {
      if (newSpec.type === 'ExternalName' || oldSpec.type === 'ExternalName') break;
      const oldIPs = Array.isArray(oldSpec.clusterIPs) ? oldSpec.clusterIPs : [];
      const newIPs = Array.isArray(newSpec.clusterIPs) ? newSpec.clusterIPs : [];
      if (
        typeof oldSpec.clusterIP === 'string' &&
        oldSpec.clusterIP !== '' &&
        typeof newSpec.clusterIP === 'string' &&
        newSpec.clusterIP !== '' &&
        newSpec.clusterIP !== oldSpec.clusterIP
      ) {
        errors.push({
          type: 'FieldValueInvalid',
          field: 'spec.clusterIP',
          detail: `Invalid value: ${JSON.stringify(newSpec.clusterIP)}: field is immutable`,
        });
      } else if (oldIPs.length > 0 && newIPs.length === 0) {
        errors.push({
          type: 'FieldValueInvalid',
          field: 'spec.clusterIPs[0]',
          detail: `Invalid value: ${goStrings(newSpec.clusterIPs)}: primary clusterIP can not be unset`,
        });
      } else if (oldIPs.length > 0 && newIPs[0] !== oldIPs[0]) {
        errors.push({
          type: 'FieldValueInvalid',
          field: 'spec.clusterIPs[0]',
          detail: `Invalid value: ${goStrings(newSpec.clusterIPs)}: may not change once set`,
        });
      }
      break;
    }
    case 'Deployment':
    case 'DaemonSet':
    case 'ReplicaSet': {
      if (!deepEqual(oldSpec.selector, newSpec.selector)) {
        errors.push({
          type: 'FieldValueInvalid',
          field: 'spec.selector',
          detail: `Invalid value: ${goLabelSelector(newSpec.selector)}: field is immutable`,
        });
      }
      const strategy = isObject(newSpec.strategy) ? newSpec.strategy : {};
      if (
        type.kind === 'Deployment' &&
        strategy.type === 'Recreate' &&
        strategy.rollingUpdate !== undefined
      ) {
        errors.push({
          type: 'FieldValueForbidden',
          field: 'spec.strategy.rollingUpdate',
          detail: "Forbidden: may not be specified when strategy `type` is 'Recreate'",
        });
      }
      break;
    }
    case 'StatefulSet': {
      if (
        !deepEqual(without(oldSpec, STATEFULSET_MUTABLE), without(newSpec, STATEFULSET_MUTABLE))
      ) {
        errors.push({
          type: 'FieldValueForbidden',
          field: 'spec',
          detail:
            "Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
        });
      }
      break;
    }
    case 'Job': {
      if (!deepEqual(oldSpec.selector, newSpec.selector)) {
        errors.push({
          type: 'FieldValueInvalid',
          field: 'spec.selector',
          detail: `Invalid value: ${goLabelSelector(newSpec.selector)}: field is immutable`,
        });
      }
      if (!deepEqual(oldSpec.template, newSpec.template)) {
        // The real message dumps the whole Go struct; the prefix and suffix are what callers match.
        errors.push({
          type: 'FieldValueInvalid',
          field: 'spec.template',
          detail: `Invalid value: core.PodTemplateSpec{${JSON.stringify(newSpec.template ?? {})}}: field is immutable`,
        });
      }
      break;
    }
    case 'Secret':
    case 'ConfigMap': {
      if (live.immutable === true) {
        const forbidden = 'Forbidden: field is immutable when `immutable` is set';
        if (next.immutable !== true) {
          errors.push({ type: 'FieldValueForbidden', field: 'immutable', detail: forbidden });
        }
        if (!deepEqual(live.data, next.data)) {
          errors.push({ type: 'FieldValueForbidden', field: 'data', detail: forbidden });
        }
        if (type.kind === 'ConfigMap' && !deepEqual(live.binaryData, next.binaryData)) {
          errors.push({ type: 'FieldValueForbidden', field: 'binaryData', detail: forbidden });
        }
      }
      break;
    }
    default:
      break;
  }
  if (errors.length > 0) throw invalid(type, name, errors);
}

/** Everything but metadata and status: what a generation counts changes of. */
export function specChanged(live: JsonObject, next: JsonObject): boolean {
  const strip = (o: JsonObject) =>
    without(o, new Set(['metadata', 'status', 'apiVersion', 'kind']));
  return !deepEqual(strip(live), strip(next));
}

/** The status a controller reports once a workload has rolled out. */
export function readyStatus(kind: string, obj: JsonObject, now: string): JsonObject {
  const metadata = isObject(obj.metadata) ? obj.metadata : {};
  const generation = typeof metadata.generation === 'number' ? metadata.generation : 1;
  const s = spec(obj);
  const replicas = typeof s.replicas === 'number' ? s.replicas : 1;
  const counts = replicas > 0 ? { readyReplicas: replicas, availableReplicas: replicas } : {};
  const condition = (t: string, reason: string) => ({
    type: t,
    status: 'True',
    lastUpdateTime: now,
    lastTransitionTime: now,
    reason,
  });
  switch (kind) {
    case 'Deployment':
      return {
        observedGeneration: generation,
        replicas,
        updatedReplicas: replicas,
        ...counts,
        conditions: [
          {
            ...condition('Available', 'MinimumReplicasAvailable'),
            message: 'Deployment has minimum availability.',
          },
          {
            ...condition('Progressing', 'NewReplicaSetAvailable'),
            message: 'ReplicaSet has successfully progressed.',
          },
        ],
      };
    case 'StatefulSet':
      return {
        observedGeneration: generation,
        replicas,
        currentReplicas: replicas,
        updatedReplicas: replicas,
        ...counts,
        currentRevision: `${String(metadata.name)}-${generation}`,
        updateRevision: `${String(metadata.name)}-${generation}`,
        collisionCount: 0,
      };
    case 'DaemonSet':
      return {
        observedGeneration: generation,
        currentNumberScheduled: 1,
        desiredNumberScheduled: 1,
        numberMisscheduled: 0,
        numberReady: 1,
        numberAvailable: 1,
        updatedNumberScheduled: 1,
      };
    case 'ReplicaSet':
      return {
        observedGeneration: generation,
        replicas,
        fullyLabeledReplicas: replicas,
        ...counts,
      };
    case 'DeploymentConfig':
      return {
        observedGeneration: generation,
        latestVersion: generation,
        replicas,
        updatedReplicas: replicas,
        ...counts,
        unavailableReplicas: 0,
        conditions: [
          { ...condition('Available', ''), message: 'Deployment config has minimum availability.' },
          { ...condition('Progressing', 'NewReplicationControllerAvailable') },
        ],
      };
    case 'Job':
      return {
        startTime: now,
        completionTime: now,
        succeeded: 1,
        ready: 0,
        terminating: 0,
        uncountedTerminatedPods: {},
        conditions: [
          {
            type: 'SuccessCriteriaMet',
            status: 'True',
            lastProbeTime: now,
            lastTransitionTime: now,
          },
          { type: 'Complete', status: 'True', lastProbeTime: now, lastTransitionTime: now },
        ],
      };
    default:
      return {};
  }
}
