import { buildSchema } from 'graphql';
import { describe, expect, it } from 'vitest';
import { createEmbeddedTransport, type EmbeddedEngineLike } from './embedded-transport.ts';
import { GqlBackendError, GqlQueryError } from './errors.ts';

const SHA = 'ef'.repeat(32);

function engine(execute: EmbeddedEngineLike['execute']): EmbeddedEngineLike {
  return {
    sha256: SHA,
    gitCommit: { commit: 'c0ffee', timestamp: '1700000000' },
    schema: buildSchema('type Query { a: String }'),
    execute,
  };
}

describe('embedded transport', () => {
  it('serves the loaded bundle, pinned to its sha', async () => {
    const t = await createEmbeddedTransport('/srv/app interface', {
      load: async () => engine(async () => ({ data: { a: 'x' }, extensions: { schemas: [] } })),
    });
    expect(t.endpoint).toBe('file:///srv/app%20interface');
    expect(t.sha).toBe(SHA);
    expect(t.gitCommit).toEqual({ commit: 'c0ffee', timestamp: '1700000000' });
    expect(await t.execute('{ a }', undefined, 'A')).toEqual({
      data: { a: 'x' },
      extensions: { schemas: [] },
    });
  });

  it('cannot serve another bundle than the one it loaded', async () => {
    const other = 'aa'.repeat(32);
    await expect(
      createEmbeddedTransport('/srv/ai', {
        sha: other,
        load: async () => engine(async () => ({})),
      }),
    ).rejects.toThrow(
      `bundle ${other} is not available: the embedded backend serves only ${SHA} (/srv/ai)`,
    );
  });

  it('names the source when it cannot be loaded, and the query when execution fails', async () => {
    const e = createEmbeddedTransport('/srv/missing', {
      load: async () => {
        throw new Error('no such file or directory');
      },
    });
    await expect(e).rejects.toBeInstanceOf(GqlBackendError);
    await expect(e).rejects.toThrow(
      'cannot load app-interface from /srv/missing: no such file or directory',
    );
    const t = await createEmbeddedTransport('/srv/ai', {
      load: async () =>
        engine(async () => {
          throw new Error('resolver exploded');
        }),
    });
    const failure = t.execute('{ a }', undefined, 'Namespaces');
    await expect(failure).rejects.toBeInstanceOf(GqlQueryError);
    await expect(failure).rejects.toThrow('GraphQL query Namespaces failed: resolver exploded');
  });
});
