import { gqlClient, type TypedDocumentNode } from '@qontract/app-interface';
import { commonOptions, defineIntegration } from '@qontract/core';
import {
  type CurrentStateSpec,
  clusterMapForNamespaces,
  type DesiredResource,
  OpenshiftResource,
  parseResource,
  reconcileResources,
} from '@qontract/openshift';
import { parse } from 'graphql';
import { RESOURCES_INTEGRATION, RESOURCES_INTEGRATION_VERSION } from './model.ts';

/**
 * A stand-in for `openshift-resources` until that integration lands: the
 * same shape of run (namespaces with their `resource` openshiftResources from
 * app-interface, every managed kind read from the clusters, one engine run
 * with the original's annotations), without templates, Vault or the
 * providers' validations. Swapping in the real one is a change of the
 * integration name the scenarios run (see scenarios.ts).
 */
export const BENCH_RESOURCES_INTEGRATION = 'bench-openshift-resources';

interface NamespacesResult {
  namespaces: Array<{
    name: string;
    delete?: boolean | null;
    clusterAdmin?: boolean | null;
    managedResourceTypes?: string[] | null;
    cluster: {
      name: string;
      serverUrl: string;
      insecureSkipTLSVerify?: boolean | null;
      internal?: boolean | null;
      automationToken?: { path: string; field: string; version?: number | null } | null;
      clusterAdminAutomationToken?: { path: string; field: string; version?: number | null } | null;
      disable?: { integrations?: string[] | null } | null;
    };
    openshiftResources?: Array<{
      provider: string;
      path?: string | null;
      resource?: { path: string; content: string } | null;
    }> | null;
  }> | null;
}

// The subset of the original's openshift-resources namespaces document this stand-in uses.
const NamespacesDocument = parse(`
  query BenchOpenshiftResourcesNamespaces {
    namespaces: namespaces_v1 {
      name
      delete
      clusterAdmin
      managedResourceTypes
      cluster {
        name
        serverUrl
        insecureSkipTLSVerify
        internal
        automationToken { path field version }
        clusterAdminAutomationToken { path field version }
        disable { integrations }
      }
      openshiftResources {
        provider
        ... on NamespaceOpenshiftResourceResource_v1 {
          resource: path { path content }
        }
      }
    }
  }
`) as TypedDocumentNode<NamespacesResult, Record<string, never>>;

export const benchOpenshiftResources = defineIntegration({
  name: BENCH_RESOURCES_INTEGRATION,
  version: RESOURCES_INTEGRATION_VERSION,
  description: 'Benchmark stand-in for openshift-resources (plain `resource` providers only).',
  options: {
    threadPoolSize: commonOptions.threadPoolSize(10),
  },
  run: async (ctx, opts) => {
    const gql = await ctx.client(gqlClient);
    const { namespaces } = await gql.query(NamespacesDocument, undefined, {
      skipValidation: true,
    });
    const selected = (namespaces ?? []).filter(
      (ns) => !ns.delete && (ns.managedResourceTypes?.length ?? 0) > 0,
    );
    const specs: CurrentStateSpec[] = [];
    const desired: DesiredResource[] = [];
    for (const ns of selected) {
      const privileged = Boolean(ns.clusterAdmin);
      for (const kind of ns.managedResourceTypes ?? []) {
        specs.push({ cluster: ns.cluster.name, namespace: ns.name, kind, privileged });
      }
      for (const r of ns.openshiftResources ?? []) {
        if (r.provider !== 'resource' || !r.resource) continue;
        desired.push({
          cluster: ns.cluster.name,
          namespace: ns.name,
          privileged,
          source: r.resource.path,
          resource: new OpenshiftResource(
            parseResource(r.resource.content),
            RESOURCES_INTEGRATION,
            RESOURCES_INTEGRATION_VERSION,
          ),
        });
      }
    }
    // Desired first: parsing is CPU-bound and would otherwise sit between discovery and the lists.
    const clusters = await clusterMapForNamespaces(ctx, selected, {
      concurrency: opts.threadPoolSize,
    });
    await reconcileResources({
      ctx,
      integration: RESOURCES_INTEGRATION,
      integrationVersion: RESOURCES_INTEGRATION_VERSION,
      clusters,
      specs,
      desired,
      concurrency: opts.threadPoolSize,
      warnUnusedTypes: true,
    });
  },
});
