import { describe, expect, it } from 'vitest';
import { canonicalize } from './canonicalize.ts';
import { ConstructResourceError } from './errors.ts';
import { buildSecret, fullyQualifiedKind, OpenshiftResource } from './openshift-resource.ts';
import { parseResource } from './parse-resource.ts';
import { pyJsonDumps } from './py-json.ts';

// Upstream reconcile/test/test_openshift_resource.py, ported as tables, plus vectors computed by
// running the original's reconcile/utils/openshift_resource.py.
const TEST_INT = 'test_openshift_resources';
const TEST_INT_VER = '1.9.2';

const CONFIGMAP_YAML = `apiVersion: v1
kind: ConfigMap
metadata:
  name: app-interface
data:
  key1: val1
  key2: val2
`;
const CONFIGMAP_SHA = '1366d8ef31f0d83419d25b446e61008b16348b9efee2216873856c49cede6965';

function build(body: unknown, integration = TEST_INT, version = TEST_INT_VER): OpenshiftResource {
  return new OpenshiftResource(body, integration, version);
}

describe('sha256sum', () => {
  it('matches the upstream sha256sum.yml vector and survives annotate()', () => {
    const resource = build(parseResource(CONFIGMAP_YAML, 'yaml'));
    expect(resource.sha256sum()).toBe(CONFIGMAP_SHA);
    const annotated = resource.annotate();
    expect(annotated.sha256sum()).toBe(CONFIGMAP_SHA);
    expect(annotated.hasValidSha256sum()).toBe(true);
    (annotated.annotations as Record<string, string>)['qontract.sha256sum'] = 'test';
    expect(annotated.sha256sum()).toBe(CONFIGMAP_SHA);
    expect(annotated.hasValidSha256sum()).toBe(false);
  });

  it('ignores server fields, qontract annotations, last-applied and key order', () => {
    const noisy = parseResource(
      `kind: ConfigMap
data: {key2: val2, key1: val1}
metadata:
  name: app-interface
  namespace: ns
  uid: 0b0e6d7c
  resourceVersion: "12"
  generation: 3
  selfLink: /api/v1/x
  creationTimestamp: 2024-01-01T00:00:00Z
  managedFields: [{manager: kubectl}]
  annotations:
    qontract.integration: other
    qontract.integration_version: 9.9.9
    qontract.sha256sum: abc
    qontract.update: 2024-05-01T10:11:12Z
    qontract.caller_name: someone
    kubectl.kubernetes.io/last-applied-configuration: "{}"
apiVersion: v1
status: {phase: Active}
`,
      'yaml',
    );
    expect(build(noisy).sha256sum()).toBe(CONFIGMAP_SHA);
  });

  it.each([
    [
      'valid_resource.yml',
      { kind: 'ConfigMap', metadata: { name: 'test' } },
      'c39d0a51aec3eb7c5851057e1ac2533bd2cd9eb615ecad749c0b8381cd9b424e',
    ],
    [
      'Secret stringData',
      { kind: 'Secret', metadata: { name: 'resource' }, stringData: { k: 'v' } },
      '5d861442209a0349421e1adb179befab8efbfc4405d766330c72b6b19d7bf5e3',
    ],
    [
      'Service ClusterIP with server fields',
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'svc', uid: 'u' },
        spec: {
          type: 'ClusterIP',
          clusterIP: '10.0.0.1',
          sessionAffinity: 'None',
          ports: [{ port: 80 }],
        },
      },
      '16512caeab74f38a68b0aa5bc19924d4fe2c3023bd1a6a7521daf53fa1367ea1',
    ],
  ])('%s hashes like the original', (_name, body, sha) => {
    expect(build(body).sha256sum()).toBe(sha);
  });

  it('folds Secret stringData into data and adds empty annotations', () => {
    expect(
      canonicalize({ kind: 'Secret', metadata: { name: 'resource' }, stringData: { k: 'v' } }),
    ).toEqual({
      kind: 'Secret',
      metadata: { annotations: {}, name: 'resource' },
      data: { k: 'dg==' },
    });
  });

  it('does not modify the body it canonicalises', () => {
    const body = {
      kind: 'Secret',
      metadata: { name: 's', uid: 'x' },
      type: 'Opaque',
      stringData: { a: 1 },
    };
    const before = JSON.stringify(body);
    build(body).sha256sum();
    expect(JSON.stringify(body)).toBe(before);
  });
});

