// biome-ignore-all lint/suspicious/noTemplateCurlyInString: OpenShift template parameters are ${NAME} inside plain strings
import { describe, expect, it } from 'vitest';
import {
  type IntegrationValues,
  type KubeBody,
  parameterPrefix,
  processTemplate,
  renderTemplate,
} from './render.ts';
import type { ShardSpec } from './sharding.ts';

const single: ShardSpec = {
  shards: '1',
  shardId: '0',
  shardKey: '',
  shardNameSuffix: '',
  extraArgs: '--x',
  overrides: null,
};
const resources = {
  requests: { cpu: '100m', memory: '200Mi' },
  limits: { cpu: null, memory: '400Mi' },
};

// biome-ignore lint/suspicious/noExplicitAny: walking rendered plain objects in assertions
type Any = any;
const podOf = (o: KubeBody): Any => (o as Any).spec.template.spec;
const intOf = (o: KubeBody): Any => podOf(o).containers.find((c: Any) => c.name === 'int');
const envOf = (o: KubeBody): Record<string, unknown> =>
  Object.fromEntries(intOf(o).env.map((e: Any) => [e.name, e.value ?? e.valueFrom]));

function render(it: Partial<IntegrationValues>, params: Record<string, string> = {}) {
  const values = { name: 'foo-bar', shardSpecs: [single], ...it } as IntegrationValues;
  const template = renderTemplate({
    integrations: values.cron ? [] : [values],
    cronjobs: values.cron ? [values] : [],
  });
  return { template, objects: processTemplate(template, params) };
}

