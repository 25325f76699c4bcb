import { QontractError, SecretNotFoundError, SecretRedactor } from '@qontract/core';
import { describe, expect, it } from 'vitest';
import { CompileCache } from './compile.ts';
import {
  parseTemplateVariables,
  type RenderOptions,
  renderTemplate,
  TemplateError,
  type TemplateHelpers,
  templateCacheSize,
} from './index.ts';
import { JINJA2_DELIMITERS } from './lexer.ts';

function render(body: string, overrides: Partial<RenderOptions> = {}): Promise<string> {
  return renderTemplate(body, {
    type: 'jinja2',
    path: '/resources/app/template.yml',
    variables: {},
    helpers: {},
    ...overrides,
  });
}

async function failure(
  body: string,
  overrides: Partial<RenderOptions> = {},
): Promise<TemplateError> {
  const result = await render(body, overrides).then(
    (out) => new Error(`rendered ${JSON.stringify(out)}`),
    (e: unknown) => e,
  );
  expect(result).toBeInstanceOf(TemplateError);
  return result as TemplateError;
}

function fakeVault(secrets: Record<string, Record<string, string>>) {
  const calls: [string, number | undefined][] = [];
  const vault: TemplateHelpers['vault'] = async (path, version) => {
    calls.push([path, version]);
    const secret = secrets[path];
    if (!secret) throw new SecretNotFoundError(`secret not found: ${path}`);
    return secret;
  };
  return { vault, calls };
}

describe('extracurlyjinja2 delimiters', () => {
  it.each([
    ['variables', '{{{ name }}} {{ name }}', 'x {{ name }}'],
    ['blocks', '{{% if true %}}yes{{% endif %}} {% if %}', 'yes {% if %}'],
    ['comments', 'a{{# hidden #}}b {# shown #}', 'ab {# shown #}'],
    ['whitespace control', 'a\n  {{%- if true -%}}\n  b\n{{%- endif %}}', 'ab'],
    ['helm-like braces pass through', 'v: {{ .Values.x }} {{{ name }}}', 'v: {{ .Values.x }} x'],
    ['raw', '{{% raw %}}{{{ x }}}{{% endraw %}}', '{{{ x }}}'],
  ])('%s', async (_name, body, expected) => {
    expect(await render(body, { type: 'extracurlyjinja2', variables: { name: 'x' } })).toBe(
      expected,
    );
  });

  it('refuses unknown template types', async () => {
    const e = await failure('x', { type: 'mustache' as RenderOptions['type'] });
    expect(e.message).toMatch(/unknown template type: mustache/);
    expect(e.path).toBe('/resources/app/template.yml');
  });
});

describe('variables', () => {
  const namespace: Record<string, unknown> = {
    name: 'app-stage',
    labels: '{"team": "sre"}',
    environment: { name: 'stage', parameters: '{"replicas": 2}' },
    cluster: { name: 'c1', spec: { version: '4.14' } },
  };
  const resource: Record<string, unknown> = {
    provider: 'resource-template',
    type: 'jinja2',
    resource: { path: '/app/cm.yml' },
    namespace,
  };
  namespace.openshiftResources = [resource];

  it('exposes resource, namespace and cluster data, and the parsed variables', async () => {
    const out = await render(
      '{{ resource.namespace.name }} {{ resource.namespace.cluster.spec.version }} ' +
        '{{ (resource.namespace.environment.parameters|json_to_dict).replicas }} ' +
        '{{ (resource.namespace.labels|json_to_dict).team }} {{ image }} {{ resource.namespace.openshiftResources[0].provider }}',
      {
        variables: { resource, ...(parseTemplateVariables('{"image": "quay.io/x:1"}') as object) },
      },
    );
    expect(out).toBe('app-stage 4.14 2 sre quay.io/x:1 resource-template');
  });

  it('prints a cyclic structure the way Python does', async () => {
    const out = await render(
      '{{ resource.namespace.openshiftResources[0].namespace.openshiftResources|length }}',
      {
        variables: { resource },
      },
    );
    expect(out).toBe('1');
    const repr = await render('{{ d }}', {
      variables: {
        d: (() => {
          const d: Record<string, unknown> = { a: 1 };
          d.self = d;
          return d;
        })(),
      },
    });
    expect(repr).toBe("{'a': 1, 'self': {...}}");
  });

  it('keeps key order of JSON and YAML as Python does, integer-like keys included', async () => {
    const variables = parseTemplateVariables(
      '{"ports": {"443": "https", "80": "http", "name": "x"}}',
    );
    const out = await render(
      '{{ ports|list }} {{ (\'{"9": 1, "10": 2, "x": 3}\'|json_to_dict)|list }} {{ (\'b: 1\n"2": 2\na: 3\'|yaml_to_dict)|list }}',
      { variables },
    );
    expect(out).toBe("['443', '80', 'name'] ['9', '10', 'x'] ['b', '2', 'a']");
  });

  it('keeps JSON floats as floats (parseTemplateVariables)', async () => {
    const variables = parseTemplateVariables('{"cpu": 1.0, "mem": 2, "ratio": 0.5}') as Record<
      string,
      unknown
    >;
    expect(await render('{{ cpu }} {{ mem }} {{ ratio }} {{ cpu * 2 }}', { variables })).toBe(
      '1.0 2 0.5 2.0',
    );
  });
});

