import { QontractError } from '@qontract/core';
import { describe, expect, it } from 'vitest';
import { resolveSaasFiles } from './load.ts';
import type { RawSaasFile, RawSaasTarget } from './model.ts';
import {
  codeComponentVersions,
  promotionChannels,
  targetConfigHash,
  targetPromotion,
  targetUid,
  usedForSecurity,
} from './promotions.ts';
import { rawNamespace, rawSaasFile, rawTarget } from './test-support/fixtures.ts';

const ns = (name: string, cluster = 'c1') => ({ name, cluster: { name: cluster } });

describe('targetUid', () => {
  // Expected values: Python hashlib.blake2s(data, digest_size=20).hexdigest() and
  // hashlib.sha256(data).digest()[:20].hex() over the same text.
  it.each([
    [
      'saas',
      'rt',
      null,
      ns('ns', 'c1'),
      '72a8273b08ce2eb166180640ceb3f8be3984b2f8',
      '83194d079334d3af27badc409ce2445cb269768f',
    ],
    [
      'saas',
      'rt',
      '',
      ns('ns', 'c1'),
      '72a8273b08ce2eb166180640ceb3f8be3984b2f8',
      '83194d079334d3af27badc409ce2445cb269768f',
    ],
    [
      'saas-app',
      'deploy',
      'prod-eu',
      ns('app-production', 'appsrep09ue1'),
      'cead9a4ecc4da312ce64e86da6e72618caf9e8dc',
      '9c1d2598ee9baca5a9c6e3403231f22769e1d209',
    ],
    [
      'sääs',
      'rt-ü',
      'ziel ✓',
      ns('n', 'c'),
      'bc11d38be1f718288576de4e687448aed88b4fe5',
      'fb877bad352912f92f053c74c7319a9622fe899c',
    ],
  ])('%s:%s:%s → %s', (saas, rt, name, namespace, blake, sha) => {
    const target = { name, namespace };
    expect(targetUid(saas, rt, target, { usedForSecurity: false })).toBe(blake);
    expect(targetUid(saas, rt, target, { usedForSecurity: true })).toBe(sha);
  });

  it('USED_FOR_SECURITY=true (any case) selects sha256', () => {
    expect(usedForSecurity({ USED_FOR_SECURITY: 'TRUE' })).toBe(true);
    expect(usedForSecurity({ USED_FOR_SECURITY: '1' })).toBe(false);
    expect(usedForSecurity({})).toBe(false);
  });
});

const SHA = '0123456789abcdef0123456789abcdef01234567';
const secret = (
  path: string,
  field: string,
  version: number | null = null,
  format: string | null = null,
) => ({
  path,
  field,
  version,
  format,
});

function sloDocument(target: number) {
  return {
    name: 'slo-doc',
    namespaces: [
      {
        prometheusAccess: {
          url: 'https://prom.example.com',
          username: secret('vault/prom', 'user'),
          password: null,
        },
        namespace: {
          name: 'app-stage',
          app: { name: 'app' },
          cluster: {
            name: 'c1',
            prometheusUrl: 'https://prometheus.c1.example.com',
            automationToken: secret('vault/c1', 'token', 2),
            spec: { private: false },
          },
        },
        SLONamespace: null,
      },
    ],
    slos: [
      {
        name: 'availability',
        expr: 'sum(rate(x[5m]))',
        SLIType: 'availability',
        SLOParameters: { window: '28d' },
        SLOTarget: target,
        SLOTargetUnit: 'percent_0_1',
      },
    ],
  };
}

/**
 * Config-hash cases: raw saas files (as the query returns them) and the hash per target. The
 * expected values were computed at development time by parsing these same files with the
 * original's generated pydantic models (SaasFileV2) and building the config state and
 * `json_dumps` exactly as SaasHerder does.
 */
