// biome-ignore-all lint/suspicious/noTemplateCurlyInString: OpenShift template parameters are ${NAME} inside plain strings
import { processTemplate as processOpenshiftTemplate } from '@qontract/openshift-template';
import type { ManagerDeployResourcesFragment } from './integrations-manager.generated.ts';
import type { ManagedSpec, ShardSpec } from './sharding.ts';

/**
 * The native renderer of the original's Helm chart (`helm/qontract-reconcile`,
 * spec §8.5): the same values in, the same OpenShift Template out, as plain
 * objects; `processTemplate` then substitutes the parameters like
 * `oc process --local`. No Helm binary, no Go templates.
 */

/** One long-running (or cron) integration of a namespace: its managed spec, name and shards. */
export interface IntegrationValues extends Partial<ManagedSpec> {
  readonly name: string;
  readonly shardSpecs: readonly ShardSpec[];
}

export interface ChartValues {
  readonly integrations: readonly IntegrationValues[];
  readonly cronjobs: readonly IntegrationValues[];
  readonly excludeService?: boolean;
  readonly govSlack?: boolean;
}

export type KubeBody = Record<string, unknown>;

interface TemplateParameter {
  readonly name: string;
  readonly value?: string;
  /** `oc process` refuses to process the template unless it is given a non-empty value. */
  readonly required?: boolean;
}

export interface OpenshiftTemplate {
  readonly apiVersion: 'template.openshift.io/v1';
  readonly kind: 'Template';
  readonly metadata: { readonly name: string };
  readonly objects: KubeBody[];
  readonly parameters: TemplateParameter[];
}

/** The CA bundle of the RHEL family under /etc/pki, where internalCertificates mounts its copy. */
const INTERNAL_CA_BUNDLE = '/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem';
/** The metrics port of every pod (`PROMETHEUS_PORT` of run-integration). */
const METRICS_PORT = 9090;
/** SIGTERM → the run stops within seconds; this leaves it time to finish the action under way. */
const TERMINATION_GRACE_SECONDS = 30;
const SERVICE_ACCOUNT = 'qontract-reconcile';

const GLOBAL_PARAMETERS: readonly TemplateParameter[] = [
  { name: 'IMAGE', value: 'quay.io/app-sre/qontract-reconcile' },
  { name: 'IMAGE_TAG', value: 'latest' },
  { name: 'IMAGE_DIGEST', value: '' },
  { name: 'BUSYBOX_IMAGE', value: 'registry.access.redhat.com/ubi8/ubi-minimal' },
  // Pinned as the original chart pins them: a rollout never pulls a different sidecar or init.
  { name: 'BUSYBOX_IMAGE_TAG', value: '8.10-1781701121' },
  {
    name: 'BUSYBOX_IMAGE_DIGEST',
    value: 'sha256:5d76d0cedabd7d7893b28bec684d7a3412dd8d95d186e7d4b6eeed4ea28c327b',
  },
  { name: 'BUSYBOX_IMAGE_PULL_POLICY', value: 'Always' },
  {
    name: 'FLUENTD_IMAGE',
    value: 'quay.io/redhat-services-prod/app-sre-tenant/fluentd-master/fluentd-master',
  },
  { name: 'FLUENTD_IMAGE_TAG', value: 'd0d1812' },
  {
    name: 'FLUENTD_IMAGE_DIGEST',
    value: 'sha256:4868ac49b42f14ff0878216cd2c618413209f634a5c9a6c004e353e1b0805e60',
  },
  { name: 'FLUENTD_IMAGE_PULL_POLICY', value: 'Always' },
  { name: 'ENVIRONMENT_NAME', value: 'app-interface' },
  { name: 'DRY_RUN', value: '--dry-run' },
  { name: 'MANAGER_DRY_RUN', value: '--dry-run' },
  { name: 'SLEEP_DURATION_SECS', value: '300' },
  { name: 'LOG_LEVEL', value: 'INFO' },
  { name: 'QONTRACT_RECONCILE_TOML_SECRET_NAME', value: 'qontract-reconcile-toml' },
  { name: 'APP_INTERFACE_SQS_SECRET_NAME', value: 'app-interface-sqs' },
  { name: 'APP_INTERFACE_STATE_BUCKET_ACCOUNT', value: 'app-sre' },
  { name: 'AWS_CONFIG_SECRET_NAME', value: 'app-interface-aws-config' },
  { name: 'APP_INTERFACE_PROJECT_ID', value: '' },
  { name: 'USER_ID', value: 'dummy' },
  { name: 'KUBE_SA_TOKEN_MOUNT_PATH', value: '/var/run/secrets/kubernetes.io/serviceaccount' },
  { name: 'KUBE_SA_TOKEN_FILENAME', value: 'token' },
  { name: 'LOG_FILE', value: '/fluentd/log/integration.log' },
  { name: 'SLACK_CHANNEL', value: 'sd-app-sre-reconcile-stage' },
  { name: 'SLACK_CHANNEL_TRIGGER', value: 'sd-app-sre-triggers-stage' },
  { name: 'SLACK_ICON_EMOJI', value: ':bust_in_silhouette:' },
  { name: 'GITHUB_API', value: 'https://api.github.com' },
  { name: 'CLOUDWATCH_SECRET', value: 'app-interface-cloudwatch' },
  { name: 'SENTRY_DSN', value: '' },
  { name: 'SLOW_OC_RECONCILE_THRESHOLD', value: '600' },
  { name: 'LOG_SLOW_OC_RECONCILE', value: 'false' },
  { name: 'USE_NATIVE_CLIENT', value: '' },
  {
    name: 'INTERNAL_CERTIFICATES_IMAGE',
    value:
      'quay.io/redhat-services-prod/app-sre-tenant/container-images-int-master/internal-redhat-ca-master',
  },
  { name: 'INTERNAL_CERTIFICATES_IMAGE_TAG', value: 'latest' },
  { name: 'INTERNAL_CERTIFICATES_IMAGE_PULL_POLICY', value: 'Always' },
  { name: 'INTEGRATIONS_MANAGER_UPSTREAM', value: '' },
  { name: 'INTEGRATIONS_MANAGER_IMAGE', value: '' },
  { name: 'INTEGRATIONS_MANAGER_IMAGE_TAG_FROM_REF', value: '' },
  { name: 'PUSHGATEWAY_SECRET_NAME', value: 'push-gateway-auth-url' },
  { name: 'USED_FOR_SECURITY', value: 'false' },
];

