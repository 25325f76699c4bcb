// biome-ignore-all lint/suspicious/noTemplateCurlyInString: saas parameters reference each other as ${NAME} inside plain strings
import { type RawSaasFile, type RawSaasTarget, resolveSaasFiles } from '@qontract/saas';
import { rawNamespace, rawSaasFile, rawTarget } from '@qontract/saas/test-support';
import { describe, expect, it } from 'vitest';
import { type ValidationContext, validateSaasFiles } from './validate.ts';

const SHA = '0123456789abcdef0123456789abcdef01234567';
const stage = rawNamespace('app-stage', {
  env: 'stage',
  envParameters: { DOMAIN: 'stage.example.com', PLAIN: 'x' },
});
const prod = rawNamespace('app-prod', { cluster: 'c2', env: 'production' });
const foreign = rawNamespace('other-stage', { app: 'other', env: 'stage' });

const context: ValidationContext = {
  codeComponentUrls: new Set(['https://github.com/org/app', 'https://github.com/org/other']),
  quayInstanceUrls: new Set(['quay.io']),
  quayOrgs: [{ instanceUrl: 'quay.io', name: 'org' }],
};

const secret = (path: string) => ({
  name: 'S',
  secret: { path, field: 'f', version: null, format: null },
});
const target = (o: Partial<RawSaasTarget> = {}) => rawTarget({ namespace: stage, ...o });
const promotion = (o: Record<string, unknown>) =>
  ({
    auto: null,
    publish: null,
    subscribe: null,
    redeployOnPublisherConfigChange: null,
    soakDays: null,
    schedule: null,
    promotion_data: null,
    ...o,
  }) as RawSaasTarget['promotion'];
const upstream = { instance: { name: 'ci', serverUrl: 'https://ci' }, name: 'build' };
const images = [{ org: { name: 'org', instance: { url: 'quay.io' } }, name: 'app' }];
const withRt = (
  sf: RawSaasFile,
  o: Partial<RawSaasFile['resourceTemplates'][number]>,
): RawSaasFile => ({
  ...sf,
  resourceTemplates: sf.resourceTemplates.map((rt) => ({ ...rt, ...o })),
});

const problems = (files: RawSaasFile[], ctx: ValidationContext = context) =>
  validateSaasFiles(resolveSaasFiles(files, [stage, prod, foreign]), ctx).map(
    (p) => `${p.scope}: ${p.message}`,
  );

