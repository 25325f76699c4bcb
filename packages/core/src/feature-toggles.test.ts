import { createServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unleashToggles } from './feature-toggles.ts';

let url = '';
const requests: Array<{ path: string; auth: string | undefined }> = [];
const server = createServer((req, res) => {
  requests.push({ path: req.url ?? '', auth: req.headers.authorization });
  if (req.headers.authorization !== 'secret-token') return void res.writeHead(401).end();
  res.writeHead(200, { 'Content-Type': 'application/json' }).end(
    JSON.stringify({
      version: 1,
      features: [
        { name: 'openshift-groups', enabled: false, strategies: [{ name: 'default' }] },
        { name: 'openshift-resources', enabled: true, strategies: [{ name: 'default' }] },
        {
          name: 'only-c1',
          enabled: true,
          strategies: [{ name: 'enableCluster', parameters: { cluster_name: 'c1, c2' } }],
        },
        {
          name: 'not-c1',
          enabled: true,
          strategies: [{ name: 'disableCluster', parameters: { cluster_name: 'c1' } }],
        },
        { name: 'odd-strategy', enabled: true, strategies: [{ name: 'gradualRolloutRandom' }] },
      ],
    }),
  );
});
beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}/api`;
});
afterAll(() => server.close());

describe('unleashToggles', () => {
  it('enables everything when Unleash is not configured, whatever the fallback (as upstream)', async () => {
    const t = unleashToggles({});
    expect(await t.isEnabled('anything', {}, false)).toBe(true);
  });

  it('reads the features once, with the client token', async () => {
    requests.length = 0;
    const t = unleashToggles({ UNLEASH_API_URL: url, UNLEASH_CLIENT_ACCESS_TOKEN: 'secret-token' });
    expect(await t.isEnabled('openshift-groups')).toBe(false);
    expect(await t.isEnabled('openshift-resources')).toBe(true);
    expect(requests).toEqual([{ path: '/api/client/features', auth: 'secret-token' }]);
  });

  it.each([
    ['missing-feature', {}, true, true],
    ['missing-feature', {}, false, false],
    ['only-c1', { cluster_name: 'c2' }, true, true],
    ['only-c1', { cluster_name: 'c3' }, true, false],
    ['only-c1', {}, true, false],
    ['not-c1', { cluster_name: 'c1' }, true, false],
    ['not-c1', { cluster_name: 'c2' }, true, true],
    ['odd-strategy', {}, true, false],
  ])('%s with %j (fallback %s) → %s', async (name, context, fallback, expected) => {
    const t = unleashToggles({ UNLEASH_API_URL: url, UNLEASH_CLIENT_ACCESS_TOKEN: 'secret-token' });
    expect(await t.isEnabled(name, context, fallback)).toBe(expected);
  });

  it('falls back when Unleash refuses or cannot be reached', async () => {
    expect(
      await unleashToggles({
        UNLEASH_API_URL: url,
        UNLEASH_CLIENT_ACCESS_TOKEN: 'wrong',
      }).isEnabled('openshift-groups'),
    ).toBe(true);
    expect(
      await unleashToggles({
        UNLEASH_API_URL: 'http://127.0.0.1:1',
        UNLEASH_CLIENT_ACCESS_TOKEN: 'x',
      }).isEnabled('x', {}, false),
    ).toBe(false);
  });
});
