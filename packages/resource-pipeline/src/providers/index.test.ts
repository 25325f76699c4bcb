import { describe, expect, it } from 'vitest';
import {
  buildDesired,
  buildDesiredNow,
  FetchResourceError,
  type ProviderContext,
} from './index.ts';
import { body, pc, res, sel } from './test-support/context.ts';

describe('buildDesired', () => {
  it('builds plain resource files without waiting, the same as buildDesired; the others are left to it', async () => {
    const file = {
      path: '/a.yml',
      content: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n',
    };
    const plain = [
      res({ provider: 'resource', path: file }),
      res({ provider: 'prometheus-rule', path: file }),
      res({ provider: 'prometheus-rule', type: 'resource', path: file }),
    ];
    for (const r of plain) {
      const now = buildDesiredNow(r, pc);
      expect(now).toBeDefined();
      expect(body(now!)).toEqual(body(await buildDesired(sel, r, pc)));
    }
    const later = [
      res({ provider: 'resource-template', path: file }),
      res({ provider: 'prometheus-rule', type: 'resource-template-jinja2', path: file }),
      res({ provider: 'vault-secret', path: 'app/db', version: 1 }),
      res({ provider: 'route', path: file }),
    ];
    for (const r of later) expect(buildDesiredNow(r, pc)).toBeUndefined();
    // Files being loaded on worker threads: buildDesired awaits them.
    const loading = { ...pc, loaded: {} as NonNullable<ProviderContext['loaded']> };
    expect(buildDesiredNow(plain[0]!, loading)).toBeUndefined();
    // A file that does not parse fails at once, with buildDesired's error.
    const broken = res({
      provider: 'resource',
      path: { path: '/b.yml', content: 'kind: x\na: [' },
    });
    expect(() => buildDesiredNow(broken, pc)).toThrow(FetchResourceError);
  });

  it.each([
    ['resource-template', { type: 'mustache' }, "unknown template type 'mustache' in /t.j2"],
    [
      'prometheus-rule',
      { type: 'resource-template-mustache' },
      "unknown prometheus-rule type 'resource-template-mustache' in /t.j2",
    ],
    ['magic', {}, 'unknown provider: magic'],
  ])('%s %j is rejected', async (provider, extra, message) => {
    await expect(
      buildDesired(sel, res({ provider, path: { path: '/t.j2', content: 'x: 1' }, ...extra }), pc),
    ).rejects.toThrow(message);
  });
});
