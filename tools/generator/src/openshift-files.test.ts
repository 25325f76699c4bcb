import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import {
  type OpenshiftTemplate,
  processTemplate,
} from '@qontract/integration-integrations-manager';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { openshiftFiles, REQUIRED_PARAMETERS } from './openshift-files.ts';

const root = resolve(import.meta.dirname, '../../..');
const templateOf = (path: string): OpenshiftTemplate => parse(openshiftFiles()[path]!);
const DIGESTS = { IMAGE_DIGEST: 'sha256:0' };

// biome-ignore lint/suspicious/noExplicitAny: walking a rendered plain object
type Any = any;
const envOf = (container: Any): Record<string, unknown> =>
  Object.fromEntries(container.env.map((e: Any) => [e.name, e.value]));

describe('openshift/ files', () => {
  it('are exactly the two generated templates', () => {
    expect(Object.keys(openshiftFiles()).sort()).toEqual([
      'openshift/qontract-manager.yaml',
      'openshift/qontract-reconcile.yaml',
    ]);
  });

  it.each(Object.entries(openshiftFiles()))(
    '%s is up to date (npm run openshift)',
    async (path, text) => {
      expect(await readFile(join(root, path), 'utf8')).toBe(text);
    },
  );

  it.each(Object.keys(openshiftFiles()))('%s requires the image digest', (path) => {
    const template = templateOf(path);
    const required = template.parameters.filter((p) => p.required).map((p) => p.name);
    expect(required).toEqual(REQUIRED_PARAMETERS);
    for (const name of REQUIRED_PARAMETERS) {
      expect(() => processTemplate(template, { ...DIGESTS, [name]: '' })).toThrow(
        `template parameter ${name} is required and must be specified`,
      );
    }
    // The header says so.
    expect(openshiftFiles()[path]).toContain(`# Required: ${REQUIRED_PARAMETERS.join(', ')}`);
  });

  it('the manager bootstrap: one Deployment, no Service, MANAGER_DRY_RUN and its settings', () => {
    const objects = processTemplate(templateOf('openshift/qontract-manager.yaml'), {
      ...DIGESTS,
      IMAGE_TAG: 'abc',
      MANAGER_DRY_RUN: '--no-dry-run',
    });
    expect(objects.map((o) => `${o.kind}/${(o.metadata as { name: string }).name}`)).toEqual([
      'Deployment/qontract-reconcile-integrations-manager',
    ]);
    const pod = (objects[0] as Any).spec.template.spec;
    const c = pod.containers[0];
    expect(c.image).toBe('quay.io/app-sre/qontract-reconcile:abc@sha256:0');
    // The sidecar and the init container: the chart's pinned images.
    expect(pod.containers[1].image).toMatch(
      /^quay\.io\/redhat-services-prod\/app-sre-tenant\/fluentd-master\/fluentd-master:d0d1812@sha256:4868ac49/,
    );
    expect(pod.initContainers[0].image).toMatch(
      /^registry\.access\.redhat\.com\/ubi8\/ubi-minimal:8\.10-1781701121@sha256:5d76d0ce/,
    );
    expect(envOf(c)).toMatchObject({
      INTEGRATION_NAME: 'integrations-manager',
      DRY_RUN: '--dry-run',
      MANAGER_DRY_RUN: '--no-dry-run',
      ENVIRONMENT_NAME: 'app-interface',
      INTEGRATIONS_MANAGER_UPSTREAM: '',
    });
    expect(c.resources).toEqual({
      limits: { memory: '600Mi' },
      requests: { cpu: '200m', memory: '300Mi' },
    });
  });

  it('the per-integration example: openshift-resources, one shard, and the Service', () => {
    const objects = processTemplate(templateOf('openshift/qontract-reconcile.yaml'), {
      ...DIGESTS,
      IMAGE: 'quay.io/example/qontract-reconcile-ts',
      IMAGE_TAG: 'abc',
      DRY_RUN: '--no-dry-run',
    });
    expect(objects.map((o) => `${o.kind}/${(o.metadata as { name: string }).name}`)).toEqual([
      'Deployment/qontract-reconcile-openshift-resources',
      'Service/qontract-reconcile',
    ]);
    const pod = (objects[0] as Any).spec.template.spec;
    const c = pod.containers[0];
    expect(c.image).toBe('quay.io/example/qontract-reconcile-ts:abc@sha256:0');
    expect(envOf(c)).toMatchObject({
      INTEGRATION_NAME: 'openshift-resources',
      DRY_RUN: '--no-dry-run',
      SHARDS: '1',
      SHARD_ID: '0',
      PROMETHEUS_PORT: '9090',
    });
    expect(c.resources).toEqual({
      limits: { memory: '1Gi' },
      requests: { cpu: '100m', memory: '500Mi' },
    });
    expect(c.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
    expect(pod.terminationGracePeriodSeconds).toBe(30);
  });
});
