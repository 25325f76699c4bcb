import { QontractError } from '@qontract/core';
import { z } from 'zod';
import type { SaasFilesQuery } from './saas-files.generated.ts';
import type { SaasFileTargetNamespacesQuery } from './saas-target-namespaces.generated.ts';

/** A saas file as the SaasFiles query returns it (JSON fields still text). */
export type RawSaasFile = NonNullable<SaasFilesQuery['saas_files']>[number];
type RawResourceTemplate = RawSaasFile['resourceTemplates'][number];
/** A target as the query returns it: a `namespace` or a `namespaceSelector`. */
export type RawSaasTarget = RawResourceTemplate['targets'][number];
/** A namespace of the SaasFileTargetNamespaces query (the SaasTargetNamespace fragment). */
export type RawSaasNamespace = NonNullable<SaasFileTargetNamespacesQuery['namespaces']>[number];

/** A JSON object (a `json` field of app-interface, parsed). Keys keep their order. */
export type JsonObject = Record<string, unknown>;
/** Parameters (`parameters` of a saas file, resource template, target or environment). */
export type SaasParameters = Record<string, unknown>;

type SaasEnvironment = Omit<RawSaasNamespace['environment'], 'labels' | 'parameters'> & {
  readonly labels: JsonObject;
  readonly parameters: SaasParameters | null;
};
type SaasApp = Omit<RawSaasNamespace['app'], 'labels'> & {
  readonly labels: JsonObject | null;
};
type SaasCluster = Omit<RawSaasNamespace['cluster'], 'labels' | 'externalConfiguration'> & {
  readonly labels: JsonObject | null;
  readonly externalConfiguration: { readonly labels: JsonObject } | null;
};
/** A target namespace with its JSON fields parsed. */
export type SaasNamespace = Omit<RawSaasNamespace, 'labels' | 'environment' | 'app' | 'cluster'> & {
  readonly labels: JsonObject | null;
  readonly environment: SaasEnvironment;
  readonly app: SaasApp;
  readonly cluster: SaasCluster;
};

/** A target after namespace selectors are resolved: it always has its namespace. */
export type SaasTarget = Omit<
  RawSaasTarget,
  'namespace' | 'namespaceSelector' | 'provider' | 'parameters'
> & {
  readonly namespace: SaasNamespace;
  readonly parameters: SaasParameters | null;
};
export type SaasResourceTemplate = Omit<RawResourceTemplate, 'targets' | 'parameters'> & {
  readonly parameters: SaasParameters | null;
  readonly targets: readonly SaasTarget[];
};
/** A saas file of the original's `SaasFile` model: selectors resolved, JSON fields parsed. */
export type SaasFile = Omit<RawSaasFile, 'resourceTemplates' | 'parameters' | 'labels'> & {
  readonly labels: JsonObject | null;
  readonly parameters: SaasParameters | null;
  readonly resourceTemplates: readonly SaasResourceTemplate[];
};

const jsonObject = z.record(z.string(), z.unknown());

/**
 * A `json` field as an object: null stays null; anything but a JSON object is
 * a QontractError naming where it came from.
 */
export function parseJsonObject(text: string | null, where: string): JsonObject | null {
  if (text === null) return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new QontractError(`${where}: not valid JSON: ${e instanceof Error ? e.message : e}`);
  }
  if (value === null) return null;
  const parsed = jsonObject.safeParse(value);
  if (!parsed.success) throw new QontractError(`${where}: must be a JSON object`);
  return parsed.data;
}

/** The namespace with its `json` fields (labels, environment parameters) parsed. */
export function parseNamespace(ns: RawSaasNamespace): SaasNamespace {
  const where = `namespace ${ns.path}`;
  return {
    ...ns,
    labels: parseJsonObject(ns.labels, `${where}: labels`),
    environment: {
      ...ns.environment,
      labels: parseJsonObject(ns.environment.labels, `${where}: environment labels`) ?? {},
      parameters: parseJsonObject(ns.environment.parameters, `${where}: environment parameters`),
    },
    app: { ...ns.app, labels: parseJsonObject(ns.app.labels, `${where}: app labels`) },
    cluster: {
      ...ns.cluster,
      labels: parseJsonObject(ns.cluster.labels, `${where}: cluster labels`),
      externalConfiguration: ns.cluster.externalConfiguration
        ? {
            labels:
              parseJsonObject(
                ns.cluster.externalConfiguration.labels,
                `${where}: cluster externalConfiguration labels`,
              ) ?? {},
          }
        : null,
    },
  };
}

/** `(cluster, namespace)`: how the original tells namespaces apart. */
export function namespaceKey(ns: { name: string; cluster: { name: string } }): string {
  return `${ns.cluster.name}/${ns.name}`;
}
