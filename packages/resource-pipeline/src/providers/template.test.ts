import { describe, expect, it } from 'vitest';
import { buildDesired, FetchResourceError } from './index.ts';
import { body, pc, renders, res, sel } from './test-support/context.ts';

describe('resource-template', () => {
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
