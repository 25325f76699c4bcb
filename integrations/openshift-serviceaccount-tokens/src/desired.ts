/**
 * The desired state of openshift-serviceaccount-tokens: a pure function of app-interface data.
 * No I/O here; the run in index.ts fetches and applies.
 */
export interface OpenshiftServiceaccountTokensInput {
  readonly namespaces: ReadonlyArray<{ readonly name: string; readonly cluster: { readonly name: string } }>;
}

export interface DesiredOpenshiftServiceaccountTokensItem {
  readonly cluster: string;
  readonly namespace: string;
}

export function desiredOpenshiftServiceaccountTokens(input: OpenshiftServiceaccountTokensInput): DesiredOpenshiftServiceaccountTokensItem[] {
  return input.namespaces
    .map((ns) => ({ cluster: ns.cluster.name, namespace: ns.name }))
    .sort((a, b) => a.cluster.localeCompare(b.cluster) || a.namespace.localeCompare(b.namespace));
}
