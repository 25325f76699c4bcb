import type { KubeObject } from '../cluster/kube-client.ts';
import { OpenshiftResource } from '../resource/openshift-resource.ts';

/** What decides which objects read from a cluster a run sees as its current state. */
export interface AdmissionRule {
  /** The `qontract.integration` annotation the run writes (see `ReconcileSettings`). */
  readonly integration: string;
  readonly integrationVersion: string;
  /** Objects the integration must not see at all (e.g. managed by Argo CD). */
  readonly skipCurrent?: ((item: KubeObject) => boolean) | undefined;
  readonly caller?: string | undefined;
  /**
   * Only the caller's objects (default true: integrations-manager, one manager
   * per upstream in a namespace); false lets the plan's caller rules protect
   * the others' (openshift-saas-deploy).
   */
  readonly filterCurrentByCaller?: boolean | undefined;
}

/**
 * An object read from a cluster as the run's current object, or undefined when
 * the run must not see it. The one rule for objects a run lists and objects a
 * watch delivers.
 */
export function admitCurrent(item: KubeObject, rule: AdmissionRule): OpenshiftResource | undefined {
  if (rule.skipCurrent?.(item)) return undefined;
  const current = new OpenshiftResource(item, rule.integration, rule.integrationVersion, {
    validate: false,
  });
  if (rule.caller && rule.filterCurrentByCaller !== false && current.caller !== rule.caller) {
    return undefined;
  }
  return current;
}

/**
 * The caller of an object the rule keeps out because another caller holds it
 * (its `qontract.caller_name`, null when it has none), else undefined: for
 * `leaveOtherCallers`, which leaves such a name to its holder.
 */
export function otherCaller(item: KubeObject, rule: AdmissionRule): string | null | undefined {
  if (!rule.caller || rule.filterCurrentByCaller === false || rule.skipCurrent?.(item)) {
    return undefined;
  }
  const { caller } = new OpenshiftResource(item, rule.integration, rule.integrationVersion, {
    validate: false,
  });
  return caller === rule.caller ? undefined : caller;
}
