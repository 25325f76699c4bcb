import { describe, expect, it } from 'vitest';
import { buildDesired } from './index.ts';
import { body, pc, res, sel } from './test-support/context.ts';

describe('vault-secret', () => {
  it('vault-secret: builds the Secret, keeps _qb64 values, drops updated_at', async () => {
    const or = await buildDesired(
      sel,
      res({
        provider: 'vault-secret',
        vault_path: 'app/db',
        version: 2,
        name: null,
        labels: '{"app": "x"}',
        annotations: null,
        vault_type: null,
      }),
      pc,
    );
    expect(body(or)).toEqual({
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'Opaque',
      metadata: { name: 'db', annotations: {}, labels: { app: 'x' } },
      data: { user: 'YXBw', password: 'cDRzcw==', cert: 'Zm9vYmFy', empty: '' },
    });
  });

  it('vault-secret: a missing secret or an invalid key is an error naming the path', async () => {
    await expect(
      buildDesired(sel, res({ provider: 'vault-secret', vault_path: 'app/none', version: 1 }), pc),
    ).rejects.toThrow(/error fetching secret app\/none \(version 1\)/);
    await expect(
      buildDesired(
        sel,
        res({ provider: 'vault-secret', vault_path: 'app/bad-key', version: 1 }),
        pc,
      ),
    ).rejects.toThrow("secret app/bad-key: invalid key 'bad key'");
  });
});
