import type { RegisteredError } from '@qontract/core';
import type { KubeObject } from '../cluster/kube-client.ts';
import type { ClusterEntries } from '../inventory/index.ts';
import type { PyValue } from '../resource/py-values.ts';
import type { CurrentStateSpec, FetchedState } from './fetch.ts';

/** The part of a desired object that its cluster's plan depends on. */
export interface DesiredOfCluster {
  readonly namespace: string;
  readonly resource: {
    readonly body: PyValue;
    readonly integration: string;
    readonly integrationVersion: string;
    readonly callerName: string | null;
  };
  readonly privileged?: boolean;
  readonly source?: string;
}

/**
 * One cluster of a run that planned nothing for it, kept for the next run:
 * what the plan was made of (its specs, its desired objects with the bodies
 * they had before planning, the objects listed of it) and the inventory
 * entries and warnings it made.
 */
export interface UnchangedCluster {
  readonly specs: string;
  readonly desired: readonly DesiredOfCluster[];
  readonly bodies: readonly PyValue[];
  readonly current: ReadonlyMap<string, readonly KubeObject[]>;
  readonly entries: ClusterEntries;
  readonly unusedTypeWarnings: readonly string[];
}

/** What a run hands to the next one: its unchanged clusters, by name. */
export type UnchangedClusters = Map<string, UnchangedCluster>;

/** The specs of one cluster, as one string: equal strings, equal inventory and reads. */
export function specsKey(specs: readonly CurrentStateSpec[]): string {
  return specs
    .map(
      (s) =>
        `${s.namespace}\u0000${s.kind}\u0000${s.privileged}\u0000${s.resourceNames?.join('\u0001') ?? '*'}`,
    )
    .join('\u0002');
}

function stateKey(spec: CurrentStateSpec): string {
  return `${spec.namespace}\u0000${spec.kind}\u0000${spec.privileged}`;
}

/** The items read of one cluster by spec, when every one of them is frozen (else undefined). */
export function frozenCurrent(
  states: readonly FetchedState[],
): Map<string, readonly KubeObject[]> | undefined {
  const current = new Map<string, readonly KubeObject[]>();
  for (const { spec, items } of states) {
    for (const item of items) if (!Object.isFrozen(item)) return undefined;
    current.set(stateKey(spec), items);
  }
  return current;
}

/**
 * Whether this run's desired objects of a cluster are those of the kept run:
 * the same frozen bodies (the desired cache's: they cannot change), in the
 * same order, in the same namespaces, with the same token, source and caller.
 */
export function sameDesired(kept: UnchangedCluster, desired: readonly DesiredOfCluster[]): boolean {
  if (kept.desired.length !== desired.length) return false;
  for (let i = 0; i < desired.length; i++) {
    const a = kept.desired[i]!;
    const b = desired[i]!;
    if (
      kept.bodies[i] !== b.resource.body ||
      a.namespace !== b.namespace ||
      Boolean(a.privileged) !== Boolean(b.privileged) ||
      a.source !== b.source ||
      a.resource.callerName !== b.resource.callerName ||
      a.resource.integration !== b.resource.integration ||
      a.resource.integrationVersion !== b.resource.integrationVersion
    ) {
      return false;
    }
  }
  return true;
}

/** Whether the objects read of a cluster are those the kept run read: the same frozen objects. */
export function sameCurrent(kept: UnchangedCluster, states: readonly FetchedState[]): boolean {
  if (kept.current.size !== states.length) return false;
  for (const { spec, items } of states) {
    const before = kept.current.get(stateKey(spec));
    if (before?.length !== items.length) return false;
    for (let i = 0; i < items.length; i++) if (before[i] !== items[i]) return false;
  }
  return true;
}

/** Whether an error of the run concerns `cluster` (its own or one of its namespaces'). */
export function concernsCluster(errors: readonly RegisteredError[], cluster: string): boolean {
  const prefix = `${cluster}/`;
  return errors.some((e) => e.scope === cluster || e.scope.startsWith(prefix));
}

/** Every desired body frozen: only those can be recognised by identity in the next run. */
export function allFrozen(bodies: readonly PyValue[]): boolean {
  return bodies.every((b) => typeof b === 'object' && b !== null && Object.isFrozen(b));
}
