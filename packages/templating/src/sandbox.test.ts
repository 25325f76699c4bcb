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

// Known server-side template injection payloads (Jinja2/Python and Nunjucks/JavaScript styles).
const PAYLOADS: string[] = [
  "{{ ''.__class__ }}",
  "{{ ''.__class__.__mro__[1].__subclasses__() }}",
  '{% for c in [].__class__.__base__.__subclasses__() %}{{ c }}{% endfor %}',
  "{{ ''.constructor }}",
  "{{ ''.constructor.constructor('return process')() }}",
  "{{ ''.constructor.constructor('return process')().env }}",
  '{{ [].constructor }}',
  "{{ [].constructor.constructor('return globalThis')() }}",
  '{{ {}.constructor }}',
  '{{ (1).constructor }}',
  "{{ (1).constructor.constructor('return process')() }}",
  '{{ resource.__proto__ }}',
  '{{ resource.constructor }}',
  '{{ resource.namespace.constructor }}',
  "{{ resource.namespace.constructor.constructor('return process')() }}",
  '{{ resource.hasOwnProperty }}',
  "{{ x['constructor'] }}",
  "{{ x['__proto__'] }}",
  "{{ x['__proto__']['constructor'] }}",
  "{{ xs['constructor'] }}",
  "{{ xs['length'] }}",
  '{{ xs.length }}',
  '{{ x.toString }}',
  '{{ x.toString() }}',
  '{{ x.valueOf() }}',
  '{{ s.toString() }}',
  '{{ s.valueOf }}',
  "{{ s['constructor'] }}",
  '{{ s.__proto__ }}',
  '{{ s.charAt(0) }}',
  "{{ range.constructor('return this')() }}",
  '{{ range.constructor }}',
  '{{ range.call }}',
  '{{ range.apply }}',
  '{{ range.bind }}',
  '{{ range.__proto__ }}',
  '{{ range.prototype }}',
  "{{ dict.constructor('return process')() }}",
  '{{ namespace().constructor }}',
  '{% set n = namespace() %}{{ n.__proto__ }}',
  '{% set n = namespace() %}{{ n.attrs }}',
  '{{ cycler.__init__.__globals__ }}',
  '{{ joiner.__init__.__globals__.os }}',
  '{{ lipsum.__globals__ }}',
  "{{ lipsum.__globals__['os'].popen('id').read() }}",
  '{{ self }}',
  '{{ self._TemplateReference__context }}',
  '{{ config }}',
  '{{ config.items() }}',
  '{{ request }}',
  '{{ request.application.__globals__ }}',
  '{{ process }}',
  '{{ process.env }}',
  '{{ process.mainModule }}',
  '{{ global }}',
  '{{ globalThis }}',
  '{{ this }}',
  '{{ window }}',
  '{{ require }}',
  "{{ require('fs') }}",
  "{{ require('child_process').execSync('id') }}",
  "{{ import('fs') }}",
  '{{ module }}',
  '{{ exports }}',
  '{{ __dirname }}',
  '{{ Function }}',
  "{{ Function('return process')() }}",
  '{{ eval }}',
  '{{ Buffer }}',
  '{{ console }}',
  '{{ environ }}',
  '{{ os }}',
  '{{ __builtins__ }}',
  '{{ __import__ }}',
  "{{ __import__('os').system('id') }}",
  '{{ loop }}',
  '{% for i in [1] %}{{ loop.constructor }}{% endfor %}',
  '{% for i in [1] %}{{ loop.__class__ }}{% endfor %}',
  "{% for i in [1] %}{{ loop.cycle.constructor('return process')() }}{% endfor %}",
  "{% macro m() %}{% endmacro %}{{ m.constructor('return process')() }}",
  '{% macro m() %}{% endmacro %}{{ m.__globals__ }}',
  "{{ 'a'.upper.constructor('return process')() }}",
  '{{ x.items.__self__ }}',
  '{{ x.items().constructor }}',
  "{{ '{0.__class__}'.format('') }}",
  "{{ '{0.constructor}'.format('') }}",
  "{{ '{0[constructor]}'.format(x) }}",
  "{{ '%(constructor)s' % x }}",
  "{{ x|attr('constructor') }}",
  "{{ x|attr('__proto__') }}",
  "{{ xs|map(attribute='constructor')|list }}",
  "{{ [x]|map(attribute='__proto__')|list }}",
  "{{ [x]|selectattr('constructor')|list }}",
  "{{ [s]|sort(attribute='constructor') }}",
  "{{ x|extract_jsonpath('$.constructor') }}",
  '{{ x|extract_jsonpath(\'$..[?(@.constructor.constructor("return process")())]\') }}',
  '{{ x|extract_jsonpath(\'$[(this.constructor.constructor("return process")())]\') }}',
  "{{ \"{{ ''.constructor.constructor('return process')() }}\"|eval }}",
  '{{ "{{ process.env }}"|eval }}',
  '{{ \'{"__proto__": {"polluted": 1}}\'|json_to_dict }}',
];

