import { describe, expect, it } from 'vitest';
import { desiredNamespaceLabels, namespacesInScope } from './desired.ts';

const ns = (
  cluster: string,
  name: string,
  labels: unknown,
  extra: Record<string, unknown> = {},
) => ({
  name,
  cluster: { name: cluster },
  labels: labels === null ? null : typeof labels === 'string' ? labels : JSON.stringify(labels),
  ...extra,
});

describe('namespacesInScope', () => {
  it('drops namespaces being deleted and those of other shards', () => {
    const all = [ns('c1', 'a', {}), ns('c1', 'gone', {}, { delete: true }), ns('c2', 'b', {})];
    expect(namespacesInScope(all, (key) => key !== 'c2/b').map((n) => n.name)).toEqual(['a']);
  });
});

describe('desiredNamespaceLabels', () => {
  const clusters = new Set(['c1', 'c2']);
  it.each([
    { name: 'no namespaces', namespaces: [], desired: [], errors: [] },
    {
      name: 'labels per namespace, sorted',
      namespaces: [
        ns('c2', 'b', { team: 'x' }),
        ns('c1', 'a', { team: 'y', 'example.com/tier': 'edge' }),
      ],
      desired: [
        { cluster: 'c1', namespace: 'a', labels: { team: 'y', 'example.com/tier': 'edge' } },
        { cluster: 'c2', namespace: 'b', labels: { team: 'x' } },
      ],
      errors: [],
    },
    {
      name: 'an empty map is managed (every label we set goes away)',
      namespaces: [ns('c1', 'a', {})],
      desired: [{ cluster: 'c1', namespace: 'a', labels: {} }],
      errors: [],
    },
    {
      name: 'null labels: not managed',
      namespaces: [ns('c1', 'a', null)],
      desired: [],
      errors: [],
    },
    {
      name: 'a cluster without a working client is skipped',
      namespaces: [ns('unknown', 'a', { team: 'x' })],
      desired: [],
      errors: [],
    },
    {
      name: 'invalid labels: every problem reported, namespace skipped',
      namespaces: [ns('c1', 'a', { 'b@d': 'v', ok: 'b@d' }), ns('c1', 'b', { team: 'x' })],
      desired: [{ cluster: 'c1', namespace: 'b', labels: { team: 'x' } }],
      errors: [
        {
          cluster: 'c1',
          namespace: 'a',
          message:
            "Label key name is invalid, it needs to match '^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$': b@d",
        },
        {
          cluster: 'c1',
          namespace: 'a',
          message:
            "Label value is invalid, it needs to match '^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$': b@d",
        },
      ],
    },
    {
      name: 'labels that are not a map',
      namespaces: [ns('c1', 'a', '["team"]')],
      desired: [],
      errors: [
        {
          cluster: 'c1',
          namespace: 'a',
          message: 'labels must be a map of label keys to values, not ["team"]',
        },
      ],
    },
    {
      name: 'a namespace defined twice: reported and left alone',
      namespaces: [
        ns('c1', 'a', { team: 'x' }),
        ns('c1', 'a', { team: 'y' }),
        ns('c2', 'a', { team: 'z' }),
      ],
      desired: [{ cluster: 'c2', namespace: 'a', labels: { team: 'z' } }],
      errors: [
        {
          cluster: 'c1',
          namespace: 'a',
          message: 'Found 2 definitions of namespace c1/a; its labels are left alone',
        },
      ],
    },
  ])('$name', ({ namespaces, desired, errors }) => {
    expect(desiredNamespaceLabels(namespaces, clusters)).toEqual({ desired, errors });
  });
});
