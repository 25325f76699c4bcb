import { describe, expect, it } from 'vitest';
import { assertResultShape, type OperationShape, ResultShapeError } from './result-shape.ts';

const shape: OperationShape = {
  f: {
    namespaces: {
      t: '[Namespace_v1!]',
      f: {
        name: 'String!',
        labels: 'JSON',
        delete: 'Boolean',
        cluster: { t: 'Cluster_v1!', f: { name: 'String!', port: 'Int' } },
        openshiftResources: {
          t: '[NamespaceOpenshiftResource_v1!]',
          f: {
            provider: 'String!',
            version: 'Int!',
            resource: { t: 'Resource_v1', f: { content: 'String!' } },
          },
          c: ['version', 'resource'],
        },
      },
    },
  },
};

function errorOf(data: unknown): ResultShapeError {
  try {
    assertResultShape(shape, data);
  } catch (e) {
    if (e instanceof ResultShapeError) return e;
    throw e;
  }
  throw new Error('expected a ResultShapeError');
}

describe('assertResultShape', () => {
  it('accepts a response that matches, with conditional fields present or absent', () => {
    expect(() =>
      assertResultShape(shape, {
        namespaces: [
          {
            name: 'a',
            labels: '{"team":"x"}',
            delete: null,
            cluster: { name: 'c', port: 3 },
            openshiftResources: [
              { provider: 'vault-secret', version: 2 },
              { provider: 'resource', resource: { content: 'x' } },
              { provider: 'rhcs-cert' },
            ],
          },
        ],
      }),
    ).not.toThrow();
    expect(() => assertResultShape(shape, { namespaces: null })).not.toThrow();
  });

  it('names the path of a null in a non-null field', () => {
    const e = errorOf({
      namespaces: [
        {
          name: 'a',
          labels: null,
          delete: true,
          cluster: { name: 'c', port: null },
          openshiftResources: null,
        },
        {
          name: 'b',
          labels: null,
          delete: true,
          cluster: { name: null, port: null },
          openshiftResources: null,
        },
      ],
    });
    expect(e.path).toBe('namespaces[1].cluster.name');
    expect(e.message).toBe('namespaces[1].cluster.name: expected String!, got null');
  });

  it('reports a missing unconditional field', () => {
    const e = errorOf({
      namespaces: [{ name: 'a', labels: null, delete: null, openshiftResources: null }],
    });
    expect(e.message).toBe('namespaces[0].cluster: missing');
  });

  it('checks scalars, lists and JSON text without quoting the values', () => {
    const base = {
      name: 'a',
      labels: null,
      delete: null,
      cluster: { name: 'c', port: null },
      openshiftResources: null,
    };
    expect(errorOf({ namespaces: [{ ...base, delete: 'yes' }] }).message).toBe(
      'namespaces[0].delete: expected Boolean, got a string',
    );
    expect(errorOf({ namespaces: [{ ...base, cluster: { name: 'c', port: 1.5 } }] }).message).toBe(
      'namespaces[0].cluster.port: expected Int, got number 1.5',
    );
    expect(errorOf({ namespaces: [{ ...base, labels: { team: 'x' } }] }).message).toBe(
      'namespaces[0].labels: expected JSON, got an object',
    );
    expect(errorOf({ namespaces: [{ ...base, labels: '{not json' }] }).message).toBe(
      'namespaces[0].labels: expected JSON text, got a string that is not JSON',
    );
    expect(errorOf({ namespaces: { name: 'a' } }).message).toBe(
      'namespaces: expected [Namespace_v1!], got an object',
    );
    expect(
      errorOf({ namespaces: [{ ...base, openshiftResources: [{ provider: 'x', version: null }] }] })
        .message,
    ).toBe('namespaces[0].openshiftResources[0].version: expected Int!, got null');
  });

  it('rejects a null list item where items are non-null', () => {
    expect(errorOf({ namespaces: [null] }).message).toBe(
      'namespaces[0]: expected Namespace_v1!, got null',
    );
  });
});