/** `openshift-foo` → `OPENSHIFT_FOO`: the prefix of an integration's own parameters. */
export function parameterPrefix(name: string): string {
  return name.toUpperCase().replaceAll('-', '_');
}

type Env = Record<string, unknown>;
const value = (name: string, v: string): Env => ({ name, value: v });
const fromSecret = (name: string, secret: string, key: string, optional?: boolean): Env => ({
  name,
  valueFrom: { secretKeyRef: { name: secret, key, ...(optional ? { optional: true } : {}) } },
});
const fromConfigMap = (name: string, configMap: string, key: string): Env => ({
  name,
  valueFrom: { configMapKeyRef: { name: configMap, key } },
});

/** An image reference; an empty digest parameter leaves the bare tag (see processTemplate). */
const imageOf = (image: string, tag: string, digest: string) => `\${${image}}:${tag}@${digest}`;

function resourcesOf(
  prefix: string,
  resources: ManagerDeployResourcesFragment,
  literal: boolean,
): KubeBody {
  // Literal values (a shard override) or the integration's own template parameters.
  const v = (param: string, given: string) => (literal ? given : `\${${prefix}_${param}}`);
  return {
    limits: {
      ...(resources.limits.cpu == null ? {} : { cpu: v('CPU_LIMIT', resources.limits.cpu) }),
      memory: v('MEMORY_LIMIT', resources.limits.memory),
    },
    requests: {
      cpu: v('CPU_REQUEST', resources.requests.cpu),
      memory: v('MEMORY_REQUEST', resources.requests.memory),
    },
  };
}

function extraEnvOf(spec: Partial<ManagedSpec>): Env[] {
  return (spec.extraEnv ?? []).flatMap((e) => {
    if (e.secretName && e.secretKey) return [fromSecret(e.secretKey, e.secretName, e.secretKey)];
    if (e.name) return [value(e.name, e.value ?? '')];
    return [];
  });
}

/**
 * Whether the pod runs in watch mode, as run-integration decides: the last `--watch` or
 * `--no-watch` of the extra arguments, else `WATCH=true` among the literal extra env.
 */
function watchMode(spec: Partial<ManagedSpec>, shard: ShardSpec): boolean {
  const flag = shard.extraArgs.split(/\s+/).findLast((a) => a === '--watch' || a === '--no-watch');
  if (flag !== undefined) return flag === '--watch';
  return (spec.extraEnv ?? []).some(
    (e) => e.name === 'WATCH' && !e.secretName && e.value === 'true',
  );
}