describe('annotate and ownership', () => {
  it('adds the qontract annotations to a copy of the original body', () => {
    const resource = new OpenshiftResource(
      parseResource(CONFIGMAP_YAML, 'yaml'),
      TEST_INT,
      TEST_INT_VER,
      {
        callerName: 'saas-x',
      },
    );
    expect(resource.hasQontractAnnotations()).toBe(false);
    const annotated = resource.annotate({ now: new Date('2024-05-01T10:11:12.345Z') });
    expect(annotated.hasQontractAnnotations()).toBe(true);
    expect(annotated.annotations).toEqual({
      'qontract.integration': TEST_INT,
      'qontract.integration_version': TEST_INT_VER,
      'qontract.sha256sum': CONFIGMAP_SHA,
      'qontract.update': '2024-05-01T10:11:12Z',
      'qontract.caller_name': 'saas-x',
    });
    expect(annotated.caller).toBe('saas-x');
    expect(resource.annotations).toEqual({});
  });

  it.each([
    ['same integration and major', { int: TEST_INT, ver: '1.0.0', sha: 'x' }, true],
    ['other integration', { int: 'other', ver: '1.9.2', sha: 'x' }, false],
    ['other major version', { int: TEST_INT, ver: '2.0.0', sha: 'x' }, false],
    ['unparsable version', { int: TEST_INT, ver: 'int-v', sha: 'x' }, false],
    ['no sha', { int: TEST_INT, ver: '1.9.2', sha: undefined }, false],
  ])('hasQontractAnnotations: %s', (_name, ann, expected) => {
    const annotations: Record<string, string> = {
      'qontract.integration': ann.int,
      'qontract.integration_version': ann.ver,
    };
    if (ann.sha) annotations['qontract.sha256sum'] = ann.sha;
    expect(
      build({ kind: 'ConfigMap', metadata: { name: 'c', annotations } }).hasQontractAnnotations(),
    ).toBe(expected);
  });

  it('hasQontractAnnotations is false for an own version that is not semver', () => {
    const annotated = build(
      { kind: 'ConfigMap', metadata: { name: 'c' } },
      'int',
      'int-v',
    ).annotate();
    expect(annotated.hasQontractAnnotations()).toBe(false);
  });

  it.each([
    [[{ name: 'owner' }], true],
    [[], false],
    [undefined, false],
  ])('hasOwnerReference(%j) = %s', (refs, expected) => {
    const metadata: Record<string, unknown> = { name: 'c' };
    if (refs) metadata.ownerReferences = refs;
    expect(build({ kind: 'ConfigMap', metadata }).hasOwnerReference()).toBe(expected);
  });
});

