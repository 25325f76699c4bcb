import type { SecretReader } from '@qontract/core';
import { describe, expect, it } from 'vitest';
import { buildDesired } from './index.ts';
import { body, pc, res, sel } from './test-support/context.ts';

describe('prometheus-rule', () => {
  it('PrometheusRule rules with annotations get html_url', async () => {
    const content = [
      'apiVersion: monitoring.coreos.com/v1',
      'kind: PrometheusRule',
      'metadata:',
      '  name: r',
      'spec:',
      '  groups:',
      '  - name: g',
      '    rules:',
      '    - alert: A',
      '      annotations:',
      '        summary: s',
      '    - alert: B',
      '      annotations: {}',
    ].join('\n');
    const or = await buildDesired(
      sel,
      res({ provider: 'prometheus-rule', path: { path: '/obs/r.yml', content } }),
      pc,
    );
    const rules = body(or).spec.groups[0].rules;
    expect(rules[0].annotations).toEqual({
      summary: 's',
      html_url: 'https://git.example/app-interface/blob/master/resources/obs/r.yml',
    });
    expect(rules[1].annotations).toEqual({});
  });
});

describe('validate_alertmanager_config', () => {
  const amSecret = (config: string) =>
    res({
      provider: 'resource',
      validate_alertmanager_config: true,
      path: {
        path: '/am.yml',
        content: `apiVersion: v1\nkind: Secret\nmetadata:\n  name: am\ndata:\n  alertmanager.yaml: ${Buffer.from(config).toString('base64')}\n`,
      },
    });
  it('accepts a config whose routes point at defined receivers (base64 in a Secret)', async () => {
    await expect(
      buildDesired(sel, amSecret('route:\n  receiver: team\nreceivers:\n- name: team\n'), pc),
    ).resolves.toBeDefined();
  });
  it.each([
    ['receivers: []\n', '/am.yml: alertmanager config has no route'],
    [
      'route:\n  receiver: nobody\nreceivers:\n- name: team\n',
      '/am.yml: alertmanager config routes to undefined receiver(s): nobody',
    ],
    ['route: [\n', '/am.yml: alertmanager config is not valid YAML'],
  ])('rejects %j', async (config, message) => {
    await expect(buildDesired(sel, amSecret(config), pc)).rejects.toThrow(message);
  });
  it('says where a Vault config is not YAML, without quoting the secret text', async () => {
    const vaultSecrets: SecretReader = {
      read: async () => '',
      readAll: async () => ({
        'alertmanager.yaml':
          'global:\n  slack_api_url: https://hooks.example/s3cr3t: x\nroute: {}\n',
      }),
    };
    const error = await buildDesired(
      sel,
      res({ provider: 'vault-secret', validate_alertmanager_config: true, vault_path: 'app/am' }),
      { ...pc, secrets: vaultSecrets },
    ).catch((e: unknown) => e);
    expect((error as Error).message).toBe(
      'app/am: alertmanager config is not valid YAML: Nested mappings are not allowed in compact mappings at line 2, column 18',
    );
  });
});