const CONFIG_CASES: { label: string; file: RawSaasFile; expected: string[] }[] = [
  {
    label: 'minimal target, nothing optional',
    file: rawSaasFile('minimal', [rawTarget({ namespace: rawNamespace('app-stage') })]),
    expected: ['e7ead26d869e379c'],
  },
  {
    label: 'every optional field set',
    file: rawSaasFile(
      'full',
      [
        rawTarget({
          name: 'prod',
          namespace: rawNamespace('app-prod', { cluster: 'c2', env: 'production' }),
          ref: SHA,
          promotion: {
            auto: true,
            publish: ['prod-done'],
            subscribe: ['stage-done'],
            redeployOnPublisherConfigChange: true,
            soakDays: 2,
            schedule: null,
            promotion_data: [
              {
                channel: 'stage-done',
                data: [
                  {
                    type: 'parent_saas_config',
                    parent_saas: 'full',
                    target_config_hash: 'abcdef0123456789',
                  },
                ],
              },
            ],
          },
          parameters: JSON.stringify({
            REPLICAS: 3,
            RATIO: 1.5,
            ENABLED: true,
            NOTHING: null,
            NAME: 'prod-é ✓',
            NESTED: { b: [1, 'x'], a: { z: 1, y: 2 } },
          }),
          secretParameters: [
            { name: 'TOKEN', secret: secret('app/prod/creds', 'token', 3, 'plain') },
          ],
          slos: [sloDocument(0.99)],
          upstream: {
            instance: { name: 'ci', serverUrl: 'https://ci.example.com' },
            name: 'app-build',
          },
          images: [{ org: { name: 'org', instance: { url: 'quay.io' } }, name: 'app' }],
          disable: false,
          delete: null,
        }),
      ],
      {
        parameters: '{}',
        secretParameters: [{ name: 'SF_SECRET', secret: secret('app/sf', 'key') }],
        managedResourceNames: [{ resource: 'Deployment', resourceNames: ['app', 'worker'] }],
        managedResourceTypes: ['Deployment', 'Service', 'ConfigMap'],
      },
    ),
    expected: ['435210f08bde23be'],
  },
  {
    label: 'empty lists count as unset; integral SLO targets are floats',
    file: {
      ...rawSaasFile('lists', []),
      managedResourceNames: [],
      secretParameters: [],
      resourceTemplates: [
        {
          name: 'rt-a',
          url: 'https://gitlab.example.com/org/app',
          path: '/deploy/template.yaml',
          provider: null,
          hash_length: 8,
          parameters: JSON.stringify({ IMAGE: 'quay.io/org/app', CHANNEL: 'x' }),
          secretParameters: [
            { name: 'RT_SECRET', secret: secret('app/rt', 'value', null, 'base64') },
          ],
          targets: [
            rawTarget({
              name: 'a',
              namespace: rawNamespace('ns-a', { app: 'other-app' }),
              secretParameters: [],
              images: [],
              slos: [sloDocument(99)],
              parameters: '{}',
              disable: true,
              delete: true,
            }),
            rawTarget({
              namespace: rawNamespace('ns-b'),
              promotion: {
                auto: null,
                publish: null,
                subscribe: ['c'],
                redeployOnPublisherConfigChange: null,
                soakDays: null,
                schedule: '0 * * * *',
                promotion_data: [{ channel: null, data: null }],
              },
            }),
          ],
        },
      ],
    },
    expected: ['8008d8d5d2418db6', '44186f26742d69ce'],
  },
];

describe('targetConfigHash', () => {
  it.each(CONFIG_CASES)('$label', ({ file, expected }) => {
    const [sf] = resolveSaasFiles([file], []);
    if (!sf) throw new Error('no saas file');
    const hashes = sf.resourceTemplates.flatMap((rt) =>
      rt.targets.map((t) => targetConfigHash(sf, rt, t)),
    );
    expect(hashes).toEqual(expected);
  });
});

function publisher(
  name: string,
  channels: string[],
  overrides: Partial<RawSaasTarget> = {},
): RawSaasTarget {
  return rawTarget({
    name,
    namespace: rawNamespace(`${name}-ns`),
    promotion: {
      auto: null,
      publish: channels,
      subscribe: null,
      redeployOnPublisherConfigChange: null,
      soakDays: null,
      schedule: null,
      promotion_data: null,
    },
    ...overrides,
  });
}

