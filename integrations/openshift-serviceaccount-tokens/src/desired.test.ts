import { describe, expect, it } from 'vitest';
import {
  type DesiredTokenSecret,
  type DesiredTokens,
  desiredTokenSecrets,
  type SecretObject,
  tokenSecretName,
} from './desired.ts';
import type { ScopedNamespace } from './scope.ts';

const spec = (c: string, ns: string, sa: string, name?: string) => ({
  ...(name ? { name } : {}),
  serviceAccountName: sa,
  namespace: { name: ns, cluster: { name: c } },
});
const consumer = (c: string, ns: string, tokens: ReturnType<typeof spec>[]): ScopedNamespace => ({
  name: ns,
  cluster: { name: c },
  tokens,
});
const tokenSecret = (name: string, sa: string, token?: string): SecretObject => ({
  type: 'kubernetes.io/service-account-token',
  metadata: { name, annotations: { 'kubernetes.io/service-account.name': sa } },
  ...(token === undefined ? {} : { data: { token } }),
});
const copied = (
  c: string,
  ns: string,
  name: string,
  token: string,
  source: string,
): DesiredTokenSecret => ({
  cluster: c,
  namespace: ns,
  source,
  body: { apiVersion: 'v1', kind: 'Secret', type: 'Opaque', metadata: { name }, data: { token } },
});

describe('desiredTokenSecrets', () => {
  const obsSecrets: SecretObject[] = [
    tokenSecret('reader-token-b', 'reader', 'Qg==='),
    tokenSecret('reader-token-a', 'reader', 'QQ=='),
    {
      type: 'Opaque',
      metadata: {
        name: 'not-a-token',
        annotations: { 'kubernetes.io/service-account.name': 'reader' },
      },
      data: { token: 'eA==' },
    },
    tokenSecret('other-token', 'other', 'Tw=='),
  ];
  const secrets: Record<string, SecretObject[]> = { 'c1/obs': obsSecrets, 'c2/empty': [] };
  const run = (namespaces: ScopedNamespace[], clusters = ['c1', 'c2']): DesiredTokens => {
    let n = 0;
    return desiredTokenSecrets({
      namespaces,
      clustersWithClient: new Set(clusters),
      secretsOf: (c, ns) => secrets[`${c}/${ns}`],
      randomSuffix: () => String(++n).padStart(5, '0'),
    });
  };

  it.each<{
    name: string;
    namespaces: ScopedNamespace[];
    clusters?: string[];
    expected: DesiredTokens;
  }>([
    {
      name: 'no consumers',
      namespaces: [consumer('c1', 'obs', [])],
      expected: { secrets: [], tokenRequests: [], problems: [] },
    },
    {
      name: 'the first token Secret by name is copied, under the default name',
      namespaces: [consumer('c2', 'app', [spec('c1', 'obs', 'reader')])],
      expected: {
        secrets: [copied('c2', 'app', 'c1-obs-reader', 'QQ==', 'c1/obs/reader')],
        tokenRequests: [],
        problems: [],
      },
    },
    {
      name: 'an explicit name wins',
      namespaces: [consumer('c1', 'app', [spec('c1', 'obs', 'other', 'observability-other')])],
      expected: {
        secrets: [copied('c1', 'app', 'observability-other', 'Tw==', 'c1/obs/other')],
        tokenRequests: [],
        problems: [],
      },
    },
    {
      name: 'a ServiceAccount without a token Secret gets one requested, once',
      namespaces: [
        consumer('c1', 'app', [spec('c2', 'empty', 'bot')]),
        consumer('c1', 'app2', [spec('c2', 'empty', 'bot')]),
      ],
      expected: {
        secrets: [],
        tokenRequests: [
          {
            cluster: 'c2',
            namespace: 'empty',
            serviceAccountName: 'bot',
            body: {
              apiVersion: 'v1',
              kind: 'Secret',
              type: 'kubernetes.io/service-account-token',
              metadata: {
                name: 'bot-token-00001',
                annotations: { 'kubernetes.io/service-account.name': 'bot' },
              },
            },
          },
        ],
        problems: [],
      },
    },
    {
      name: 'nothing for consumers or sources on clusters without a client, or sources that could not be read',
      namespaces: [
        consumer('c3', 'app', [spec('c1', 'obs', 'reader')]),
        consumer('c1', 'app', [spec('c3', 'obs', 'reader'), spec('c1', 'unreadable', 'reader')]),
      ],
      expected: { secrets: [], tokenRequests: [], problems: [] },
    },
  ])('$name', ({ namespaces, clusters, expected }) => {
    expect(run(namespaces, clusters)).toEqual(expected);
  });

  it('reports a token Secret without data.token', () => {
    secrets['c1/late'] = [tokenSecret('late-token-x', 'late')];
    const result = run([consumer('c1', 'app', [spec('c1', 'late', 'late')])]);
    expect(result.secrets).toEqual([]);
    expect(result.problems).toEqual([
      {
        scope: 'c1/late',
        message:
          '[c1/late] Token not found for service account: late (Secret late-token-x has no data.token yet)',
      },
    ]);
  });
});

describe('tokenSecretName', () => {
  it('defaults to <cluster>-<namespace>-<serviceAccount>', () => {
    expect(tokenSecretName(spec('appint-ex-01', 'obs', 'reader'))).toBe('appint-ex-01-obs-reader');
    expect(tokenSecretName(spec('appint-ex-01', 'obs', 'reader', ''))).toBe(
      'appint-ex-01-obs-reader',
    );
    expect(tokenSecretName(spec('appint-ex-01', 'obs', 'reader', 'mine'))).toBe('mine');
  });
});
