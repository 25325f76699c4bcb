import type { LoopScope } from '@qontract/core';
import type { CurrentStateSpec, FetchedState, ReadSettings } from '../cluster-state/read-plan.ts';
import { relistCurrentState } from '../cluster-state/relist.ts';

export type { CurrentStateSpec, FetchedState } from '../cluster-state/read-plan.ts';

export interface FetchSettings extends ReadSettings {
  /**
   * The loop whose runs repeat in this process (`ctx.loop`): its cluster
   * states keep what the lists returned, for the next run's (see relist.ts).
   */
  readonly loop?: LoopScope | undefined;
}

/**
 * Reads the current state of every spec, listing the clusters again (a
 * polling run): the read plan of cluster-state/read-plan.ts with the relist
 * strategy. Watch mode reads by the same plan from its caches (watch-mode.ts).
 */
export function fetchCurrentState(
  specs: readonly CurrentStateSpec[],
  settings: FetchSettings,
): Promise<FetchedState[]> {
  return relistCurrentState(specs, settings);
}

/** A namespace as far as reading one fixed kind in it cares. */
export interface NamespaceForSpecs {
  readonly name: string;
  readonly clusterAdmin?: boolean | null;
  readonly cluster: { readonly name: string };
  readonly managedResourceNames?: ReadonlyArray<{
    readonly resource: string;
    readonly resourceNames: readonly string[];
  }> | null;
}

/**
 * One spec per namespace for an integration that manages one fixed kind (the
 * original's `override_managed_types`): read with the cluster-admin token when
 * the namespace says `clusterAdmin`, restricted to the names listed for that
 * kind in `managedResourceNames` (the last entry wins; other kinds' entries are
 * ignored, as upstream does with an override list).
 */
export function specsForKind(
  namespaces: readonly NamespaceForSpecs[],
  kind: string,
): CurrentStateSpec[] {
  return namespaces.map((ns) => {
    const names = (ns.managedResourceNames ?? []).filter((m) => m.resource === kind).at(-1);
    return {
      cluster: ns.cluster.name,
      namespace: ns.name,
      kind,
      privileged: Boolean(ns.clusterAdmin),
      ...(names ? { resourceNames: names.resourceNames } : {}),
    };
  });
}
