// biome-ignore-all lint/suspicious/noTemplateCurlyInString: OpenShift template parameters are ${NAME} inside plain strings
import { QontractError } from '@qontract/core';
import { describe, expect, it } from 'vitest';
import { instantiateTemplate, type KubeObject, processTemplate } from './template.ts';

// Sources cited below:
//   [template.go]  openshift/library-go pkg/template/templateprocessing/template.go
//   [object.go]    openshift/library-go pkg/template/templateprocessing/object.go
//   [process.go]   openshift/oc pkg/cli/process/process.go (what `oc process --local` adds)
//   [groups.go]    openshift/library-go pkg/legacyapi/legacygroupification/groupification.go
//   [docs]         OpenShift docs, "Using templates" → "Writing template parameters", and the
//                  Template API reference (template.openshift.io/v1)

type Param = {
  name: string;
  value?: string;
  required?: boolean;
  generate?: string;
  from?: string;
};

const template = (objects: unknown[], parameters: Param[] = [], extra: object = {}) => ({
  apiVersion: 'template.openshift.io/v1',
  kind: 'Template',
  metadata: { name: 'example' },
  objects,
  parameters,
  ...extra,
});

/** A ConfigMap whose `data.v` is the string under test. */
const withValue = (v: unknown) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'cm' },
  data: { v },
});
const dataV = (objects: KubeObject[]) => (objects[0]?.data as { v: unknown } | undefined)?.v;

const P = [
  { name: 'A', value: 'a' },
  { name: 'B', value: 'b' },
  { name: 'EMPTY' },
  { name: 'NUM', value: '42' },
  { name: 'JSON', value: '{"x": [1, true, null]}' },
  { name: 'WORD', value: 'foo' },
  { name: 'HUGE', value: '1e400' },
  { name: 'REF', value: '${B}' },
];

describe('substitution in string values', () => {
  it.each([
    // [input, expected, the rule it encodes]
    ['${A}', 'a', '${NAME} is replaced by the value [template.go stringParameterExp; docs]'],
    ['x-${A}-${B}-y', 'x-a-b-y', 'several references, with text around [docs]'],
    ['${A}${A}', 'aa', 'a parameter may be referenced many times [docs]'],
    ['${EMPTY}!', '!', 'a declared parameter without value is replaced by "" [template.go]'],
    ['${NOPE}', '${NOPE}', 'an undeclared name is left as written [template.go: found]'],
    ['${a-b}', '${a-b}', 'names are [a-zA-Z0-9_]+ only [template.go stringParameterExp]'],
    ['$A', '$A', 'only the braced form is a reference'],
    ['${{A}} x', '${{A}} x', '${{NAME}} with text around is not substituted at all [template.go]'],
    ['${NUM}', '42', 'a string reference always yields a string [template.go asString]'],
    // strings.Replace(out, "${REF}" ...) then strings.Replace(out, "${B}", ..., 1) hits the
    // "${B}" REF inserted, not the one written later in the input [template.go].
    ['${REF} ${B}', 'b ${B}', "Go's replace order: each reference replaces the first occurrence"],
  ])('%s → %s (%s)', (input, expected, _rule) => {
    expect(dataV(processTemplate(template([withValue(input)], P)))).toEqual(expected);
  });
});

describe('${{NAME}}: non-string substitution', () => {
  it.each([
    // The whole string is the reference; the value is decoded as JSON [object.go
    // visitUnsettableValues: json.Unmarshal], and stays a string when it is not JSON [docs].
    ['${{NUM}}', 42, 'a number'],
    ['${{JSON}}', { x: [1, true, null] }, 'an object (any JSON structure)'],
    ['${{WORD}}', 'foo', 'not JSON: the value as a string'],
    ['${{EMPTY}}', '', '"" is not JSON: the empty string'],
    ['${{HUGE}}', '1e400', 'a number beyond float64 does not decode in Go: a string'],
    ['${{NOPE}}', '${{NOPE}}', 'an undeclared name: left as written'],
  ])('%s → %j (%s)', (input, expected, _rule) => {
    expect(dataV(processTemplate(template([withValue(input)], P)))).toEqual(expected);
  });

  it('applies in lists and in map keys; keys of other types are untouched', () => {
    const [o] = processTemplate(
      template(
        [
          {
            kind: 'X',
            list: ['${{NUM}}', '${A}', 7, true, null],
            '${A}-key': '${B}',
            '${{WORD}}': 1,
          },
        ],
        P,
      ),
    );
    // [object.go visitValue: map keys and slice elements go through the same visitor]
    expect(o).toEqual({
      kind: 'X',
      apiVersion: '',
      list: [42, 'a', 7, true, null],
      'a-key': 'b',
      foo: 1,
    });
  });
});

