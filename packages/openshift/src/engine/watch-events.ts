import { hostname } from 'node:os';
import { errorMessage, type Logger } from '@qontract/core';
import type { ApiResource } from '../cluster/api-resources.ts';
import type { KubeClient, KubeObject } from '../cluster/kube-client.ts';
import type { PlannedAction } from './plan-types.ts';

/**
 * Kubernetes Events of watch mode, so that `oc get events` in a namespace
 * shows what the operator put back and where it fights another writer,
 * without Grafana. Core v1 Events, as the legacy event recorders write them
 * (`source`, `count`, first and last timestamps): the form `oc get events`
 * and `oc describe` show on every cluster version.
 */

const EVENTS: ApiResource = {
  kind: 'Event',
  group: '',
  version: 'v1',
  name: 'events',
  namespaced: true,
  verbs: ['create'],
};

/** Where an Event of a cluster-scoped object goes, as the Kubernetes recorders do. */
const CLUSTER_SCOPED_EVENTS_NAMESPACE = 'default';

export interface WatchEvent {
  readonly type: 'Normal' | 'Warning';
  /** `DriftReverted` or `FightDetected`: one word, what `oc get events` filters on. */
  readonly reason: 'DriftReverted' | 'FightDetected';
  /** Names, kinds and field managers only: never an object's data. */
  readonly message: string;
}

export interface EventTarget {
  /** The namespace, or `cluster` for a cluster-scoped object (the plan's convention). */
  readonly namespace: string;
  readonly kind: string;
  readonly name: string;
  readonly apiVersion: string;
  /** The object as the cache held it before our fix (its uid), if it existed. */
  readonly object: KubeObject | undefined;
}

/**
 * Writes one Event about `target`. An Event is a report, not part of the fix:
 * a refusal (a service account without `create` on events) or any failure is
 * logged as a warning and never registered as the run's error.
 */
export async function recordWatchEvent(
  client: KubeClient,
  cluster: string,
  integration: string,
  target: EventTarget,
  event: WatchEvent,
  log: Logger,
): Promise<void> {
  const clusterScoped = target.namespace === 'cluster';
  const namespace = clusterScoped ? CLUSTER_SCOPED_EVENTS_NAMESPACE : target.namespace;
  const meta = target.object?.metadata as { uid?: string; resourceVersion?: string } | undefined;
  const now = new Date().toISOString();
  const body: KubeObject = {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { generateName: `${target.name}.`, namespace },
    involvedObject: {
      apiVersion: target.apiVersion,
      kind: target.kind.split('.')[0],
      name: target.name,
      ...(clusterScoped ? {} : { namespace: target.namespace }),
      ...(meta?.uid ? { uid: meta.uid } : {}),
      ...(meta?.resourceVersion ? { resourceVersion: meta.resourceVersion } : {}),
    },
    type: event.type,
    reason: event.reason,
    message: event.message,
    // The pod's name is its host name: which replica (which shard) wrote the Event.
    source: { component: `qontract-reconcile-${integration}`, host: hostname() },
    firstTimestamp: now,
    lastTimestamp: now,
    count: 1,
  };
  try {
    await client.create(EVENTS, namespace, body);
  } catch (e) {
    log.warn(
      `[${cluster}/${namespace}] could not record the ${event.reason} event of ${target.kind}/${target.name}: ${errorMessage(e)}`,
    );
  }
}

/** The Event message of a fix: what was put back and who had changed it. */
export function driftMessage(
  integration: string,
  action: PlannedAction,
  writer: string | undefined,
): string {
  const what = `${action.kind}/${action.name}`;
  const by = writer ? ` by field manager '${writer}'` : '';
  if (action.action === 'delete') {
    return `${what} is not in the desired state: ${integration} deleted it`;
  }
  if (action.reason === 'new') return `${what} was deleted: ${integration} created it again`;
  if (action.reason === 'take-over') return `${what} is taken over by ${integration}`;
  const fields = action.diff?.length ? ` (${action.diff.join(', ')})` : '';
  return `${what} was changed${fields}${by}: ${integration} applied the desired state again`;
}