function unleashEnv(spec: Partial<ManagedSpec>): Env[] {
  if (spec.disableUnleash) return [];
  return [
    fromSecret('UNLEASH_API_URL', 'unleash', 'API_URL', true),
    fromSecret('UNLEASH_CLIENT_ACCESS_TOKEN', 'unleash', 'CLIENT_ACCESS_TOKEN', true),
  ];
}

const KUBE_SA_TOKEN_PATH = value(
  'KUBE_SA_TOKEN_PATH',
  '${KUBE_SA_TOKEN_MOUNT_PATH}/${KUBE_SA_TOKEN_FILENAME}',
);

const saTokenVolume = {
  name: 'qontract-reconcile-sa-token',
  projected: {
    sources: [
      { serviceAccountToken: { path: '${KUBE_SA_TOKEN_FILENAME}', expirationSeconds: 1800 } },
    ],
  },
};
const configVolume = {
  name: 'qontract-reconcile-toml',
  secret: { secretName: '${QONTRACT_RECONCILE_TOML_SECRET_NAME}' },
};

/** Lines the fluentd sidecar drops before shipping (the original chart's filters). */
const DROPPED_LOG_LINES = [
  'using gql endpoint',
  'request_id: ',
  'Certificate did not match expected hostname',
];

const RESOURCES_OF_INIT = {
  requests: { memory: '10Mi', cpu: '15m' },
  limits: { memory: '20Mi' },
};

/** Copies the log lines PREFIX_LOG_LEVEL marks `[ERROR]` to another tag (a second output). */
const errorsTo = (tag: string, comment: string) => [
  `  # ${comment}`,
  '  <store>',
  '    @type rewrite_tag_filter',
  '    <rule>',
  '      key message',
  '      pattern /^\\[ERROR\\]/',
  `      tag ${tag}`,
  '    </rule>',
  '  </store>',
];

/** A Google Chat (or gov Slack) webhook, one thread per pod, its messages buffered on disk. */
const threadedWebhook = (tag: string, webhookVar: string, bufferPath: string) => [
  `<match ${tag}>`,
  '  @type teams',
  `  webhook_url "\${${webhookVar}}&threadKey=\${POD_NAME}"`,
  `  text "<%= Time.at(time) %> [\${POD_NAME}] <%= record['message'] %>\\n\\n"`,
  '  buffered true',
  '  <buffer>',
  '    @type file',
  `    path ${bufferPath}`,
  '',
  '    flush_mode interval',
  '    flush_interval 15s',
  '    flush_at_shutdown true',
  '',
  '    retry_max_times 0',
  '    retry_wait 30',
  '',
  '    disable_chunk_backup true',
  '  </buffer>',
  '</match>',
];

/**
 * The fluentd configuration the `config` init container writes, as the original chart's: every
 * line of LOG_FILE to CloudWatch, and by the integration's `logs` to Slack, and its `[ERROR]`
 * lines (PREFIX_LOG_LEVEL) to Google Chat or an errors-only Slack channel. `${NAME}` is either a
 * template parameter (`oc process` fills it) or the init container's environment (the shell
 * fills it).
 */
function fluentConf(it: IntegrationValues, govSlack: boolean): string {
  const logs = it.logs;
  const slackMessage = `  message "\`\`\`[${it.name}] %s\`\`\`"`;
  const lines = [
    '<source>',
    '  @type tail',
    '  path /fluentd/log/integration.log',
    // A restarted sidecar reads the file from its start, not only what is written afterwards.
    '  read_from_head true',
    '  pos_file /fluentd/log/integration.log.pos',
    '  tag integration',
    '  <parse>',
    '    @type none',
    '  </parse>',
    '</source>',
    ...DROPPED_LOG_LINES.flatMap((d) => [
      '',
      '<filter integration>',
      '  @type grep',
      '  <exclude>',
      '    key message',
      `    pattern /${d}/`,
      '  </exclude>',
      '</filter>',
    ]),
    '',
    '<match integration>',
    '  @type copy',
  ];
  if (logs?.slack) {
    lines.push(
      '  <store>',
      '    @type slack',
      it.trigger
        ? '    webhook_url ${SLACK_TRIGGERS_WEBHOOK_URL}'
        : '    webhook_url ${SLACK_WEBHOOK_URL}',
      it.trigger ? '    channel ${SLACK_CHANNEL_TRIGGER}' : '    channel ${SLACK_CHANNEL}',
      '    icon_emoji ${SLACK_ICON_EMOJI}',
      '    username sd-app-sre-bot',
      '    flush_interval 10s',
      `  ${slackMessage}`,
      '  </store>',
    );
  }
  lines.push(
    '  <store>',
    '    @type cloudwatch_logs',
    '    log_group_name ${LOG_GROUP_NAME}',
    `    log_stream_name ${it.name}`,
    '    auto_create_stream true',
    '  </store>',
  );
  if (logs?.googleChat) lines.push(...errorsTo('gchat', 'only ship errors to Google Chat'));
  if (logs?.slackErrorFilter) {
    lines.push(...errorsTo('slack_errors', 'ship errors to separate slack channel'));
  }
  lines.push('</match>');
  if (logs?.googleChat) {
    lines.push(...threadedWebhook('gchat', 'GOOGLE_CHAT_WEBHOOK_URL', '/fluentd/buffer'));
  }
  if (govSlack) {
    lines.push(
      ...threadedWebhook('gov_slack', 'GOV_SLACK_WEBHOOK_URL', '/fluentd/buffer/gov-slack'),
    );
  }
  if (logs?.slackErrorFilter) {
    lines.push(
      '<match slack_errors>',
      '  @type slack',
      '  webhook_url ${SLACK_ERRORS_ONLY_WEBHOOK_URL}',
      '  channel ${SLACK_RECONCILE_ERR_CHANNEL_NAME}',
      '  icon_emoji ${SLACK_ICON_EMOJI}',
      '  username sd-app-sre-bot',
      '  flush_interval 10s',
      slackMessage,
      '</match>',
    );
  }
  return `${lines.join('\n')}\n`;
}