describe("OpenShift's own expectations (template_test.go TestProcessValue)", () => {
  const params: Param[] = [
    { name: 'VALUE', value: '1' },
    { name: 'STRING_1', value: 'string1' },
    { name: 'STRING_2', value: 'string2' },
    { name: 'INT_1', value: '1' },
    { name: 'VALID_JSON_MAP', value: '{"key":"value"}' },
    { name: 'INVALID_JSON_MAP', value: '{"key":"value"' },
    { name: 'VALID_JSON_ARRAY', value: '["key","value"]' },
    { name: 'INVALID_JSON_ARRAY', value: '["key":"value"' },
  ];
  it.each([
    ['${{INT_1}}', 1],
    ['${{INVALID_JSON_MAP}}', '{"key":"value"'],
    ['${{INVALID_JSON_ARRAY}}', '["key":"value"'],
    ['${VALUE}', '1'],
    ['$${VALUE}', '$1'], // no escape syntax: `$` then the reference
    ['${{STRING_1}}', 'string1'],
    ['${STRING_1}_${STRING_1}', 'string1_string1'],
    ['${STRING_1}_${STRING_2}', 'string1_string2'],
    ['a${{INT_1}}', 'a${{INT_1}}'],
    ['${{INT_1}}a', '${{INT_1}}a'],
    ['${{INVALID_PARAMETER}}', '${{INVALID_PARAMETER}}'],
    ['${{INVALID PARAMETER}}', '${{INVALID PARAMETER}}'],
    ['${{VALID_JSON_MAP}}', { key: 'value' }],
    ['${{VALID_JSON_ARRAY}}', ['key', 'value']],
  ])('%s → %j', (input, expected) => {
    expect(dataV(processTemplate(template([withValue(input)], params)))).toEqual(expected);
  });

  it('substitutes apiVersion too ("v${VALUE}" → "v1")', () => {
    const [o] = processTemplate(template([{ apiVersion: 'v${VALUE}', kind: 'Service' }], params));
    expect(o?.apiVersion).toBe('v1');
  });
});

describe('parameter values', () => {
  const params: Param[] = [
    { name: 'DEFAULTED', value: 'default' },
    { name: 'GENERATED', generate: 'expression', from: '[a-c]{3}' },
    { name: 'BOTH', value: 'kept', generate: 'expression', from: '[a-c]{3}' },
  ];
  const run = (given: Record<string, string>) =>
    instantiateTemplate(template([], params), given, { random: () => 1 }).parameters;

  it.each([
    // [given, expected values, the rule]
    [
      {},
      { DEFAULTED: 'default', GENERATED: 'bbb', BOTH: 'kept' },
      'defaults; generate fills what has no value [template.go GenerateParameterValues]',
    ],
    [
      { DEFAULTED: 'given' },
      { DEFAULTED: 'given', GENERATED: 'bbb', BOTH: 'kept' },
      'a given value overrides the default [process.go injectUserVars]',
    ],
    [
      { GENERATED: 'mine' },
      { DEFAULTED: 'default', GENERATED: 'mine', BOTH: 'kept' },
      'a given value is not regenerated',
    ],
    [
      { GENERATED: '' },
      { DEFAULTED: 'default', GENERATED: '', BOTH: 'kept' },
      'a given "" switches the generator off [process.go: Generate = ""]',
    ],
    [
      { DEFAULTED: '' },
      { DEFAULTED: '', GENERATED: 'bbb', BOTH: 'kept' },
      'a given "" replaces the default',
    ],
  ])('%j → %j (%s)', (given, expected, _rule) => {
    expect(run(given)).toEqual(expected);
  });

  it('a repeated parameter name: the first gets the given value, the last one is used', () => {
    // [process.go GetParameterByName: the first] [template.go paramMap: the last wins]
    const t = template(
      [withValue('${X}')],
      [
        { name: 'X', value: 'one' },
        { name: 'X', value: 'two' },
      ],
    );
    expect(dataV(processTemplate(t, { X: 'given' }))).toBe('two');
  });
});

