// biome-ignore-all lint/suspicious/noTemplateCurlyInString: OpenShift template parameters are ${NAME} inside plain strings
import { describe, expect, it } from 'vitest';
import { desiredDeployments, environmentParameters, refsToResolve } from './desired.ts';
import type { IntegrationsManagerQuery } from './integrations-manager.generated.ts';

// biome-ignore lint/suspicious/noExplicitAny: walking rendered plain objects in assertions
type Any = any;
type Integration = NonNullable<IntegrationsManagerQuery['integrations']>[number];
type Managed = NonNullable<Integration['managed']>[number];

const cluster = (name: string) =>
  ({ name, serverUrl: `https://${name}`, internal: false }) as Managed['namespace']['cluster'];
const namespace = (name: string, env: string, parameters: unknown = null) =>
  ({
    path: `/ns/${name}.yml`,
    name,
    environment: { name: env, parameters },
    cluster: cluster('c1'),
  }) as Managed['namespace'];
const managed = (ns: Managed['namespace'], over: Partial<Managed> = {}): Managed =>
  ({ namespace: ns, spec: {}, sharding: null, ...over }) as Managed;
const integration = (name: string, m: Managed[], upstream = 'https://up'): Integration => ({
  path: `/integrations/${name}.yml`,
  name,
  upstream,
  managed: m,
});
const data = (integrations: Integration[]): IntegrationsManagerQuery => ({
  integrations,
  clusters: [{ name: 'c1', disable: null }],
  awsAccounts: [],
  ocmOrganizations: [],
});
const settings = { flagsOf: () => new Set<string>(), env: {} };
const names = (r: ReturnType<typeof desiredDeployments>) =>
  r.namespaces.map((ns) => [ns.name, ns.objects.map((o: Any) => `${o.kind}/${o.metadata.name}`)]);

const prod = namespace('prod-ns', 'production', { IMAGE_TAG: 'p1', SLEEP_DURATION_SECS: 77 });
const stage = namespace('stage-ns', 'stage');