describe('validation (verify_valid_k8s_object)', () => {
  const url = 'https://kubernetes.io/docs/concepts/overview/working-with-objects/names/';
  it.each([
    ['valid', { kind: 'ConfigMap', metadata: { name: 'test' } }],
    ['Role names are not checked', { kind: 'Role', metadata: { name: 'system:Role_x' } }],
    [
      'PipelineRun with generateName',
      { kind: 'PipelineRun', metadata: { generateName: 'my-run-' } },
    ],
    [
      'CronJob containers are not checked',
      {
        kind: 'CronJob',
        metadata: { name: 'c' },
        spec: { jobTemplate: { spec: { containers: 'x' } } },
      },
    ],
    [
      'missing path skips the container check',
      { kind: 'Deployment', metadata: { name: 'd' }, spec: { template: {} } },
    ],
  ])('accepts: %s', (_name, body) => {
    expect(() => build(body)).not.toThrow();
  });

  it.each([
    [
      'invalid_resource.yml',
      { xkind: 'ConfigMap', metadata: { xname: 'x' } },
      'resource invalid data (KeyError). details: ',
    ],
    [
      'name format',
      { kind: 'ConfigMap', metadata: { name: 'this_is_invalid' } },
      `The ConfigMap "this_is_invalid" is invalid: metadata.name: Invalid value: "this_is_invalid". This field must adhere to DNS-1123 subdomain names spec.More info can be found at ${url}.`,
    ],
    [
      'name too long',
      { kind: 'ConfigMap', metadata: { name: 'a'.repeat(254) } },
      `This field must adhere to DNS-1123 subdomain names spec.`,
    ],
    [
      'container name format',
      {
        kind: 'Deployment',
        metadata: { name: 'd' },
        spec: { template: { spec: { containers: [{ name: 'this_is_invalid' }] } } },
      },
      `The Deployment "d" is invalid: an container in spec.template.spec.containers was found with an invalid name (this_is_invalid). More info at ${url}.`,
    ],
    [
      'container name too long',
      {
        kind: 'Deployment',
        metadata: { name: 'd' },
        spec: { template: { spec: { containers: [{ name: 'a'.repeat(64) }] } } },
      },
      'was found with an invalid name',
    ],
    [
      'container without name',
      {
        kind: 'Deployment',
        metadata: { name: 'd' },
        spec: { template: { spec: { containers: [{ image: 'x' }] } } },
      },
      'The Deployment "d" is invalid: an item in spec.template.spec.containers was found without a required name field',
    ],
    [
      'containers not a list',
      {
        kind: 'Deployment',
        metadata: { name: 'd' },
        spec: { template: { spec: { containers: { name: 'x' } } } },
      },
      'The Deployment "d" is invalid: spec.template.spec.containers is not a list',
    ],
  ])('rejects: %s', (_name, body, message) => {
    expect(() => build(body)).toThrow(ConstructResourceError);
    expect(() => build(body)).toThrow(message);
  });

  it('prefixes construct errors like the original', () => {
    expect(() => build({ kind: 'ConfigMap', metadata: { name: 'A' } })).toThrow(
      /^error constructing openshift resource: The ConfigMap "A" is invalid/,
    );
  });

  it('accepts a 63-character container name and a 253-character name', () => {
    const body = {
      kind: 'Deployment',
      metadata: { name: 'a'.repeat(253) },
      spec: { template: { spec: { containers: [{ name: 'b'.repeat(63) }] } } },
    };
    expect(() => build(body)).not.toThrow();
  });

  it('uses the generateName minus its last character as the PipelineRun name', () => {
    expect(build({ kind: 'PipelineRun', metadata: { generateName: 'my-run-' } }).name).toBe(
      'my-run',
    );
  });
});

describe('helpers', () => {
  it.each([
    ['Deployment', 'apps/v1', 'Deployment.apps'],
    ['Pod', 'v1', 'Pod'],
    ['Route', 'route.openshift.io/v1', 'Route.route.openshift.io'],
  ])('fullyQualifiedKind(%s, %s) = %s', (kind, apiVersion, expected) => {
    expect(fullyQualifiedKind(kind, apiVersion)).toBe(expected);
    expect(build({ kind, apiVersion, metadata: { name: 'x' } }).kindAndGroup).toBe(expected);
  });

  it('builds a Secret like build_secret', () => {
    const secret = buildSecret({
      name: 'name',
      integration: 'int',
      integrationVersion: '1.0.0',
      unencodedData: { field: 'value', empty: '' },
    });
    expect(secret.kind).toBe('Secret');
    expect(secret.name).toBe('name');
    expect(secret.body).toMatchObject({ type: 'Opaque', data: { field: 'dmFsdWU=', empty: '' } });
    expect(secret.sha256sum()).toBe(
      '8819b4a4d5af71681ae3183c0d4f6a92dee61c6c883f376310f6cad928569a7b',
    );
  });

  it('toJson is json.dumps(body, sort_keys=True) of the body as applied', () => {
    expect(
      build({ metadata: { name: 'x' }, kind: 'ConfigMap', data: { b: 'é', a: 1.5 } }).toJson(),
    ).toBe('{"data": {"a": 1.5, "b": "\\u00e9"}, "kind": "ConfigMap", "metadata": {"name": "x"}}');
  });
});