describe('errors', () => {
  const expectError = (fn: () => unknown, message: string) => {
    let error: unknown;
    try {
      fn();
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(QontractError);
    expect((error as Error).message).toBe(message);
  };

  it.each([
    // [template, given, options, message, the rule]
    [
      template([], [{ name: 'R', required: true }]),
      {},
      {},
      'template example: template parameter R is required and must be specified',
      'required without value [template.go]',
    ],
    [
      template([], [{ name: 'R', required: true, value: 'd' }]),
      { R: '' },
      {},
      'template example: template parameter R is required and must be specified',
      'a given "" does not satisfy required',
    ],
    [
      template(
        [],
        [
          { name: 'R', required: true },
          { name: 'S', required: true },
        ],
      ),
      {},
      {},
      'template example: template parameter R is required and must be specified; template parameter S is required and must be specified',
      'every parameter problem is reported [template.go errs]',
    ],
    [
      template([], [{ name: 'A' }]),
      { A: 'x', B: 'y', C: 'z' },
      {},
      'template example: unknown parameter name "B"; unknown parameter name "C"',
      'unknown parameter names [process.go injectUserVars]',
    ],
    [
      template([], [{ name: 'A' }]),
      { 'B C': 'y' },
      { ignoreUnknownParameters: true },
      'template example: invalid parameter name "B C"',
      'names must be env var names, even when ignoring unknowns [process.go ParseEnvironment]',
    ],
    [
      template([], [{ name: 'G', generate: 'password', from: 'x' }]),
      {},
      {},
      "template example: unknown generator name 'password' for parameter G",
      'only the expression generator exists [oc process: processTemplateLocally]',
    ],
    [
      template([], [{ name: 'G', generate: 'expression', from: '[ABC]{3}' }]),
      {},
      {},
      'template example: parameter G: malformed expression syntax: [ABC]',
      'a bad expression names the parameter',
    ],
    [
      template([], [{ name: 'R', required: true }]),
      {},
      { source: 'repo/openshift.yaml' },
      'template repo/openshift.yaml: template parameter R is required and must be specified',
      'options.source names the template',
    ],
    [
      template(['scalar', { apiVersion: 'v1' }]),
      {},
      {},
      "template example: objects[0]: unable to handle object: Object 'Kind' is missing; objects[1]: unable to handle object: Object 'Kind' is missing",
      'objects must be objects with a kind [template.go: runtime.Decode]',
    ],
    [
      { ...template([]), kind: 'List' },
      {},
      {},
      'template example: kind: Invalid input: expected "Template"',
      'the input must be a Template [process.go: not a valid Template]',
    ],
    [
      template([], [{ name: 'N', value: 3 as unknown as string }]),
      {},
      {},
      'template example: parameters.0.value: Invalid input: expected string, received number',
      'parameter values are strings (templatev1.Parameter)',
    ],
  ] as const)('%#: %s', (t, given, options, message, _rule) => {
    expectError(() => processTemplate(t, given, options), message);
  });

  it('unknown parameters are ignored with ignoreUnknownParameters (--ignore-unknown-parameters)', () => {
    const objects = processTemplate(
      template([withValue('${A}')], [{ name: 'A' }]),
      { A: 'x', B: 'y' },
      { ignoreUnknownParameters: true },
    );
    expect(dataV(objects)).toBe('x');
  });

  it('never shows a parameter value in an error', () => {
    expectError(
      () => processTemplate(template([], [{ name: 'A' }]), { 'bad name': 's3cr3t' }),
      'template example: invalid parameter name "bad name"',
    );
  });
});

describe('template labels', () => {
  it.each([
    // [object metadata, template labels, expected metadata, the rule]
    [
      { name: 'o' },
      { app: 'x' },
      { name: 'o', labels: { app: 'x' } },
      'added to metadata.labels [template.go addObjectLabels; API reference]',
    ],
    [
      { name: 'o', labels: { app: 'old', keep: 'k' } },
      { app: 'x' },
      { name: 'o', labels: { app: 'x', keep: 'k' } },
      'a template label overrides the same key',
    ],
    [
      undefined,
      { app: 'x' },
      { labels: { app: 'x' } },
      'metadata is created when missing (Unstructured.SetLabels)',
    ],
    [
      { name: 'o' },
      {},
      { name: 'o', labels: {} },
      'an empty labels map still sets metadata.labels',
    ],
    [
      { name: 'o', labels: { a: 1 } },
      { app: 'x' },
      { name: 'o', labels: { app: 'x' } },
      'non-string labels are dropped (Unstructured.GetLabels)',
    ],
    [
      { name: 'o', labels: { app: 'old' } },
      { '${A}': '${B}-${{NUM}}' },
      { name: 'o', labels: { app: 'old', a: 'b-${{NUM}}' } },
      'label keys and values are substituted first [template.go Process]',
    ],
  ])('%#: %s', (metadata, labels, expected, _rule) => {
    const object = { apiVersion: 'v1', kind: 'Service', ...(metadata ? { metadata } : {}) };
    const [o] = processTemplate(template([object], P, { labels }));
    expect(o?.metadata).toEqual(expected);
  });

  it('no labels field: objects are left alone', () => {
    const [o] = processTemplate(template([{ apiVersion: 'v1', kind: 'Service' }]));
    expect(o).toEqual({ apiVersion: 'v1', kind: 'Service' });
  });

  it("does not label pod templates (Deployments' spec.template) [template.go: only typed DeploymentConfigs, not --local]", () => {
    const deployment = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'd' },
      spec: { template: { metadata: { labels: { pod: 'p' } } } },
    };
    const [o] = processTemplate(template([deployment], [], { labels: { app: 'x' } }));
    expect(o).toEqual({ ...deployment, metadata: { name: 'd', labels: { app: 'x' } } });
  });
});

