import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  type IntegrationValues,
  type KubeBody,
  processTemplate,
  renderTemplate,
} from './render.ts';
import { buildShardSpecs, type ManagedSpec } from './sharding.ts';

/**
 * The `config` init container, run for real: its script under `sh` with the environment the
 * kubelet would give it, and the fluent.conf it writes compared with the one the original chart
 * yields for the same values (fixtures/fluent-conf, written by hand from the chart).
 */

/** An unsharded entry: one static shard, as the manager builds it. */
const single = buildShardSpecs(
  'x',
  new Set(),
  { spec: { extraArgs: null } as ManagedSpec, sharding: null },
  { clusters: [], awsAccounts: [], ocmOrganizations: [] },
);
const POD_NAME = 'pod-7f9c';
const CONF_PATH = '/fluentd/etc/fluent.conf';

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: {
    secretKeyRef?: { name: string; key: string };
    fieldRef?: { fieldPath: string };
  };
}
interface Container {
  name: string;
  command: string[];
  args: string[];
  env: EnvVar[];
  volumeMounts: { name: string; mountPath: string }[];
}

function podOf(values: Partial<IntegrationValues>, govSlack = false) {
  const it = { shardSpecs: single, ...values } as IntegrationValues;
  const [deployment] = processTemplate(
    renderTemplate({ integrations: [it], cronjobs: [], govSlack }),
    {},
  );
  // biome-ignore lint/suspicious/noExplicitAny: a rendered plain object
  return (deployment as any).spec.template.spec as {
    initContainers: Container[];
    containers: Container[];
    volumes: KubeBody[];
  };
}

/** What the kubelet resolves: a secret key's value (here its name) and the pod's name. */
function kubeletEnv(env: EnvVar[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of env) {
    const ref = e.valueFrom?.secretKeyRef;
    if (ref) out[e.name] = `secret:${ref.name}/${ref.key}`;
    else if (e.valueFrom?.fieldRef?.fieldPath === 'metadata.name') out[e.name] = POD_NAME;
    else if (e.value !== undefined) out[e.name] = e.value;
    else throw new Error(`unexpected env ${JSON.stringify(e)}`);
  }
  return out;
}

/** Runs the init container's script under `sh`, writing into a temporary directory. */
function runConfigContainer(pod: ReturnType<typeof podOf>): string {
  const init = pod.initContainers.find((c) => c.name === 'config')!;
  expect(init.command).toEqual(['/bin/sh', '-c']);
  expect(init.volumeMounts).toEqual([{ name: 'fluentd-config', mountPath: '/fluentd/etc/' }]);
  const [script] = init.args;
  // The one place the script writes: redirected to the test's directory.
  expect(script!.split(CONF_PATH)).toHaveLength(2);
  const dir = mkdtempSync(join(tmpdir(), 'qr-fluentd-'));
  const target = join(dir, 'fluent.conf');
  execFileSync('sh', ['-c', script!.replace(CONF_PATH, target)], {
    env: { PATH: process.env.PATH, ...kubeletEnv(init.env) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return readFileSync(target, 'utf8');
}

const fixture = (name: string) =>
  readFileSync(join(import.meta.dirname, 'fixtures/fluent-conf', name), 'utf8');

describe('the config init container writes the original chart’s fluent.conf', () => {
  it('no logs: the log file to CloudWatch only', () => {
    const pod = podOf({ name: 'openshift-groups' });
    expect(runConfigContainer(pod)).toBe(fixture('no-logs.conf'));
    expect(pod.volumes.map((v) => v.name)).not.toContain('buffer');
  });

  it('Slack, Google Chat and the errors-only Slack channel', () => {
    const pod = podOf({
      name: 'openshift-groups',
      logs: { slack: true, googleChat: true, slackErrorFilter: true, govSlack: null },
    });
    expect(runConfigContainer(pod)).toBe(fixture('slack-gchat-errors.conf'));
    const fluentd = pod.containers.find((c) => c.name === 'fluentd')!;
    expect(fluentd.volumeMounts).toContainEqual({ name: 'buffer', mountPath: '/fluentd/buffer' });
    expect(pod.volumes).toContainEqual({ name: 'buffer', emptyDir: {} });
    // The Google Chat filter matches `[ERROR]` lines: the integration must prefix its levels.
    const int = pod.containers.find((c) => c.name === 'int')!;
    expect(int.env).toContainEqual({ name: 'PREFIX_LOG_LEVEL', value: 'true' });
  });

  it('a trigger integration on gov Slack: the triggers webhooks and channel', () => {
    const pod = podOf(
      {
        name: 'saas-trigger',
        trigger: true,
        logs: { slack: true, googleChat: true, slackErrorFilter: null, govSlack: null },
      },
      true,
    );
    expect(runConfigContainer(pod)).toBe(fixture('trigger-gov-slack.conf'));
  });
});
