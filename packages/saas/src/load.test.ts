import { describe, expect, it } from 'vitest';
import { renderTargetTemplates, resolveSaasFiles, selectSaasFiles } from './load.ts';
import type { SaasFile } from './model.ts';
import { rawNamespace, rawSaasFile, rawTarget } from './test-support/fixtures.ts';

const namespaces = [
  rawNamespace('app-stage', { cluster: 'c1', env: 'stage' }),
  rawNamespace('app-prod', { cluster: 'c2', env: 'production', labels: { tier: 'gold' } }),
  rawNamespace('other-stage', { cluster: 'c1', env: 'stage', app: 'other' }),
  rawNamespace('app-stage', {
    cluster: 'c3',
    env: 'stage',
    envLabels: { type: 'stage', region: 'eu' },
  }),
];
const ns = (i: number) => namespaces[i] as (typeof namespaces)[number];
const selector = (include: string[], exclude?: string[]) =>
  rawTarget({
    provider: 'dynamic',
    namespaceSelector: { jsonPathSelectors: { include, exclude: exclude ?? null } },
  });

const targetsOf = (sf: SaasFile) =>
  sf.resourceTemplates.flatMap((rt) =>
    rt.targets.map((t) => `${t.namespace.cluster.name}/${t.namespace.name}`),
  );

describe('resolveSaasFiles: target → namespaces', () => {
  it.each([
    ['static namespace', [rawTarget({ namespace: ns(0) })], ['c1/app-stage']],
    [
      'selector include, in namespace order',
      [selector(['namespace[?@.app.name="app"]'])],
      ['c1/app-stage', 'c2/app-prod', 'c3/app-stage'],
    ],
    [
      'include union by (cluster, name), then exclude',
      [
        selector(
          ['namespace[?@.environment.name="stage"]', 'namespace[?@.cluster.name="c1"]'],
          ['namespace[?@.app.name="other"]'],
        ),
      ],
      ['c1/app-stage', 'c3/app-stage'],
    ],
    [
      'JSON fields are parsed for the selector (environment labels, namespace labels)',
      [
        selector([
          'namespace[?@.environment.labels.region="eu"]',
          'namespace[?@.labels.tier="gold"]',
        ]),
      ],
      ['c3/app-stage', 'c2/app-prod'],
    ],
    [
      'dynamic targets move after the static ones',
      [selector(['namespace[?@.cluster.name="c2"]']), rawTarget({ namespace: ns(2) })],
      ['c1/other-stage', 'c2/app-prod'],
    ],
    ['a selector matching nothing drops the target', [selector(['namespace[?@.name="none"]'])], []],
  ])('%s', (_, targets, expected) => {
    const [sf] = resolveSaasFiles([rawSaasFile('s', targets)], namespaces);
    expect(targetsOf(sf as SaasFile)).toEqual(expected);
  });

  it('copies the dynamic target per namespace and parses parameters', () => {
    const t = selector(['namespace[?@.app.name="app" & @.environment.name="stage"]']);
    const [sf] = resolveSaasFiles(
      [
        rawSaasFile('s', [{ ...t, ref: 'main', parameters: '{"A": 1}' }], {
          parameters: '{"B": "x"}',
        }),
      ],
      namespaces,
    );
    const targets = sf?.resourceTemplates[0]?.targets ?? [];
    expect(targets.map((x) => [x.ref, x.parameters, x.namespace.environment.labels])).toEqual([
      ['main', { A: 1 }, { type: 'stage' }],
      ['main', { A: 1 }, { type: 'stage', region: 'eu' }],
    ]);
    expect(sf?.parameters).toEqual({ B: 'x' });
    expect(targets[0]).not.toHaveProperty('namespaceSelector');
  });

  it.each([
    [
      'namespace and namespaceSelector together',
      { ...selector(['namespace[*]']), namespace: ns(0) },
      /SaasFile s: namespace and namespaceSelector are mutually exclusive/,
    ],
    [
      'a selector without provider dynamic',
      { ...selector(['namespace[*]']), provider: null },
      /SaasFile s: namespaceSelector can only be used with 'provider: dynamic'/,
    ],
    [
      'an invalid JSONPath',
      selector(['namespace[?()GARBAGE]']),
      /SaasFile s: invalid JSONPath expression/,
    ],
    [
      'a selector selecting no namespace maps',
      selector(['namespace[*].name']),
      /must select namespaces/,
    ],
    ['no namespace at all', rawTarget(), /needs a namespace or a namespaceSelector/],
    [
      'parameters that are no JSON object',
      rawTarget({ namespace: ns(0), parameters: '[1]' }),
      /must be a JSON object/,
    ],
  ])('fails on %s', (_, target, message) => {
    expect(() => resolveSaasFiles([rawSaasFile('s', [target])], namespaces)).toThrow(message);
  });
});

describe('selectSaasFiles (where)', () => {
  const files = resolveSaasFiles(
    [
      rawSaasFile('s1', [rawTarget({ namespace: ns(0) }), rawTarget({ namespace: ns(1) })]),
      rawSaasFile('s2', [rawTarget({ namespace: ns(1) })]),
    ],
    namespaces,
  );
  it.each([
    [{}, ['s1:c1/app-stage,c2/app-prod', 's2:c2/app-prod']],
    [{ name: 's2' }, ['s2:c2/app-prod']],
    [{ envName: 'stage' }, ['s1:c1/app-stage']],
    [{ envName: 'production', name: 's1' }, ['s1:c2/app-prod']],
    [{ appName: 'nope' }, []],
    [{ name: '' }, []],
  ])('%o', (filter, expected) => {
    expect(
      selectSaasFiles(files, filter).map((sf) => `${sf.name}:${targetsOf(sf).join(',')}`),
    ).toEqual(expected);
  });
});

describe('renderTargetTemplates', () => {
  it('renders string target parameters and secret paths with {{{ }}} and resource.namespace', async () => {
    const [sf] = resolveSaasFiles(
      [
        rawSaasFile('s', [
          rawTarget({
            namespace: ns(1),
            parameters: JSON.stringify({
              HOST: '{{{ resource.namespace.name }}}.{{{ resource.namespace.cluster.name }}}',
              TIER: '{{{ resource.namespace.labels.tier }}}',
              N: 3,
              PLAIN: '{{ not.rendered }}',
            }),
            secretParameters: [
              {
                name: 'S',
                secret: {
                  path: 'app/{{{ resource.namespace.environment.name }}}/db',
                  field: 'pw',
                  version: null,
                  format: null,
                },
              },
            ],
          }),
        ]),
      ],
      namespaces,
    );
    const [rendered] = await renderTargetTemplates([sf as SaasFile]);
    const t = rendered?.resourceTemplates[0]?.targets[0];
    expect(t?.parameters).toEqual({
      HOST: 'app-prod.c2',
      TIER: 'gold',
      N: 3,
      PLAIN: '{{ not.rendered }}',
    });
    expect(t?.secretParameters?.[0]?.secret).toMatchObject({
      path: 'app/production/db',
      field: 'pw',
    });
  });
});