describe('sandbox: template injection payloads', () => {
  beforeAll(() => {
    process.env.QR_TEMPLATING_CANARY = CANARY;
    (globalThis as Record<string, unknown>).qrTemplatingCanary = CANARY;
  });
  afterAll(() => {
    delete process.env.QR_TEMPLATING_CANARY;
    delete (globalThis as Record<string, unknown>).qrTemplatingCanary;
  });

  for (const payload of PAYLOADS) {
    it(`fails or renders harmlessly: ${payload}`, async () => {
      const result = await attempt(payload);
      const text = result instanceof TemplateError ? result.message : result;
      expect(text).not.toContain(CANARY);
      expect(text).not.toMatch(/native code|\[object |function \w*\(|process\.|uid=/);
      if (typeof result === 'string') {
        // What renders is built from the given data only: no functions, prototypes or globals.
        expect(result).not.toMatch(/Function|Object|prototype|global|require|env/i);
      } else {
        expect(result.path).toBe('/sandbox/payload.yml');
      }
    });
  }

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

  it.each([
    [
      'recursion bomb',
      '{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}',
      /call depth exceeds the limit of 20/,
    ],
    [
      'mutual recursion',
      '{% macro a() %}{{ b() }}{% endmacro %}{% macro b() %}{{ a() }}{% endmacro %}{{ a() }}',
      /call depth/,
    ],
    [
      'huge output loop',
      "{% for i in range(1000) %}{{ 'x' * 100 }}{% endfor %}",
      /output exceeds the limit of 10000/,
    ],
    [
      'nested loops',
      '{% for a in range(100) %}{% for b in range(100) %}.{% endfor %}{% endfor %}',
      /loop iterations/,
    ],
    ['huge range', '{{ range(10 ** 9)|length }}', /Range too big/],
    [
      'range over the iteration limit',
      '{{ range(5000)|length }}',
      /range longer than the limit of 1000/,
    ],
    ['string repetition', "{{ 'x' * 10 ** 9 }}", /string longer than the limit/],
    ['list repetition', '{{ [1] * 10 ** 9 }}', /list longer than the limit/],
    [
      'string doubling',
      "{% set ns = namespace(s='x') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
      /string longer/,
    ],
    [
      'list doubling',
      '{% set xs = [1] %}{% for i in range(40) %}{% set _ = xs.extend(xs) %}{% endfor %}',
      /collection longer/,
    ],
    [
      'shared-structure repr',
      '{% set ns = namespace(a=[1]) %}{% for i in range(60) %}{% set ns.a = [ns.a, ns.a] %}{% endfor %}{{ ns.a }}',
      /string longer/,
    ],
    ['replace blow-up', "{{ ('x' * 1000)|replace('x', 'y' * 1000) }}", /string longer/],
    ['format width', "{{ '%999999999s' % 'x' }}", /string longer/],
    ['center width', "{{ 'x'|center(999999999) }}", /string longer/],
    ['deep nesting', `{{ ${'('.repeat(500)}1${')'.repeat(500)} }}`, /nesting deeper than/],
    ['long operator chain', `{{ ${'1 + '.repeat(100000)}1 }}`, /nesting too deep/],
    ['long attribute chain', `{{ x${'.a'.repeat(100000)} }}`, /nesting too deep/],
    ['deeply nested blocks', '{% if true %}'.repeat(5000), /nesting deeper than/],
  ])('%s hits a limit', async (_name, template, message) => {
    const result = await attempt(template, { limits: small });
    expect(result).toBeInstanceOf(TemplateError);
    expect((result as TemplateError).message).toMatch(message);
  });

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
