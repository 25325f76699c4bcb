import {
  type ChartValues,
  ONE_SHARD,
  processTemplate,
  renderTemplate,
} from '@qontract/integration-integrations-manager';
import { describe, expect, it } from 'vitest';
import { containerOf, podmanOptions } from './pod.ts';

/** The objects integrations-manager renders for one Deployment and one CronJob. */
function rendered() {
  const values: ChartValues = {
    integrations: [
      { name: 'openshift-namespaces', shardSpecs: [ONE_SHARD], internalCertificates: true },
    ],
    cronjobs: [
      {
        name: 'openshift-groups',
        shardSpecs: [ONE_SHARD],
        cron: '* * * * *',
        enablePushgateway: true,
      },
    ],
  };
  return processTemplate(renderTemplate(values), {
    IMAGE: 'localhost/qr',
    IMAGE_TAG: 't',
    DRY_RUN: '--no-dry-run',
  });
}

const sources = {
  secrets: { 'push-gateway-auth-url': { server: 'http://gw', username: 'u', password: 'p' } },
  configMaps: { 'app-interface': { GITHUB_API: 'http://gh', SENTRY_DSN: 'http://k@sentry/1' } },
  volumes: {
    tmp: '/h/tmp',
    'qontract-reconcile-toml': '/h/config',
    'internal-certificates': '/h/pki',
    logs: '/h/logs',
    'qontract-reconcile-sa-token': '/h/sa',
  },
};

/** `--env` values of podman options, by name. */
const envOf = (options: string[]) =>
  Object.fromEntries(
    options
      .filter((_, i) => options[i - 1] === '--env')
      .map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]),
  );

describe('podmanOptions of a rendered pod', () => {
  it("gives a Deployment's container its literal and ConfigMap values and its mounts", () => {
    const [deployment] = rendered();
    const { container, terminationGracePeriodSeconds } = containerOf(deployment!, 'int');
    expect(container.image).toBe('localhost/qr:t');
    expect(terminationGracePeriodSeconds).toBe(30);
    const options = podmanOptions(container, sources);
    const env = envOf(options);
    expect(env).toMatchObject({
      INTEGRATION_NAME: 'openshift-namespaces',
      DRY_RUN: '--no-dry-run',
      SENTRY_DSN: 'http://k@sentry/1',
      LOG_FILE: '/fluentd/log/integration.log',
      NODE_EXTRA_CA_CERTS: '/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem',
    });
    // Optional Secrets that do not exist (unleash) leave their variables unset, as in a pod.
    expect(Object.keys(env)).not.toContain('UNLEASH_API_URL');
    expect(options.filter((_, i) => options[i - 1] === '--volume')).toEqual(
      expect.arrayContaining(['/h/pki:/etc/pki', '/h/logs:/fluentd/log/', '/h/config:/config']),
    );
  });

  it("gives a CronJob's container the Pushgateway's Secret", () => {
    const cronJob = rendered().find((o) => o.kind === 'CronJob')!;
    const env = envOf(podmanOptions(containerOf(cronJob, 'int').container, sources));
    expect(env).toMatchObject({
      RUN_ONCE: 'true',
      PUSHGATEWAY_ENABLED: 'true',
      PUSHGATEWAY_URL: 'http://gw',
      PUSHGATEWAY_PASSWORD: 'p',
    });
  });

  it('refuses a pod whose required Secret key or volume is missing, naming it', () => {
    const cronJob = rendered().find((o) => o.kind === 'CronJob')!;
    const { container } = containerOf(cronJob, 'int');
    expect(() => podmanOptions(container, { ...sources, secrets: {} })).toThrow(
      "container int: env PUSHGATEWAY_URL needs key 'server' of Secret 'push-gateway-auth-url'",
    );
    expect(() => podmanOptions(container, { ...sources, volumes: {} })).toThrow(
      "container int: no directory for volume 'qontract-reconcile-toml'",
    );
    expect(() => containerOf(cronJob, 'fluentd')).toThrow(
      "CronJob qontract-reconcile-openshift-groups has no container 'fluentd'",
    );
  });
});