describe('equals (obj_intersect_equal)', () => {
  const base = { kind: 'ConfigMap', metadata: { name: 'c' } };
  it.each([
    ['status at depth 0 on current', base, { ...base, status: 'status' }, true],
    [
      'status at depth 0 on both',
      { ...base, status: 'nonsense' },
      { ...base, status: 'status' },
      true,
    ],
    ['status below depth 0', { ...base, spec: { status: 'status' } }, base, false],
    ['extra field on current', base, { ...base, data: undefined, extra: 1 }, true],
    [
      'extra label on current',
      { ...base, metadata: { name: 'c', labels: { a: '1' } } },
      { ...base, metadata: { name: 'c', labels: { a: '1', b: '2' } } },
      false,
    ],
    [
      'service-ca.crt data key',
      { ...base, data: { a: 'x' } },
      { ...base, data: { a: 'x', 'service-ca.crt': 'y' } },
      true,
    ],
    ['cpu quantities', { ...base, cpu: '1' }, { ...base, cpu: '1000m' }, true],
    ['int versus float', { ...base, n: 1 }, { ...base, n: 1.5 }, false],
    [
      'apiVersion aliases',
      { ...base, apiVersion: 'apps/v1' },
      { ...base, apiVersion: 'extensions/v1beta1' },
      true,
    ],
  ])('%s', (_name, desired, current, expected) => {
    expect(build(desired).equals(build(current))).toBe(expected);
  });

  it('ignores controller-managed ManagedCluster labels in equality and hash', () => {
    const desired = {
      apiVersion: 'cluster.open-cluster-management.io/v1',
      kind: 'ManagedCluster',
      metadata: { name: 'cluster', labels: { cloud: 'Amazon' } },
      spec: { hubAcceptsClient: true },
    };
    const current = structuredClone(desired);
    Object.assign(current.metadata.labels, {
      clusterID: 'id',
      'feature.open-cluster-management.io/addon-work-manager': 'available',
      'managed-by': 'platform',
      openshiftVersion: '4.16',
    });
    expect(build(desired).equals(build(current))).toBe(true);
    expect(build(current).sha256sum()).toBe(build(desired).sha256sum());
  });

  it('gives env items with only a name an empty value on current (mutating it, like the original)', () => {
    const desired = { ...base, env: [{ name: 'A', value: '' }] };
    const current = { ...base, env: [{ name: 'A' }] };
    expect(build(desired).equals(build(current))).toBe(true);
    expect(current.env).toEqual([{ name: 'A', value: '' }]);
  });
});

describe('canonical serialisation details', () => {
  it('sorts keys by code point, not UTF-16 unit', () => {
    expect(pyJsonDumps({ '\u{1F600}': 1, '\uff01': 2 })).toBe(
      '{"\\uff01": 2, "\\ud83d\\ude00": 1}',
    );
  });

  it('writes Python floats, ints and non-string keys', () => {
    const body = parseResource(
      'a: [1.0, 1.0e+16, 1.0e-7, -0.0, .inf, .nan, 12345678901234567890]\nb: {10: x, 9: y, -1: z}\n',
      'yaml',
    );
    expect(pyJsonDumps(body)).toBe(
      '{"a": [1.0, 1e+16, 1e-07, -0.0, Infinity, NaN, 12345678901234567890], "b": {"-1": "z", "9": "y", "10": "x"}}',
    );
  });

  it('rejects mixed string and non-string keys, dates and binary data at serialisation', () => {
    expect(() => pyJsonDumps(parseResource('a: {1: x, b: y}\n', 'yaml'))).toThrow();
    expect(() => pyJsonDumps(parseResource('a: 2024-01-01\n', 'yaml'))).toThrow(/date/);
    expect(() => pyJsonDumps(parseResource('a: !!binary aGVsbG8=\n', 'yaml'))).toThrow(/bytes/);
  });

  it('lets canonicalisation remove dates first, and str()-formats them in Secret stringData', () => {
    const secret = parseResource(
      'kind: Secret\nmetadata: {name: s, creationTimestamp: 2024-01-01T00:00:00Z}\nstringData: {t: 2024-01-01 10:00:00Z, d: 2024-01-01}\n',
      'yaml',
    );
    expect(build(secret).canonicalJson()).toBe(
      `{"data": {"d": "${btoa('2024-01-01')}", "t": "${btoa('2024-01-01 10:00:00+00:00')}"}, "kind": "Secret", "metadata": {"annotations": {}, "name": "s"}}`,
    );
  });
});

