import { describe, expect, it } from 'vitest';
import { type TokenNamespaceInput, tokenScope } from './scope.ts';

const cluster = (name: string, disabled: string[] = []) => ({
  name,
  disable: { integrations: disabled },
});
const spec = (c: string, ns: string, sa: string, name?: string) => ({
  ...(name ? { name } : {}),
  serviceAccountName: sa,
  namespace: { name: ns, cluster: cluster(c) },
});

describe('tokenScope', () => {
  it.each<{
    name: string;
    namespaces: TokenNamespaceInput[];
    scope: Array<[string, string, number]>;
    duplicates?: string[];
  }>([
    { name: 'no namespaces', namespaces: [], scope: [] },
    {
      name: 'a consumer and its source',
      namespaces: [
        {
          name: 'app',
          cluster: cluster('c1'),
          openshiftServiceAccountTokens: [spec('c2', 'obs', 'reader')],
        },
        { name: 'obs', cluster: cluster('c2') },
      ],
      scope: [
        ['c1', 'app', 1],
        ['c2', 'obs', 0],
      ],
    },
    {
      name: 'shared tokens are appended to the namespace own ones',
      namespaces: [
        {
          name: 'app',
          cluster: cluster('c1'),
          openshiftServiceAccountTokens: [spec('c1', 'obs', 'a')],
          sharedResources: [{ openshiftServiceAccountTokens: [spec('c1', 'obs', 'b')] }, null, {}],
        },
        {
          name: 'other',
          cluster: cluster('c1'),
          sharedResources: [{ openshiftServiceAccountTokens: [spec('c1', 'obs', 'b')] }],
        },
      ],
      scope: [
        ['c1', 'app', 2],
        ['c1', 'other', 1],
        ['c1', 'obs', 0],
      ],
    },
    {
      name: 'consumers being deleted, without tokens, or on a cluster disabling the integration are out',
      namespaces: [
        {
          name: 'gone',
          delete: true,
          cluster: cluster('c1'),
          openshiftServiceAccountTokens: [spec('c1', 'x', 'a')],
        },
        { name: 'plain', cluster: cluster('c1'), openshiftServiceAccountTokens: [] },
        {
          name: 'off',
          cluster: cluster('c3', ['openshift-serviceaccount-tokens']),
          openshiftServiceAccountTokens: [spec('c1', 'y', 'a')],
        },
      ],
      scope: [],
    },
    {
      name: 'a consumer that is also a source keeps its tokens',
      namespaces: [
        {
          name: 'a',
          cluster: cluster('c1'),
          openshiftServiceAccountTokens: [spec('c1', 'b', 'sa')],
        },
        {
          name: 'b',
          cluster: cluster('c1'),
          openshiftServiceAccountTokens: [spec('c1', 'a', 'sa')],
        },
      ],
      scope: [
        ['c1', 'a', 1],
        ['c1', 'b', 1],
      ],
    },
    {
      name: 'a namespace defined twice: reported, the first definition is used',
      namespaces: [
        {
          name: 'a',
          cluster: cluster('c1'),
          openshiftServiceAccountTokens: [spec('c1', 'src', 'one')],
        },
        {
          name: 'a',
          cluster: cluster('c1'),
          openshiftServiceAccountTokens: [spec('c1', 'src', 'two'), spec('c1', 'src', 'x')],
        },
      ],
      scope: [
        ['c1', 'a', 1],
        ['c1', 'src', 0],
      ],
      duplicates: ['c1/a'],
    },
  ])('$name', ({ namespaces, scope, duplicates = [] }) => {
    const result = tokenScope(namespaces, 'openshift-serviceaccount-tokens');
    expect(result.namespaces.map((n) => [n.cluster.name, n.name, n.tokens.length])).toEqual(scope);
    expect(result.duplicates).toEqual(duplicates);
  });
});
