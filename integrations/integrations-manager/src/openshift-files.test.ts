import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { openshiftFiles } from './openshift-files.ts';
import { processTemplate } from './render.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '../../..');

describe('openshift/ files', () => {
  it.each(Object.entries(openshiftFiles()))(
    '%s is up to date (npm run openshift -w @qontract/integration-integrations-manager)',
    async (path, text) => {
      expect(await readFile(join(root, path), 'utf8')).toBe(text);
    },
  );

  it('the manager bootstrap: one Deployment, no Service, MANAGER_DRY_RUN and its settings', () => {
    const template = parse(openshiftFiles()['openshift/qontract-manager.yaml']!);
    const objects = processTemplate(template, {
      IMAGE_TAG: 'abc',
      IMAGE_DIGEST: 'sha256:0',
      MANAGER_DRY_RUN: '--no-dry-run',
    });
    expect(objects.map((o) => `${o.kind}/${(o.metadata as { name: string }).name}`)).toEqual([
      'Deployment/qontract-reconcile-integrations-manager',
    ]);
    // biome-ignore lint/suspicious/noExplicitAny: walking a rendered plain object
    const c = (objects[0] as any).spec.template.spec.containers[0];
    expect(c.image).toBe('quay.io/app-sre/qontract-reconcile:abc@sha256:0');
    const env = Object.fromEntries(
      c.env.map((e: { name: string; value?: string }) => [e.name, e.value]),
    );
    expect(env).toMatchObject({
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
});
