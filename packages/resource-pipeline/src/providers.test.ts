import type { SecretReader } from '@qontract/core';
import { describe, expect, it } from 'vitest';
import type { NamespaceData, OpenshiftResourceData, SelectedNamespace } from './model.ts';
import {
  buildDesired,
  buildDesiredNow,
  FetchResourceError,
  hostMatches,
  type ProviderContext,
} from './providers.ts';

const secrets: SecretReader = {
  read: async () => '',
  readAll: async ({ path }): Promise<Record<string, string>> => {
    if (path === 'app/db')
      return {
        user: 'app',
        password: 'p4ss',
        cert_qb64: 'Zm9v\nYmFy',
        'external-resources/updated_at': 'x',
        empty: '',
      };
    if (path === 'app/bad-key') return { 'bad key': 'x' };
    throw new Error(`secret ${path} not found`);
  },
};
const renders: Array<{ body: string; variables: Record<string, unknown> }> = [];
const pc: ProviderContext = {
  integration: 'openshift_resources',
  integrationVersion: '1.9.3',
  secrets,
  repoUrl: 'https://git.example/app-interface',
  render: async (body, o) => {
    renders.push({ body, variables: o.variables });
    return body.replace('{{ name }}', String(o.variables.name));
  },
};
const sel = {
  namespace: { name: 'ns', cluster: { name: 'c1' } } as unknown as NamespaceData,
  openshiftResources: [],
} as SelectedNamespace;
const res = (r: Record<string, unknown>) => r as unknown as OpenshiftResourceData;
// biome-ignore lint/suspicious/noExplicitAny: tests read deep into built bodies
const body = (o: { body: unknown }) => o.body as Record<string, any>;

