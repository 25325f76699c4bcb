import { describe, expect, it } from 'vitest';
import {
  AmbiguousResourceTypeError,
  type ApiResource,
  ApiResourceCatalog,
  KindNotFoundError,
  parseKind,
  resourcePath,
} from './api-resources.ts';

const r = (
  kind: string,
  group: string,
  name: string,
  namespaced = true,
  version = 'v1',
): ApiResource => ({
  kind,
  group,
  version,
  name,
  namespaced,
  verbs: ['get', 'list'],
});

const catalog = new ApiResourceCatalog([
  r('Pod', '', 'pods'),
  r('Deployment', 'apps', 'deployments'),
  r('ClusterRoleBinding', 'rbac.authorization.k8s.io', 'clusterrolebindings', false),
  r('ClusterRoleBinding', 'authorization.openshift.io', 'clusterrolebindings', false),
  r('CronJob', 'batch', 'cronjobs'),
  r('CronJob', 'batch', 'cronjobs', true, 'v1beta1'),
]);

describe('parseKind', () => {
  it.each([
    ['Pod', { kind: 'Pod', group: '', version: '' }],
    ['Secret.core', { kind: 'Secret', group: 'core', version: '' }],
    ['CronJob.batch/v1', { kind: 'CronJob', group: 'batch', version: 'v1' }],
    ['Route.route.openshift.io', { kind: 'Route', group: 'route.openshift.io', version: '' }],
  ])('parses %s', (s, expected) => {
    expect(parseKind(s)).toEqual(expected);
  });

  it.each(['', '..', '.group'])('rejects %j', (s) => {
    expect(() => parseKind(s)).toThrow(/invalid kind string/);
  });
});

describe('ApiResourceCatalog', () => {
  it('resolves a kind served by one group', () => {
    expect(catalog.get('Deployment').group).toBe('apps');
    expect(catalog.get('Pod').group).toBe('');
    expect(catalog.get('Pod.core').name).toBe('pods');
  });

  it('ignores the version part and keeps the preferred version', () => {
    expect(catalog.get('CronJob.batch/v1beta1').version).toBe('v1');
  });

  it('asks to qualify an ambiguous kind, with the original message', () => {
    expect(() => catalog.get('ClusterRoleBinding')).toThrow(AmbiguousResourceTypeError);
    expect(() => catalog.get('ClusterRoleBinding')).toThrow(
      'Ambiguous resource type: ClusterRoleBinding. Please fully qualify it with its API group. E.g., ClusterRoleBinding -> ClusterRoleBinding.rbac.authorization.k8s.io',
    );
    expect(catalog.get('ClusterRoleBinding.rbac.authorization.k8s.io').namespaced).toBe(false);
  });

  it('reports unsupported kinds', () => {
    expect(() => catalog.get('Route')).toThrow(
      new KindNotFoundError('Unsupported resource type: Route'),
    );
    expect(() => catalog.get('Deployment.extensions')).toThrow(KindNotFoundError);
    expect(catalog.isKindSupported('Route')).toBe(false);
    expect(catalog.isKindSupported('Pod')).toBe(true);
    expect(() => catalog.isKindSupported('ClusterRoleBinding')).toThrow(AmbiguousResourceTypeError);
  });

  it('builds REST paths', () => {
    expect(resourcePath(catalog.get('Pod'), 'ns 1', 'p')).toBe('/api/v1/namespaces/ns%201/pods/p');
    expect(resourcePath(catalog.get('Deployment'))).toBe('/apis/apps/v1/deployments');
    expect(
      resourcePath(catalog.get('ClusterRoleBinding.rbac.authorization.k8s.io'), 'ignored', 'x'),
    ).toBe('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/x');
  });
});
