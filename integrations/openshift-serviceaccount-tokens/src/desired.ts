import type { ClusterRef, ScopedNamespace, TokenSpecInput } from './scope.ts';

const SERVICE_ACCOUNT_TOKEN_TYPE = 'kubernetes.io/service-account-token';
const SERVICE_ACCOUNT_NAME_ANNOTATION = 'kubernetes.io/service-account.name';

/** A Secret as the API returns it, as far as token lookup cares. */
export interface SecretObject {
  readonly type?: unknown;
  readonly metadata?: { readonly name?: string; readonly annotations?: unknown } & Record<
    string,
    unknown
  >;
  readonly data?: unknown;
}

/** An Opaque Secret holding a copied token, in a consumer namespace. */
export interface DesiredTokenSecret {
  readonly cluster: string;
  readonly namespace: string;
  readonly body: {
    apiVersion: 'v1';
    kind: 'Secret';
    type: 'Opaque';
    metadata: { name: string };
    data: { token: string };
  };
  /** The token's origin (`<cluster>/<namespace>/<serviceAccount>`), for messages. */
  readonly source: string;
}

/**
 * A token Secret to create next to a ServiceAccount that has none: the
 * cluster's token controller fills in its `data.token` (OpenShift 4.16+ no
 * longer makes one per ServiceAccount by itself).
 */
interface TokenRequestSecret {
  readonly cluster: string;
  readonly namespace: string;
  readonly serviceAccountName: string;
  readonly body: {
    apiVersion: 'v1';
    kind: 'Secret';
    type: typeof SERVICE_ACCOUNT_TOKEN_TYPE;
    metadata: { name: string; annotations: { [SERVICE_ACCOUNT_NAME_ANNOTATION]: string } };
  };
}

interface TokenProblem {
  /** `<cluster>/<namespace>` of the ServiceAccount. */
  readonly scope: string;
  readonly message: string;
}

export interface DesiredTokensInput<C extends ClusterRef> {
  readonly namespaces: readonly ScopedNamespace<C>[];
  /** Clusters with a working client: nothing is desired in, or read from, the others. */
  readonly clustersWithClient: ReadonlySet<string>;
  /** The Secrets of a source namespace; undefined when they could not be read (already reported). */
  readonly secretsOf: (cluster: string, namespace: string) => readonly SecretObject[] | undefined;
  /** Five random digits for a new token Secret's name (injected to keep this function pure). */
  readonly randomSuffix: () => string;
}

export interface DesiredTokens {
  readonly secrets: DesiredTokenSecret[];
  readonly tokenRequests: TokenRequestSecret[];
  readonly problems: TokenProblem[];
}

/**
 * For every token spec of every consumer namespace: the first (by name)
 * token Secret of the ServiceAccount in its source namespace is copied into
 * an Opaque Secret of the consumer; a ServiceAccount without one gets a token
 * Secret requested (once, however many consumers want it) and its consumers
 * get theirs in a later run.
 */
export function desiredTokenSecrets<C extends ClusterRef>(
  input: DesiredTokensInput<C>,
): DesiredTokens {
  const secrets: DesiredTokenSecret[] = [];
  const requests = new Map<string, TokenRequestSecret>();
  const problems: TokenProblem[] = [];
  for (const consumer of input.namespaces) {
    if (consumer.tokens.length === 0) continue;
    if (!input.clustersWithClient.has(consumer.cluster.name)) continue;
    for (const spec of consumer.tokens) {
      const srcCluster = spec.namespace.cluster.name;
      const srcNamespace = spec.namespace.name;
      const sa = spec.serviceAccountName;
      const scope = `${srcCluster}/${srcNamespace}`;
      if (!input.clustersWithClient.has(srcCluster)) continue;
      const available = input.secretsOf(srcCluster, srcNamespace);
      if (!available) continue;
      const candidates = tokenSecretsFor(sa, available);
      if (candidates.length === 0) {
        const key = `${scope}/${sa}`;
        if (!requests.has(key)) {
          requests.set(key, tokenRequest(srcCluster, srcNamespace, sa, input.randomSuffix()));
        }
        continue;
      }
      const token = dataToken(candidates[0]!);
      if (token === undefined) {
        problems.push({
          scope,
          message: `[${scope}] Token not found for service account: ${sa} (Secret ${candidates[0]!.metadata?.name} has no data.token yet)`,
        });
        continue;
      }
      secrets.push({
        cluster: consumer.cluster.name,
        namespace: consumer.name,
        source: `${scope}/${sa}`,
        body: {
          apiVersion: 'v1',
          kind: 'Secret',
          type: 'Opaque',
          metadata: { name: tokenSecretName(spec) },
          data: { token },
        },
      });
    }
  }
  return { secrets, tokenRequests: [...requests.values()], problems };
}

/** `name`, or `<cluster>-<namespace>-<serviceAccountName>` of the ServiceAccount. */
export function tokenSecretName(spec: TokenSpecInput): string {
  return (
    spec.name || `${spec.namespace.cluster.name}-${spec.namespace.name}-${spec.serviceAccountName}`
  );
}

/** The ServiceAccount's token Secrets, sorted by name. */
function tokenSecretsFor(serviceAccount: string, secrets: readonly SecretObject[]): SecretObject[] {
  return secrets
    .filter((s) => {
      const annotations = s.metadata?.annotations as Record<string, unknown> | undefined;
      return (
        s.type === SERVICE_ACCOUNT_TOKEN_TYPE &&
        annotations?.[SERVICE_ACCOUNT_NAME_ANNOTATION] === serviceAccount
      );
    })
    .sort((a, b) => cmp(a.metadata?.name ?? '', b.metadata?.name ?? ''));
}

function dataToken(secret: SecretObject): string | undefined {
  const data = secret.data as Record<string, unknown> | undefined;
  const token = data?.token;
  return typeof token === 'string' ? token : undefined;
}

function tokenRequest(
  cluster: string,
  namespace: string,
  serviceAccountName: string,
  suffix: string,
): TokenRequestSecret {
  return {
    cluster,
    namespace,
    serviceAccountName,
    body: {
      apiVersion: 'v1',
      kind: 'Secret',
      type: SERVICE_ACCOUNT_TOKEN_TYPE,
      metadata: {
        name: `${serviceAccountName}-token-${suffix}`,
        annotations: { [SERVICE_ACCOUNT_NAME_ANNOTATION]: serviceAccountName },
      },
    },
  };
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
