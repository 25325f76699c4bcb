import { QontractError } from '@qontract/core';
import {
  AmbiguousResourceTypeError,
  type ClusterMap,
  type CurrentStateSpec,
  isClusterProblem,
  KindNotFoundError,
} from '@qontract/openshift';
import type { SelectedNamespace } from './model.ts';

export interface SpecsResult<S> {
  readonly specs: CurrentStateSpec[];
  /** Namespaces whose kinds could be fetched (the others were skipped with an error). */
  readonly namespaces: S[];
  readonly errors: Array<{ scope: string; message: string }>;
}

/**
 * The original's `init_specs_to_fetch` for namespaces (upstream
 * `reconcile/openshift_base.py`): the managed kinds of each namespace (or the
 * pipeline's override), their type overrides and managed names, validated
 * against the cluster's API: an ambiguous kind or a cluster-scoped kind without
 * managed names is an error for that namespace; a kind the cluster lacks is
 * skipped (CRDs may come in the same change). Names or overrides for a kind
 * that is not managed are a configuration error that stops the run.
 */
export function specsForNamespaces<S extends SelectedNamespace>(
  selected: readonly S[],
  clusters: ClusterMap,
  overrideManagedTypes?: readonly string[],
): SpecsResult<S> {
  const specs: CurrentStateSpec[] = [];
  const kept: S[] = [];
  const errors: SpecsResult<S>['errors'] = [];
  for (const sel of selected) {
    const ns = sel.namespace;
    const cluster = ns.cluster.name;
    const managedTypes = new Set(overrideManagedTypes ?? ns.managedResourceTypes ?? []);
    if (managedTypes.size === 0) continue;
    const privileged = Boolean(ns.clusterAdmin);
    const handle = clusters.get(cluster, privileged);
    if (isClusterProblem(handle)) continue; // registered when the cluster map was built
    const names = new Map<string, string[]>();
    for (const mrn of ns.managedResourceNames ?? []) {
      if (managedTypes.has(mrn.resource)) names.set(mrn.resource, [...mrn.resourceNames]);
      else if (!overrideManagedTypes) {
        throw new QontractError(
          `Non-managed resource name ${JSON.stringify(mrn)} listed on ${cluster}/${ns.name} (valid kinds: ${[...managedTypes].join(', ')})`,
        );
      }
    }
    const overrides = new Map<string, string>();
    for (const o of ns.managedResourceTypeOverrides ?? []) {
      if (managedTypes.has(o.resource)) overrides.set(o.resource, o.override);
      else if (!overrideManagedTypes) {
        throw new QontractError(
          `Non-managed override ${JSON.stringify(o)} listed on ${cluster}/${ns.name} (valid kinds: ${[...managedTypes].join(', ')})`,
        );
      }
    }
    let invalid: string | undefined;
    for (const type of managedTypes) {
      try {
        const resource = handle.catalog.get(overrides.get(type) ?? type);
        if (!resource.namespaced && !names.has(type)) {
          invalid = `Cluster-scoped resource ${type} must be managed by name only. Please use 'managedResourceNames' field to specify the names of the resources to manage.`;
          break;
        }
      } catch (e) {
        if (e instanceof KindNotFoundError) continue;
        if (e instanceof AmbiguousResourceTypeError) {
          invalid = e.message;
          break;
        }
        throw e;
      }
    }
    if (invalid) {
      errors.push({
        scope: `${cluster}/${ns.name}`,
        message: `[${cluster}/${ns.name}] ${invalid}`,
      });
      continue;
    }
    for (const type of managedTypes) {
      specs.push({
        cluster,
        namespace: ns.name,
        kind: overrides.get(type) ?? type,
        privileged,
        resourceNames: names.get(type),
      });
    }
    kept.push(sel);
  }
  return { specs, namespaces: kept, errors };
}