describe('providers', () => {
  it('builds plain resource files without waiting, the same as buildDesired; the others are left to it', async () => {
    const file = {
      path: '/a.yml',
      content: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n',
    };
    const plain = [
      res({ provider: 'resource', path: file }),
      res({ provider: 'prometheus-rule', path: file }),
      res({ provider: 'prometheus-rule', type: 'resource', path: file }),
    ];
    for (const r of plain) {
      const now = buildDesiredNow(r, pc);
      expect(now).toBeDefined();
      expect(body(now!)).toEqual(body(await buildDesired(sel, r, pc)));
    }
    const later = [
      res({ provider: 'resource-template', path: file }),
      res({ provider: 'prometheus-rule', type: 'resource-template-jinja2', path: file }),
      res({ provider: 'vault-secret', path: 'app/db', version: 1 }),
      res({ provider: 'route', path: file }),
    ];
    for (const r of later) expect(buildDesiredNow(r, pc)).toBeUndefined();
    // Files being loaded on worker threads: buildDesired awaits them.
    const loading = { ...pc, loaded: {} as NonNullable<ProviderContext['loaded']> };
    expect(buildDesiredNow(plain[0]!, loading)).toBeUndefined();
    // A file that does not parse fails at once, with buildDesired's error.
    const broken = res({
      provider: 'resource',
      path: { path: '/b.yml', content: 'kind: x\na: [' },
    });
    expect(() => buildDesiredNow(broken, pc)).toThrow(FetchResourceError);
  });

  it('resource: parses YAML 1.1 and drops $schema', async () => {
    const or = await buildDesired(
      sel,
      res({
        provider: 'resource',
        path: {
          path: '/a.yml',
          content:
            '$schema: /x\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  enabled: yes\n',
        },
      }),
      pc,
    );
    expect(body(or)).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'a' },
      data: { enabled: true },
    });
  });

  it('resource: a file that does not parse is a fetch error naming the path, the reason and the line', async () => {
    // The original's message stays as the prefix (users grep for it); the reason follows.
    await expect(
      buildDesired(
        sel,
        res({ provider: 'resource', path: { path: '/b.yml', content: 'kind: x\na: [' } }),
        pc,
      ),
    ).rejects.toThrow(
      new FetchResourceError(
        "Could not parse data. Skipping resource: /b.yml: invalid YAML: while parsing a flow node: expected the node content, but found '<stream-end>' (line 2, column 5)",
      ),
    );
    await expect(
      buildDesired(
        sel,
        res({ provider: 'route', path: { path: '/r.yml', content: '- 1\n- 2\n' } }),
        pc,
      ),
    ).rejects.toThrow(
      new FetchResourceError(
        'Could not parse data. Skipping resource: /r.yml: a resource file must hold a mapping, not list',
      ),
    );
  });

  it('resource-template: a rendered file that does not parse says so, without values from the render', async () => {
    // Rendered text can hold secrets (vault lookups in templates): the reason
    // keeps the line and the problem, but not the quoted fragments of the text.
    const error = await buildDesired(
      sel,
      res({
        provider: 'resource-template',
        path: { path: '/t.yml.j2', content: 'kind: x\npassword: {{ name }}\n' },
        variables: '{"name": "*s3cr3t-value"}',
      }),
      pc,
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FetchResourceError);
    expect((error as Error).message).toBe(
      'Could not parse data. Skipping resource: /t.yml.j2: invalid YAML in the rendered template: found undefined alias "…"',
    );
    const tagged = await buildDesired(
      sel,
      res({
        provider: 'resource-template',
        path: { path: '/u.yml.j2', content: 'kind: x\npassword: {{ name }}\n' },
        variables: '{"name": "!!int s3cr3t-value"}',
      }),
      pc,
    ).catch((e: unknown) => e);
    expect((tagged as Error).message).toBe(
      "Could not parse data. Skipping resource: /u.yml.j2: invalid YAML in the rendered template: invalid literal for int() with base 10: '…'",
    );
  });

  it('resource: validate_json checks every data value', async () => {
    const content =
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  ok: "{}"\n  bad: "{nope"\n';
    await expect(
      buildDesired(
        sel,
        res({ provider: 'resource', validate_json: true, path: { path: '/c.yml', content } }),
        pc,
      ),
    ).rejects.toThrow('invalid json in /c.yml under bad');
  });

  it('resource: an invalid name is rejected with the original message', async () => {
    await expect(
      buildDesired(
        sel,
        res({
          provider: 'resource',
          path: {
            path: '/d.yml',
            content: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: Bad_Name\n',
          },
        }),
        pc,
      ),
    ).rejects.toThrow(/metadata.name: Invalid value: "Bad_Name"/);
  });

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

  it('resource-template: renders with its variables and the resource, then parses', async () => {
    renders.length = 0;
    const r = res({
      provider: 'resource-template',
      variables: '{"name": "tpl"}',
      path: {
        path: '/t.yml.j2',
        content: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ name }}\n',
      },
    });
    const or = await buildDesired(sel, r, pc);
    expect(body(or).metadata.name).toBe('tpl');
    expect(renders[0]!.variables).toMatchObject({
      name: 'tpl',
      resource: { provider: 'resource-template', namespace: { name: 'ns' } },
    });
  });

  it.each([
    ['resource-template', { type: 'mustache' }, "unknown template type 'mustache' in /t.j2"],
    [
      'prometheus-rule',
      { type: 'resource-template-mustache' },
      "unknown prometheus-rule type 'resource-template-mustache' in /t.j2",
    ],
    ['magic', {}, 'unknown provider: magic'],
  ])('%s %j is rejected', async (provider, extra, message) => {
    await expect(
      buildDesired(sel, res({ provider, path: { path: '/t.j2', content: 'x: 1' }, ...extra }), pc),
    ).rejects.toThrow(message);
  });

  it('vault-secret: builds the Secret, keeps _qb64 values, drops updated_at', async () => {
    const or = await buildDesired(
      sel,
      res({
        provider: 'vault-secret',
        vault_path: 'app/db',
        version: 2,
        name: null,
        labels: '{"app": "x"}',
        annotations: null,
        vault_type: null,
      }),
      pc,
    );
    expect(body(or)).toEqual({
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'Opaque',
      metadata: { name: 'db', annotations: {}, labels: { app: 'x' } },
      data: { user: 'YXBw', password: 'cDRzcw==', cert: 'Zm9vYmFy', empty: '' },
    });
  });

  it('vault-secret: a missing secret or an invalid key is an error naming the path', async () => {
    await expect(
      buildDesired(sel, res({ provider: 'vault-secret', vault_path: 'app/none', version: 1 }), pc),
    ).rejects.toThrow(/error fetching secret app\/none \(version 1\)/);
    await expect(
      buildDesired(
        sel,
        res({ provider: 'vault-secret', vault_path: 'app/bad-key', version: 1 }),
        pc,
      ),
    ).rejects.toThrow("secret app/bad-key: invalid key 'bad key'");
  });

  it.each([
    ['*.apps.example.com', 'a.apps.example.com', true],
    ['*.apps.example.com', 'a.b.apps.example.com', true],
    ['*.apps.example.com', 'apps.example.com', false],
    ['www.example.com', 'www.example.com', true],
    ['www.example.com', 'api.example.com', false],
  ])('certificate CN %s matches host %s: %s', (cn, host, ok) => {
    expect(hostMatches(cn, host)).toBe(ok);
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

describe('template variables', () => {
  it('are read as Python json.loads reads them: 1.0 stays a float', async () => {
    renders.length = 0;
    const r = res({
      provider: 'resource-template',
      variables: '{"ratio": 1.0, "name": "x"}',
      path: {
        path: '/v.j2',
        content: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ name }}\n',
      },
    });
    await buildDesired(sel, r, pc);
    const { renderTemplate } = await import('@qontract/templating');
    const out = await renderTemplate('{{ ratio }}', {
      type: 'jinja2',
      path: '/v.j2',
      variables: renders[0]!.variables,
      helpers: {},
    });
    expect(out).toBe('1.0');
  });
});
