import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { type FakeKubeApiServer, startFakeKubeApiServer } from '@qontract/fake-kube-apiserver';
import { type ApiResourceCatalog, KubeClient, type KubeObject } from '@qontract/openshift';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  type KubeBody,
  type OpenshiftTemplate,
  processTemplate,
  renderTemplate,
} from './render.ts';
import type { ShardSpec } from './sharding.ts';

/**
 * Acceptance by server-side dry-run: every object the renderer produces for a
 * representative set of values, and every object of the committed
 * `openshift/` templates once processed, is sent to the fake API server with
 * `dryRun=All` (server-side apply, as the manager writes, and a plain create);
 * each is accepted and nothing is stored.
 */

const CLUSTER = 'ocp';
const NS = 'qontract-reconcile';
const root = resolve(import.meta.dirname, '../../..');
const DIGESTS = {
  IMAGE_DIGEST: 'sha256:0',
  BUSYBOX_IMAGE_DIGEST: 'sha256:1',
  FLUENTD_IMAGE_DIGEST: 'sha256:2',
};
const shard = (n: number, i: number, extra: Partial<ShardSpec> = {}): ShardSpec => ({
  shards: String(n),
  shardId: String(i),
  shardKey: '',
  shardNameSuffix: n > 1 ? `-${i}` : '',
  extraArgs: '--x',
  overrides: null,
  ...extra,
});
const resources = {
  requests: { cpu: '100m', memory: '200Mi' },
  limits: { cpu: '1', memory: '400Mi' },
};

/** Deployments (static shards, a key shard, a disabled override), a StatefulSet with cache, CronJobs, the Service. */
const representative = processTemplate(
  renderTemplate({
    integrations: [
      {
        name: 'openshift-namespaces',
        shardSpecs: [shard(2, 0), shard(2, 1)],
        resources,
        fluentdResources: resources,
        sleepDurationSecs: '120',
        state: true,
        internalCertificates: true,
        environmentAware: true,
        logs: { slack: true, googleChat: true, slackErrorFilter: true, govSlack: null },
        extraEnv: [
          { secretName: 's', secretKey: 'K', name: null, value: null },
          { secretName: null, secretKey: null, name: 'N', value: 'v' },
        ],
      },
      {
        name: 'openshift-groups',
        shardSpecs: [
          shard(1, 0, { shards: '', shardId: '', shardKey: 'c1', shardNameSuffix: '-c1' }),
          shard(1, 0, {
            shards: '',
            shardId: '',
            shardKey: 'c2',
            shardNameSuffix: '-c2',
            overrides: { disabled: true, imageRef: 'pinned', resources },
          }),
        ],
        command: 'other-cli',
        disableUnleash: true,
        trigger: true,
      },
      {
        name: 'openshift-resources',
        shardSpecs: [shard(2, 0), shard(2, 1)],
        cache: true,
        storage: '2Gi',
        storageClassName: 'standard',
        resources,
      },
    ],
    cronjobs: [
      { name: 'openshift-limitranges', cron: '*/5 * * * *', extraArgs: '--y', shardSpecs: [] },
      {
        name: 'dashdotdb-slo',
        cron: '0 * * * *',
        shardSpecs: [],
        dashdotdb: true,
        enablePushgateway: true,
        concurrencyPolicy: 'Forbid',
        restartPolicy: 'Never',
        successfulJobHistoryLimit: 5,
        failedJobHistoryLimit: 2,
        imageRef: 'pinned',
        resources,
      },
    ],
  }),
  { ...DIGESTS, IMAGE_TAG: 'abc' },
);

async function committed(file: string): Promise<KubeBody[]> {
  const template = parse(
    await readFile(join(root, 'openshift', file), 'utf8'),
  ) as OpenshiftTemplate;
  return processTemplate(template, { ...DIGESTS, IMAGE_TAG: 'abc' });
}

let server: FakeKubeApiServer;
let client: KubeClient;
let catalog: ApiResourceCatalog;
const kindOf = (o: KubeBody) => {
  const [group, version] = String(o.apiVersion).includes('/')
    ? String(o.apiVersion).split('/')
    : ['core', String(o.apiVersion)];
  return { kindString: `${String(o.kind)}.${group}/${version}`, apiVersion: String(o.apiVersion) };
};
const nameOf = (o: KubeBody) => (o.metadata as { name: string }).name;

beforeAll(async () => {
  server = await startFakeKubeApiServer({
    clusters: [{ name: CLUSTER, token: 't', openshift: true }],
  });
  server.seed(CLUSTER, [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } }]);
  client = new KubeClient(
    {
      name: CLUSTER,
      server: server.cluster(CLUSTER).url,
      token: server.cluster(CLUSTER).token,
      insecureSkipTLSVerify: true,
    },
    { attempts: 1 },
  );
  catalog = await client.discover();
});
afterAll(async () => server?.close());

describe('rendered objects pass a server-side dry-run', () => {
  it('the representative values render every kind', () => {
    expect(representative.map((o) => `${String(o.kind)}/${nameOf(o)}`)).toEqual([
      'Deployment/qontract-reconcile-openshift-namespaces-0',
      'Deployment/qontract-reconcile-openshift-namespaces-1',
      'Deployment/qontract-reconcile-openshift-groups-c1',
      'Deployment/qontract-reconcile-openshift-groups-c2',
      'StatefulSet/qontract-reconcile-openshift-resources-0',
      'StatefulSet/qontract-reconcile-openshift-resources-1',
      'CronJob/qontract-reconcile-openshift-limitranges',
      'CronJob/qontract-reconcile-dashdotdb-slo',
      'Service/qontract-reconcile',
    ]);
  });

  it.each([
    ['the representative values', async () => representative],
    ['openshift/qontract-manager.yaml (the bootstrap)', () => committed('qontract-manager.yaml')],
    ['openshift/qontract-reconcile.yaml (the example)', () => committed('qontract-reconcile.yaml')],
  ])('%s: accepted with dryRun=All (apply and create), nothing stored', async (_, objects) => {
    const list = await objects();
    expect(list.length).toBeGreaterThan(0);
    server.resetLog();
    for (const o of list) {
      const r = catalog.get(kindOf(o).kindString);
      const body = o as KubeObject;
      const applied = await client.apply(r, NS, nameOf(o), body, {
        fieldManager: 'integrations-manager',
        dryRun: true,
      });
      expect(applied).toMatchObject({ kind: o.kind, metadata: { name: nameOf(o), namespace: NS } });
      const created = await client.create(r, NS, body, {
        fieldManager: 'integrations-manager',
        dryRun: true,
      });
      expect(created).toMatchObject({ kind: o.kind, metadata: { name: nameOf(o), namespace: NS } });
    }
    const writes = server.requests().filter((e) => e.method !== 'GET');
    expect(writes).toHaveLength(2 * list.length);
    for (const w of writes) {
      expect(w.dryRun, `${w.method} ${w.path}`).toBe(true);
      expect(w.status, `${w.method} ${w.path}`).toBeGreaterThanOrEqual(200);
      expect(w.status, `${w.method} ${w.path}`).toBeLessThan(300);
    }
    expect(server.mutatingRequests()).toEqual([]);
    for (const o of list) {
      const { apiVersion } = kindOf(o);
      expect(server.list(CLUSTER, apiVersion, String(o.kind), NS)).toEqual([]);
    }
  });
});