describe('metadata.namespace', () => {
  it.each([
    // [namespace, expected metadata, the rule: template.go stripNamespace; API reference "objects"]
    ['hardcoded', { name: 'o' }, 'a hard-coded namespace is removed'],
    [
      '${A}',
      { name: 'o', namespace: 'a' },
      'one with a ${PARAM} reference is kept and substituted',
    ],
    ['ns-${A}', { name: 'o', namespace: 'ns-a' }, 'also when the reference is part of it'],
    ['${{A}}', { name: 'o' }, '${{PARAM}} is not a string reference: removed'],
    ['', { name: 'o', namespace: '' }, 'an empty one stays empty'],
    [3, { name: 'o', namespace: '' }, 'a non-string one becomes ""'],
  ])('%j → %j (%s)', (namespace, expected, _rule) => {
    const object = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'o', namespace } };
    expect(processTemplate(template([object], P))[0]?.metadata).toEqual(expected);
  });
});

describe('apiVersion of legacy OpenShift kinds', () => {
  it.each([
    // [apiVersion, kind, expected apiVersion: groups.go OAPIToGroupifiedGVK, applied by template.go]
    ['v1', 'Route', 'route.openshift.io/v1'],
    ['v1', 'DeploymentConfig', 'apps.openshift.io/v1'],
    ['v1', 'Template', 'template.openshift.io/v1'],
    ['v1', 'Service', 'v1'],
    ['route.openshift.io/v1', 'Route', 'route.openshift.io/v1'],
    ['apps/v1', 'Deployment', 'apps/v1'],
    [undefined, 'Route', 'route.openshift.io/'],
    [undefined, 'Service', ''],
  ])('%s %s → %s', (apiVersion, kind, expected) => {
    const [o] = processTemplate(template([{ apiVersion, kind }]));
    expect(o?.apiVersion).toBe(expected);
  });

  it('after substitution, so a parameter may name the kind', () => {
    const t = template([{ apiVersion: 'v1', kind: '${K}' }], [{ name: 'K', value: 'Route' }]);
    expect(processTemplate(t)[0]).toEqual({ apiVersion: 'route.openshift.io/v1', kind: 'Route' });
  });
});

describe('the template as a whole', () => {
  it('substitutes the message and returns every final parameter value [template.go Process]', () => {
    const t = template([], [{ name: 'PASSWORD', generate: 'expression', from: '[a-z]{4}' }], {
      message: 'your password: ${PASSWORD}',
    });
    expect(instantiateTemplate(t, {}, { random: () => 0 })).toEqual({
      objects: [],
      message: 'your password: aaaa',
      parameters: { PASSWORD: 'aaaa' },
    });
  });

  it('accepts null for optional fields and the legacy apiVersion v1', () => {
    const t = {
      apiVersion: 'v1',
      kind: 'Template',
      metadata: null,
      objects: null,
      parameters: null,
      labels: null,
    };
    expect(instantiateTemplate(t)).toEqual({ objects: [], message: '', parameters: {} });
  });

  it('does not change its input', () => {
    const t = template([withValue('${A}')], [{ name: 'A', value: 'a' }], { labels: { l: 'v' } });
    const before = structuredClone(t);
    processTemplate(t, { A: 'z' });
    expect(t).toEqual(before);
  });

  it('processes the documented example (redis-template)', () => {
    // [docs] "Writing templates": the redis example, its password generated from [A-Z0-9]{8}.
    const redis = {
      apiVersion: 'template.openshift.io/v1',
      kind: 'Template',
      metadata: { name: 'redis-template' },
      objects: [
        {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'redis-master' },
          spec: {
            containers: [
              {
                env: [{ name: 'REDIS_PASSWORD', value: '${REDIS_PASSWORD}' }],
                image: 'dockerfile/redis',
                name: 'master',
                ports: [{ containerPort: 6379, protocol: 'TCP' }],
              },
            ],
          },
        },
      ],
      parameters: [
        {
          description: 'Password used for Redis authentication',
          from: '[A-Z0-9]{8}',
          generate: 'expression',
          name: 'REDIS_PASSWORD',
        },
      ],
      labels: { redis: 'master' },
    };
    const [pod] = processTemplate(redis, {}, { random: () => 2 });
    expect(pod).toMatchObject({
      metadata: { name: 'redis-master', labels: { redis: 'master' } },
      spec: { containers: [{ env: [{ name: 'REDIS_PASSWORD', value: 'CCCCCCCC' }] }] },
    });
  });
});
