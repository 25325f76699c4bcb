import type {
  OpenshiftResourceFieldsFragment,
  OpenshiftResourcesNamespacesQuery,
} from './namespaces.generated.ts';

export type NamespaceData = NonNullable<OpenshiftResourcesNamespacesQuery['namespaces']>[number];
export type OpenshiftResourceData = OpenshiftResourceFieldsFragment;

/** A namespace selected for a run, its openshiftResources already merged and filtered. */
export interface SelectedNamespace {
  readonly namespace: NamespaceData;
  readonly openshiftResources: readonly OpenshiftResourceData[];
}

/** The providers of each pipeline variant (upstream's `providers` argument). */
export type Provider =
  | 'resource'
  | 'resource-template'
  | 'vault-secret'
  | 'route'
  | 'prometheus-rule';

interface ResourceFile {
  readonly path: string;
  readonly content: string;
}

/** Fields every provider may have; the generated union lacks a discriminant type. */
export interface AnyProviderFields {
  readonly provider: string;
  readonly path?: ResourceFile | null;
  readonly type?: string | null;
  readonly variables?: string | null;
  readonly validate_json?: boolean | null;
  readonly validate_alertmanager_config?: boolean | null;
  readonly alertmanager_config_key?: string | null;
  readonly enable_query_support?: boolean | null;
  readonly vault_path?: string;
  readonly version?: number;
  readonly name?: string | null;
  readonly labels?: string | null;
  readonly annotations?: string | null;
  readonly vault_type?: string | null;
  readonly vault_tls_secret_path?: string | null;
  readonly vault_tls_secret_version?: number | null;
}

export function fields(r: OpenshiftResourceData): AnyProviderFields {
  return r as AnyProviderFields;
}

/** How an openshiftResource is named in messages: its resource path, or its Vault path. */
export function describeResource(r: OpenshiftResourceData): string {
  const f = fields(r);
  return f.path?.path ?? f.vault_path ?? f.provider;
}