/**
 * The init container's shell script: an unquoted here-document, so the shell fills the `${NAME}`
 * of its environment; backslashes and backticks are escaped, or it would run the Slack message's
 * ``` as a command substitution.
 */
function writeFluentConfScript(conf: string): string {
  const body = conf.replaceAll('\\', '\\\\').replaceAll('`', '\\`');
  return `cat > /fluentd/etc/fluent.conf <<EOF\n${body}EOF\n`;
}

function configInitContainer(it: IntegrationValues, govSlack: boolean): KubeBody {
  const logs = it.logs;
  const env: Env[] = [];
  if (logs?.slack) {
    env.push(
      fromSecret('SLACK_WEBHOOK_URL', 'app-interface', 'slack.webhook_url'),
      fromSecret('SLACK_TRIGGERS_WEBHOOK_URL', 'app-interface', 'slack.triggers_url'),
      ...(logs.slackErrorFilter
        ? [
            fromSecret(
              'SLACK_ERRORS_ONLY_WEBHOOK_URL',
              'app-interface',
              'slack.errors_only_webhook_url',
            ),
          ]
        : []),
      value('SLACK_CHANNEL', it.trigger ? '${SLACK_CHANNEL_TRIGGER}' : '${SLACK_CHANNEL}'),
      value('SLACK_ICON_EMOJI', '${SLACK_ICON_EMOJI}'),
      ...(logs.slackErrorFilter
        ? [value('SLACK_RECONCILE_ERR_CHANNEL_NAME', '${SLACK_RECONCILE_ERR_CHANNEL_NAME}')]
        : []),
    );
  }
  if (logs?.googleChat) {
    // Trigger integrations are noisier: their own Google Chat (and gov Slack) channel.
    const chatKey = it.trigger ? 'google_chat.triggers_url' : 'google_chat.webhook_url';
    const slackKey = it.trigger ? 'slack.triggers_url' : 'slack.webhook_url';
    env.push(
      fromSecret('GOOGLE_CHAT_WEBHOOK_URL', 'app-interface', chatKey),
      ...(govSlack ? [fromSecret('GOV_SLACK_WEBHOOK_URL', 'app-interface', slackKey)] : []),
      { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
    );
  }
  env.push(fromSecret('LOG_GROUP_NAME', '${CLOUDWATCH_SECRET}', 'log_group_name'));
  return {
    name: 'config',
    image: imageOf('BUSYBOX_IMAGE', '${BUSYBOX_IMAGE_TAG}', '${BUSYBOX_IMAGE_DIGEST}'),
    imagePullPolicy: '${BUSYBOX_IMAGE_PULL_POLICY}',
    resources: RESOURCES_OF_INIT,
    env,
    command: ['/bin/sh', '-c'],
    args: [writeFluentConfScript(fluentConf(it, govSlack))],
    volumeMounts: [{ name: 'fluentd-config', mountPath: '/fluentd/etc/' }],
  };
}

const probe = (failureThreshold: number) => ({
  httpGet: { path: '/healthz', port: 'http' },
  initialDelaySeconds: 10,
  periodSeconds: 10,
  timeoutSeconds: 3,
  failureThreshold,
});

function integrationContainer(
  it: IntegrationValues,
  shard: ShardSpec,
  govSlack: boolean,
): KubeBody {
  const prefix = parameterPrefix(it.name);
  const isManager = it.name === 'integrations-manager';
  const tag = shard.overrides?.imageRef ?? it.imageRef;
  const env: Env[] = [];
  if (it.logs?.googleChat || govSlack) env.push(value('PREFIX_LOG_LEVEL', 'true'));
  if (shard.shardId !== '') {
    env.push(value('SHARDS', shard.shards), value('SHARD_ID', shard.shardId));
  }
  if (shard.shardKey) env.push(value('SHARD_KEY', shard.shardKey));
  // The manager's own DRY_RUN is the one it passes down (a template parameter set in its
  // environment wins); run-integration runs the manager itself with MANAGER_DRY_RUN.
  env.push(value('DRY_RUN', '${DRY_RUN}'));
  if (it.command) env.push(value('COMMAND_NAME', it.command));
  if (isManager) {
    env.push(
      value('MANAGER_DRY_RUN', '${MANAGER_DRY_RUN}'),
      value('INTEGRATIONS_MANAGER_UPSTREAM', '${INTEGRATIONS_MANAGER_UPSTREAM}'),
      value('INTEGRATIONS_MANAGER_IMAGE', '${INTEGRATIONS_MANAGER_IMAGE}'),
      value(
        'INTEGRATIONS_MANAGER_IMAGE_TAG_FROM_REF',
        '${INTEGRATIONS_MANAGER_IMAGE_TAG_FROM_REF}',
      ),
    );
  }
  env.push(
    value('INTEGRATION_NAME', it.name),
    value('INTEGRATION_EXTRA_ARGS', shard.extraArgs),
    value(
      'SLEEP_DURATION_SECS',
      it.sleepDurationSecs ? `\${${prefix}_SLEEP_DURATION_SECS}` : '${SLEEP_DURATION_SECS}',
    ),
    value('CONFIG', '/config/config.toml'),
    value('LOG_LEVEL', '${LOG_LEVEL}'),
    value('PROMETHEUS_PORT', String(METRICS_PORT)),
    fromConfigMap('GITHUB_API', 'app-interface', 'GITHUB_API'),
    fromConfigMap('SENTRY_DSN', 'app-interface', 'SENTRY_DSN'),
    value('LOG_FILE', '${LOG_FILE}'),
  );
  if (it.state) {
    env.push(
      fromSecret('APP_INTERFACE_STATE_BUCKET', 'app-interface', 'aws.s3.bucket'),
      value('APP_INTERFACE_STATE_BUCKET_ACCOUNT', '${APP_INTERFACE_STATE_BUCKET_ACCOUNT}'),
      fromSecret('APP_INTERFACE_STATE_BUCKET_REGION', 'app-interface', 'aws.region', true),
      value('AWS_CONFIG_FILE', '/aws/config'),
      fromSecret('APP_INTERFACE_STATE_AWS_PROFILE', 'app-interface', 'aws.profile.state', true),
    );
  }
  env.push(
    ...unleashEnv(it),
    value('SLOW_OC_RECONCILE_THRESHOLD', '${SLOW_OC_RECONCILE_THRESHOLD}'),
    value('LOG_SLOW_OC_RECONCILE', '${LOG_SLOW_OC_RECONCILE}'),
    value('USE_NATIVE_CLIENT', '${USE_NATIVE_CLIENT}'),
    KUBE_SA_TOKEN_PATH,
    value('USED_FOR_SECURITY', '${USED_FOR_SECURITY}'),
  );
  if (it.environmentAware) {
    const passed = [
      'ENVIRONMENT_NAME',
      ...(govSlack ? ['GOV_SLACK'] : []),
      'IMAGE',
      'IMAGE_TAG',
      'IMAGE_DIGEST',
      'BUSYBOX_IMAGE',
      'BUSYBOX_IMAGE_TAG',
      'BUSYBOX_IMAGE_DIGEST',
      'BUSYBOX_IMAGE_PULL_POLICY',
      'FLUENTD_IMAGE',
      'FLUENTD_IMAGE_TAG',
      'FLUENTD_IMAGE_DIGEST',
      'FLUENTD_IMAGE_PULL_POLICY',
      'CLOUDWATCH_SECRET',
      'INTERNAL_CERTIFICATES_IMAGE',
      'INTERNAL_CERTIFICATES_IMAGE_TAG',
      'INTERNAL_CERTIFICATES_IMAGE_PULL_POLICY',
    ];
    env.push(...passed.map((p) => value(p, `\${${p}}`)));
  }
  if (it.internalCertificates) {
    // Node reads no CA bundle of the system by itself: it is told where the
    // init container put the internal CAs (the launcher would find the file
    // too; this holds for any node started in the pod).
    env.push(value('NODE_EXTRA_CA_CERTS', INTERNAL_CA_BUNDLE));
  }
  env.push(...extraEnvOf(it));

  const override = shard.overrides?.resources;
  const resources = override
    ? resourcesOf(prefix, override, true)
    : it.resources
      ? resourcesOf(prefix, it.resources, false)
      : undefined;
  const mounts: KubeBody[] = [
    { name: 'tmp', mountPath: '/tmp' },
    { name: 'qontract-reconcile-toml', mountPath: '/config' },
    ...(it.cache ? [{ name: 'cache', mountPath: '/.cache' }] : []),
    ...(it.internalCertificates ? [{ name: 'internal-certificates', mountPath: '/etc/pki' }] : []),
    { name: 'logs', mountPath: '/fluentd/log/' },
    { name: 'qontract-reconcile-sa-token', mountPath: '${KUBE_SA_TOKEN_MOUNT_PATH}' },
    ...(it.state
      ? [
          { name: 'aws-config', mountPath: '/aws' },
          {
            name: 'bound-qontract-reconcile-sa-token',
            mountPath: '/var/run/secrets/openshift/serviceaccount',
            readOnly: true,
          },
        ]
      : []),
  ];
  return {
    name: 'int',
    image: tag ? `\${IMAGE}:${tag}` : imageOf('IMAGE', '${IMAGE_TAG}', '${IMAGE_DIGEST}'),
    ports: [{ name: 'http', containerPort: METRICS_PORT }],
    env,
    ...(resources ? { resources } : {}),
    livenessProbe: probe(6),
    readinessProbe: probe(3),
    volumeMounts: mounts,
  };
}

/** The on-disk buffer of the threaded webhooks (Google Chat, gov Slack). */
const hasBuffer = (it: IntegrationValues, govSlack: boolean) =>
  Boolean(it.logs?.googleChat) || govSlack;

function fluentdContainer(it: IntegrationValues, govSlack: boolean): KubeBody {
  const prefix = parameterPrefix(it.name);
  return {
    name: 'fluentd',
    image: imageOf('FLUENTD_IMAGE', '${FLUENTD_IMAGE_TAG}', '${FLUENTD_IMAGE_DIGEST}'),
    imagePullPolicy: '${FLUENTD_IMAGE_PULL_POLICY}',
    env: [
      fromSecret('AWS_REGION', '${CLOUDWATCH_SECRET}', 'aws_region'),
      fromSecret('AWS_ACCESS_KEY_ID', '${CLOUDWATCH_SECRET}', 'aws_access_key_id'),
      fromSecret('AWS_SECRET_ACCESS_KEY', '${CLOUDWATCH_SECRET}', 'aws_secret_access_key'),
    ],
    resources: it.fluentdResources
      ? resourcesOf(`${prefix}_FLUENTD`, it.fluentdResources, false)
      : { requests: { memory: '30Mi', cpu: '15m' }, limits: { memory: '120Mi' } },
    volumeMounts: [
      { name: 'logs', mountPath: '/fluentd/log/' },
      { name: 'fluentd-config', mountPath: '/fluentd/etc/' },
      ...(hasBuffer(it, govSlack) ? [{ name: 'buffer', mountPath: '/fluentd/buffer' }] : []),
    ],
  };
}

function longRunning(it: IntegrationValues, shard: ShardSpec, govSlack: boolean): KubeBody {
  const app = `qontract-reconcile-${it.name}`;
  const initContainers: KubeBody[] = [];
  if (it.internalCertificates) {
    initContainers.push({
      name: 'internal-certificates',
      image: '${INTERNAL_CERTIFICATES_IMAGE}:${INTERNAL_CERTIFICATES_IMAGE_TAG}',
      imagePullPolicy: '${INTERNAL_CERTIFICATES_IMAGE_PULL_POLICY}',
      command: ['/bin/sh', '-c'],
      args: ['cp -r /etc/pki/. /tmp/etc-pki/'],
      volumeMounts: [{ name: 'internal-certificates', mountPath: '/tmp/etc-pki/' }],
      resources: RESOURCES_OF_INIT,
    });
  }
  initContainers.push(configInitContainer(it, govSlack));
  const volumes: KubeBody[] = [
    { name: 'tmp', emptyDir: {} },
    configVolume,
    ...(it.internalCertificates ? [{ name: 'internal-certificates', emptyDir: {} }] : []),
    { name: 'logs', emptyDir: {} },
    { name: 'fluentd-config', emptyDir: {} },
    ...(hasBuffer(it, govSlack) ? [{ name: 'buffer', emptyDir: {} }] : []),
    saTokenVolume,
    ...(it.state
      ? [
          {
            name: 'aws-config',
            secret: { secretName: '${AWS_CONFIG_SECRET_NAME}', optional: true },
          },
          {
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
          },
        ]
      : []),
  ];
  const spec: KubeBody = {
    replicas: shard.overrides?.disabled ? 0 : 1,
    revisionHistoryLimit: 5,
    // A rolling update starts the new pod before the old one stops: two operators would write
    // the same objects for the length of the overlap, each reverting the other's version.
    // Recreate stops the old pod first. (A StatefulSet of one replica already does.)
    ...(!it.cache && watchMode(it, shard) ? { strategy: { type: 'Recreate' } } : {}),
    selector: { matchLabels: { app } },
    ...(it.cache ? { serviceName: 'qontract-reconcile' } : {}),
    template: {
      metadata: { labels: { app, component: 'qontract-reconcile' } },
      spec: {
        serviceAccountName: SERVICE_ACCOUNT,
        terminationGracePeriodSeconds: TERMINATION_GRACE_SECONDS,
        initContainers,
        containers: [integrationContainer(it, shard, govSlack), fluentdContainer(it, govSlack)],
        volumes,
      },
    },
    ...(it.cache
      ? {
          volumeClaimTemplates: [
            {
              metadata: { name: 'cache' },
              spec: {
                accessModes: ['ReadWriteOnce'],
                storageClassName: it.storageClassName ?? 'gp2',
                resources: { requests: { storage: it.storage ?? '1Gi' } },
              },
            },
          ],
        }
      : {}),
  };
  return {
    apiVersion: 'apps/v1',
    kind: it.cache ? 'StatefulSet' : 'Deployment',
    metadata: {
      name: `${app}${shard.shardNameSuffix}`,
      labels: { app },
      annotations: {
        'ignore-check.kube-linter.io/minimum-three-replicas':
          'qontract-reconcile integrations are sharded and not replicated',
        'ignore-check.kube-linter.io/unset-cpu-requirements': 'no cpu limits',
      },
    },
    spec,
  };
}

function cronJob(it: IntegrationValues): KubeBody {
  const app = `qontract-reconcile-${it.name}`;
  const env: Env[] = [
    value('RUN_ONCE', 'true'),
    value('DRY_RUN', '${DRY_RUN}'),
    ...(it.command ? [value('COMMAND_NAME', it.command)] : []),
    value('INTEGRATION_NAME', it.name),
    value('INTEGRATION_EXTRA_ARGS', it.extraArgs ?? ''),
    value('CONFIG', '/config/config.toml'),
    value('LOG_LEVEL', '${LOG_LEVEL}'),
    fromConfigMap('GITHUB_API', 'app-interface', 'GITHUB_API'),
    ...unleashEnv(it),
    ...extraEnvOf(it),
    ...(it.dashdotdb ? [fromSecret('DASHDOTDB_SECRET', 'dashdotdb', 'AUTH_VAULT_PATH')] : []),
    KUBE_SA_TOKEN_PATH,
    ...(it.enablePushgateway
      ? [
          value('PUSHGATEWAY_ENABLED', 'true'),
          fromSecret('PUSHGATEWAY_URL', '${PUSHGATEWAY_SECRET_NAME}', 'server'),
          fromSecret('PUSHGATEWAY_USERNAME', '${PUSHGATEWAY_SECRET_NAME}', 'username'),
          fromSecret('PUSHGATEWAY_PASSWORD', '${PUSHGATEWAY_SECRET_NAME}', 'password'),
        ]
      : []),
  ];
  return {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: { name: app, labels: { app } },
    spec: {
      schedule: it.cron,
      concurrencyPolicy: it.concurrencyPolicy ?? 'Allow',
      successfulJobsHistoryLimit: it.successfulJobHistoryLimit ?? 3,
      failedJobsHistoryLimit: it.failedJobHistoryLimit ?? 1,
      jobTemplate: {
        spec: {
          template: {
            metadata: { labels: { app, component: 'qontract-reconcile' } },
            spec: {
              serviceAccountName: SERVICE_ACCOUNT,
              terminationGracePeriodSeconds: TERMINATION_GRACE_SECONDS,
              containers: [
                {
                  name: 'int',
                  image: it.imageRef
                    ? `\${IMAGE}:${it.imageRef}`
                    : imageOf('IMAGE', '${IMAGE_TAG}', '${IMAGE_DIGEST}'),
                  env,
                  ...(it.resources
                    ? { resources: resourcesOf(parameterPrefix(it.name), it.resources, false) }
                    : {}),
                  volumeMounts: [
                    { name: 'qontract-reconcile-toml', mountPath: '/config' },
                    {
                      name: 'qontract-reconcile-sa-token',
                      mountPath: '${KUBE_SA_TOKEN_MOUNT_PATH}',
                    },
                  ],
                },
              ],
              restartPolicy: it.restartPolicy ?? 'OnFailure',
              volumes: [configVolume, saTokenVolume],
            },
          },
        },
      },
    },
  };
}

const SERVICE: KubeBody = {
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'qontract-reconcile', labels: { app: 'qontract-reconcile' } },
  spec: {
    ports: [{ protocol: 'TCP', port: 80, targetPort: METRICS_PORT, name: 'http' }],
    selector: { component: 'qontract-reconcile' },
  },
};

