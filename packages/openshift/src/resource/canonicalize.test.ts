import { describe, expect, it } from 'vitest';
import { canonicalize } from './canonicalize.ts';
import { OpenshiftResource } from './openshift-resource.ts';
import { parseResource } from './parse-resource.ts';
import { pyJsonDumps } from './py-json.ts';

// Per-kind rules of the original's canonicalize (upstream `reconcile/utils/openshift_resource.py`
// `OpenshiftResource.canonicalize()`), one case per rule.
const canonical = (yaml: string) => pyJsonDumps(canonicalize(parseResource(yaml, 'yaml')));
const rejects = (yaml: string) => () =>
  new OpenshiftResource(parseResource(yaml, 'yaml'), 'i', '1.0.0').canonicalJson();

describe('canonicalize per kind', () => {
  it.each([
    [
      'Secret: type Opaque dropped, stringData overrides data, empty value stays empty',
      'kind: Secret\nmetadata: {name: s}\ntype: Opaque\ndata: {a: eA==, b: eQ==}\nstringData: {a: "1", e: "", n: ~, t: yes, f: 1.0}\n',
      '{"data": {"a": "MQ==", "b": "eQ==", "e": "", "f": "MS4w", "n": "Tm9uZQ==", "t": "VHJ1ZQ=="}, "kind": "Secret", "metadata": {"annotations": {}, "name": "s"}}',
    ],
    [
      'Secret: a non-Opaque type is kept, empty stringData is just dropped',
      'kind: Secret\nmetadata: {name: s}\ntype: kubernetes.io/tls\nstringData: {}\n',
      '{"kind": "Secret", "metadata": {"annotations": {}, "name": "s"}, "type": "kubernetes.io/tls"}',
    ],
    [
      'ConfigMap: type Opaque dropped',
      'kind: ConfigMap\nmetadata: {name: c}\ntype: Opaque\n',
      '{"kind": "ConfigMap", "metadata": {"annotations": {}, "name": "c"}}',
    ],
    [
      'Route without tls-acme keeps key and certificate, drops wildcardPolicy None and empty subdomain',
      'kind: Route\nmetadata: {name: r}\nspec: {wildcardPolicy: "None", subdomain: "", tls: {key: k, certificate: c}}\n',
      '{"kind": "Route", "metadata": {"annotations": {}, "name": "r"}, "spec": {"tls": {"certificate": "c", "key": "k"}}}',
    ],
    [
      'ServiceAccount: dockercfg pull secrets and secrets dropped',
      'kind: ServiceAccount\nmetadata: {name: sa}\nimagePullSecrets: [{name: a-dockercfg-x}, {name: b}]\nsecrets: [{name: t}]\n',
      '{"imagePullSecrets": [{"name": "b"}], "kind": "ServiceAccount", "metadata": {"annotations": {}, "name": "sa"}}',
    ],
    [
      'Role: resources and verbs sorted by code point, falsy attributeRestrictions dropped',
      'kind: Role\nmetadata: {name: r}\nrules:\n- {resources: [pods, Pods, "\\uff01", "\\U0001F600"], verbs: [list, get], attributeRestrictions: ~}\n- {apiGroups: [""], attributeRestrictions: {x: 1}}\n',
      '{"kind": "Role", "metadata": {"annotations": {}, "name": "r"}, "rules": [{"resources": ["Pods", "pods", "\\uff01", "\\ud83d\\ude00"], "verbs": ["get", "list"]}, {"apiGroups": [""], "attributeRestrictions": {"x": 1}}]}',
    ],
    [
      'RoleBinding: roleRef namespace/kind dropped, apiGroup dropped when a substring of apiVersion, subjects cleaned',
      'apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: rb}\ngroupNames: [g]\nuserNames: [u]\nroleRef: {name: admin, kind: ClusterRole, namespace: ns, apiGroup: rbac.authorization.k8s.io}\nsubjects:\n- {kind: User, name: a, namespace: ns, apiGroup: ""}\n- {kind: Group, name: b, apiGroup: other.io}\n',
      '{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"annotations": {}, "name": "rb"}, "roleRef": {"name": "admin"}, "subjects": [{"kind": "User", "name": "a"}, {"apiGroup": "other.io", "kind": "Group", "name": "b"}]}',
    ],
    [
      'ClusterRoleBinding: subjects untouched',
      'apiVersion: v1\nkind: ClusterRoleBinding\nmetadata: {name: crb}\nroleRef: {name: x, kind: ClusterRole, apiGroup: v1}\nsubjects: [{kind: User, name: a, namespace: ns, apiGroup: ""}]\nuserNames: ~\ngroupNames: ~\n',
      '{"apiVersion": "v1", "kind": "ClusterRoleBinding", "metadata": {"annotations": {}, "name": "crb"}, "roleRef": {"name": "x"}, "subjects": [{"apiGroup": "", "kind": "User", "name": "a", "namespace": "ns"}]}',
    ],
    [
      'OperatorGroup: olm.providedAPIs dropped',
      'kind: OperatorGroup\nmetadata: {name: og, annotations: {olm.providedAPIs: X.v1.y, keep: k}}\n',
      '{"kind": "OperatorGroup", "metadata": {"annotations": {"keep": "k"}, "name": "og"}}',
    ],
    [
      'Service without type keeps clusterIP',
      'kind: Service\nmetadata: {name: s}\nspec: {clusterIP: 10.0.0.1, sessionAffinity: ClientIP}\n',
      '{"kind": "Service", "metadata": {"annotations": {}, "name": "s"}, "spec": {"clusterIP": "10.0.0.1", "sessionAffinity": "ClientIP"}}',
    ],
    [
      'ManagedCluster: controller labels dropped (unanchored regex, any character for dots)',
      'kind: ManagedCluster\nmetadata:\n  name: m\n  labels: {clusterID: a, managed-by: b, openshiftVersion: c, x-featureXopen-cluster-managementXio/y: d, vendor: e}\n',
      '{"kind": "ManagedCluster", "metadata": {"annotations": {}, "labels": {"vendor": "e"}, "name": "m"}}',
    ],
    [
      'other kinds keep those labels, empty labels and unknown annotations',
      'kind: Thing\nmetadata: {name: t, labels: {clusterID: a}, annotations: {qontract.recycle: "true", qontract.caller_name: x}}\n',
      '{"kind": "Thing", "metadata": {"annotations": {"qontract.recycle": "true"}, "labels": {"clusterID": "a"}, "name": "t"}}',
    ],
  ])('%s', (_name, yaml, expected) => {
    expect(canonical(yaml)).toBe(expected);
  });

  it.each([
    ['Role without rules', 'kind: Role\nmetadata: {name: r}\n'],
    [
      'Role with mixed types in verbs',
      'kind: Role\nmetadata: {name: r}\nrules: [{verbs: [get, 1]}]\n',
    ],
    ['RoleBinding without subjects', 'kind: RoleBinding\nmetadata: {name: r}\n'],
    ['Route without spec', 'kind: Route\nmetadata: {name: r}\n'],
    ['Service without spec', 'kind: Service\nmetadata: {name: s}\n'],
    ['labels: null', 'kind: ConfigMap\nmetadata: {name: c, labels: ~}\n'],
    [
      'Secret stringData with escaped lone surrogates',
      'kind: Secret\nmetadata: {name: s}\nstringData: {k: "\\ud83d\\ude00"}\n',
    ],
    [
      'a date outside the removed fields',
      'kind: ConfigMap\nmetadata: {name: c}\ndata: {d: 2024-01-01}\n',
    ],
  ])('rejects %s', (_name, yaml) => {
    expect(rejects(yaml)).toThrow();
  });

  it('Secret stringData with a raw emoji is UTF-8 base64', () => {
    expect(canonical('kind: Secret\nmetadata: {name: s}\nstringData: {k: "😀"}\n')).toContain(
      '"k": "8J+YgA=="',
    );
  });
});
