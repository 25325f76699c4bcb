import { describe, expect, it } from 'vitest';
import { changedSaasTargets } from './changes.ts';
import { resolveSaasFiles } from './load.ts';
import type { RawSaasFile, RawSaasTarget, SaasFile } from './model.ts';
import { rawNamespace, rawSaasFile, rawTarget } from './test-support/fixtures.ts';

const STAGE = rawNamespace('app-stage', { cluster: 'c1', env: 'stage' });
const PROD = rawNamespace('app-production', { cluster: 'c2', env: 'production' });
const URL = 'https://github.com/org/app';

function stage(overrides: Partial<RawSaasTarget> = {}): RawSaasTarget {
  return rawTarget({ namespace: STAGE, ref: 'main', parameters: '{"REPLICAS":1}', ...overrides });
}
function prod(overrides: Partial<RawSaasTarget> = {}): RawSaasTarget {
  return rawTarget({ namespace: PROD, ref: 'aaaa', parameters: '{"REPLICAS":3}', ...overrides });
}

function files(...raw: RawSaasFile[]): SaasFile[] {
  return resolveSaasFiles(raw, []);
}

const BASE = files(rawSaasFile('saas-app', [stage(), prod()]));

/** The pairs as `saas/env: change rt@cluster/namespace [fields]` lines. */
function summary(head: SaasFile[], base: SaasFile[] = BASE): string[] {
  return changedSaasTargets(base, head).map(
    (p) =>
      `${p.saasFile}/${p.environment}${p.inHead ? '' : ' (gone)'}: ${p.targets
        .map((t) => `${t.change} ${t.resourceTemplate}@${t.cluster}/${t.namespace} [${t.fields}]`)
        .join('; ')}`,
  );
}

describe('changedSaasTargets', () => {
  it.each<{ label: string; head: SaasFile[]; expected: string[] }>([
    { label: 'nothing changed', head: BASE, expected: [] },
    {
      label: 'a target parameter',
      head: files(rawSaasFile('saas-app', [stage({ parameters: '{"REPLICAS":2}' }), prod()])),
      expected: ['saas-app/stage: changed rt@c1/app-stage [parameters]'],
    },
    {
      label: 'the ref of production',
      head: files(rawSaasFile('saas-app', [stage(), prod({ ref: 'bbbb' })])),
      expected: ['saas-app/production: changed rt@c2/app-production [ref]'],
    },
    {
      label: "the saas file's parameters: every environment",
      head: files(rawSaasFile('saas-app', [stage(), prod()], { parameters: '{"IMAGE":"x"}' })),
      expected: [
        'saas-app/production: changed rt@c2/app-production [saas_file_parameters]',
        'saas-app/stage: changed rt@c1/app-stage [saas_file_parameters]',
      ],
    },
    {
      label: 'managed resource types and image patterns',
      head: files(
        rawSaasFile('saas-app', [stage()], {
          managedResourceTypes: ['Deployment', 'Service'],
          imagePatterns: ['quay.io/org/other'],
        }),
      ),
      expected: [
        'saas-app/production (gone): removed rt@c2/app-production []',
        'saas-app/stage: changed rt@c1/app-stage [saas_file_managed_resource_types,image_patterns]',
      ],
    },
    {
      label: 'a secret parameter reference',
      head: files(
        rawSaasFile('saas-app', [
          stage({
            secretParameters: [
              {
                name: 'DB',
                secret: { path: 'app/stage/db', field: 'password', version: null, format: null },
              },
            ],
          }),
          prod(),
        ]),
      ),
      expected: ['saas-app/stage: changed rt@c1/app-stage [secretParameters]'],
    },
    {
      label: 'a promotion (part of the target config hash)',
      head: files(
        rawSaasFile('saas-app', [
          stage(),
          prod({
            promotion: {
              auto: true,
              publish: null,
              subscribe: ['stage-deployed'],
              redeployOnPublisherConfigChange: null,
              soakDays: null,
              schedule: null,
              promotion_data: null,
            },
          }),
        ]),
      ),
      expected: ['saas-app/production: changed rt@c2/app-production [promotion]'],
    },
    {
      label: 'delete: true',
      head: files(rawSaasFile('saas-app', [stage({ delete: true }), prod()])),
      expected: ['saas-app/stage: changed rt@c1/app-stage [delete]'],
    },
    {
      label: 'a new target',
      head: files(
        rawSaasFile('saas-app', [
          stage(),
          stage({ name: 'canary', namespace: rawNamespace('app-canary', { env: 'stage' }) }),
          prod(),
        ]),
      ),
      expected: ['saas-app/stage: added rt@c1/app-canary []'],
    },
    {
      label: 'a removed saas file: its environments are gone from HEAD',
      head: files(),
      expected: [
        'saas-app/production (gone): removed rt@c2/app-production []',
        'saas-app/stage (gone): removed rt@c1/app-stage []',
      ],
    },
    {
      label: 'a new saas file',
      head: files(
        rawSaasFile('saas-app', [stage(), prod()]),
        rawSaasFile('saas-worker', [stage()]),
      ),
      expected: ['saas-worker/stage: added rt@c1/app-stage []'],
    },
  ])('$label', ({ head, expected }) => {
    expect(summary(head)).toEqual(expected);
  });

  it('links a changed ref to the comparison of both commits', () => {
    const head = files(rawSaasFile('saas-app', [stage({ ref: 'v2' }), prod({ ref: 'bbbb' })]));
    const pairs = changedSaasTargets(BASE, head);
    expect(pairs.map((p) => [p.environment, p.compareUrls])).toEqual([
      ['production', [`${URL}/compare/aaaa...bbbb`]],
      ['stage', [`${URL}/compare/main...v2`]],
    ]);
    expect(pairs[0]?.targets[0]).toEqual({
      change: 'changed',
      resourceTemplate: 'rt',
      target: null,
      cluster: 'c2',
      namespace: 'app-production',
      fields: ['ref'],
      ref: { base: 'aaaa', head: 'bbbb' },
      compareUrl: `${URL}/compare/aaaa...bbbb`,
    });
  });

  it('parameters in another key order are no change', () => {
    const base = files(
      rawSaasFile('saas-app', [stage({ parameters: '{"A":1,"B":{"x":1,"y":2}}' })]),
    );
    const head = files(
      rawSaasFile('saas-app', [stage({ parameters: '{"B":{"y":2,"x":1},"A":1}' })]),
    );
    expect(changedSaasTargets(base, head)).toEqual([]);
  });

  it('no compare link when only the parameters changed', () => {
    const head = files(rawSaasFile('saas-app', [stage({ parameters: '{"REPLICAS":2}' }), prod()]));
    expect(changedSaasTargets(BASE, head)[0]?.compareUrls).toEqual([]);
  });

  it('a target whose namespace moved to another environment leaves one and joins the other', () => {
    const moved = rawNamespace('app-stage', { cluster: 'c1', env: 'production' });
    const head = files(rawSaasFile('saas-app', [stage({ namespace: moved }), prod()]));
    expect(summary(head)).toEqual([
      'saas-app/production: changed rt@c1/app-stage [environment]',
      'saas-app/stage (gone): removed rt@c1/app-stage []',
    ]);
  });
});