function integrationParameters(it: IntegrationValues): TemplateParameter[] {
  const prefix = parameterPrefix(it.name);
  const out: TemplateParameter[] = [];
  if (it.sleepDurationSecs) {
    out.push({ name: `${prefix}_SLEEP_DURATION_SECS`, value: it.sleepDurationSecs });
  }
  const res = (p: string, r: ManagerDeployResourcesFragment | null | undefined) => {
    if (!r) return;
    if (r.limits.cpu != null) out.push({ name: `${p}_CPU_LIMIT`, value: r.limits.cpu });
    out.push(
      { name: `${p}_MEMORY_LIMIT`, value: r.limits.memory },
      { name: `${p}_CPU_REQUEST`, value: r.requests.cpu },
      { name: `${p}_MEMORY_REQUEST`, value: r.requests.memory },
    );
  };
  res(prefix, it.resources);
  res(`${prefix}_FLUENTD`, it.fluentdResources);
  if (it.logs?.slackErrorFilter) {
    out.push({
      name: 'SLACK_RECONCILE_ERR_CHANNEL_NAME',
      value: 'sd-app-sre-reconcile-errors-stage',
    });
  }
  return out;
}

/** The chart's output for `values`: one OpenShift Template named `qontract-reconcile`. */
export function renderTemplate(values: ChartValues): OpenshiftTemplate {
  const govSlack = values.govSlack ?? false;
  const objects: KubeBody[] = [
    ...values.integrations.flatMap((it) => it.shardSpecs.map((s) => longRunning(it, s, govSlack))),
    ...values.cronjobs.map(cronJob),
    ...(values.excludeService ? [] : [SERVICE]),
  ];
  const parameters = [
    ...GLOBAL_PARAMETERS,
    ...(govSlack ? [{ name: 'GOV_SLACK', value: 'true' }] : []),
    ...[...values.integrations, ...values.cronjobs].flatMap(integrationParameters),
  ];
  return {
    apiVersion: 'template.openshift.io/v1',
    kind: 'Template',
    metadata: { name: 'qontract-reconcile' },
    objects,
    parameters,
  };
}

/**
 * `oc process --local --ignore-unknown-parameters`, as the original runs it
 * (`oc_process`), by @qontract/openshift-template: given parameters the
 * template does not declare are ignored, a `required` one left empty is
 * refused. One addition of ours: an image whose digest parameter is empty
 * keeps its bare tag (a trailing `@` is dropped, where `oc process` would keep
 * it), so an unset digest never yields an invalid image; the templates of
 * `openshift/`, which `oc` processes, make the digests `required` instead.
 */
export function processTemplate(
  template: OpenshiftTemplate,
  given: Readonly<Record<string, string>>,
): KubeBody[] {
  return processOpenshiftTemplate(template, given, { ignoreUnknownParameters: true }).map(
    (o) => withoutEmptyDigests(o) as KubeBody,
  );
}

function withoutEmptyDigests(v: unknown, key?: string): unknown {
  if (typeof v === 'string') return key === 'image' && v.endsWith('@') ? v.slice(0, -1) : v;
  if (Array.isArray(v)) return v.map((x) => withoutEmptyDigests(x));
  if (v && typeof v === 'object') {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, withoutEmptyDigests(x, k)]));
  }
  return v;
}