describe('helpers', () => {
  it('vault renders its arguments as templates, caches by (path, key, version) and masks values in errors', async () => {
    const { vault, calls } = fakeVault({ 'app-sre/stage/db': { password: 'hunter2-secret' } });
    const redactor = new SecretRedactor();
    const body =
      "{{ vault('app-sre/{{ env }}/db', 'pass{{ suffix }}') }} {{ vault('app-sre/stage/db', 'password') }} " +
      "{{ vault('app-sre/stage/db', 'password', 'LATEST') }}";
    const variables = { env: 'stage', suffix: 'word' };
    expect(await render(body, { variables, helpers: { vault }, redactor })).toBe(
      'hunter2-secret hunter2-secret hunter2-secret',
    );
    expect(calls).toEqual([['app-sre/stage/db', undefined]]);
    const e = await failure("{% raise_error 'leak ' ~ vault('app-sre/stage/db', 'password') %}", {
      helpers: { vault },
      redactor,
    });
    expect(e.message).not.toContain('hunter2-secret');
    expect(e.message).toContain('leak ***');
  });

  it('vault passes versions, reads a secret once for all its keys and supports allow_not_found', async () => {
    const { vault, calls } = fakeVault({ p: { k: 'v', k2: 'w' } });
    expect(
      await render(
        "{{ vault('p', 'k', 3) }} {{ vault('p', 'k2', '{{ 3 }}') }} {{ vault('p', 'k', 'latest') }} " +
          "{{ vault('p', 'missing', allow_not_found=true) is none }} {{ vault('nope', 'k', allow_not_found=true) is none }}",
        { helpers: { vault } },
      ),
    ).toBe('v w v True True');
    expect(calls).toEqual([
      ['p', 3],
      ['p', undefined],
      ['nope', undefined],
    ]);
    expect((await failure("{{ vault('nope', 'k') }}", { helpers: { vault } })).message).toMatch(
      /FetchSecretError: error fetching secret: secret not found: nope$/,
    );
    expect((await failure("{{ vault('p', 'x') }}", { helpers: { vault } })).message).toMatch(
      /error fetching secret: secret field not found: p\/x$/,
    );
  });

  it('shares a vault cache across renders when the caller passes one', async () => {
    const { vault, calls } = fakeVault({ p: { k: 'v' } });
    const vaultCache = new Map<string, Promise<Record<string, string> | null>>();
    await render("{{ vault('p', 'k') }}", { helpers: { vault }, vaultCache });
    await render("{{ vault('p', 'k') }}", { helpers: { vault }, vaultCache });
    expect(calls).toHaveLength(1);
  });

  it('github, url, s3 and s3_ls call the injected helpers', async () => {
    const seen: unknown[] = [];
    const helpers: TemplateHelpers = {
      github: async (repo, path, ref) => {
        seen.push(['github', repo, path, ref]);
        return 'file-content';
      },
      url: async (u) => u.startsWith('https://ok'),
      s3: async (account, bucket, path, region) => {
        seen.push(['s3', account, bucket, path, region]);
        return 'object';
      },
      s3Ls: async () => ['a/1', 'a/2'],
    };
    const out = await render(
      "{{ github('app-sre/{{ repo }}', 'README.md', 'main') }} {{ url('https://ok.example') }} {{ url('https://down') }} " +
        "{{ s3('acct', 'bucket', 'key', region='us-east-1') }} {{ s3_ls('acct', 'bucket', 'a/')|join(',') }}",
      { helpers, variables: { repo: 'qr' } },
    );
    expect(out).toBe('file-content True False object a/1,a/2');
    expect(seen).toEqual([
      ['github', 'app-sre/qr', 'README.md', 'main'],
      ['s3', 'acct', 'bucket', 'key', 'us-east-1'],
    ]);
  });

  it('query renders the resource with its keyword arguments (plain, lenient) and returns the first key', async () => {
    const queries: string[] = [];
    const helpers: TemplateHelpers = {
      resource: async (path) => {
        expect(path).toBe('/queries/clusters.graphql');
        return '{ clusters: clusters_v1(name: "{{ name }}") { name {{ extra }} } }';
      },
      graphql: async (q) => {
        queries.push(q);
        return { clusters: [{ name: 'c1' }] };
      },
    };
    expect(
      await render("{{ query('/queries/clusters.graphql', name='c1')[0].name }}", { helpers }),
    ).toBe('c1');
    expect(queries).toEqual(['{ clusters: clusters_v1(name: "c1") { name  } }']);
  });

  it('stubExternalLookups describes external look-ups instead of calling helpers (early-exit digest)', async () => {
    let called = false;
    const helpers: TemplateHelpers = {
      vault: async () => {
        called = true;
        return {};
      },
    };
    const out = await render(
      "{{ vault('p/{{ x }}', 'k') }}|{{ github('o/r', 'f', 'main') }}|{{ s3('a', 'b', 'k', region='r') }}|{{ s3_ls('a', 'b', 'p') }}|{{ url('https://x') }}",
      { helpers, stubExternalLookups: true },
    );
    expect(out).toBe(
      "vault('p/{{ x }}', 'k')|github('o/r', 'f', 'main')|s3('a', 'b', 'k', region='r')|s3_ls('a', 'b', 'p')|False",
    );
    expect(called).toBe(false);
  });

  it('a helper the caller did not provide fails clearly', async () => {
    expect((await failure("{{ vault('p', 'k') }}")).message).toMatch(
      /the 'vault' helper is not available/,
    );
  });

  it('urlescape, urlunescape, hash_list, flatten_dict and yesterday', async () => {
    const out = await render(
      "{{ urlescape('a b/c?d=é&x') }}|{{ urlescape('a b/c', '') }}|{{ urlunescape('a%20b%2Fc%C3%A9') }}|" +
        "{{ hash_list(['b', 1, true, 1.0]) }}|{{ hash_list([]) }}|{{ flatten_dict({'a': {'b': 1, 'c': none, 'd': {'e': true}}, 'f': [1]}) }}|{{ yesterday() }}",
      { now: () => new Date('2026-03-01T05:00:00Z') },
    );
    expect(out.split('|')).toEqual([
      'a%20b/c%3Fd%3D%C3%A9%26x',
      'a%20b%2Fc',
      'a b/cé',
      '2791b5d045bd247625f4d565cfcf494182311b30b6aaf682bacf0b823303e9e0',
      // sha256("a")
      'ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb',
      "{'a.b': '1', 'a.d.e': 'True', 'f': '[1]'}",
      '2026-02-28',
    ]);
  });

  it('hash_list refuses nested values', async () => {
    expect((await failure('{{ hash_list([[1]]) }}')).message).toMatch(/non-primitive value \[1\]/);
  });

  it('_template_mocks replaces named helpers (and only those)', async () => {
    const variables = parseTemplateVariables(
      '{"_template_mocks": {"vault": "mocked-secret", "github": "mocked-file", "query": [{"name": "q"}]}}',
    ) as Record<string, unknown>;
    const out = await render(
      "{{ vault('any', 'thing') }} {{ github('o/r', 'p', 'main') }} {{ query('/x.graphql')[0].name }} {{ urlescape('a b') }}",
      { variables },
    );
    expect(out).toBe('mocked-secret mocked-file q a%20b');
  });
});