describe('promotionChannels and targetPromotion', () => {
  const files = resolveSaasFiles(
    [
      rawSaasFile('pub-a', [
        publisher('one', ['stage', 'canary']),
        publisher('gone', ['stage'], { delete: true }),
        rawTarget({ name: 'plain', namespace: rawNamespace('plain') }),
      ]),
      rawSaasFile('pub-b', [publisher('two', ['stage'])]),
      rawSaasFile('sub', [
        rawTarget({
          name: 'prod',
          namespace: rawNamespace('prod', { env: 'production' }),
          promotion: {
            auto: true,
            publish: null,
            subscribe: ['stage'],
            redeployOnPublisherConfigChange: null,
            soakDays: 3,
            schedule: null,
            promotion_data: null,
          },
        }),
        rawTarget({
          name: 'orphan',
          namespace: rawNamespace('orphan'),
          promotion: {
            auto: null,
            publish: null,
            subscribe: ['nobody'],
            redeployOnPublisherConfigChange: null,
            soakDays: null,
            schedule: null,
            promotion_data: null,
          },
        }),
      ]),
    ],
    [],
  );
  const opts = { usedForSecurity: false };
  const uid = (saas: string, name: string) =>
    targetUid(saas, 'rt', { name, namespace: ns(`${name}-ns`) }, opts);

  it('maps each channel to its publishers over all saas files, skipping deleted targets', () => {
    const channels = promotionChannels(files, opts);
    expect([...channels.entries()]).toEqual([
      ['stage', [uid('pub-a', 'one'), uid('pub-b', 'two')]],
      ['canary', [uid('pub-a', 'one')]],
    ]);
  });

  it('builds the promotion of a subscribing target with its publishers', () => {
    const channels = promotionChannels(files, opts);
    const sf = files[2];
    const rt = sf?.resourceTemplates[0];
    const target = rt?.targets[0];
    if (!sf || !rt || !target) throw new Error('fixture');
    const p = targetPromotion(sf, rt, target, SHA, channels, opts);
    expect(p).toMatchObject({
      saasFile: 'sub',
      resourceTemplate: 'rt',
      targetName: 'prod',
      cluster: 'c1',
      namespace: 'prod',
      url: 'https://github.com/org/app',
      commitSha: SHA,
      targetConfigHash: targetConfigHash(sf, rt, target),
      saasTargetUid: targetUid('sub', 'rt', target, opts),
      soakDays: 3,
      auto: true,
      publish: null,
      subscribe: [{ name: 'stage', publisherUids: [uid('pub-a', 'one'), uid('pub-b', 'two')] }],
      promotionData: [],
    });
    const plainRt = files[0]?.resourceTemplates[0];
    const plain = plainRt?.targets[2];
    if (!files[0] || !plainRt || !plain) throw new Error('fixture');
    expect(targetPromotion(files[0], plainRt, plain, SHA, channels, opts)).toBeNull();
  });

  it('fails a target subscribing to a channel nobody publishes to', () => {
    const channels = promotionChannels(files, opts);
    const sf = files[2];
    const rt = sf?.resourceTemplates[0];
    const orphan = rt?.targets[1];
    if (!sf || !rt || !orphan) throw new Error('fixture');
    expect(() => targetPromotion(sf, rt, orphan, SHA, channels, opts)).toThrow(QontractError);
    expect(() => targetPromotion(sf, rt, orphan, SHA, channels, opts)).toThrow(
      /\[sub\/rt\] target orphan \(c1\/orphan\) subscribes to channel nobody/,
    );
  });

  it('collects blocked and hotfix versions by code component url', () => {
    const [sf] = resolveSaasFiles(
      [
        rawSaasFile('v', [], {
          app: {
            name: 'app',
            parentApp: null,
            selfServiceRoles: null,
            serviceOwners: null,
            codeComponents: [
              {
                url: 'https://github.com/org/app',
                blockedVersions: ['b1'],
                hotfixVersions: ['h1'],
              },
              { url: 'https://github.com/org/lib', blockedVersions: null, hotfixVersions: ['h2'] },
            ],
          },
        }),
      ],
      [],
    );
    if (!sf) throw new Error('fixture');
    const v = codeComponentVersions([sf]);
    expect([...(v.blocked.get('https://github.com/org/app') ?? [])]).toEqual(['b1']);
    expect(v.blocked.has('https://github.com/org/lib')).toBe(false);
    expect([...(v.hotfix.get('https://github.com/org/lib') ?? [])]).toEqual(['h2']);
  });
});
