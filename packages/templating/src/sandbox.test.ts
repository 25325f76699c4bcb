import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RenderOptions, renderTemplate, TemplateError } from './index.ts';

const CANARY = 'canary-3f1c9e-must-not-leak';

function options(overrides: Partial<RenderOptions> = {}): RenderOptions {
  return {
    type: 'jinja2',
    path: '/sandbox/payload.yml',
    variables: {
      resource: {
        provider: 'resource-template',
        namespace: { name: 'ns', cluster: { name: 'c' } },
      },
      x: { a: 1 },
      s: 'text',
      xs: [1, 2],
    },
    helpers: {},
    ...overrides,
  };
}

/** Renders; returns the output or the TemplateError (anything else is a test failure). */
async function attempt(
  template: string,
  overrides?: Partial<RenderOptions>,
): Promise<string | TemplateError> {
  try {
    return await renderTemplate(template, options(overrides));
  } catch (e) {
    if (e instanceof TemplateError) return e;
    throw e;
  }
}

// The payloads themselves are in fixtures/sandbox-payloads.yml (sandbox-payloads.test.ts);
// these tests check what a payload list cannot: getters, the caller's objects, YAML tags.
describe('sandbox: template injection', () => {
  beforeAll(() => {
    process.env.QR_TEMPLATING_CANARY = CANARY;
    (globalThis as Record<string, unknown>).qrTemplatingCanary = CANARY;
  });
  afterAll(() => {
    delete process.env.QR_TEMPLATING_CANARY;
    delete (globalThis as Record<string, unknown>).qrTemplatingCanary;
  });

  it('refuses JavaScript members outright rather than rendering them empty', async () => {
    for (const payload of [
      "{{ ''.constructor }}",
      '{{ x.__proto__ }}',
      "{{ x['constructor'] }}",
      '{{ range.constructor }}',
    ]) {
      const result = await attempt(payload);
      expect(result).toBeInstanceOf(TemplateError);
      expect((result as TemplateError).message).toMatch(/has no attribute|is undefined/);
    }
  });

  it('never pollutes prototypes through dict keys, update() or json_to_dict', async () => {
    const out = await attempt(
      "{% set d = {'__proto__': {'polluted': 1}} %}{% set _ = d.update({'__proto__': {'polluted': 2}}) %}" +
        "{% set j = '{\"__proto__\": {\"polluted\": 3}}'|json_to_dict %}{{ d['__proto__'] }} {{ j['__proto__'] }}",
    );
    expect(out).toBe("{'polluted': 2} {'polluted': 3}");
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('polluted');
  });

  it('never invokes getters, functions or toString of the given objects', async () => {
    let touched = 0;
    const variables: Record<string, unknown> = {
      fn: () => {
        touched++;
        return CANARY;
      },
      obj: {
        toString: () => {
          touched++;
          return CANARY;
        },
        get secret() {
          touched++;
          return CANARY;
        },
        plain: 'ok',
      },
      proxy: new Proxy(
        { a: 1 },
        {
          get: () => {
            touched++;
            return CANARY;
          },
          getPrototypeOf: () => {
            touched++;
            return Object.prototype;
          },
        },
      ),
      instance: new (class Secretive {
        token = CANARY;
        reveal() {
          touched++;
          return CANARY;
        }
      })(),
    };
    for (const template of [
      '{{ fn }}',
      '{{ fn() }}',
      '{{ obj }}',
      '{{ obj.secret }}',
      '{{ obj.toString() }}',
      "{{ obj ~ '' }}",
      '{{ proxy.a }}',
      '{{ proxy }}',
      '{{ instance.token }}',
      '{{ instance.reveal() }}',
      '{{ instance }}',
    ]) {
      const result = await attempt(template, { variables });
      const text = result instanceof TemplateError ? result.message : result;
      expect(text).not.toContain(CANARY);
    }
    expect(touched).toBe(0);
    expect(await attempt('{{ obj.plain }}', { variables })).toBe('ok');
  });

  it('does not let a template mutate the caller’s objects', async () => {
    const data = { list: [1], map: { a: 1 } };
    const out = await attempt(
      "{% set _ = data.list.append(2) %}{% set _ = data.map.update({'b': 2}) %}{{ data }}",
      {
        variables: { data },
      },
    );
    expect(out).toBe("{'list': [1, 2], 'map': {'a': 1, 'b': 2}}");
    expect(data).toEqual({ list: [1], map: { a: 1 } });
  });

  it('treats a data key named "then" as plain data (no thenable confusion)', async () => {
    expect(
      await attempt("{% set t = {'then': 1} %}{{ t.then }}{{ obj.then }}", {
        // biome-ignore lint/suspicious/noThenProperty: the point of the test is a data key named then.
        variables: { obj: { then: 'x' } },
      }),
    ).toBe('1x');
  });

  it('reads YAML tags that would build code as plain strings', async () => {
    expect(
      await attempt('{{ (\'a: !!js/function "function(){ return 1 }"\'|yaml_to_dict).a }}'),
    ).toBe('function(){ return 1 }');
  });

  it('evaluates JSONPath filters without running code', async () => {
    expect(await attempt("{{ xs|extract_jsonpath('$[?(@ > 1)]') }}")).toBe('[2]');
    for (const path of [
      '$[?(@.constructor.constructor("return process")())]',
      '$[?(this.process)]',
      '$[(@.length-1)]',
      '$[?(@ > 1; process.exit(1))]',
    ]) {
      const result = await attempt(`{{ xs|extract_jsonpath('${path}') }}`);
      expect(result).toBeInstanceOf(TemplateError);
      expect((result as TemplateError).message).toMatch(/unsupported JSONPath filter expression/);
    }
  });

  it('refuses YAML alias bombs', async () => {
    const bomb = ['a: &a ["x","x","x","x","x","x","x","x","x"]']
      .concat(
        Array.from({ length: 8 }, (_, i) => {
          const prev = i === 0 ? 'a' : `l${i - 1}`;
          return `l${i}: &l${i} [*${prev},*${prev},*${prev},*${prev},*${prev},*${prev},*${prev},*${prev},*${prev}]`;
        }),
      )
      .join('\n');
    const result = await attempt('{{ (bomb|yaml_to_dict)|length }}', { variables: { bomb } });
    expect(result).toBeInstanceOf(TemplateError);
  });
});

describe('sandbox: resource limits', () => {
  const small = { maxOutputChars: 10_000, maxIterations: 1_000, maxCallDepth: 20 };

  it('recursion through helper arguments (rendered as templates) hits the depth limit', async () => {
    const result = await attempt("{{ vault(p, 'k') }}", {
      limits: small,
      variables: { p: "{{ vault(p, 'k') }}" },
      helpers: { vault: async () => ({}) },
    });
    expect(result).toBeInstanceOf(TemplateError);
    expect((result as TemplateError).message).toMatch(/call depth exceeds the limit of 20/);
  });

  it('a loop of costly steps hits the time limit', async () => {
    const result = await attempt(
      "{% for i in range(100000) %}{{ ('x' * 100000)|replace('x', 'y')|length > 0 }}{% endfor %}",
      { limits: { maxRenderMillis: 1, maxOutputChars: 10 ** 7 } },
    );
    expect(result).toBeInstanceOf(TemplateError);
    expect((result as TemplateError).message).toMatch(
      /rendering took longer than the limit of 1 ms/,
    );
  });

  it('default limits still allow ordinary large templates', async () => {
    const out = await attempt('{% for i in range(2000) %}{{ i }}\n{% endfor %}');
    expect(typeof out === 'string' && out.split('\n').length).toBe(2001);
  });
});