describe('filters of the original', () => {
  const data = {
    items: Array.from({ length: 12 }, (_, i) => ({ name: `n${i}`, type: i % 2 ? 'odd' : 'even' })),
    spec: { 'a.b': 1, x: { y: 2 } },
  };

  it.each([
    ['json_to_dict', `{{ ('{"a": [1, 2.0, null]}'|json_to_dict).a }}`, '[1, 2.0, None]'],
    [
      'yaml_to_dict (YAML 1.1)',
      "{{ 'a: yes\\nb: 1.0\\nc: 017\\nd: [1, 2]\\ne: 2020-01-02\\nf: ~'|yaml_to_dict }}",
      "{'a': True, 'b': 1.0, 'c': 15, 'd': [1, 2], 'e': '2020-01-02', 'f': None}",
    ],
    [
      'urlescape filter',
      "{{ 'a b/c'|urlescape }} {{ 'a b/c'|urlescape(safe='') }}",
      'a%20b/c a%20b%2Fc',
    ],
    ['urlunescape filter', "{{ 'a%20b'|urlunescape }}", 'a b'],
    [
      'eval renders with keyword arguments only, leniently',
      "{{ 'x={{ x }} y={{ y }} {{ name }}'|eval(x=1, y='z') }}",
      'x=1 y=z ',
    ],
    [
      'str_format',
      "{{ 42|str_format('%05d') }} {{ 'a'|str_format('[%s]') }} {{ 2.5|str_format('%.2f') }}",
      '00042 [a] 2.50',
    ],
    [
      'extract_jsonpath',
      "{{ data|extract_jsonpath('$.items[*].name')|length }} {{ data|extract_jsonpath('spec.x.y') }} {{ data|extract_jsonpath('$.nothing') }}",
      '12 [2] []',
    ],
    [
      'matches_jsonpath',
      "{{ data|matches_jsonpath('$.spec.x') }} {{ data|matches_jsonpath('$.spec.z') }}",
      'True False',
    ],
    [
      'json_pointers',
      "{{ data|json_pointers('$.items[2].name') }} {{ data|json_pointers('$.spec.x.y') }}",
      "['/items/2/name'] ['/spec/x/y']",
    ],
    [
      'json_pointers keeps the original’s bracket quirk for indices >= 10',
      "{{ data|json_pointers('$.items[11].type') }}",
      "['/items/[11]/type']",
    ],
    [
      'extract_jsonpath with a filter',
      '{{ data|extract_jsonpath(\'$.items[?(@.type == "odd" && @.name != "n1")].name\')|first }}',
      'n3',
    ],
    [
      'extract_jsonpath filter on existence',
      "{{ data|extract_jsonpath('$.items[?(@.missing)]') }} {{ data|extract_jsonpath('$.items[?(!@.missing)]')|length }}",
      '[] 12',
    ],
    [
      'json_pointers with a filter',
      '{{ data|json_pointers(\'$.items[?(@.name == "n11")].type\') }}',
      "['/items/[11]/type']",
    ],
    ['json_pointers of the root', "{{ data|json_pointers('$') }}", "['/$']"],
  ])('%s', async (_name, body, expected) => {
    expect(await render(body, { variables: { data } })).toBe(expected);
  });

  it('eval cannot reach the template variables or the original’s own filters', async () => {
    const e = await failure("{{ '{{ secret|json_to_dict }}'|eval(secret='{}') }}");
    expect(e.message).toMatch(/No filter named 'json_to_dict'/);
    expect(await render("[{{ '{{ secret }}'|eval }}]", { variables: { secret: 'nope' } })).toBe(
      '[]',
    );
  });
});