describe('desiredDeployments', () => {
  const all = data([
    integration('a', [managed(prod), managed(stage)]),
    integration(
      'b',
      [managed(prod, { spec: { cron: '0 * * * *' } as Managed['spec'] })],
      'https://other',
    ),
  ]);

  it('groups managed entries per namespace, one template each', () => {
    expect(names(desiredDeployments(all, settings))).toEqual([
      [
        'prod-ns',
        [
          'Deployment/qontract-reconcile-a',
          'CronJob/qontract-reconcile-b',
          'Service/qontract-reconcile',
        ],
      ],
      ['stage-ns', ['Deployment/qontract-reconcile-a', 'Service/qontract-reconcile']],
    ]);
  });

  it('keeps only the entries of its environment and its upstream', () => {
    expect(names(desiredDeployments(all, { ...settings, environmentName: 'stage' }))).toEqual([
      ['stage-ns', ['Deployment/qontract-reconcile-a', 'Service/qontract-reconcile']],
    ]);
    expect(names(desiredDeployments(all, { ...settings, upstream: 'https://other' }))).toEqual([
      ['prod-ns', ['CronJob/qontract-reconcile-b', 'Service/qontract-reconcile']],
    ]);
  });

  it('processes with the environment parameters, then the manager env, then --image', () => {
    const r = desiredDeployments(all, {
      ...settings,
      environmentName: 'production',
      env: { IMAGE_TAG: 'from-env', UNRELATED: 'x' },
      image: 'quay.io/me/qr',
    });
    const d: Any = r.namespaces[0]!.objects[0];
    const c = d.spec.template.spec.containers[0];
    expect(c.image).toBe('quay.io/me/qr:from-env');
    expect(c.env.find((e: Any) => e.name === 'SLEEP_DURATION_SECS').value).toBe('77');
  });

  it("never takes the image's former defaults as settings: the environment's values are rendered", () => {
    const ns = namespace('prod-ns', 'production', { LOG_LEVEL: 'debug', SLEEP_DURATION_SECS: 77 });
    const envOf = (managerEnv: Record<string, string>) => {
      const r = desiredDeployments(data([integration('a', [managed(ns)])]), {
        ...settings,
        env: managerEnv,
      });
      const d: Any = r.namespaces[0]!.objects[0];
      return Object.fromEntries(
        d.spec.template.spec.containers[0].env.map((e: Any) => [e.name, e.value]),
      );
    };
    // What the image's ENV used to set on every manager.
    const image = { DRY_RUN: '', LOG_LEVEL: 'INFO', SLEEP_DURATION_SECS: '600' };
    expect(envOf(image)).toMatchObject({
      DRY_RUN: '--dry-run',
      LOG_LEVEL: 'debug',
      SLEEP_DURATION_SECS: '77',
    });
    // An explicit DRY_RUN (the one the manager passes down) still wins, as in the original.
    expect(envOf({ ...image, DRY_RUN: '--no-dry-run' }).DRY_RUN).toBe('--no-dry-run');
  });

  it('names the integration file of bad sharding data and leaves its entry out', () => {
    const bad = data([
      integration('a', [managed(prod, { sharding: { strategy: 'per-openshift-cluster' } as Any })]),
      integration('ok', [managed(prod)]),
    ]);
    const r = desiredDeployments(bad, settings);
    expect(r.problems).toEqual([
      {
        scope: '/integrations/a.yml',
        message: expect.stringMatching(
          /^\/integrations\/a\.yml: managed entry for namespace \/ns\/prod-ns\.yml: integration a does not support the argument --cluster-name/,
        ),
      },
    ]);
    expect(names(r)).toEqual([
      ['prod-ns', ['Deployment/qontract-reconcile-ok', 'Service/qontract-reconcile']],
    ]);
  });

  it('takes IMAGE_TAG from a resolved ref: INTEGRATION_UPSTREAM_REPOS, then --image-tag-from-ref', () => {
    const repos = namespace('prod-ns', 'production', {
      IMAGE_TAG: 'p1',
      INTEGRATION_UPSTREAM_REPOS: [
        { repo: 'https://github.com/app-sre/qontract-reconcile', ref: 'stable' },
      ],
    });
    const d = data([integration('a', [managed(repos), managed(stage)])]);
    const selection = { imageTagFromRef: new Map([['stage', 'main']]) };
    expect(refsToResolve(d, selection)).toEqual([
      {
        repo: 'app-sre/qontract-reconcile',
        ref: 'stable',
        source: 'INTEGRATION_UPSTREAM_REPOS of environment production',
      },
      {
        repo: 'app-sre/qontract-reconcile',
        ref: 'main',
        source: '--image-tag-from-ref stage=main',
      },
    ]);
    const imageOf = (r: ReturnType<typeof desiredDeployments>, ns: string) =>
      (r.namespaces.find((n) => n.name === ns)!.objects[0] as Any).spec.template.spec.containers[0]
        .image;
    const resolved = desiredDeployments(d, {
      ...settings,
      ...selection,
      imageTags: new Map<string, string | Error>([
        ['app-sre/qontract-reconcile@stable', 'abc1234'],
        ['app-sre/qontract-reconcile@main', 'def5678'],
      ]),
    });
    expect(resolved.problems).toEqual([]);
    expect(imageOf(resolved, 'prod-ns')).toBe('quay.io/app-sre/qontract-reconcile:abc1234');
    expect(imageOf(resolved, 'stage-ns')).toBe('quay.io/app-sre/qontract-reconcile:def5678');

    // A ref that could not be resolved: that namespace is refused, the others deployed.
    const failed = desiredDeployments(d, {
      ...settings,
      ...selection,
      imageTags: new Map<string, string | Error>([
        ['app-sre/qontract-reconcile@stable', 'abc1234'],
        ['app-sre/qontract-reconcile@main', new Error('HTTP 404')],
      ]),
    });
    expect(failed.problems).toEqual([
      {
        scope: '/ns/stage-ns.yml',
        message:
          '[/ns/stage-ns.yml] cannot resolve app-sre/qontract-reconcile@main (--image-tag-from-ref stage=main) to a commit: HTTP 404',
      },
    ]);
    expect(failed.namespaces.map((n) => n.name)).toEqual(['prod-ns']);
  });

  it('reads environment parameters as an object or JSON text', () => {
    expect(environmentParameters('{"A": 1}')).toEqual({ A: 1 });
    expect(environmentParameters({ B: 'x' })).toEqual({ B: 'x' });
    expect(environmentParameters(null)).toEqual({});
  });
});
