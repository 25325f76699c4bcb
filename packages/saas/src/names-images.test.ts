import { describe, expect, it } from 'vitest';
import { blockedImages, collectImages, matchingImagePattern } from './images.ts';
import { isCommitSha, saasFileEnvCombo, secretPathAllowed } from './names.ts';

describe('image patterns', () => {
  it.each([
    ['quay.io/org/app:abc', ['quay.io/org/app'], 'quay.io/org/app'],
    ['quay.io/org/app-worker:abc', ['quay.io/org/app'], 'quay.io/org/app'], // a prefix, not a repository match
    ['quay.io/other/app:abc', ['quay.io/org/app', 'quay.io/org'], undefined],
    ['quay.io/org/app:abc', [], undefined],
  ])('%s with %o → %s', (image, patterns, expected) => {
    expect(matchingImagePattern(image, patterns)).toBe(expected);
  });

  it('block rules apply where every selector label matches the environment', () => {
    const rule = {
      environmentLabelSelector: { type: 'production' },
      imagePatterns: ['quay.io/dev/'],
    };
    const images = ['quay.io/dev/app:1', 'quay.io/prod/app:1'];
    expect(blockedImages(rule, { type: 'production', x: 'y' }, images)).toEqual([
      'quay.io/dev/app:1',
    ]);
    expect(blockedImages(rule, { type: 'stage' }, images)).toEqual([]);
    expect(blockedImages(rule, null, images)).toEqual([]);
  });

  it('collects the images of pod templates, cron jobs, spec.image and ClowdApps', () => {
    const images = (r: unknown) => [...collectImages(r)].sort();
    expect(
      images({
        spec: {
          template: { spec: { containers: [{ image: 'a' }], initContainers: [{ image: 'b' }] } },
        },
      }),
    ).toEqual(['a', 'b']);
    expect(
      images({
        spec: { jobTemplate: { spec: { template: { spec: { containers: [{ image: 'c' }] } } } } },
      }),
    ).toEqual(['c']);
    expect(images({ spec: { image: 'd' } })).toEqual(['d']);
    expect(
      images({
        spec: { deployments: [{ podSpec: { image: 'e' } }], jobs: [{ podSpec: { image: 'f' } }] },
      }),
    ).toEqual(['e', 'f']);
    expect(images({ kind: 'ConfigMap', data: {} })).toEqual([]);
  });
});

describe('names', () => {
  it.each([
    ['0123456789abcdef0123456789abcdef01234567', true],
    ['0123456789ABCDEF0123456789abcdef01234567', false],
    ['main', false],
    ['0123456789abcdef', false],
  ])('isCommitSha(%s) = %s', (ref, expected) => {
    expect(isCommitSha(ref)).toBe(expected);
  });

  it('cuts the PipelineRun name to 56 characters without a trailing dash', () => {
    expect(saasFileEnvCombo('saas', 'stage')).toEqual({ short: 'saas-stage', long: 'saas-stage' });
    const name = `${'x'.repeat(55)}`;
    expect(saasFileEnvCombo(name, 'production')).toEqual({
      short: name,
      long: `${name}-production`,
    });
  });

  it.each([
    ['app-sre/creds/db', 'app-sre/creds', true],
    ['app-sre/creds', 'app-sre/creds', true],
    ['app-sre/credsx/db', 'app-sre/creds', false],
    ['app-sre/creds/db', 'app-sre/creds/', false],
    ['app-sre//creds/./db', 'app-sre/creds', true],
    ['/abs/creds/db', 'abs/creds', false],
    ['/abs/creds/db', '/abs', true],
  ])('secretPathAllowed(%s, %s) = %s', (path, allowed, expected) => {
    expect(secretPathAllowed(path, allowed)).toBe(expected);
  });
});