describe('extension tags', () => {
  it('b64encode dedents then base64-encodes its body', async () => {
    const body = '{% b64encode %}\n    line1\n      line2\n    \n{% endb64encode %}';
    expect(await render(body)).toBe('CmxpbmUxCiAgbGluZTIKCg==');
    expect(
      await render('{% b64encode %}{{ user }}:{{ pass }}{% endb64encode %}', {
        variables: { user: 'u', pass: 'p' },
      }),
    ).toBe(Buffer.from('u:p').toString('base64'));
  });

  it('raise_error aborts with the message, the path and the line', async () => {
    const e = await failure(
      "line1\n{% if x > 1 %}\n{% raise_error 'x too big: ' ~ x %}\n{% endif %}",
      {
        variables: { x: 5 },
      },
    );
    expect(e.message).toBe(
      'error processing jinja2 template (/resources/app/template.yml, line 3): TemplateRuntimeError: x too big: 5',
    );
    expect(e.line).toBe(3);
    expect(e.path).toBe('/resources/app/template.yml');
  });
});

describe('errors name the resource path and line', () => {
  it.each([
    ['undefined variable', 'a\nb\n{{ missing }}', 3, /UndefinedError: 'missing' is undefined/],
    [
      'undefined attribute',
      'a: 1\nb: {{ resource.nope }}',
      2,
      /'dict object' has no attribute 'nope'/,
    ],
    ['syntax error', 'a\n{% if %}', 2, /TemplateSyntaxError/],
    [
      'unclosed block',
      '{% for x in [1] %}\n\nx',
      3,
      /looking for the following tags: 'endfor' or 'else'/,
    ],
    ['unknown filter', '\n{{ 1|nope }}', 2, /No filter named 'nope'/],
    [
      'type error',
      '\n\n\n{{ 1 + "a" }}',
      4,
      /TypeError: unsupported operand type\(s\) for \+: 'int' and 'str'/,
    ],
    [
      'error inside a macro body',
      '{% macro m() %}\n{{ missing }}\n{% endmacro %}\n{{ m() }}',
      2,
      /'missing' is undefined/,
    ],
  ])('%s', async (_name, body, line, message) => {
    const e = await failure(body, { variables: { resource: {} } });
    expect(e.line).toBe(line);
    expect(e.message).toMatch(message);
    expect(e.message).toContain(`/resources/app/template.yml, line ${line}`);
  });
});