describe('parseResource (PyYAML safe_load semantics)', () => {
  it.each([
    [
      'yes/no/on/off are booleans',
      'v: [yes, No, ON, off, y, n]',
      '{"v": [true, false, true, false, "y", "n"]}',
    ],
    [
      'YAML 1.1 ints',
      'v: [017, 0x1F, 0b101, 1_000, 12:30, 09]',
      '{"v": [15, 31, 5, 1000, 750, "09"]}',
    ],
    [
      'floats need a dot and a signed exponent',
      'v: [1e3, 1.0e3, 1.0e+3, 1.10]',
      '{"v": ["1e3", "1.0e3", 1000.0, 1.1]}',
    ],
    ['JSON is read as YAML flow syntax', '{"v": [1e3, -0, 1.0]}', '{"v": ["1e3", 0, 1.0]}'],
    ['duplicate keys: last wins, 1 and 01 collapse', 'v: {1: a, 01: b, x: 1, x: 2}', null],
    [
      'merge keys: explicit keys win, earlier maps win',
      'a: &a {x: 1, y: 1}\nb: &b {x: 2, z: 2}\nv: {<<: [*a, *b], y: 3}',
      '{"a": {"x": 1, "y": 1}, "b": {"x": 2, "z": 2}, "v": {"x": 1, "y": 3, "z": 2}}',
    ],
    ['a NEL inside quotes folds to a space', 'v: "x\u0085y"', '{"v": "x y"}'],
    [
      'escaped surrogates stay apart and sort low',
      'v: {"\\ud83d\\ude00": 1, "\\uff01": 2}',
      '{"v": {"\\ud83d\\ude00": 1, "\\uff01": 2}}',
    ],
  ])('%s', (_name, text, expected) => {
    const value = parseResource(text, 'yaml');
    if (expected === null) expect(() => pyJsonDumps(value)).toThrow();
    else expect(pyJsonDumps(value)).toBe(expected);
  });

  it.each([
    ['tab indentation', '{\n\t"a": 1\n}'],
    ['a tab after a value', 'a: b\t\n'],
    ['two documents', 'a: 1\n---\nb: 2\n'],
    ['a list document', '- a\n'],
    ['an empty document', ''],
    ['an unknown tag', 'a: !Ref x\n'],
    ['a control character', 'a: "x\u0007"\n'],
    ['a plain LS line break', 'a: x\u2028y\n'],
    ['an implicit key over 1024 characters', `${'k'.repeat(1025)}: v\n`],
    ['an undefined alias', 'a: *nope\n'],
  ])('rejects %s', (_name, text) => {
    expect(() => parseResource(text, 'json')).toThrow();
  });

  it('removes a top-level $schema', () => {
    expect(parseResource('$schema: /openshift/x.yml\nkind: ConfigMap\n', 'yaml')).toEqual({
      kind: 'ConfigMap',
    });
  });

  it('skips a leading BOM and accepts CRLF', () => {
    expect(parseResource('\ufeffa: 1\r\nb: |\r\n  x\r\n', 'yaml')).toEqual({ a: 1, b: 'x\n' });
  });
});
