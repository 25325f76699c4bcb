import { describe, expect, it } from 'vitest';
import {
  annotatePrometheusRules,
  digestsNeeded,
  htmlUrl,
  type ManagedDocument,
  managedDocuments,
  parseDirectoryFiles,
  parseTemplateFile,
  processSaasTemplate,
  withTemplateDefaults,
} from './render.ts';

const SHA = '0123456789abcdef0123456789abcdef01234567';
const defaults = { commitSha: SHA, hashLength: 7, useChannelInImageTag: false };

describe('withTemplateDefaults', () => {
  it.each([
    ['adds COMMIT_SHA and IMAGE_TAG', {}, defaults, { COMMIT_SHA: SHA, IMAGE_TAG: '0123456' }],
    [
      'keeps given values',
      { COMMIT_SHA: 'x', IMAGE_TAG: 'v1' },
      defaults,
      { COMMIT_SHA: 'x', IMAGE_TAG: 'v1' },
    ],
    ['an empty IMAGE_TAG counts as unset', { IMAGE_TAG: '' }, defaults, { IMAGE_TAG: '0123456' }],
    [
      'channel in the image tag',
      { CHANNEL: 'beta' },
      { ...defaults, useChannelInImageTag: true, hashLength: 4 },
      { IMAGE_TAG: 'beta-0123' },
    ],
  ])('%s', (_, params, d, expected) => {
    expect(withTemplateDefaults(params, d, '[p]')).toMatchObject(expected);
  });

  it('needs CHANNEL with use_channel_in_image_tag', () => {
    expect(() =>
      withTemplateDefaults({}, { ...defaults, useChannelInImageTag: true }, '[sf/rt] url:'),
    ).toThrow("[sf/rt] url: CHANNEL is required when 'use_channel_in_image_tag' is true.");
  });
});

describe('digestsNeeded', () => {
  const template = { parameters: [{ name: 'REPO_DIGEST' }, { name: 'IMAGE' }] };
  it.each([
    [template, {}, { repoDigest: true, imageDigest: false }],
    [template, { REPO_DIGEST: 'given' }, { repoDigest: false, imageDigest: false }],
    [
      { parameters: [{ name: 'IMAGE_DIGEST', required: false }] },
      {},
      { repoDigest: false, imageDigest: true },
    ],
    [{}, {}, { repoDigest: false, imageDigest: false }],
  ])('%j with %j', (t, params, expected) => {
    expect(digestsNeeded(t, params)).toEqual(expected);
  });
});

describe('processSaasTemplate', () => {
  const template = parseTemplateFile(
    `
apiVersion: v1
kind: Template
parameters:
  - name: REPLICAS
    value: "1"
  - name: IMAGE
    required: true
  - name: FLAG
objects:
  - apiVersion: apps/v1
    kind: Deployment
    metadata: {name: app}
    spec:
      replicas: \${{REPLICAS}}
      template: {spec: {containers: [{name: c, image: "\${IMAGE}:\${IMAGE_TAG}"}]}}
      flag: \${FLAG}
`,
    'test',
  );

  it('forces the apiVersion, stringifies values and ignores unknown parameters', () => {
    const [d] = processSaasTemplate(
      template,
      { REPLICAS: 3, IMAGE: 'quay.io/x', IMAGE_TAG: 'abc', FLAG: null, UNKNOWN: 'x' },
      'test',
    );
    expect(d).toMatchObject({
      spec: {
        replicas: 3,
        // IMAGE_TAG is not a parameter of this template: oc leaves the reference as it is.
        template: { spec: { containers: [{ image: `quay.io/x:$\{IMAGE_TAG}` }] } },
        flag: 'None',
      },
    });
  });

  it('refuses a missing required parameter, naming the template', () => {
    expect(() => processSaasTemplate(template, {}, '[sf/rt] url:')).toThrow(
      /\[sf\/rt\] url:.*IMAGE/,
    );
  });

  it('refuses a template that is not a mapping', () => {
    expect(() => processSaasTemplate(['x'], {}, 'where')).toThrow(
      'where: the template is not a YAML mapping',
    );
  });
});

describe('managedDocuments and annotations', () => {
  it('keeps managed kinds (Kind or Kind.group) and logs the rest', () => {
    const lines: string[] = [];
    const kept = managedDocuments(
      [
        { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'a' } },
        { apiVersion: 'monitoring.coreos.com/v1', kind: 'PrometheusRule', metadata: { name: 'r' } },
        { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' } },
        'text',
        null,
      ],
      ['Deployment', 'PrometheusRule.monitoring.coreos.com'],
      'c/ns',
      (l) => lines.push(l),
    );
    expect(kept.map((d) => d.kind)).toEqual(['Deployment', 'PrometheusRule']);
    expect(lines).toEqual([
      'Skipping resource of kind Secret on c/ns',
      'Skipping non-dictionary resource on c/ns',
      'Skipping non-dictionary resource on c/ns',
    ]);
  });

  it('adds html_url to the annotated rules of PrometheusRules', () => {
    const rule = {
      kind: 'PrometheusRule',
      apiVersion: 'monitoring.coreos.com/v1',
      spec: {
        groups: [{ rules: [{ alert: 'A', annotations: { summary: 's' } }, { alert: 'B' }] }],
      },
    } as ManagedDocument;
    const url = htmlUrl('https://github.com/o/r', 'openshift-template', 'main', '/t.yaml');
    expect(url).toBe('https://github.com/o/r/blob/main/t.yaml');
    annotatePrometheusRules([rule], url, () => {});
    expect(rule.spec).toEqual({
      groups: [
        { rules: [{ alert: 'A', annotations: { summary: 's', html_url: url } }, { alert: 'B' }] },
      ],
    });
    expect(htmlUrl('https://x/o/r', 'directory', 'v1', '/dir')).toBe('https://x/o/r/tree/v1/dir');
  });
});

describe('parsing', () => {
  it('reads every document of every file of a directory', () => {
    expect(
      parseDirectoryFiles(
        [
          { name: 'a.yaml', content: 'kind: A\n---\nkind: B\n' },
          { name: 'b.yml', content: 'enabled: yes\n' },
        ],
        'dir',
      ),
    ).toEqual([{ kind: 'A' }, { kind: 'B' }, { enabled: true }]);
  });

  it('names the file of a YAML error', () => {
    expect(() => parseDirectoryFiles([{ name: 'bad.yaml', content: 'a: [' }], 'dir')).toThrow(
      /dir: bad.yaml is not valid YAML/,
    );
    expect(() => parseTemplateFile('a: [', 'the template')).toThrow(
      /the template is not valid YAML/,
    );
  });
});