describe('TemplateError', () => {
  it('is an expected failure for the runner (QontractError, exit code 1)', async () => {
    const e = await failure('{{ missing }}');
    expect(e).toBeInstanceOf(QontractError);
    expect(e.exitCode).toBe(1);
    expect(e.name).toBe('TemplateError');
    expect(e.reason).toBe("UndefinedError: 'missing' is undefined");
  });
});

describe('compile cache', () => {
  it('compiles a (type, body) pair once', async () => {
    const body = `{{ 'cache-probe-${Math.random()}' }}`;
    const before = templateCacheSize();
    await render(body);
    await render(body);
    expect(templateCacheSize()).toBe(before + 1);
    await render(body, { type: 'extracurlyjinja2' });
    expect(templateCacheSize()).toBe(before + 2);
  });

  it('stays bounded (it lives as long as the process): past its limit the oldest template goes', () => {
    const cache = new CompileCache(2);
    const env = { filters: {}, tests: {} };
    const compile = (body: string) => cache.compile(body, 'jinja2', JINJA2_DELIMITERS, env);
    const first = compile('{{ 1 }}');
    compile('{{ 2 }}');
    expect(compile('{{ 1 }}')).toBe(first);
    compile('{{ 3 }}');
    expect(cache.size).toBe(2);
    // The oldest entry made room: compiled again, a new tree.
    expect(compile('{{ 1 }}')).not.toBe(first);
    expect(cache.size).toBe(2);
  });
});