describe('validateSaasFiles', () => {
  it.each<[string, RawSaasFile[]]>([
    ['a plain saas file', [rawSaasFile('s', [target(), target({ namespace: prod, ref: SHA })])]],
    [
      'a promotion from stage to production over two saas files of the same repository',
      [
        rawSaasFile('s1', [target({ promotion: promotion({ publish: ['ch'] }) })]),
        rawSaasFile('s2', [
          target({
            namespace: prod,
            ref: SHA,
            promotion: promotion({
              auto: true,
              subscribe: ['ch'],
              promotion_data: [{ channel: 'ch', data: [] }],
            }),
          }),
        ]),
      ],
    ],
    [
      'secret parameters below an allowed path (component-wise)',
      [
        rawSaasFile('s', [target({ secretParameters: [secret('app/stage/db')] })], {
          allowedSecretParameterPaths: ['app/stage'],
          secretParameters: [secret('app/stage')],
        }),
      ],
    ],
    [
      'targets of the parent app with validateTargetsInApp',
      [
        rawSaasFile('s', [target({ namespace: foreign })], {
          validateTargetsInApp: true,
          app: { ...rawSaasFile('x', []).app, name: 'child', parentApp: { name: 'other' } },
        }),
      ],
    ],
    [
      'upstream with a branch, images with a branch',
      [rawSaasFile('s', [target({ upstream }), target({ namespace: prod, images })])],
    ],
    [
      'an IMAGE_TAG that is not a prefix of the ref',
      [rawSaasFile('s', [target({ ref: SHA, parameters: '{"IMAGE_TAG": "v1"}' })])],
    ],
    [
      'target parameters using ${ENV} and values without a dot',
      [rawSaasFile('s', [target({ parameters: '{"URL": "https://${DOMAIN}/x", "P": "x"}' })])],
    ],
    [
      'an image pattern of a known Quay org, or of another registry',
      [
        rawSaasFile('s', [target()], {
          imagePatterns: ['quay.io/org/app', 'registry.example.com/x/y'],
        }),
      ],
    ],
  ])('accepts %s', (_, files) => {
    expect(problems(files)).toEqual([]);
  });

  const S = 'saas file s (/services/app/cicd/s.yml)';
  const RT = `${S}, resource template rt`;
  const T = `${RT}, target c1/app-stage`;

  it.each<[string, RawSaasFile[], string[]]>([
    [
      'an app without self-service roles',
      [
        rawSaasFile('s', [target()], {
          app: { ...rawSaasFile('x', []).app, selfServiceRoles: [] },
        }),
      ],
      [`${S}: app app has no self-service roles`],
    ],
    [
      'secret parameters without allowedSecretParameterPaths (each level)',
      [
        withRt(
          rawSaasFile('s', [target({ secretParameters: [secret('a/b')] })], {
            secretParameters: [secret('a/b')],
          }),
          { secretParameters: [secret('a/b')] },
        ),
      ],
      [
        `${S}: secret parameters are used but allowedSecretParameterPaths is missing`,
        `${RT}: secret parameters are used but allowedSecretParameterPaths is missing`,
        `${T}: secret parameters are used but allowedSecretParameterPaths is missing`,
      ],
    ],
    [
      'a secret parameter outside the allowed paths',
      [
        rawSaasFile('s', [target({ secretParameters: [secret('app/stagex/db')] })], {
          allowedSecretParameterPaths: ['app/stage'],
        }),
      ],
      [
        `${T}: secret parameter path 'app/stagex/db' is not below any of allowedSecretParameterPaths (app/stage)`,
      ],
    ],
    [
      'saas file and environment names equal in their first 56 characters',
      [
        rawSaasFile(`${'x'.repeat(50)}-aaaaa`, [target()]),
        rawSaasFile(`${'x'.repeat(50)}-aaaaa-stage`, [target({ namespace: prod })]),
      ].map((sf, i) => (i === 1 ? { ...sf, path: '/b.yml' } : { ...sf, path: '/a.yml' })),
      [
        `saas file ${'x'.repeat(50)}-aaaaa-stage (/b.yml), resource template rt, target c2/app-prod: '${'x'.repeat(50)}-aaaaa-stage-production' and '${'x'.repeat(50)}-aaaaa-stage' give the same PipelineRun name '${'x'.repeat(50)}-aaaaa': saas file and environment names must differ in their first 56 characters`,
      ],
    ],
    [
      'auto promotion with a branch',
      [
        rawSaasFile('s', [
          target({ promotion: promotion({ auto: true, subscribe: ['ch'] }) }),
          target({ namespace: prod, promotion: promotion({ publish: ['ch'] }) }),
        ]),
      ],
      [`${T}: auto promotion needs a commit sha as ref, not 'main'`],
    ],
    [
      'upstream with a commit sha',
      [rawSaasFile('s', [target({ ref: SHA, upstream })])],
      [`${T}: upstream cannot be used with a commit sha ref (${SHA})`],
    ],
    [
      'images with upstream and with a commit sha',
      [
        rawSaasFile('s', [
          target({ upstream, images }),
          target({ namespace: prod, ref: SHA, images }),
        ]),
      ],
      [
        `${T}: images cannot be used together with upstream`,
        `${RT}, target c2/app-prod: images need a branch as ref, not the commit sha ${SHA}: a fixed ref never picks up a new image`,
      ],
    ],
    [
      'dangling promotion data',
      [
        rawSaasFile('s', [
          target({ namespace: prod, promotion: promotion({ publish: ['ch'] }) }),
          target({
            ref: SHA,
            promotion: promotion({
              auto: true,
              subscribe: ['ch'],
              promotion_data: [{ channel: 'gone', data: [] }],
            }),
          }),
        ]),
      ],
      [
        `${T}: promotion_data for channel gone, which is not subscribed: remove it (was the subscription removed?)`,
      ],
    ],
    [
      'a target outside the app with validateTargetsInApp',
      [rawSaasFile('s', [target({ namespace: foreign })], { validateTargetsInApp: true })],
      [
        `${RT}, target c1/other-stage: validateTargetsInApp: namespace other-stage belongs to app other, not to app`,
      ],
    ],
    [
      'a subscribed channel nobody publishes',
      [rawSaasFile('s', [target({ ref: SHA, promotion: promotion({ subscribe: ['nobody'] }) })])],
      [
        `saas file /services/app/cicd/s.yml, resource template rt: subscribes to channel nobody, which no target publishes`,
      ],
    ],
    [
      'publisher and subscriber of different repositories',
      [
        withRt(rawSaasFile('pub', [target({ promotion: promotion({ publish: ['ch'] }) })]), {
          url: 'https://github.com/org/other',
        }),
        rawSaasFile('s', [
          target({ namespace: prod, ref: SHA, promotion: promotion({ subscribe: ['ch'] }) }),
        ]),
      ],
      [
        'saas file /services/app/cicd/s.yml, resource template rt: subscribes to channel ch from a different repository: publisher /services/app/cicd/pub.yml resource template rt deploys https://github.com/org/other, this one https://github.com/org/app',
      ],
    ],
    [
      'the same target publishing a channel twice',
      [
        rawSaasFile('s', [
          target({ promotion: promotion({ publish: ['ch'] }) }),
          target({ promotion: promotion({ publish: ['ch'] }) }),
        ]),
      ],
      [`${T}: publishes channel ch twice (the same target appears twice)`],
    ],
    [
      'IMAGE_TAG as a prefix of the ref',
      [rawSaasFile('s', [target({ ref: SHA, parameters: '{"IMAGE_TAG": "0123456"}' })])],
      [
        `${T}: IMAGE_TAG 0123456 is a prefix of ref ${SHA}: remove the IMAGE_TAG parameter, it is generated from the commit`,
      ],
    ],
    [
      'a parameter referring to itself',
      [rawSaasFile('s', [target({ parameters: '{"P": "a.${P}"}' })])],
      [
        `${T}: parameter P: "a.\${P}" refers to itself; substitution will not do what you expect, rename the parameter`,
      ],
    ],
    [
      'an environment value repeated in a target parameter',
      [
        rawSaasFile('s', [
          target({
            parameters: '{"URL": "https://stage.example.com/x", "DOMAIN": "stage.example.com"}',
          }),
        ]),
      ],
      [
        `${T}: parameter URL: "https://stage.example.com/x" repeats DOMAIN: "stage.example.com" of environment stage; use "URL: https://\${DOMAIN}/x"`,
        `${T}: remove DOMAIN, environment stage sets the same value`,
      ],
    ],
    [
      'two saas files with the same name',
      [
        rawSaasFile('s', [target()]),
        { ...rawSaasFile('s', [target({ namespace: prod })]), path: '/other.yml' },
      ],
      ['saas file s: the name is not unique: /services/app/cicd/s.yml, /other.yml'],
    ],
    [
      'a repository that is no code component',
      [withRt(rawSaasFile('s', [target()]), { url: 'https://github.com/org/unknown' })],
      [
        'saas file s: repository https://github.com/org/unknown is not a codeComponents url of any app',
      ],
    ],
    [
      'an image pattern of an unknown Quay org',
      [rawSaasFile('s', [target()], { imagePatterns: ['quay.io/nope/app'] })],
      [
        'saas file s: image pattern quay.io/nope/app names Quay organisation nope of quay.io, which no quayOrg of app-interface is',
      ],
    ],
  ])('reports %s', (_, files, expected) => {
    expect(problems(files)).toEqual(expected);
  });
});