describe('renderTemplate + processTemplate', () => {
  it('renders a Deployment per shard and the Service', () => {
    const { template, objects } = render({
      shardSpecs: [
        { ...single, shards: '2', shardId: '0', shardNameSuffix: '-0' },
        { ...single, shards: '2', shardId: '1', shardNameSuffix: '-1' },
      ],
    });
    expect(template).toMatchObject({
      apiVersion: 'template.openshift.io/v1',
      kind: 'Template',
      metadata: { name: 'qontract-reconcile' },
    });
    expect(objects.map((o: Any) => `${o.kind}/${o.metadata.name}`)).toEqual([
      'Deployment/qontract-reconcile-foo-bar-0',
      'Deployment/qontract-reconcile-foo-bar-1',
      'Service/qontract-reconcile',
    ]);
    const d: Any = objects[1];
    expect(d.metadata.labels).toEqual({ app: 'qontract-reconcile-foo-bar' });
    expect(d.spec).toMatchObject({
      replicas: 1,
      revisionHistoryLimit: 5,
      selector: { matchLabels: { app: 'qontract-reconcile-foo-bar' } },
    });
    expect(d.spec.template.metadata.labels).toEqual({
      app: 'qontract-reconcile-foo-bar',
      component: 'qontract-reconcile',
    });
    expect(podOf(d).serviceAccountName).toBe('qontract-reconcile');
    expect(objects[2]).toEqual({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'qontract-reconcile', labels: { app: 'qontract-reconcile' } },
      spec: {
        ports: [{ protocol: 'TCP', port: 80, targetPort: 9090, name: 'http' }],
        selector: { component: 'qontract-reconcile' },
      },
    });
  });

  it('renders watch-mode Deployments with the Recreate strategy: old and new pod never overlap', () => {
    const strategyOf = (it: Partial<IntegrationValues>, shardArgs = '--x'): unknown =>
      (render({ ...it, shardSpecs: [{ ...single, extraArgs: shardArgs }] }).objects[0] as Any).spec
        .strategy;
    const watchEnv = {
      extraEnv: [{ secretName: null, secretKey: null, name: 'WATCH', value: 'true' }],
    };
    // WATCH=true in the literal extra env, or --watch (the last of --watch/--no-watch) in the
    // shard's arguments, as run-integration reads them.
    expect(strategyOf(watchEnv)).toEqual({ type: 'Recreate' });
    expect(strategyOf({}, '--cluster-name c1 --watch')).toEqual({ type: 'Recreate' });
    expect(strategyOf(watchEnv, '--watch --no-watch')).toBeUndefined();
    // Polling pods keep the default rolling update (the original chart sets no strategy).
    expect(strategyOf({})).toBeUndefined();
    expect(
      strategyOf({
        extraEnv: [{ secretName: null, secretKey: null, name: 'WATCH', value: 'false' }],
      }),
    ).toBeUndefined();
    // A StatefulSet of one replica stops the old pod first anyway: no strategy of its own.
    const sts: Any = render({ ...watchEnv, cache: true }).objects[0];
    expect(sts.kind).toBe('StatefulSet');
    expect(sts.spec.strategy).toBeUndefined();
  });

  it('gives every pod the runtime contract: env, probes on /healthz of the metrics port, grace', () => {
    const { objects } = render({});
    const d = objects[0]!;
    const env = envOf(d);
    expect(env).toMatchObject({
      SHARDS: '1',
      SHARD_ID: '0',
      DRY_RUN: '--dry-run',
      INTEGRATION_NAME: 'foo-bar',
      INTEGRATION_EXTRA_ARGS: '--x',
      SLEEP_DURATION_SECS: '300',
      CONFIG: '/config/config.toml',
      LOG_LEVEL: 'INFO',
      PROMETHEUS_PORT: '9090',
      LOG_FILE: '/fluentd/log/integration.log',
      KUBE_SA_TOKEN_PATH: '/var/run/secrets/kubernetes.io/serviceaccount/token',
    });
    expect(env).toHaveProperty('UNLEASH_API_URL');
    expect(env).not.toHaveProperty('SHARD_KEY');
    const c = intOf(d);
    expect(c.ports).toEqual([{ name: 'http', containerPort: 9090 }]);
    expect(c.image).toBe('quay.io/app-sre/qontract-reconcile:latest');
    for (const p of [c.livenessProbe, c.readinessProbe]) {
      expect(p.httpGet).toEqual({ path: '/healthz', port: 'http' });
    }
    expect(podOf(d).terminationGracePeriodSeconds).toBe(30);
    expect(podOf(d).containers.map((x: Any) => x.name)).toEqual(['int', 'fluentd']);
    expect(podOf(d).initContainers.map((x: Any) => x.name)).toEqual(['config']);
  });

  it.each<[string, Partial<IntegrationValues>, (o: KubeBody[]) => void]>([
    [
      'cache → StatefulSet with a cache volume claim (gp2, 1Gi)',
      { cache: true },
      (o) => {
        const s: Any = o[0];
        expect(s.kind).toBe('StatefulSet');
        expect(s.spec.volumeClaimTemplates).toEqual([
          {
            metadata: { name: 'cache' },
            spec: {
              accessModes: ['ReadWriteOnce'],
              storageClassName: 'gp2',
              resources: { requests: { storage: '1Gi' } },
            },
          },
        ]);
        expect(intOf(s).volumeMounts).toContainEqual({ name: 'cache', mountPath: '/.cache' });
      },
    ],
    [
      'storage and storageClassName size the claim',
      { cache: true, storage: '5Gi', storageClassName: 'fast' },
      (o) =>
        expect((o[0] as Any).spec.volumeClaimTemplates[0].spec).toMatchObject({
          storageClassName: 'fast',
          resources: { requests: { storage: '5Gi' } },
        }),
    ],
    [
      'resources → the integration parameters, defaulting to the spec values',
      { resources },
      (o) =>
        expect(intOf(o[0]!).resources).toEqual({
          limits: { memory: '400Mi' },
          requests: { cpu: '100m', memory: '200Mi' },
        }),
    ],
    [
      'sleepDurationSecs → <NAME>_SLEEP_DURATION_SECS',
      { sleepDurationSecs: '42' },
      (o) => expect(envOf(o[0]!).SLEEP_DURATION_SECS).toBe('42'),
    ],
    [
      'state → the state bucket env and the /aws mount',
      { state: true },
      (o) => {
        expect(envOf(o[0]!)).toMatchObject({
          APP_INTERFACE_STATE_BUCKET_ACCOUNT: 'app-sre',
          AWS_CONFIG_FILE: '/aws/config',
        });
        expect(intOf(o[0]!).volumeMounts).toContainEqual({ name: 'aws-config', mountPath: '/aws' });
      },
    ],
    [
      'disableUnleash → no Unleash env',
      { disableUnleash: true },
      (o) => expect(envOf(o[0]!)).not.toHaveProperty('UNLEASH_API_URL'),
    ],
    [
      'extraEnv: secret keys and literal values',
      {
        extraEnv: [
          { secretName: 's', secretKey: 'K', name: null, value: null },
          { secretName: null, secretKey: null, name: 'N', value: 'v' },
        ],
      },
      (o) =>
        expect(envOf(o[0]!)).toMatchObject({
          K: { secretKeyRef: { name: 's', key: 'K' } },
          N: 'v',
        }),
    ],
    [
      'imageRef → ${IMAGE}:<ref>',
      { imageRef: 'abcdef' },
      (o) => expect(intOf(o[0]!).image).toBe('quay.io/app-sre/qontract-reconcile:abcdef'),
    ],
    [
      'command → COMMAND_NAME',
      { command: 'other-cli' },
      (o) => expect(envOf(o[0]!).COMMAND_NAME).toBe('other-cli'),
    ],
    [
      'internalCertificates → init container, /etc/pki mount, node told of the CA bundle',
      { internalCertificates: true },
      (o) => {
        expect(envOf(o[0]!).NODE_EXTRA_CA_CERTS).toBe(
          '/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem',
        );
        expect(podOf(o[0]!).initContainers.map((x: Any) => x.name)).toEqual([
          'internal-certificates',
          'config',
        ]);
        expect(intOf(o[0]!).volumeMounts).toContainEqual({
          name: 'internal-certificates',
          mountPath: '/etc/pki',
        });
        expect(podOf(o[0]!).initContainers[0].resources).toEqual({
          requests: { memory: '10Mi', cpu: '15m' },
          limits: { memory: '20Mi' },
        });
      },
    ],
    [
      'logs.googleChat → PREFIX_LOG_LEVEL',
      { logs: { slack: true, googleChat: true, slackErrorFilter: null, govSlack: null } },
      (o) => expect(envOf(o[0]!).PREFIX_LOG_LEVEL).toBe('true'),
    ],
    [
      'environmentAware → the image parameters are passed down',
      { environmentAware: true },
      (o) =>
        expect(envOf(o[0]!)).toMatchObject({
          ENVIRONMENT_NAME: 'app-interface',
          IMAGE_TAG: 'latest',
        }),
    ],
    [
      'a key shard: SHARD_KEY, no SHARDS/SHARD_ID',
      {
        shardSpecs: [
          { ...single, shards: '', shardId: '', shardKey: 'c1', shardNameSuffix: '-c1' },
        ],
      },
      (o) => {
        expect((o[0] as Any).metadata.name).toBe('qontract-reconcile-foo-bar-c1');
        expect(envOf(o[0]!)).toMatchObject({ SHARD_KEY: 'c1' });
        expect(envOf(o[0]!)).not.toHaveProperty('SHARDS');
      },
    ],
    [
      'a disabled shard override → replicas 0; its imageRef and literal resources win',
      {
        resources,
        shardSpecs: [
          {
            ...single,
            overrides: {
              disabled: true,
              imageRef: 'pinned',
              resources: {
                requests: { cpu: '1', memory: '1Gi' },
                limits: { cpu: '2', memory: '2Gi' },
              },
            },
          },
        ],
      },
      (o) => {
        expect((o[0] as Any).spec.replicas).toBe(0);
        expect(intOf(o[0]!).image).toBe('quay.io/app-sre/qontract-reconcile:pinned');
        expect(intOf(o[0]!).resources).toEqual({
          limits: { cpu: '2', memory: '2Gi' },
          requests: { cpu: '1', memory: '1Gi' },
        });
      },
    ],
    [
      'cron → a CronJob with RUN_ONCE and the chart defaults',
      { cron: '*/5 * * * *', extraArgs: '--y', shardSpecs: [] },
      (o) => {
        const c: Any = o[0];
        expect(c).toMatchObject({
          apiVersion: 'batch/v1',
          kind: 'CronJob',
          metadata: { name: 'qontract-reconcile-foo-bar' },
          spec: {
            schedule: '*/5 * * * *',
            concurrencyPolicy: 'Allow',
            successfulJobsHistoryLimit: 3,
            failedJobsHistoryLimit: 1,
          },
        });
        const pod = c.spec.jobTemplate.spec.template.spec;
        expect(pod.restartPolicy).toBe('OnFailure');
        const env = Object.fromEntries(pod.containers[0].env.map((e: Any) => [e.name, e.value]));
        expect(env).toMatchObject({
          RUN_ONCE: 'true',
          INTEGRATION_NAME: 'foo-bar',
          INTEGRATION_EXTRA_ARGS: '--y',
        });
      },
    ],
    [
      'trigger + logs.slack → the triggers webhook and channel in the fluentd config',
      {
        trigger: true,
        logs: { slack: true, googleChat: null, slackErrorFilter: null, govSlack: null },
      },
      (o) => {
        const init = podOf(o[0]!).initContainers.find((c: Any) => c.name === 'config');
        const env = Object.fromEntries(init.env.map((e: Any) => [e.name, e.value ?? e.valueFrom]));
        expect(env.SLACK_TRIGGERS_WEBHOOK_URL).toEqual({
          secretKeyRef: { name: 'app-interface', key: 'slack.triggers_url' },
        });
        expect(env.SLACK_CHANNEL).toBe('sd-app-sre-triggers-stage');
        expect(init.args[0]).toContain('webhook_url ${SLACK_TRIGGERS_WEBHOOK_URL}');
        // Escaped for the shell's here-document (render.fluentd.test.ts runs it).
        expect(init.args[0]).toContain('message "\\`\\`\\`[foo-bar] %s\\`\\`\\`"');
      },
    ],
    [
      'logs.slackErrorFilter → the errors-only webhook',
      { logs: { slack: true, googleChat: null, slackErrorFilter: true, govSlack: null } },
      (o) => {
        const init = podOf(o[0]!).initContainers.find((c: Any) => c.name === 'config');
        expect(init.env.map((e: Any) => e.name)).toContain('SLACK_ERRORS_ONLY_WEBHOOK_URL');
        expect(init.args[0]).toContain('channel sd-app-sre-reconcile-errors-stage');
      },
    ],
    [
      'every pod logs to CloudWatch through the fluentd sidecar (default resources)',
      {},
      (o) => {
        const f = podOf(o[0]!).containers.find((c: Any) => c.name === 'fluentd');
        expect(f.resources).toEqual({
          requests: { memory: '30Mi', cpu: '15m' },
          limits: { memory: '120Mi' },
        });
        expect(f.env.map((e: Any) => e.name)).toEqual([
          'AWS_REGION',
          'AWS_ACCESS_KEY_ID',
          'AWS_SECRET_ACCESS_KEY',
        ]);
        const init = podOf(o[0]!).initContainers.find((c: Any) => c.name === 'config');
        expect(init.args[0]).toContain('@type cloudwatch_logs');
        expect(init.args[0]).toContain('log_stream_name foo-bar');
      },
    ],
    [
      'fluentdResources → the <NAME>_FLUENTD_* parameters',
      { fluentdResources: resources },
      (o) =>
        expect(podOf(o[0]!).containers.find((c: Any) => c.name === 'fluentd').resources).toEqual({
          limits: { memory: '400Mi' },
          requests: { cpu: '100m', memory: '200Mi' },
        }),
    ],
    [
      'state → a bound SA token with audience openshift',
      { state: true },
      (o) =>
        expect(podOf(o[0]!).volumes).toContainEqual({
          name: 'bound-qontract-reconcile-sa-token',
          projected: {
            sources: [
              {
                serviceAccountToken: {
                  path: 'token',
                  audience: 'openshift',
                  expirationSeconds: 1800,
                },
              },
            ],
          },
        }),
    ],
    [
      'Unleash credentials are optional secret keys',
      {},
      (o) =>
        expect(envOf(o[0]!).UNLEASH_CLIENT_ACCESS_TOKEN).toEqual({
          secretKeyRef: { name: 'unleash', key: 'CLIENT_ACCESS_TOKEN', optional: true },
        }),
    ],
    [
      'cron: dashdotdb, Pushgateway, concurrency, restart policy and history limits',
      {
        cron: '0 * * * *',
        shardSpecs: [],
        dashdotdb: true,
        enablePushgateway: true,
        concurrencyPolicy: 'Forbid',
        restartPolicy: 'Never',
        successfulJobHistoryLimit: 5,
        failedJobHistoryLimit: 2,
        resources,
      },
      (o) => {
        const c: Any = o[0];
        expect(c.spec).toMatchObject({
          concurrencyPolicy: 'Forbid',
          successfulJobsHistoryLimit: 5,
          failedJobsHistoryLimit: 2,
        });
        const pod = c.spec.jobTemplate.spec.template.spec;
        expect(pod.restartPolicy).toBe('Never');
        const names = pod.containers[0].env.map((e: Any) => e.name);
        expect(names).toEqual(
          expect.arrayContaining([
            'DASHDOTDB_SECRET',
            'PUSHGATEWAY_URL',
            'PUSHGATEWAY_USERNAME',
            'PUSHGATEWAY_PASSWORD',
          ]),
        );
        const env = Object.fromEntries(
          pod.containers[0].env.map((e: Any) => [e.name, e.value ?? e.valueFrom]),
        );
        expect(env.DASHDOTDB_SECRET).toEqual({
          secretKeyRef: { name: 'dashdotdb', key: 'AUTH_VAULT_PATH' },
        });
        expect(env.PUSHGATEWAY_ENABLED).toBe('true');
        expect(pod.containers[0].resources.requests).toEqual({ cpu: '100m', memory: '200Mi' });
        expect(pod.containers.map((x: Any) => x.name)).toEqual(['int']);
      },
    ],
  ])('%s', (_, values, check) => check(render(values).objects));

  it('takes processing parameters over the defaults and keeps a given digest', () => {
    const { objects } = render(
      { resources, sleepDurationSecs: '42' },
      {
        IMAGE_TAG: 'v1',
        IMAGE_DIGEST: 'sha256:abc',
        FOO_BAR_MEMORY_LIMIT: '1Gi',
        DRY_RUN: '--no-dry-run',
      },
    );
    expect(intOf(objects[0]!).image).toBe('quay.io/app-sre/qontract-reconcile:v1@sha256:abc');
    expect(intOf(objects[0]!).resources.limits.memory).toBe('1Gi');
    expect(envOf(objects[0]!).DRY_RUN).toBe('--no-dry-run');
  });

  it('pins the sidecar and init images by default, as the original chart', () => {
    const { template, objects } = render({ internalCertificates: true });
    const pod = podOf(objects[0]!);
    expect(pod.containers.find((c: Any) => c.name === 'fluentd').image).toBe(
      'quay.io/redhat-services-prod/app-sre-tenant/fluentd-master/fluentd-master:d0d1812@sha256:4868ac49b42f14ff0878216cd2c618413209f634a5c9a6c004e353e1b0805e60',
    );
    expect(pod.initContainers.find((c: Any) => c.name === 'config').image).toBe(
      'registry.access.redhat.com/ubi8/ubi-minimal:8.10-1781701121@sha256:5d76d0cedabd7d7893b28bec684d7a3412dd8d95d186e7d4b6eeed4ea28c327b',
    );
    expect(pod.initContainers[0].image).toBe(
      'quay.io/redhat-services-prod/app-sre-tenant/container-images-int-master/internal-redhat-ca-master:latest',
    );
    // The original declares no DASHDOTDB_SECRET parameter: the CronJob reads a secret.
    expect(template.parameters.map((p) => p.name)).not.toContain('DASHDOTDB_SECRET');
  });

  it('declares the per-integration parameters with the spec values as defaults', () => {
    const { template } = render({ resources, sleepDurationSecs: '42' });
    expect(template.parameters.filter((p) => p.name.startsWith('FOO_BAR_'))).toEqual([
      { name: 'FOO_BAR_SLEEP_DURATION_SECS', value: '42' },
      { name: 'FOO_BAR_MEMORY_LIMIT', value: '400Mi' },
      { name: 'FOO_BAR_CPU_REQUEST', value: '100m' },
      { name: 'FOO_BAR_MEMORY_REQUEST', value: '200Mi' },
    ]);
    expect(parameterPrefix('a-b-c')).toBe('A_B_C');
  });

  it('gov_slack: PREFIX_LOG_LEVEL, the GOV_SLACK parameter and the gov Slack output', () => {
    const values = {
      name: 'foo-bar',
      shardSpecs: [single],
      logs: { slack: true, googleChat: null, slackErrorFilter: null, govSlack: null },
    } as IntegrationValues;
    const template = renderTemplate({ integrations: [values], cronjobs: [], govSlack: true });
    expect(template.parameters).toContainEqual({ name: 'GOV_SLACK', value: 'true' });
    const [d] = processTemplate(template, {});
    expect(envOf(d!).PREFIX_LOG_LEVEL).toBe('true');
    const init = podOf(d!).initContainers.find((c: Any) => c.name === 'config');
    expect(init.args[0]).toContain('<match gov_slack>');
  });

  it('the manager itself takes MANAGER_DRY_RUN and passes its settings down', () => {
    const values = { name: 'integrations-manager', shardSpecs: [single] } as IntegrationValues;
    const objects = processTemplate(
      renderTemplate({ integrations: [values], cronjobs: [], excludeService: true }),
      { MANAGER_DRY_RUN: '--no-dry-run' },
    );
    expect(objects).toHaveLength(1);
    expect(envOf(objects[0]!)).toMatchObject({
      DRY_RUN: '--dry-run',
      MANAGER_DRY_RUN: '--no-dry-run',
      INTEGRATIONS_MANAGER_UPSTREAM: '',
    });
  });
});
