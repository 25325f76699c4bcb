import { errorMessage, type RunContext } from '@qontract/core';
import { OpenshiftResource } from '../resource/openshift-resource.ts';
import type { DesiredResource } from './reconcile.ts';

/** A desired object as an integration builds it, before it becomes an OpenshiftResource. */
export interface DesiredBody {
  readonly cluster: string;
  readonly namespace: string;
  /** Where it came from (app-interface paths), named in errors. */
  readonly source: string;
  readonly body: { readonly metadata: { readonly name: string } };
  readonly privileged?: boolean;
}

/**
 * Wraps desired bodies for the engine. A body the resource model refuses (a
 * name that is not a DNS-1123 subdomain, an invalid container name) is
 * registered as an error of its namespace naming its source, and left out:
 * the run goes on, deletes nothing and exits 1 (the original stops the whole
 * run on the first one).
 */
export function toDesiredResources(
  ctx: Pick<RunContext, 'errors'>,
  items: readonly DesiredBody[],
  integration: string,
  integrationVersion: string,
): DesiredResource[] {
  const out: DesiredResource[] = [];
  for (const item of items) {
    try {
      out.push({
        cluster: item.cluster,
        namespace: item.namespace,
        privileged: item.privileged ?? false,
        source: item.source,
        resource: new OpenshiftResource(item.body, integration, integrationVersion, {
          errorDetails: item.body.metadata.name,
        }),
      });
    } catch (e) {
      ctx.errors.register(
        `${item.cluster}/${item.namespace}`,
        `[${item.cluster}/${item.namespace}] ${item.source}: ${errorMessage(e)}`,
      );
    }
  }
  return out;
}
